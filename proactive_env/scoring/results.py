"""One scale for every number, and the aggregation of runs into results tables.

Data — ``info["scores"]``, trajectories, results.json, eval.csv, the report's CSV — always holds
metrics on the scale of :data:`UNITS` (TA, TR-D, J and continuation as fractions in [0, 1], TC in
points 0–100, TR-J a rating 1–5). Percentages exist only on screen, and their headers say so
(:func:`header`, :func:`display`).

Confidence intervals are a stratified bootstrap: runs are resampled *within* each
scenario × persona cell (they are exchangeable only there), so a row that pools cells keeps
each cell's share. An interval needs at least two runs in every cell it pools; otherwise it is
``None`` in data and "n/a" on screen.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

RESULTS_FORMAT = "proactivity-gym/results-2"
METRICS = ("TC", "TA", "TR_D", "TR_J", "J", "continuation")
STRATA = ("scenario", "persona")
BOOTSTRAP_SAMPLES = 2000
CONFIDENCE = 0.95

UNITS: dict[str, dict] = {
    "TC": {"unit": "points", "range": [0, 100], "name": "task capability",
           "description": "weighted mean over scored tasks of Evidence, Outputs, Constraints, Semantics, Completion"},
    "TA": {"unit": "fraction", "range": [0, 1], "name": "temporal allocation",
           "description": "share of the run's TA decisions with the urgent task done now and the competing one "
                          "explicitly deferred or allocated (now ∧ later)"},
    "TR_D": {"unit": "fraction", "range": [0, 1], "name": "trust: depth agreement",
             "description": "share of scored tasks whose every intervention was at the depth the user wanted"},
    "TR_J": {"unit": "rating", "range": [1, 5], "name": "trust: judged",
             "description": "mean of understandability, competence, reliability, attachment and faith"},
    "J": {"unit": "fraction", "range": [0, 1], "name": "overall objective",
          "description": "λ_TC·TC/100 + λ_TA·TA + λ_TR·(TR_D + (TR_J − 1)/4)/2"},
    "continuation": {"unit": "fraction", "range": [0, 1], "name": "continuation quality",
                     "description": "plan for the deferred work: 1 concrete and feasible, 0.5 vague, 0 none "
                                    "(reported beside TA, not part of it)"},
}

# How each metric is shown: (column header, factor from the data scale, format).
_DISPLAY = {
    "TC": ("TC", 1.0, "{:.1f}"), "TA": ("TA %", 100.0, "{:.1f}"), "TR_D": ("TR-D %", 100.0, "{:.1f}"),
    "TR_J": ("TR-J", 1.0, "{:.2f}"), "J": ("J", 1.0, "{:.3f}"), "continuation": ("Cont. %", 100.0, "{:.1f}"),
}
LEGEND = ("TC: task capability, 0–100; TA %: share of TA decisions handled now ∧ later; TR-D %: share of tasks "
          "at the user's depth; TR-J: judged trust, 1–5; J: weighted 3T objective, 0–1; Cont. %: continuation "
          "quality of deferred work (1 concrete, 0.5 vague, 0 none); CI: 95% stratified bootstrap within "
          "scenario × persona, n/a below 2 runs per cell, 'no spread' where every cell's runs scored alike")


def header(metric: str) -> str:
    """The on-screen column header of ``metric`` (with "%" where it is shown as a percentage)."""
    return _DISPLAY[metric][0]


def display(metric: str, value: float | None) -> str:
    """``value`` (on the data scale) as shown on screen."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "n/a"
    _, factor, fmt = _DISPLAY[metric]
    return fmt.format(value * factor)


def inline(metric: str, value: float | None) -> str:
    """``metric value`` for running text, e.g. "TA 50.0%", "TR-J 4.21"."""
    name, factor, _ = _DISPLAY[metric]
    if name.endswith(" %"):
        text = display(metric, value)
        return f"{name[:-2]} {text}{'%' if text != 'n/a' else ''}"
    return f"{name} {display(metric, value)}"


def display_ci(metric: str, ci: Sequence[float] | None) -> str:
    if ci is None:
        return "n/a"
    if ci[0] == ci[1]:
        return "no spread"
    return f"[{display(metric, ci[0])}, {display(metric, ci[1])}]"


def _cells(members: list[dict], strata: Sequence[str]) -> list[np.ndarray]:
    """Indices of ``members`` grouped by their stratum."""
    cells: dict[tuple, list[int]] = defaultdict(list)
    for i, m in enumerate(members):
        cells[tuple(m.get(k) for k in strata)].append(i)
    return [np.asarray(v) for _, v in sorted(cells.items(), key=lambda kv: str(kv[0]))]


def stratified_bootstrap(values: Sequence[float], cells: list[np.ndarray], statistic=np.mean, seed: int = 0,
                         samples: int = BOOTSTRAP_SAMPLES) -> tuple[float, float] | None:
    """Percentile bootstrap CI of ``statistic`` over ``values``, resampling within each cell
    (index arrays into ``values``) and keeping every cell's size. None when a cell has fewer
    than two runs: one run says nothing about the spread. A fixed seed keeps tables reproducible."""
    picks = _resample(cells, seed, samples)
    if picks is None:
        return None
    resampled = np.asarray(values, dtype=float)[picks]
    stats = np.asarray([statistic(row) for row in resampled]) if statistic is not np.mean else resampled.mean(axis=1)
    return _interval(stats)


def _resample(cells: list[np.ndarray], seed: int = 0, samples: int = BOOTSTRAP_SAMPLES) -> np.ndarray | None:
    """Bootstrap indices, (samples, runs), drawn within each cell; None below two runs a cell."""
    if not cells or min(len(c) for c in cells) < 2:
        return None
    rng = np.random.default_rng(seed)
    return np.concatenate([cell[rng.integers(0, len(cell), size=(samples, len(cell)))] for cell in cells], axis=1)


def _interval(stats: np.ndarray) -> tuple[float, float]:
    lo, hi = _intervals(stats[None])[0]
    return lo, hi


def _counts(picks: np.ndarray) -> np.ndarray:
    """How often each run is drawn in each bootstrap sample of ``picks`` (samples × runs): the
    means of every sample are then one matrix product."""
    samples, runs = picks.shape
    counts = np.bincount((np.arange(samples)[:, None] * runs + picks).ravel(), minlength=samples * runs)
    return counts.reshape(samples, runs)


@functools.lru_cache(maxsize=64)
def _cell_counts(sizes: tuple[int, ...]) -> np.ndarray:
    """The bootstrap draw counts of runs laid out cell after cell, for cells of these sizes: the
    draw depends only on the sizes (a fixed seed), so groups of one shape share it."""
    bounds = np.cumsum((0,) + sizes)
    counts = _counts(_resample([np.arange(a, b) for a, b in zip(bounds[:-1], bounds[1:])]))
    counts.setflags(write=False)  # shared by every caller
    return counts


def _intervals(stats: np.ndarray) -> list[list[float]]:
    """The percentile interval of each row of bootstrap statistics, in one pass."""
    alpha = (1.0 - CONFIDENCE) / 2.0
    lo, hi = np.quantile(stats, [alpha, 1.0 - alpha], axis=1)
    return [[float(a), float(b)] for a, b in zip(lo, hi)]


def iqm(values: Sequence[float]) -> float:
    """Interquartile mean: the mean of the middle 50% (rliable's robust aggregate)."""
    data = np.sort(np.asarray(values, dtype=float))
    n = len(data)
    if n < 4:
        return float(data.mean()) if n else float("nan")
    cut = n // 4
    return float(data[cut:n - cut].mean())


def aggregate(runs: Iterable[dict], keys: tuple[str, ...], strata: Sequence[str] = STRATA) -> list[dict]:
    """Group run records (each with agent, scenario, persona and a ``scores`` dict) by ``keys``.
    Each row carries ``runs`` (n), ``cells`` (scenario × persona cells pooled) and, per metric,
    the mean on the data scale and ``<metric>_ci``: its 95% stratified bootstrap CI or None."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for run in runs:
        groups[tuple(run[k] for k in keys)].append(run)
    within = [k for k in strata if k not in keys]
    groups_out = []
    for key, members in sorted(groups.items()):
        cells = _cells(members, within)
        values = np.asarray([[m["scores"][metric] for m in members] for metric in METRICS], dtype=float)
        stats = None
        if min(len(c) for c in cells) >= 2:  # one run in a cell says nothing about the spread
            counts = np.empty((BOOTSTRAP_SAMPLES, len(members)))
            counts[:, np.concatenate(cells)] = _cell_counts(tuple(len(c) for c in cells))
            stats = values @ counts.T / len(members)
        groups_out.append((key, len(members), len(cells), values.mean(axis=1), stats))
    # every group's percentiles in one pass: one quantile call, not one per group
    stacked = [stats for *_, stats in groups_out if stats is not None]
    intervals = iter(_intervals(np.concatenate(stacked)) if stacked else [])
    rows = []
    for key, n, n_cells, means, stats in groups_out:
        row = {**dict(zip(keys, key)), "runs": n, "cells": n_cells}
        for metric, mean in zip(METRICS, means):
            row[metric] = float(mean)
            row[f"{metric}_ci"] = next(intervals) if stats is not None else None
        rows.append(row)
    return rows


def results_document(rows: list[dict], suite_version: str) -> dict:
    """results.json: the rows with the units and the interval method that give them meaning."""
    return {
        "format": RESULTS_FORMAT,
        "suite_version": suite_version,
        "units": UNITS,
        "ci": {"method": "percentile bootstrap, resampled within scenario × persona", "level": CONFIDENCE,
               "samples": BOOTSTRAP_SAMPLES, "null_when": "a cell has fewer than 2 runs"},
        "rows": rows,
    }


def load_results(path: str | Path) -> dict:
    """A results.json as a document; the older bare list of rows (TA, TR-D and continuation in %)
    is converted to the data scale."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: expected a results.json file: {exc}") from None
    if isinstance(data, list):
        rows = [{**r, **{m: r[m] / 100.0 for m in ("TA", "TR_D", "continuation") if m in r},
                 **{f"{m}_ci": [v / 100.0 for v in r[f"{m}_ci"]] for m in ("TA", "TR_D", "continuation")
                    if r.get(f"{m}_ci")}} for r in data]
        return results_document(rows, rows[0].get("suite_version", "") if rows else "")
    if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
        raise ValueError(f"{path}: format: expected {RESULTS_FORMAT!r}")
    return data
