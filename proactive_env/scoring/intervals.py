"""Bootstrap confidence intervals over runs, stratified by scenario × persona cell.

Runs are exchangeable only within a cell (same scenario, same persona, other seeds), so every
interval resamples runs *within* each cell and keeps each cell's size. An interval needs two runs
in every cell it pools; otherwise there is none (None in data, "n/a" on screen).

Where rliable is installed (the ``stats`` extra) and every cell of a group has the same number of
runs, the runs form rliable's ``runs × tasks`` score matrix (a task is a cell) and the interval is
rliable's own: ``rliable.library.get_interval_estimates`` — its ``StratifiedBootstrap`` and arch's
percentile interval — of ``rliable.metrics.aggregate_mean`` (or ``aggregate_iqm``). Otherwise
(rliable missing, or cells of unequal size, which a matrix cannot hold) the same design is drawn
with numpy. Every result names the method that made it (:data:`RLIABLE`, :data:`NUMPY`), and the
tables state it.

Both use a fixed seed, so a table is reproducible; the draw depends only on the shape of a group's
cells, so an agent's interval does not change when other agents are added to a table.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence

import numpy as np

BOOTSTRAP_SAMPLES = 2000
CONFIDENCE = 0.95
SEED = 0
RLIABLE = "rliable"
NUMPY = "numpy"
STATISTICS = ("mean", "iqm")


@functools.lru_cache(maxsize=1)
def rliable_version() -> str | None:
    """rliable's version, or None when it is not installed (or cannot be imported)."""
    try:
        from importlib.metadata import version

        import rliable.library  # noqa: F401  (arch and its pandas must import too)
        return version("rliable")
    except Exception:  # noqa: BLE001  (any import failure means: not usable here)
        return None


def method_description(method: str) -> str:
    """One sentence naming how intervals made by ``method`` were computed."""
    if method == RLIABLE:
        return (f"rliable {rliable_version()} stratified bootstrap (get_interval_estimates, percentile, "
                f"{BOOTSTRAP_SAMPLES} samples) over a runs × (scenario × persona) matrix")
    return (f"numpy stratified bootstrap (percentile, {BOOTSTRAP_SAMPLES} samples) within scenario × persona"
            + ("" if rliable_version() else "; rliable is not installed (pip install 'proactivity-gym[stats]')"))


def intervals(values: np.ndarray, cells: Sequence[np.ndarray], statistic: str = "mean"
              ) -> tuple[list[list[float]], str] | None:
    """The 95% interval of ``statistic`` of each row of ``values`` (rows × runs), resampling runs
    within ``cells`` (index arrays into the runs), and the method used. None when a cell has fewer
    than two runs: one run says nothing about the spread."""
    return batch_intervals([(values, list(cells))], statistic)[0]


def batch_intervals(groups: Sequence[tuple[np.ndarray, Sequence[np.ndarray]]], statistic: str = "mean"
                    ) -> list[tuple[list[list[float]], str] | None]:
    """:func:`intervals` of many groups at once: groups of one cell shape share one bootstrap call
    (one draw: a group's interval is what it would be alone)."""
    if statistic not in STATISTICS:
        raise ValueError(f"statistic: expected one of {STATISTICS}, got {statistic!r}")
    out: list[tuple[list[list[float]], str] | None] = [None] * len(groups)
    by_shape: dict[tuple, list[int]] = {}
    for i, (_, cells) in enumerate(groups):
        sizes = tuple(len(c) for c in cells)
        if sizes and min(sizes) >= 2:
            square = rliable_version() is not None and len(set(sizes)) == 1
            by_shape.setdefault((RLIABLE, len(sizes), sizes[0]) if square else (NUMPY, sizes), []).append(i)
    for shape, members in by_shape.items():
        compute = _rliable_shape if shape[0] == RLIABLE else _numpy_shape
        rows = [groups[i][0] for i in members]
        found = compute(rows, [list(groups[i][1]) for i in members], statistic)
        for i, ci in zip(members, found):
            out[i] = (ci, shape[0])
    return out


# ------------------------------------------------------------------------------------ rliable
@contextlib.contextmanager
def _global_seed(seed: int):
    """rliable's StratifiedBootstrap draws from numpy's global generator: seed it for the call
    and give the caller's state back afterwards."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def _matrix(values: np.ndarray, cells: list[np.ndarray]) -> np.ndarray:
    """(rows, runs) values as (rows, runs per cell, cells): rliable's runs × tasks layout per row."""
    return np.stack([np.asarray(values, dtype=float)[:, cell] for cell in cells], axis=-1)


def _rliable_shape(groups: list[np.ndarray], cells: list[list[np.ndarray]], statistic: str) -> list[list[list[float]]]:
    """rliable's interval for every row of groups whose cells all hold the same number of runs.

    rliable resamples a runs × tasks matrix; here the matrix it resamples holds each run's position
    in its cell, and the statistic reads every row's scores at the drawn positions — the same draw
    as ``get_interval_estimates`` on each row's own score matrix, for all rows in one call."""
    import scipy.stats
    from rliable import library, metrics

    stack = np.concatenate([_matrix(v, c) for v, c in zip(groups, cells)])  # (rows, runs, tasks)
    runs, tasks = stack.shape[1:]
    positions = np.broadcast_to(np.arange(runs, dtype=float)[:, None], (runs, tasks)).copy()
    columns = np.arange(tasks)

    def statistic_of(drawn: np.ndarray) -> np.ndarray:
        scores = np.moveaxis(stack[:, drawn.astype(int), columns], 0, -1)  # (runs, tasks, rows)
        if statistic == "mean":
            return metrics.aggregate_mean(scores)
        # rliable's aggregate_iqm (a 25% trimmed mean over the runs × tasks matrix) of every row at once
        return scipy.stats.trim_mean(scores.reshape(-1, scores.shape[-1]), proportiontocut=0.25, axis=0)

    with _global_seed(SEED):
        _, found = library.get_interval_estimates({"rows": positions}, statistic_of, reps=BOOTSTRAP_SAMPLES,
                                                  confidence_interval_size=CONFIDENCE)
    low, high = np.atleast_2d(found["rows"][0]), np.atleast_2d(found["rows"][1])
    return _split([[float(a), float(b)] for a, b in zip(low.ravel(), high.ravel())], groups)


# -------------------------------------------------------------------------------------- numpy
def _resample(cells: list[np.ndarray], seed: int = SEED, samples: int = BOOTSTRAP_SAMPLES) -> np.ndarray:
    """Bootstrap indices, (samples, runs), drawn within each cell."""
    rng = np.random.default_rng(seed)
    return np.concatenate([cell[rng.integers(0, len(cell), size=(samples, len(cell)))] for cell in cells], axis=1)


@functools.lru_cache(maxsize=64)
def _layout_draws(sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap draws (samples × runs) of runs laid out cell after cell, for cells of these
    sizes, and how often each run is drawn in each sample: the draw depends only on the sizes,
    so groups of one shape share it, and the means of all samples are one matrix product."""
    bounds = np.cumsum((0,) + sizes)
    picks = _resample([np.arange(a, b) for a, b in zip(bounds[:-1], bounds[1:])])
    samples, runs = picks.shape
    counts = np.bincount((np.arange(samples)[:, None] * runs + picks).ravel(), minlength=samples * runs)
    counts = counts.reshape(samples, runs)
    for shared in (picks, counts):
        shared.setflags(write=False)  # shared by every caller
    return picks, counts


def _numpy_shape(groups: list[np.ndarray], cells: list[list[np.ndarray]], statistic: str) -> list[list[list[float]]]:
    """The numpy stratified bootstrap of every row of groups with cells of one shape, the
    percentiles of all rows in one quantile call."""
    picks, counts = _layout_draws(tuple(len(c) for c in cells[0]))
    runs = picks.shape[1]
    ordered = np.concatenate([np.asarray(v, dtype=float)[:, np.concatenate(c)] for v, c in zip(groups, cells)])
    if statistic == "mean":
        stats = ordered @ counts.T / runs  # (rows, samples)
    else:
        drawn, cut = np.sort(ordered[:, picks], axis=-1), int(0.25 * runs)
        stats = drawn[..., cut:runs - cut].mean(axis=-1)
    alpha = (1.0 - CONFIDENCE) / 2.0
    lo, hi = np.quantile(stats, [alpha, 1.0 - alpha], axis=1)
    flat = [[float(a), float(b)] for a, b in zip(lo, hi)]
    return _split(flat, groups)


def _split(flat: list, groups: list[np.ndarray]) -> list[list]:
    """``flat`` (one entry per row of every group, in order) cut back into one list per group."""
    bounds = np.cumsum([0, *(len(v) for v in groups)])
    return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def iqm(values: Sequence[float]) -> float:
    """Interquartile mean: the mean of the middle 50% (rliable's robust aggregate: a 25% trimmed
    mean, ``scipy.stats.trim_mean(values, 0.25)``)."""
    data = np.sort(np.asarray(values, dtype=float).ravel())
    n = len(data)
    if not n:
        return float("nan")
    cut = int(0.25 * n)
    return float(data[cut:n - cut].mean())
