"""``proactivity-gym report DIR [DIR …]``: every agent found in the folders, compared.

Writes into OUT::

    index.html          one self-contained page: leaderboards, plots (embedded), where each agent loses
                        points (per task and per TA decision, across runs), every run linked
    lost-points.html    the lost-points tables alone
    leaderboard.md      the leaderboard tables in markdown (display scale, % labelled)
    leaderboard.csv     long format on the data scale, one row per view × agent × group × metric
    plots/              3t-bars, 3t-radar, j-by-scenario (and reported, with --reported): PNG and/or SVG
    episodes/           one page per run (why points were lost, trust over time, the event log)

Every page comes from a Jinja2 template with autoescape; every path built from data is a slug
checked to stay inside OUT.
"""

from __future__ import annotations

import base64
import os
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..scoring.results import LEGEND, METRICS, UNITS
from ..spec.escape import inside, slug
from .collect import Run, collect
from .leaderboard import Leaderboard, markdown, write_csv
from .page import render
from .plots import bar_plot, radar_plot, reported_plot, scenario_plot

AUTO_ALL = 100  # --episodes auto draws every run up to this many, else the first seed of each cell
POOL_FROM = 24  # runs: below this, explaining them in one process is faster than starting workers


def episode_path(run: Run) -> Path:
    """Where a run's episode page lives, relative to the report folder: slugs only."""
    name = f"{slug(run.scenario)}-{slug(run.persona)}-s{int(run.seed)}.html"
    return Path("episodes") / slug(run.agent) / name


@dataclass(frozen=True)
class _Job:
    source: Path
    page: Path | None  # the episode page to write, or None
    back: str
    picture: bool


USAGE_KEYS = ("calls", "prompt_tokens", "completion_tokens", "total_tokens", "retries", "no_tool_call")


def _usage(trajectory: dict) -> dict | None:
    """An LLM run's token accounting (``llm_usage``), numbers only; None for other agents."""
    usage = trajectory.get("llm_usage")
    if not isinstance(usage, dict):
        return None
    return {k: int(usage[k]) for k in USAGE_KEYS if isinstance(usage.get(k), (int, float))}


def _explain_job(job: _Job) -> tuple[list[dict], list[dict], str | None, dict | None]:
    """One run taken apart (and its page written): its task and decision rows, its LLM usage, or
    a problem."""
    from ..scoring import load_trajectory
    from .episode import episode_page, figure_bytes, trajectory_scenario
    from .explain import explain

    try:
        trajectory = load_trajectory(job.source)
        x = explain(trajectory, trajectory_scenario(trajectory))
        if job.page is not None:
            png = figure_bytes(trajectory) if job.picture else None
            job.page.parent.mkdir(parents=True, exist_ok=True)
            job.page.write_text(episode_page(trajectory, png, job.back, x), encoding="utf-8")
    except Exception as exc:  # e.g. an older scenario version, a damaged log: named, never the end of the report
        return [], [], f"{job.source}: {type(exc).__name__}: {exc}", None
    tasks = [{"task": r.task, "tc": r.tc, "lost": r.weight * r.lost, "match": r.depth_match,
              "missed": r.facts_missed[:1], "broke": r.broke_kind}
             for r in x.tasks]
    decisions = [{"decision": d.decision, "counted": d.counted, "now": d.now, "later": d.later, "won": d.passed,
                  "reason": d.reason if d.counted and not d.passed else None} for d in x.decisions]
    return tasks, decisions, None, _usage(trajectory)


def _select(runs: list[Run], episodes: str) -> set[Path]:
    """The trajectories whose episode pages to write."""
    if episodes == "none":
        return set()
    if episodes == "all" or (episodes == "auto" and len(runs) <= AUTO_ALL):
        return {r.path for r in runs}
    first: dict[tuple, Run] = {}
    for run in sorted(runs, key=lambda r: r.seed):
        first.setdefault((run.agent, run.scenario, run.persona), run)
    return {r.path for r in first.values()}


def explain_runs(runs: list[Run], pages: set[Path], out: Path, pictures: bool = False,
                 workers: int | None = None) -> tuple[list[tuple], set[Path], list[str]]:
    """Every run explained (and the selected ones' pages written): (run, tasks, decisions, LLM
    usage) per run, the pages written (relative to ``out``) and the problems met."""
    jobs = []
    for run in runs:
        rel = episode_path(run)
        page = inside(out, *rel.parts) if run.path in pages else None
        jobs.append(_Job(run.path, page, "../" * (len(rel.parts) - 1) + "index.html", pictures))
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    if workers <= 1 or len(jobs) < POOL_FROM:
        results = [_explain_job(job) for job in jobs]
    else:
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(_explain_job, jobs, chunksize=4))
    explained = [(run, tasks, decisions, usage) for run, (tasks, decisions, problem, usage) in zip(runs, results)
                 if not problem]
    drawn = {episode_path(run) for run, (_, _, problem, _) in zip(runs, results) if run.path in pages and not problem}
    return explained, drawn, [problem for _, _, problem, _ in results if problem]


def usage_rows(explained: list[tuple]) -> list[dict]:
    """Per LLM agent: runs and token totals (and per run), from each trajectory's ``llm_usage``."""
    totals: dict[str, dict] = {}
    for run, _, _, usage in explained:
        if usage is None:
            continue
        row = totals.setdefault(run.agent, {"agent": run.agent, "runs": 0, **dict.fromkeys(USAGE_KEYS, 0)})
        row["runs"] += 1
        for k in USAGE_KEYS:
            row[k] += usage.get(k, 0)
    for row in totals.values():
        row["per_run"] = row["total_tokens"] / row["runs"]
    return sorted(totals.values(), key=lambda r: r["agent"])


def _share(hits: int, n: int) -> str:
    return f"{hits}/{n}" if n else "—"


def task_rows(explained: list[tuple]) -> list[dict]:
    """Per agent × scenario × task, across runs: where TC and TR-D go, worst first."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for run, tasks, _, _ in explained:
        for t in tasks:
            groups[(run.agent, run.scenario, t["task"])].append(t)
    rows = []
    for (agent, scenario, task), items in groups.items():
        judged = [t for t in items if t["match"] is not None]
        missed = Counter(f for t in items for f in t["missed"])
        broke = Counter(t["broke"] for t in items if t["broke"])
        rows.append({"agent": agent, "scenario": scenario, "task": task, "runs": len(items),
                     "tc": sum(t["tc"] for t in items) / len(items), "lost": sum(t["lost"] for t in items) / len(items),
                     "matched": _share(sum(bool(t["match"]) for t in judged), len(judged)),
                     "fact": (f"{missed.most_common(1)[0][0]} ({missed.most_common(1)[0][1]}×)" if missed else ""),
                     "broke": (f"{broke.most_common(1)[0][0]} ({broke.most_common(1)[0][1]}×)" if broke else ""),
                     "bad": sum(t["lost"] for t in items) / len(items) + (len(judged) - sum(bool(t["match"]) for t in judged))})
    return _per_agent(sorted((r for r in rows if r["bad"] > 0), key=lambda r: (-r["bad"], r["agent"], r["task"])))


PER_AGENT = 8  # rows per agent in the report's lost-points tables (every row: the episode pages)


def _per_agent(rows: list[dict]) -> list[dict]:
    """The first ``PER_AGENT`` rows of each agent (rows come worst first), agents in order."""
    out: dict[str, list[dict]] = {}
    for row in rows:
        mine = out.setdefault(row["agent"], [])
        if len(mine) < PER_AGENT:
            mine.append(row)
    return [row for agent in sorted(out) for row in out[agent]]


def decision_rows(explained: list[tuple]) -> list[dict]:
    """Per agent × scenario × TA decision, across the runs where TA counted it."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for run, _, decisions, _ in explained:
        for d in decisions:
            groups[(run.agent, run.scenario, d["decision"])].append(d)
    rows = []
    for (agent, scenario, decision), items in sorted(groups.items()):
        counted = [d for d in items if d["counted"]]
        reasons = Counter(d["reason"] for d in counted if d["reason"])
        passed = sum(d.get("won", d["now"] and d["later"]) for d in counted)  # (won: nothing to postpone too)
        rows.append({"agent": agent, "scenario": scenario, "decision": decision, "counted": _share(len(counted), len(items)),
                     "now": _share(sum(d["now"] for d in counted), len(counted)),
                     "later": _share(sum(d["later"] for d in counted), len(counted)),
                     "passed": _share(passed, len(counted)), "failed": passed < len(counted),
                     "fail_share": (len(counted) - passed) / len(counted) if counted else 0.0,
                     "reason": f"{reasons.most_common(1)[0][0]} ({reasons.most_common(1)[0][1]}×)" if reasons else ""})
    return _per_agent(sorted((r for r in rows if r["failed"]), key=lambda r: (-r["fail_share"], r["agent"],
                                                                               r["scenario"], r["decision"])))


def _data_uri(paths: list[Path]) -> str:
    """A plot as an image the page embeds (never inline SVG markup: an <img> runs nothing)."""
    png = next((p for p in paths if p.suffix == ".png"), None)
    path, kind = (png, "image/png") if png is not None else (paths[0], "image/svg+xml")
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode()}"


def _run_groups(runs: list[Run], drawn: set[Path], out: Path) -> list[dict]:
    groups = []
    for agent in sorted({r.agent for r in runs}):
        mine = sorted((r for r in runs if r.agent == agent), key=lambda r: (r.scenario, r.persona, r.seed))
        groups.append({"agent": agent, "runs": [
            {"name": f"{r.scenario} · {r.persona} · seed {r.seed}", "scores": r.scores,
             "link": episode_path(r).as_posix() if episode_path(r) in drawn else None,
             "path": os.path.relpath(r.path, out)} for r in mine]})
    return groups


def build_report(dirs: list[Path], out: Path, reported: bool = False, episodes: str = "auto",
                 formats: tuple[str, ...] | list[str] = ("png", "svg"), workers: int | None = None,
                 pictures: bool = False) -> str:
    """Write the report for the runs in ``dirs`` into ``out``; returns a one-paragraph summary.
    ``pictures``: embed each episode page's timeline picture (about 0.3–0.7 s a page; without,
    a page takes a few hundredths of a second and ``show`` draws the picture)."""
    from .reported import NOTE, REPORTED

    runs, skipped = collect(dirs)
    board = Leaderboard.of(runs, list(REPORTED) if reported else [])
    out.mkdir(parents=True, exist_ok=True)
    (out / "plots").mkdir(exist_ok=True)
    sources = sorted({str(r.folder) for r in runs})
    (out / "leaderboard.md").write_text(markdown(board, sources), encoding="utf-8")
    write_csv(board, out / "leaderboard.csv")
    formats = list(formats)
    plots = {"bars": _data_uri(bar_plot(board, out / "plots" / "3t-bars", formats)),
             "radar": _data_uri(radar_plot(board, out / "plots" / "3t-radar", formats)),
             "by_scenario": _data_uri(scenario_plot(board, out / "plots" / "j-by-scenario", formats)),
             "reported": (_data_uri(reported_plot(board, out / "plots" / "reported", formats))
                          if board.reported else None)}
    explained, drawn, problems = explain_runs(runs, _select(runs, episodes), out, pictures, workers)
    scenarios = sorted({r["scenario"] for r in board.by_scenario})
    lost = {"n_runs": len(runs), "agents": board.agents, "sources": sources, "per_agent": PER_AGENT,
            "task_rows": task_rows(explained), "decision_rows": decision_rows(explained)}
    page = render("report.html.j2", title="Proactivity-Gym report", **lost, skipped=len(skipped), legend=LEGEND,
                  ci_note=board.ci_note, board=board, metrics=METRICS, units=UNITS, plots=plots, reported_note=NOTE,
                  scenarios=scenarios, cell={(r["agent"], r["scenario"]): r for r in board.by_scenario},
                  usage_rows=usage_rows(explained), run_groups=_run_groups(runs, drawn, out))
    (out / "index.html").write_text(page, encoding="utf-8")
    (out / "lost-points.html").write_text(render("lost_points.html.j2", title="Where each agent loses points", **lost),
                                          encoding="utf-8")
    summary = (f"report: {out / 'index.html'} ({len(runs)} runs, {len(board.agents)} agents); leaderboard: "
               f"{out / 'leaderboard.md'}, {out / 'leaderboard.csv'}; plots: {out / 'plots'}; "
               f"episode pages: {len(drawn)}")
    for problem in problems:
        summary += f"\nnot explained: {problem}"
    return summary
