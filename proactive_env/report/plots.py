"""Bar and radar plots of the 3T per agent. Every axis is on a common 0–1 scale: TC/100, TA,
TR-D, (TR-J − 1)/4, J — said on the plot."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..scoring.results import header
from .leaderboard import Leaderboard

AXES = ("TC", "TA", "TR_D", "TR_J", "J")
SCALE_NOTE = "each metric on 0–1: TC/100, TA, TR-D, (TR-J − 1)/4, J"


def normalise(metric: str, value: float | None) -> float:
    if value is None:
        return float("nan")
    if metric == "TC":
        return value / 100.0
    if metric == "TR_J":
        return (value - 1.0) / 4.0
    return value


def _label(metric: str) -> str:
    return header(metric).replace(" %", "")


def _colours(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def _save(fig, stem: Path, formats: list[str]) -> list[Path]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    paths = []
    for fmt in formats:
        path = stem.with_name(f"{stem.name}.{fmt}")
        fig.savefig(path, dpi=120, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
        paths.append(path)
    return paths


ZERO_MARK = 0.006  # a bar at 0 is drawn this tall (0–1 scale) and labelled, so it is seen, not missing


def _bars(ax, rows: list[tuple], hatch: bool) -> None:
    """Grouped bars, one group per metric; whiskers only where a row has an interval."""
    width = 0.8 / max(1, len(rows))
    colours = _colours(len(rows))
    for i, (agent, scores, cis) in enumerate(rows):
        x = np.arange(len(AXES)) + (i - (len(rows) - 1) / 2) * width
        values = np.array([normalise(m, scores.get(m)) for m in AXES])
        drawn = np.where(values == 0, ZERO_MARK, values)
        ax.bar(x, drawn, width, label=agent, color=colours[i], hatch="//" if hatch else None,
               edgecolor="#555555" if hatch else "white", lw=0.5)
        for j, m in enumerate(AXES):
            if values[j] == 0:
                ax.text(x[j], ZERO_MARK + 0.01, "0", ha="center", va="bottom", fontsize=6, color=colours[i])
            if cis.get(m):
                low, high = normalise(m, cis[m][0]), normalise(m, cis[m][1])
                ax.errorbar(x[j], values[j], yerr=[[values[j] - low], [high - values[j]]], fmt="none",
                            ecolor="#222222", capsize=2, lw=0.8)
    ax.set_xticks(range(len(AXES)))
    ax.set_xticklabels([_label(m) for m in AXES])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score (0–1)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7.5, ncol=2 if len(rows) > 6 else 1, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              frameon=False)


def _bar_figure(n_rows: int):
    from matplotlib.figure import Figure

    return Figure(figsize=(max(8.0, 1.6 * len(AXES) + 0.35 * n_rows * len(AXES) / 2), 4.8))


def bar_plot(board: Leaderboard, stem: Path, formats: list[str]) -> list[Path]:
    """Grouped bars of the runs made here: one group per metric, one bar per agent, 95% CI whiskers
    where the row has an interval (none where it has not). The paper's figures: ``reported_plot``."""
    rows = [(r["agent"], {m: r[m] for m in AXES}, {m: r.get(f"{m}_ci") for m in AXES}) for r in board.overall]
    fig = _bar_figure(len(rows))
    ax = fig.add_subplot()
    _bars(ax, rows, hatch=False)
    over = " (‡ rows: over runs)" if board.over_runs else ""
    ax.set_title(f"3T per agent — {SCALE_NOTE}; whiskers: 95% CI where there is one{over}", fontsize=9.5)
    fig.tight_layout()
    return _save(fig, stem, formats)


def reported_plot(board: Leaderboard, stem: Path, formats: list[str]) -> list[Path]:
    """The paper's reported figures in their own panel: not re-run here, no intervals, gaps where the
    paper states no figure."""
    rows = [(r["agent"], r["scores"], {}) for r in board.reported]
    fig = _bar_figure(len(rows))
    ax = fig.add_subplot()
    _bars(ax, rows, hatch=True)
    ax.set_title(f"Reported in the paper (not re-run, other harnesses) — {SCALE_NOTE}", fontsize=9.5)
    fig.tight_layout()
    return _save(fig, stem, formats)


RADAR_AXES = ("TC", "TA", "TR_D", "TR_J")


def radar_plot(board: Leaderboard, stem: Path, formats: list[str]) -> list[Path]:
    """One polygon per agent run here over the 3T axes (the paper's figures: ``reported_plot``)."""
    from matplotlib.figure import Figure

    angles = np.linspace(0, 2 * np.pi, len(RADAR_AXES), endpoint=False)
    fig = Figure(figsize=(7.5, 6.0))
    ax = fig.add_subplot(projection="polar")
    rows = [(r["agent"], r, False) for r in board.overall]
    colours = _colours(len(rows))
    for i, (agent, scores, reported) in enumerate(rows):
        values = np.array([normalise(m, scores.get(m)) for m in RADAR_AXES])
        if np.isnan(values).any():
            continue
        closed = np.append(values, values[0])
        ax.plot(np.append(angles, angles[0]), closed, color=colours[i], lw=1.6, ls="--" if reported else "-",
                label=agent)
        ax.fill(np.append(angles, angles[0]), closed, color=colours[i], alpha=0.06)
    ax.set_xticks(angles)
    ax.set_xticklabels([_label(m) for m in RADAR_AXES])
    ax.set_ylim(0, 1)
    ax.set_yticks([0.25, 0.5, 0.75, 1.0])
    ax.tick_params(axis="y", labelsize=7)
    ax.set_title("3T profile per agent\n(each on 0–1: TC/100, TA, TR-D, (TR-J − 1)/4)", fontsize=9.5)
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.08, 1.05), frameon=False)
    fig.tight_layout()
    return _save(fig, stem, formats)


def scenario_plot(board: Leaderboard, stem: Path, formats: list[str]) -> list[Path]:
    """J per scenario and agent, with 95% CI whiskers."""
    from matplotlib.figure import Figure

    scenarios = sorted({r["scenario"] for r in board.by_scenario})
    cell = {(r["agent"], r["scenario"]): r for r in board.by_scenario}
    agents = board.agents
    fig = Figure(figsize=(max(8.0, 0.9 * len(scenarios) + 3), 4.6))
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(agents))
    for i, (agent, colour) in enumerate(zip(agents, _colours(len(agents)))):
        x = np.arange(len(scenarios)) + (i - (len(agents) - 1) / 2) * width
        rows = [cell.get((agent, s)) for s in scenarios]
        values = [r["J"] if r else np.nan for r in rows]
        drawn = [ZERO_MARK if v == 0 else v for v in values]
        ax.bar(x, drawn, width, color=colour, label=agent)
        for xi, r in zip(x, rows):
            if r and r["J_ci"]:
                ax.errorbar(xi, r["J"], yerr=[[r["J"] - r["J_ci"][0]], [r["J_ci"][1] - r["J"]]], fmt="none",
                            ecolor="#222222", capsize=1.5, lw=0.7)
    ax.set_xticks(range(len(scenarios)))
    ax.set_xticklabels(scenarios, rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("J (0–1)")
    ax.set_title("J per scenario; whiskers: 95% CI (stratified by persona) where there is one", fontsize=9.5)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return _save(fig, stem, formats)
