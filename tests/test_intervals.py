"""The report's and the results tables' confidence intervals are rliable's (a stratified bootstrap
over runs, cells as tasks), the fallback without rliable says so, and no whisker is drawn where
there is no interval."""

import sys
from pathlib import Path

import numpy as np
import pytest

from proactive_env.report.collect import Run
from proactive_env.report.leaderboard import Leaderboard
from proactive_env.scoring import intervals
from proactive_env.scoring.results import METRICS, aggregate, ci_statement, results_document

CELLS = [(s, p) for s in ("experiments", "monitor") for p in ("operator", "planner", "reviewer")]


def _fixed_runs(agents=("careful", "cheap"), per_cell=4) -> list[dict]:
    """A fixed set of runs: every agent on every cell, ``per_cell`` seeds, distinct scores per metric."""
    rng = np.random.default_rng(20261202)
    return [{"agent": a, "scenario": s, "persona": p, "seed": 1000 + k,
             "scores": {m: float(rng.uniform(1, 5) if m == "TR_J" else rng.uniform(0, 100) if m == "TC"
                                 else rng.random()) for m in METRICS}}
            for a in agents for s, p in CELLS for k in range(per_cell)]


def _matrix(runs: list[dict], metric: str, cells=CELLS) -> np.ndarray:
    """rliable's layout: runs × tasks, a task being a scenario × persona cell."""
    return np.array([[r["scores"][metric] for r in runs if (r["scenario"], r["persona"]) == c]
                     for c in sorted(cells, key=str)]).T


def _rliable(matrix: np.ndarray, aggregate_func) -> list[float]:
    from rliable import library

    np.random.seed(intervals.SEED)  # rliable's bootstrap draws from numpy's global generator
    _, found = library.get_interval_estimates({"x": matrix}, aggregate_func, reps=intervals.BOOTSTRAP_SAMPLES,
                                              confidence_interval_size=intervals.CONFIDENCE)
    return [float(v) for v in found["x"].ravel()]


@pytest.fixture
def without_rliable(monkeypatch):
    """rliable as if it were not installed."""
    for name in ("rliable", "rliable.library", "rliable.metrics"):
        monkeypatch.setitem(sys.modules, name, None)
    intervals.rliable_version.cache_clear()
    yield
    intervals.rliable_version.cache_clear()


def test_intervals_equal_rliables_on_a_fixed_set_of_runs():
    pytest.importorskip("rliable")
    from rliable import metrics

    runs = _fixed_runs()
    state = np.random.get_state()
    overall = aggregate(runs, ("agent",))
    by_persona = aggregate(runs, ("agent", "persona"))
    assert np.array_equal(np.random.get_state()[1], state[1])  # the caller's global generator is left alone
    for row in overall:
        mine = [r for r in runs if r["agent"] == row["agent"]]
        assert row["ci_method"] == intervals.RLIABLE
        for metric in METRICS:
            matrix = _matrix(mine, metric)
            assert row[metric] == pytest.approx(metrics.aggregate_mean(matrix), rel=1e-12)
            assert row[f"{metric}_ci"] == pytest.approx(_rliable(matrix, metrics.aggregate_mean), rel=1e-12)
    for row in by_persona:  # strata: the scenarios within the persona
        mine = [r for r in runs if r["agent"] == row["agent"] and r["persona"] == row["persona"]]
        cells = [c for c in CELLS if c[1] == row["persona"]]
        assert row["J_ci"] == pytest.approx(_rliable(_matrix(mine, "J", cells), metrics.aggregate_mean), rel=1e-12)


def test_leaderboard_iqm_and_its_interval_are_rliables():
    pytest.importorskip("rliable")
    from rliable import metrics

    runs = _fixed_runs()
    board = Leaderboard.of([Run(r["agent"], r["scenario"], r["persona"], r["seed"], r["scores"], Path("x"), Path("."))
                            for r in runs])
    for row in board.overall:
        matrix = _matrix([r for r in runs if r["agent"] == row["agent"]], "J")
        assert row["J_iqm"] == pytest.approx(metrics.aggregate_iqm(matrix), rel=1e-12)
        assert row["J_iqm_ci"] == pytest.approx(_rliable(matrix, metrics.aggregate_iqm), rel=1e-12)
    assert f"rliable {intervals.rliable_version()}" in board.ci_note
    from proactive_env.report.leaderboard import markdown

    assert board.ci_note in markdown(board, ["fixed runs"])  # the leaderboard says how its intervals were made


def test_an_agents_interval_does_not_depend_on_the_other_agents():
    one = aggregate(_fixed_runs(("careful",)), ("agent",))[0]
    both = {r["agent"]: r for r in aggregate(_fixed_runs(), ("agent",))}
    assert one["J_ci"] == both["careful"]["J_ci"]


def test_without_rliable_the_fallback_states_itself_and_is_the_same_design(without_rliable):
    assert intervals.rliable_version() is None
    runs = _fixed_runs(("careful",))
    row = aggregate(runs, ("agent",))[0]
    assert row["ci_method"] == intervals.NUMPY
    statement = ci_statement([row])
    assert "numpy stratified bootstrap" in statement and "rliable is not installed" in statement
    document = results_document([row], "0.5.0")
    assert set(document["ci"]["computed_by"]) == {intervals.NUMPY}
    assert "rliable is not installed" in document["ci"]["computed_by"][intervals.NUMPY]
    intervals.rliable_version.cache_clear()
    if intervals.rliable_version() is None:
        return
    # with rliable back: the same design drawn by another generator lands within bootstrap noise
    rliable_row = aggregate(runs, ("agent",))[0]
    for metric in METRICS:
        width = rliable_row[f"{metric}_ci"][1] - rliable_row[f"{metric}_ci"][0]
        assert row[f"{metric}_ci"] == pytest.approx(rliable_row[f"{metric}_ci"], abs=0.1 * width)


def test_cells_of_unequal_size_use_the_numpy_bootstrap_and_say_so():
    runs = _fixed_runs(("careful",))
    runs = [r for r in runs if not (r["scenario"] == "monitor" and r["persona"] == "planner" and r["seed"] == 1003)]
    row = aggregate(runs, ("agent",))[0]
    assert row["ci_method"] == intervals.NUMPY and row["J_ci"] is not None
    assert "numpy stratified bootstrap" in ci_statement([row])


def test_no_interval_and_no_method_where_a_cell_has_one_run():
    runs = _fixed_runs(("careful",), per_cell=1)
    row = aggregate(runs, ("agent",))[0]
    assert row["J_ci"] is None and row["ci_method"] is None
    assert "no interval for 1 rows" in ci_statement([row])


def test_no_whiskers_where_there_is_no_interval(monkeypatch, tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.container import ErrorbarContainer

    from proactive_env.report import plots

    runs = _fixed_runs(("careful",)) + [r for r in _fixed_runs(("lonely",), per_cell=1)][:1]
    board = Leaderboard.of([Run(r["agent"], r["scenario"], r["persona"], r["seed"], r["scores"], Path("x"), Path("."))
                            for r in runs])
    rows = {r["agent"]: r for r in board.overall}
    assert rows["lonely"]["J_ci"] is None and rows["careful"]["J_ci"] is not None  # one run: no interval at all
    drawn = []
    monkeypatch.setattr(plots, "_save", lambda fig, stem, formats: drawn.append(fig) or [])
    plots.bar_plot(board, tmp_path / "bars", ["png"])
    ax = drawn[0].axes[0]
    whiskers = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    with_interval = [m for m in plots.AXES if rows["careful"].get(f"{m}_ci")]
    assert len(whiskers) == len(with_interval) > 0  # the careful agent's, one per metric; none for the lonely one
