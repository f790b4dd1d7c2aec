"""Aggregation of runs into the results table, with bootstrap 95% confidence intervals."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np

METRICS = ("TC", "TA", "TR_D", "TR_J", "J", "continuation")
PERCENT = {"TA", "TR_D", "continuation"}  # stored as fractions, reported as %
BOOTSTRAP_SAMPLES = 2000


def bootstrap_ci(values: list[float], seed: int = 0, samples: int = BOOTSTRAP_SAMPLES) -> tuple[float, float]:
    """Percentile bootstrap 95% CI of the mean (a fixed seed keeps tables reproducible)."""
    data = np.asarray(values, dtype=float)
    if len(data) < 2:
        return (float(data.mean()), float(data.mean())) if len(data) else (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(samples, len(data)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def _bootstrap_cis(columns: np.ndarray, seed: int = 0, samples: int = BOOTSTRAP_SAMPLES) -> list[tuple[float, float]]:
    """``bootstrap_ci`` of each column of a runs × metrics array, from one shared resampling
    (the same draws ``bootstrap_ci`` makes for each, so the same intervals, in one pass)."""
    n = len(columns)
    if n < 2:
        return [bootstrap_ci(list(col), seed, samples) for col in columns.T]
    rng = np.random.default_rng(seed)
    means = columns[rng.integers(0, n, size=(samples, n))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5], axis=0)
    return [(float(a), float(b)) for a, b in zip(lo, hi)]


def _display(metric: str, value: float) -> float:
    return 100.0 * value if metric in PERCENT else value


def aggregate(runs: Iterable[dict], keys: tuple[str, ...]) -> list[dict]:
    """Group run records (each with agent, scenario, persona and a ``scores`` dict) by ``keys``;
    each row carries the run count and, per metric, the mean and its 95% CI (TA, TR-D and
    continuation in %)."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for run in runs:
        groups[tuple(run[k] for k in keys)].append(run)
    rows = []
    for key, members in sorted(groups.items()):
        row = dict(zip(keys, key))
        row["runs"] = len(members)
        columns = np.array([[_display(metric, m["scores"][metric]) for metric in METRICS] for m in members], dtype=float)
        for metric, values, ci in zip(METRICS, columns.T, _bootstrap_cis(columns)):
            row[metric] = float(np.mean(values))
            row[f"{metric}_ci"] = list(ci)
        rows.append(row)
    return rows
