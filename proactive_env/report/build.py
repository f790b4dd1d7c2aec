"""``proactivity-gym report DIR [DIR …]``: every agent found in the folders, compared.

Writes into OUT::

    index.html          one self-contained page: leaderboards, plots (embedded), every run linked
    leaderboard.md      the same tables in markdown (display scale, % labelled)
    leaderboard.csv     long format on the data scale, one row per view × agent × group × metric
    plots/              3t-bars, 3t-radar, j-by-scenario (PNG and/or SVG)
    episodes/           one page per run (the `show` picture and event log), linked from index.html
"""

from __future__ import annotations

import base64
import html
import os
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ..scoring.results import LEGEND, METRICS, UNITS, display, display_ci, header
from .collect import Run, collect
from .leaderboard import Leaderboard, markdown, write_csv
from .page import page
from .plots import bar_plot, radar_plot, scenario_plot


AUTO_ALL = 100  # --episodes auto draws every run up to this many, else the first seed of each cell


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def episode_path(run: Run) -> Path:
    """Where a run's episode page lives, relative to the report folder."""
    return Path("episodes") / _safe(run.agent) / f"{run.scenario}-{run.persona}-s{run.seed}.html"


def _draw(job: tuple[Path, Path, str]) -> str | None:
    from .episode import write_episode

    source, stem, back = job
    try:
        write_episode(source, stem, ["html"], back=back)
    except (ValueError, KeyError) as exc:  # e.g. a trajectory of an older scenario version
        return f"{source}: {exc}"
    return None


def _select(runs: list[Run], episodes: str) -> list[Run]:
    if episodes == "none":
        return []
    if episodes == "all" or (episodes == "auto" and len(runs) <= AUTO_ALL):
        return runs
    first: dict[tuple, Run] = {}
    for run in sorted(runs, key=lambda r: r.seed):
        first.setdefault((run.agent, run.scenario, run.persona), run)
    return list(first.values())


def draw_episodes(runs: list[Run], out: Path, workers: int | None = None) -> tuple[set[Path], list[str]]:
    jobs = []
    for run in runs:
        rel = episode_path(run)
        back = "../" * (len(rel.parts) - 1) + "index.html"
        jobs.append((run.path, (out / rel).with_suffix(""), back))
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    if workers <= 1:
        problems = [_draw(job) for job in jobs]
    else:
        with ProcessPoolExecutor(workers) as pool:
            problems = list(pool.map(_draw, jobs, chunksize=4))
    drawn = {episode_path(run) for run, problem in zip(runs, problems) if problem is None}
    return drawn, [p for p in problems if p]


def _embed(paths: list[Path]) -> str:
    png = next((p for p in paths if p.suffix == ".png"), None)
    if png is not None:
        return f"<img alt='{png.stem}' src='data:image/png;base64,{base64.b64encode(png.read_bytes()).decode()}'>"
    svg = paths[0].read_text(encoding="utf-8")
    return svg[svg.index("<svg"):]


def _html_table(rows: list[dict], keys: tuple[str, ...], iqm: bool = False) -> str:
    heads = "".join(f"<th class='text'>{k.capitalize()}</th>" for k in keys) + "<th>n</th>"
    heads += "".join(f"<th>{html.escape(header(m))}</th>" for m in METRICS) + "<th>J 95% CI</th>"
    heads += "<th>J IQM</th>" if iqm else ""
    body = []
    for row in rows:
        cells = "".join(f"<td class='text'>{html.escape(str(row[k]))}</td>" for k in keys) + f"<td>{row['runs']}</td>"
        cells += "".join(f"<td>{display(m, row[m])}</td>" for m in METRICS)
        cells += f"<td>{display_ci('J', row.get('J_ci'))}</td>"
        cells += f"<td>{display('J', row.get('J_iqm'))}</td>" if iqm else ""
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{heads}</tr>{''.join(body)}</table>"


def _metric_table(board: Leaderboard, metric: str) -> str:
    scenarios = sorted({r["scenario"] for r in board.by_scenario})
    cell = {(r["agent"], r["scenario"]): r for r in board.by_scenario}
    heads = "<th class='text'>Agent</th><th>all</th><th>95% CI</th>" + "".join(
        f"<th>{html.escape(s)}</th>" for s in scenarios)
    rows = []
    for row in board.overall:
        values = "".join(f"<td>{display(metric, cell[(row['agent'], s)][metric])}</td>"
                         if (row["agent"], s) in cell else "<td>—</td>" for s in scenarios)
        rows.append(f"<tr><td>{html.escape(row['agent'])}</td><td>{display(metric, row[metric])}</td>"
                    f"<td>{display_ci(metric, row[f'{metric}_ci'])}</td>{values}</tr>")
    return (f"<h3>{html.escape(header(metric))} — {html.escape(UNITS[metric]['name'])}</h3>"
            f"<table><tr>{heads}</tr>{''.join(rows)}</table>")


def _reported_table(board: Leaderboard) -> str:
    from .reported import NOTE

    heads = "<th class='text'>Agent</th>" + "".join(f"<th>{html.escape(header(m))}</th>" for m in METRICS)
    rows = "".join(f"<tr class='reported'><td>{html.escape(r['agent'])}</td>"
                   + "".join(f"<td>{display(m, r['scores'].get(m))}</td>" for m in METRICS)
                   + "</tr>" for r in board.reported)
    sources = "".join(f"<li><b>{html.escape(r['agent'])}</b>: {html.escape(r['source'])}</li>" for r in board.reported)
    return (f"<h3>Reported in the paper — not re-run</h3><p class='meta'>{html.escape(NOTE)}</p>"
            f"<table><tr>{heads}</tr>{rows}</table><ul class='meta'>{sources}</ul>")


def _runs_section(runs: list[Run], drawn: set[Path], out: Path) -> str:
    parts = []
    for agent in sorted({r.agent for r in runs}):
        mine = sorted((r for r in runs if r.agent == agent), key=lambda r: (r.scenario, r.persona, r.seed))
        rows = []
        for r in mine:
            rel = episode_path(r)
            name = f"{r.scenario} · {r.persona} · seed {r.seed}"
            link = (f"<a href='{rel.as_posix()}'>{html.escape(name)}</a>" if rel in drawn
                    else f"{html.escape(name)} <span class='meta'>(proactivity-gym show PATH)</span>")
            rows.append(f"<tr><td>{link}</td>" + "".join(f"<td>{display(m, r.scores[m])}</td>" for m in METRICS)
                        + f"<td class='text'>{html.escape(os.path.relpath(r.path, out))}</td></tr>")
        heads = "<th class='text'>run</th>" + "".join(f"<th>{html.escape(header(m))}</th>" for m in METRICS)
        parts.append(f"<details><summary>{html.escape(agent)} — {len(mine)} runs</summary><table><tr>{heads}"
                     f"<th class='text'>trajectory</th></tr>{''.join(rows)}</table></details>")
    return "".join(parts)


def build_report(dirs: list[Path], out: Path, reported: bool = False, episodes: str = "auto",
                 formats: tuple[str, ...] | list[str] = ("png", "svg"), workers: int | None = None) -> str:
    """Write the report for the runs in ``dirs`` into ``out``; returns a one-paragraph summary."""
    from .reported import REPORTED

    runs, skipped = collect(dirs)
    board = Leaderboard.of(runs, list(REPORTED) if reported else [])
    out.mkdir(parents=True, exist_ok=True)
    (out / "plots").mkdir(exist_ok=True)
    sources = sorted({str(r.folder) for r in runs})
    (out / "leaderboard.md").write_text(markdown(board, sources), encoding="utf-8")
    write_csv(board, out / "leaderboard.csv")
    formats = list(formats)
    bars = bar_plot(board, out / "plots" / "3t-bars", formats)
    radar = radar_plot(board, out / "plots" / "3t-radar", formats)
    by_scenario = scenario_plot(board, out / "plots" / "j-by-scenario", formats)
    drawn, problems = draw_episodes(_select(runs, episodes), out, workers)
    body = [
        "<h1>Proactivity-Gym report</h1>",
        f"<p class='meta'>{len(runs)} runs of {len(board.agents)} agents from {html.escape(', '.join(sources))}"
        f"{f'; {len(skipped)} unreadable files skipped' if skipped else ''}.</p>",
        f"<p class='meta'>{html.escape(LEGEND)}. Data files (leaderboard.csv, results.json) hold fractions.</p>",
        "<h2>Overall (ranked by J)</h2>", _html_table(board.overall, ("agent",), iqm=True),
        _reported_table(board) if board.reported else "",
        "<h2>Plots</h2>", f"<div>{_embed(bars)}</div>", f"<div class='plots'>{_embed(radar)} {_embed(by_scenario)}</div>",
        "<h2>By persona</h2>", _html_table(board.by_persona, ("persona", "agent")),
        "<h2>By scenario</h2>", _html_table(board.by_scenario, ("scenario", "agent")),
        "<h2>By metric</h2><p class='meta'>Each metric overall (95% CI) and per scenario.</p>",
        *(_metric_table(board, m) for m in METRICS),
        "<h2>Runs</h2><p class='meta'>Each run links to its episode view (the picture `proactivity-gym show` draws); "
        "runs without a page (see --episodes) can be drawn with <code>proactivity-gym show TRAJECTORY</code>.</p>",
        _runs_section(runs, drawn, out),
    ]
    (out / "index.html").write_text(page("Proactivity-Gym report", "\n".join(body)), encoding="utf-8")
    summary = (f"report: {out / 'index.html'} ({len(runs)} runs, {len(board.agents)} agents); leaderboard: "
               f"{out / 'leaderboard.md'}, {out / 'leaderboard.csv'}; plots: {out / 'plots'}; "
               f"episode pages: {len(drawn)}")
    for problem in problems:
        summary += f"\nnot drawn: {problem}"
    return summary
