"""One scale for every number, and the aggregation of runs into results tables.

Data — ``info["scores"]``, trajectories, results.json, eval.csv, the report's CSV — always holds
metrics on the scale of :data:`UNITS` (TA, TR-D, J and continuation as fractions in [0, 1], TC in
points 0–100, TR-J a rating 1–5). Percentages exist only on screen, and their headers say so
(:func:`header`, :func:`display`).

Confidence intervals are a stratified bootstrap: runs are resampled *within* each
scenario × persona cell (they are exchangeable only there), so a row that pools cells keeps
each cell's share. An interval needs at least two runs in every cell it pools; otherwise it is
``None`` in data and "n/a" on screen. rliable computes them where it is installed (see
:mod:`.intervals`); each row's ``ci_method`` says what did.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from .intervals import BOOTSTRAP_SAMPLES, CONFIDENCE, batch_intervals, intervals, iqm, method_description  # noqa: F401

RESULTS_FORMAT = "proactivity-gym/results-2"
METRICS = ("TC", "TA", "TR_D", "TR_J", "J", "continuation")
STRATA = ("scenario", "persona")

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


def strata_cells(members: list[dict], strata: Sequence[str] = STRATA) -> list[np.ndarray]:
    """Indices of ``members`` (run records) grouped by their stratum, e.g. their scenario × persona cell."""
    cells: dict[tuple, list[int]] = defaultdict(list)
    for i, m in enumerate(members):
        cells[tuple(m.get(k) for k in strata)].append(i)
    return [np.asarray(v) for _, v in sorted(cells.items(), key=lambda kv: str(kv[0]))]


def stratified_bootstrap(values: Sequence[float], cells: list[np.ndarray], statistic: str = "mean"
                         ) -> tuple[float, float] | None:
    """The 95% bootstrap CI of ``statistic`` ("mean" or "iqm") over ``values``, resampling within
    each cell (index arrays into ``values``) and keeping every cell's size — rliable's where it is
    installed and the cells are of one size (see :mod:`.intervals`). None when a cell has fewer
    than two runs: one run says nothing about the spread. A fixed seed keeps tables reproducible."""
    found = intervals(np.asarray(values, dtype=float)[None], cells, statistic)
    return None if found is None else tuple(found[0][0])


def aggregate(runs: Iterable[dict], keys: tuple[str, ...], strata: Sequence[str] = STRATA) -> list[dict]:
    """Group run records (each with agent, scenario, persona and a ``scores`` dict) by ``keys``.
    Each row carries ``runs`` (n), ``cells`` (scenario × persona cells pooled), per metric the mean
    on the data scale and ``<metric>_ci``: its 95% stratified bootstrap CI or None (a cell with one
    run), and ``ci_method``: what computed the intervals ("rliable" or "numpy"; None without any)."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for run in runs:
        groups[tuple(run[k] for k in keys)].append(run)
    within = [k for k in strata if k not in keys]
    ordered = sorted(groups.items())
    values = [np.asarray([[m["scores"][metric] for m in members] for metric in METRICS], dtype=float)
              for _, members in ordered]
    cells = [strata_cells(members, within) for _, members in ordered]
    rows = []
    for (key, members), group_values, group_cells, ci in zip(ordered, values, cells,
                                                              batch_intervals(list(zip(values, cells)))):
        row = {**dict(zip(keys, key)), "runs": len(members), "cells": len(group_cells)}
        for metric, mean, interval in zip(METRICS, group_values.mean(axis=1), ci[0] if ci else [None] * len(METRICS)):
            row[metric] = float(mean)
            row[f"{metric}_ci"] = interval
        row["ci_method"] = ci[1] if ci else None
        rows.append(row)
    return rows


def results_document(rows: list[dict], suite_version: str) -> dict:
    """results.json: the rows with the units and the interval method that give them meaning."""
    return {
        "format": RESULTS_FORMAT,
        "suite_version": suite_version,
        "units": UNITS,
        "ci": {"method": "percentile bootstrap, resampled within scenario × persona", "level": CONFIDENCE,
               "samples": BOOTSTRAP_SAMPLES, "null_when": "a cell has fewer than 2 runs",
               "computed_by": {m: method_description(m) for m in sorted({r.get("ci_method") for r in rows} - {None})}},
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


def ci_statement(rows: Sequence[dict]) -> str:
    """One sentence saying what computed the intervals of ``rows`` (and where there are none)."""
    methods = [r.get("ci_method") for r in rows]
    parts = [f"{method_description(m)} ({methods.count(m)} of {len(rows)} rows)" if len(set(methods)) > 1
             else method_description(m) for m in sorted(set(methods) - {None})]
    if None in methods:
        parts.append(f"no interval for {methods.count(None)} rows with a cell of one run")
    return "95% CIs: " + "; ".join(parts or ["none (every row has a cell of one run)"]) + "."
