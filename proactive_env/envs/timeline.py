"""The picture of one episode: what `proactivity-gym show` draws and the env's ``rgb_array``.

It is drawn from the scenario and the world's event log alone (each entry a dict with ``t``, the
scenario minute, and ``type``), so a saved trajectory and a live world give the same picture.
Entry types it knows are drawn; unknown ones are ignored. Three panels share the time axis:

* **user & compute** — the user's sleep (shaded in every panel), busy blocks, each resource's
  use by the user and the agent's jobs on it (sleep time or not), intrusions, the TA windows;
* **tasks** — one lane per task: when it became active, its deadline, the agent's actions by
  verb (marker) and depth (colour), the user's decisions, executions and refusals, and a red
  ring where an intervention was misaligned with the depth the user wanted;
* **trust** — the user's trust (1–5) over time.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable

from ..sim import Schedule
from ..spec import Scenario
from ..spec.timeline import MINUTES_PER_DAY

DEPTH_COLOURS = {"PREPARE": "#4c72b0", "SUGGEST": "#2ca02c", "EXECUTE": "#d62728"}
NO_DEPTH = "#7f7f7f"
VERB_DEPTH = {"start": "PREPARE", "continue": "PREPARE", "allocate": "PREPARE", "note": "PREPARE",
              "read": "PREPARE", "present": "SUGGEST", "message": "SUGGEST", "request_approval": "SUGGEST",
              "execute": "EXECUTE"}
VERB_MARKERS = {"start": "o", "continue": "o", "allocate": "s", "defer": ">", "present": "D", "message": "D",
                "request_approval": "D", "note": "o", "execute": "^"}
SLEEP, BUSY, USER_USE = "#dfe6f2", "#f3c98b", "#6f6f6f"
JOB_SLEEP, JOB_AWAKE, TA_BAND, MISALIGNED = "#8e6cc8", "#f0883e", "#fff2a8", "#d62728"
DECISIONS = {"approve": ("P", "#2ca02c"), "decline": ("X", "#d62728")}


def ta_decisions(scenario: Scenario) -> list:
    """The scenario's TA decision windows (each with start, end, urgent, competing, shares).
    The one place that knows where they live in the scenario model."""
    many = getattr(scenario, "ta_decisions", None)
    if many:
        return list(many)
    one = getattr(scenario, "ta_window", None)
    return [one] if one is not None else []


def checked_log(log: object) -> list[dict]:
    """``log`` if it is an event log (a list of objects, each with a string ``type`` and a finite
    minute ``t``); otherwise a ValueError naming the first bad entry (a tampered file is refused
    here, not as a traceback deep in the drawing)."""
    if not isinstance(log, list):
        raise ValueError(f"log: expected a list of entries, got {type(log).__name__}")
    for i, entry in enumerate(log):
        if not isinstance(entry, dict):
            raise ValueError(f"log[{i}]: expected an object with 't' and 'type', got {type(entry).__name__}")
        t = entry.get("t")
        if not isinstance(entry.get("type"), str):
            raise ValueError(f"log[{i}].type: expected a string, got {type(entry.get('type')).__name__}")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
            raise ValueError(f"log[{i}].t: expected the minute as a finite number, got {t!r:.40}")
    return log


def _of_type(log: Iterable[dict], *types: str) -> list[dict]:
    return [e for e in log if e.get("type") in types]


def _spans(log: list[dict], tasks: list[str], end: int) -> dict[str, tuple[int, int]]:
    """When each task was open: from becoming active to its final outcome (or the run's end)."""
    opened, closed = {}, {}
    for e in log:
        task = e.get("task")
        if e["type"] == "task_active" and task not in opened:
            opened[task] = e["t"]
        elif e["type"] in ("task_closed", "task_final", "task_inactive") and task in opened and task not in closed:
            closed[task] = e["t"]
    return {t: (opened[t], closed.get(t, end)) for t in tasks if t in opened}


def _jobs(log: list[dict], scenario: Scenario) -> list[dict]:
    """The agent's work occupying time: ``work`` / ``job`` entries, and the older ``allocate``
    ones (whose resource is the task's). A reservation withdrawn before it started
    (``reservation_withdrawn``: cancelled or moved) never ran, so it is not drawn."""
    resource_of = {t.id: t.work.resource for t in scenario.tasks}
    withdrawn = {e.get("reservation") for e in _of_type(log, "reservation_withdrawn")}
    jobs = []
    for e in _of_type(log, "work", "job", "allocate"):
        if "start" not in e or "end" not in e or e.get("reservation", -1) in withdrawn:
            continue
        jobs.append({"task": e.get("task"), "start": e["start"], "end": e["end"],
                     "resource": e.get("resource", resource_of.get(e.get("task"))),
                     "sleep_time": bool(e.get("sleep_time"))})
    return jobs


def _day_ticks(ax, scenario: Scenario, end: int) -> None:
    days = range(0, end + 1, MINUTES_PER_DAY)
    ax.set_xticks(list(days))
    start = scenario.start_date
    ax.set_xticklabels([f"D{i + 1}\n{(start + dt.timedelta(days=i)):%a %d %b}" if m < end else ""
                        for i, m in enumerate(days)], fontsize=7, ha="left")
    ax.set_xlim(0, end)


def draw_episode(fig, scenario: Scenario, persona: str, log: list[dict], *, title: str = "",
                 subtitle: str = "", now: int | None = None, legend: bool = True) -> None:
    """Draw the episode into the matplotlib ``fig`` (three panels sharing the time axis)."""
    log = checked_log(log)
    end = scenario.end_minute
    schedule = Schedule.of(scenario)
    for e in _of_type(log, "user_up"):  # the nights as the run found them: cut where the user wrote in their sleep
        schedule = schedule.woken(e["t"])
    tasks = scenario.tasks
    resources = [r.id for r in scenario.resources]
    names = {r.id: r.name for r in scenario.resources}
    jobs = _jobs(log, scenario)
    loose = any(j["resource"] not in names for j in jobs)
    top_rows = ["user"] + resources + (["agent work"] if loose else [])
    heights = [1.3 + 0.32 * len(top_rows), 0.5 + 0.3 * len(tasks), 1.5]
    grid = fig.add_gridspec(3, 1, height_ratios=heights, hspace=0.08, left=0.2, right=0.985,
                            top=0.9 if title else 0.98, bottom=0.16 if legend else 0.06)
    top = fig.add_subplot(grid[0])
    mid = fig.add_subplot(grid[1], sharex=top)
    low = fig.add_subplot(grid[2], sharex=top)
    sleep = [(max(s, 0), min(e, end) - max(s, 0)) for s, e in schedule.sleep.spans if e > 0 and s < end]
    windows = [(w.start, w.end - w.start) for w in ta_decisions(scenario)]
    for ax in (top, mid, low):  # one collection each: a figure per step must stay cheap
        band = ax.get_xaxis_transform()
        ax.broken_barh(sleep, (0, 1), transform=band, color=SLEEP, lw=0, zorder=0)
        ax.broken_barh(windows, (0, 1), transform=band, color=TA_BAND, alpha=0.75, lw=0, zorder=0.2)
        ax.vlines(range(0, end, 6 * 60), 0, 1, transform=band, color="#e6e6e6", lw=0.4, zorder=0.3)
        ax.vlines(range(0, end, MINUTES_PER_DAY), 0, 1, transform=band, color="#b0b0b0", lw=0.6, zorder=0.5)
        ax.tick_params(axis="x", which="both", labelbottom=False)
        if now is not None:
            ax.axvline(now, color="black", lw=1.0, zorder=5)
    _draw_compute(top, top_rows, schedule, jobs, names, log, end)
    for i, window in enumerate(ta_decisions(scenario), start=1):  # staggered: windows may overlap
        top.text(window.start, len(top_rows) - 0.42 - 0.22 * ((i - 1) % 3), f" TA{i}: {window.urgent} now, "
                 f"{window.competing} later", ha="left", va="bottom", fontsize=6, color="#7a6400", clip_on=True)
    _draw_tasks(mid, tasks, persona, log, end)
    _draw_trust(low, log, end)
    _day_ticks(low, scenario, end)
    low.tick_params(axis="x", which="major", labelbottom=True)
    if title:
        fig.suptitle(title, x=0.02, ha="left", fontsize=11, fontweight="bold")
    if subtitle:
        fig.text(0.02, 0.955 if title else 0.99, subtitle, ha="left", va="top", fontsize=8.5, color="#333333")
    if legend:
        _legend(fig)


def _draw_compute(ax, rows: list[str], schedule: Schedule, jobs: list[dict], names: dict, log: list[dict],
                  end: int) -> None:
    y = {row: len(rows) - 1 - i for i, row in enumerate(rows)}
    ax.set_ylim(-0.6, len(rows) - 0.1)
    ax.set_yticks([y[r] for r in rows])
    ax.set_yticklabels(["user: busy" if r == "user" else
                        (f"{names[r]}" if r in names else r) for r in rows], fontsize=7.5)
    for start, stop in schedule.unavailable.spans:
        if not schedule.sleep.contains(start) or not schedule.sleep.contains(max(start, stop - 1)):
            ax.broken_barh([(start, stop - start)], (y["user"] - 0.3, 0.6), color=BUSY, zorder=2)
    for start, stop in schedule.sleep.spans:  # sleep drawn over the unavailability it explains
        ax.broken_barh([(start, stop - start)], (y["user"] - 0.3, 0.6), color=SLEEP, zorder=2.1)
    for rid, spans in schedule.resource_busy.items():
        if rid in y:
            ax.broken_barh([(s, e - s) for s, e in spans.spans], (y[rid] - 0.3, 0.25), color=USER_USE, zorder=2)
    for job in jobs:
        row = job["resource"] if job["resource"] in y else "agent work"
        ax.broken_barh([(job["start"], max(job["end"] - job["start"], end / 400))], (y[row] + 0.0, 0.28),
                       color=JOB_SLEEP if job["sleep_time"] else JOB_AWAKE, zorder=3)
    for e in _of_type(log, "intrusion", "conflict"):
        row = e.get("resource") if e.get("resource") in y else ("agent work" if "agent work" in y else "user")
        ax.plot(e["t"], y[row], marker="v", color=MISALIGNED, ms=7, zorder=4, ls="none")
    ax.set_title("user & compute", fontsize=8, loc="left", pad=2)


def _draw_tasks(ax, tasks, persona: str, log: list[dict], end: int) -> None:
    ids = [t.id for t in tasks]
    y = {tid: len(ids) - 1 - i for i, tid in enumerate(ids)}
    spans = _spans(log, ids, end)
    ax.set_ylim(-0.7, len(ids) - 0.3)
    ax.set_yticks([y[t] for t in ids])
    labels = [f"{t.title[:44] + ('…' if len(t.title) > 44 else '')}{' (latent)' if t.latent else ''}" for t in tasks]
    ax.set_yticklabels(labels, fontsize=7)
    for tick, tid in zip(ax.get_yticklabels(), ids):
        tick.set_color("#222222" if tid in spans else "#9a9a9a")
    for t in tasks:
        if t.id in spans:
            start, stop = spans[t.id]
            ax.broken_barh([(start, max(stop - start, 1))], (y[t.id] - 0.12, 0.24), color="#d0d0d0", zorder=1)
            ax.plot(start, y[t.id], marker="|", color="#222222", ms=10, zorder=2)
        if getattr(t, "deadline", None) is not None and t.deadline <= end:
            ax.plot(t.deadline, y[t.id], marker="|", color="#7f7f7f", ms=7, mew=1.5, zorder=2)
    for e in log:
        kind, task = e.get("type"), e.get("task")
        if task not in y:
            continue
        row = y[task]
        if kind == "action":
            verb = e.get("verb", "")
            depth = e.get("depth") or VERB_DEPTH.get(verb)
            colour = DEPTH_COLOURS.get(str(depth).upper(), NO_DEPTH) if verb != "defer" else "#e69f00"
            ax.plot(e["t"], row, marker=VERB_MARKERS.get(verb, "o"), color=colour, ms=5 if verb != "note" else 3,
                    mec="white", mew=0.4, zorder=4, ls="none")
        elif kind == "defer":
            until = e.get("until", e.get("followup"))
            ax.plot(e["t"], row, marker=">", color="#e69f00", ms=5, zorder=4, ls="none")
            if isinstance(until, (int, float)) and until > e["t"]:
                ax.annotate("", xy=(until, row), xytext=(e["t"], row), zorder=3,
                            arrowprops={"arrowstyle": "->", "color": "#e69f00", "lw": 0.8, "ls": "--"})
        elif kind == "decision":
            marker, colour = DECISIONS.get(e.get("verdict"), ("p", NO_DEPTH))
            ax.plot(e["t"], row + 0.32, marker=marker, color=colour, ms=5, zorder=4, ls="none")
        elif kind in ("present", "message", "note"):  # the world's own record of an intervention
            depth = "PREPARE" if kind == "note" else "SUGGEST"
            ax.plot(e["t"], row, marker="D" if kind != "note" else "o", color=DEPTH_COLOURS[depth],
                    ms=5 if kind != "note" else 3, mec="white", mew=0.4, zorder=4, ls="none")
        elif kind == "executed" or (kind == "execute" and e.get("ok")):
            ax.plot(e["t"], row, marker="*", color="black", ms=8, zorder=5, ls="none")
        elif kind == "refused" or (kind == "execute" and e.get("ok") is False):
            ax.plot(e["t"], row, marker="x", color=MISALIGNED, ms=7, mew=1.8, zorder=5, ls="none")
        elif kind == "trust" and e.get("aligned") is False:
            ax.plot(e["t"], row, marker="o", mfc="none", mec=MISALIGNED, ms=12, mew=1.5, zorder=6, ls="none")
    ax.set_title(f"tasks (persona: {persona}) — agent actions by verb and depth, user decisions above",
                 fontsize=8, loc="left", pad=2)


def trust_series(log: list[dict], start: float = 4.43) -> tuple[list[int], list[float]]:
    """The user's trust after each change, as a step series starting at minute 0."""
    times, values = [0], [start]
    log = checked_log(log)
    first = next((e for e in log if e.get("type") in ("trust", "decision")), None)
    if first is not None:
        values[0] = float(first.get("before", first.get("trust_before", start)))
    for e in log:
        after = e.get("after") if e.get("type") == "trust" else (
            e.get("trust_after") if e.get("type") == "decision" else None)
        if after is not None:
            times.append(e["t"])
            values.append(float(after))
    return times, values


def _draw_trust(ax, log: list[dict], end: int) -> None:
    times, values = trust_series(log)
    last = max([e["t"] for e in log if "t" in e] + [0])
    ax.step(times + [last], values + [values[-1]], where="post", color="#333333", lw=1.4, zorder=3)
    bad = [(e["t"], e.get("after", 0)) for e in _of_type(log, "trust") if e.get("aligned") is False]
    if bad:
        ax.plot(*zip(*bad), marker="o", color=MISALIGNED, ms=5, ls="none", zorder=4)
    ax.set_ylim(0.8, 5.2)
    ax.set_yticks([1, 2, 3, 4, 5])
    ax.tick_params(axis="y", labelsize=7)
    ax.set_ylabel("trust (1–5)", fontsize=7.5)
    ax.grid(axis="y", color="#e6e6e6", lw=0.5)
    ax.set_title("user's trust", fontsize=8, loc="left", pad=2)


def _legend(fig) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [
        Patch(color=SLEEP, label="user asleep"), Patch(color=BUSY, label="user busy"),
        Patch(color=USER_USE, label="user's own use"), Patch(color=JOB_SLEEP, label="agent job in sleep time"),
        Patch(color=JOB_AWAKE, label="agent job, user awake"), Patch(color=TA_BAND, label="TA decision window"),
        Line2D([], [], marker="v", color=MISALIGNED, ls="none", label="intrusion on the user"),
        Line2D([], [], marker="|", color="#222222", ms=9, ls="none", label="task active (trigger) / deadline"),
        Line2D([], [], marker="o", color=DEPTH_COLOURS["PREPARE"], ls="none", label="prepare (start, continue)"),
        Line2D([], [], marker="s", color=DEPTH_COLOURS["PREPARE"], ls="none", label="allocate"),
        Line2D([], [], marker="D", color=DEPTH_COLOURS["SUGGEST"], ls="none", label="suggest (present, ask)"),
        Line2D([], [], marker="^", color=DEPTH_COLOURS["EXECUTE"], ls="none", label="execute"),
        Line2D([], [], marker=">", color="#e69f00", ls="none", label="defer (→ follow-up)"),
        Line2D([], [], marker="P", color=DECISIONS["approve"][1], ls="none", label="user approved"),
        Line2D([], [], marker="X", color=DECISIONS["decline"][1], ls="none", label="user declined"),
        Line2D([], [], marker="*", color="black", ms=8, ls="none", label="executed in the world"),
        Line2D([], [], marker="x", color=MISALIGNED, mew=1.8, ls="none", label="refused (not authorised)"),
        Line2D([], [], marker="o", mfc="none", mec=MISALIGNED, ms=10, ls="none", label="misaligned depth"),
    ]
    fig.legend(handles=handles, loc="lower center", ncol=6, fontsize=7, frameon=False, bbox_to_anchor=(0.55, 0.0))


def figure_size(scenario: Scenario) -> tuple[float, float]:
    rows = 1 + len(scenario.resources) + 1
    return 15.0, 3.6 + 0.26 * rows + 0.24 * len(scenario.tasks) + 1.2


def episode_figure(scenario: Scenario, persona: str, log: list[dict], **kwargs):
    """A new (pyplot-free) figure of the episode."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figure_size(scenario))
    draw_episode(fig, scenario, persona, log, **kwargs)
    return fig


def episode_rgb(scenario: Scenario, persona: str, log: list[dict], now: int | None = None, dpi: int = 60):
    """The episode as an RGB array (uint8, H × W × 3): the env's ``rgb_array`` frame."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = episode_figure(scenario, persona, log, now=now, title=scenario.title,
                         subtitle=f"persona {persona}" + (f" · now {_clock(scenario, now)}" if now is not None else ""))
    canvas = FigureCanvasAgg(fig)
    fig.set_dpi(dpi)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def _clock(scenario: Scenario, minute: int) -> str:
    day, rest = divmod(int(minute), MINUTES_PER_DAY)
    date = scenario.start_date + dt.timedelta(days=day)
    return f"D{day + 1} {date:%a} {rest // 60:02d}:{rest % 60:02d}"
