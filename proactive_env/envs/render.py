"""Renderings of a run: a readable text timeline and a timeline picture."""

from __future__ import annotations

import numpy as np

from ..sim import World
from ..spec import format_at

_SKIP = {"trust"}


def _describe(entry: dict) -> str:
    kind = entry["type"]
    if kind == "action":
        return f"agent {entry['verb']} {entry['task']}"
    if kind == "decision":
        return f"user {entry['verdict']} {entry['task']} ({entry['rule']}; trust {entry['trust_before']:.2f})"
    details = ", ".join(f"{k}={v}" for k, v in entry.items() if k not in ("t", "type", "policy"))
    return f"{kind} {details}".strip()


def ansi_timeline(world: World | None, last: int | None = 40) -> str:
    """The last ``last`` entries of the event log (all if None), one line each, then the state."""
    if world is None:
        return ""
    lines = [f"{world.scenario.title} — persona {world.persona} — now {format_at(world.now)} — "
             f"trust {world.trust.value:.2f}"]
    entries = [e for e in world.log if e["type"] not in _SKIP]
    entries = entries[-last:] if last else entries
    lines += [f"  {format_at(e['t'])}  {_describe(e)}" for e in entries]
    open_tasks = [t.spec.id for t in world.tasks if t.active and not t.closed]
    lines.append(f"  open tasks: {', '.join(open_tasks) or '-'}")
    return "\n".join(lines) + "\n"


_COLOURS = {
    "active": (200, 200, 200), "start": (90, 160, 230), "continue": (90, 160, 230), "allocate": (120, 90, 200),
    "defer": (240, 180, 40), "present": (60, 180, 90), "execute": (220, 70, 60), "sleep": (225, 230, 245),
    "window": (255, 235, 200), "now": (0, 0, 0),
}


def rgb_timeline(world: World | None, width: int = 480, row: int = 10) -> np.ndarray:
    """Tasks as rows over the scenario's days: sleep shaded, the TA window tinted, each task's
    active span in grey with its actions as coloured ticks; a black line marks now."""
    n = len(world.tasks) if world else 1
    img = np.full((row * (n + 1), width, 3), 255, np.uint8)
    if world is None:
        return img
    end = world.scenario.end_minute
    x = lambda minute: min(width - 1, max(0, int(minute * width / end)))  # noqa: E731
    for start, stop in world.schedule.sleep.spans:
        img[:, x(start):x(stop) + 1] = _COLOURS["sleep"]
    for d in world.scenario.ta_decisions:
        img[:, x(d.start):x(d.end) + 1] = _COLOURS["window"]
    for t in world.tasks:
        if t.active:
            stop = t.spec.deadline if t.closed else world.now
            img[row * t.index + 3: row * t.index + 7, x(t.trigger):x(stop) + 1] = _COLOURS["active"]
    index = {t.spec.id: t.index for t in world.tasks}
    for e in world.log:
        if e["type"] == "action" and e.get("task") in index:
            y = row * index[e["task"]]
            img[y + 1: y + row - 1, x(e["t"]):x(e["t"]) + 2] = _COLOURS[e["verb"]]
    img[:, x(world.now)] = _COLOURS["now"]
    return img
