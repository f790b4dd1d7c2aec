"""Renderings of a run: a readable text timeline (``ansi``) and the episode picture (``rgb_array``)."""

from __future__ import annotations

import numpy as np

from ..sim import World
from ..spec import format_at
from ..spec.escape import strip_control

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
    """The last ``last`` entries of the event log (all if None), one line each, then the state.
    Meant for a terminal: each line is stripped of control characters (scenario strings and an
    agent's words could otherwise carry escape sequences) and kept to one line."""
    if world is None:
        return ""
    lines = [f"{world.scenario.title} — persona {world.persona} — now {format_at(world.now)} — "
             f"trust {world.trust.value:.2f}"]
    entries = [e for e in world.log if e["type"] not in _SKIP]
    entries = entries[-last:] if last else entries
    lines += [f"  {format_at(e['t'])}  {_describe(e)}" for e in entries]
    open_tasks = [t.spec.id for t in world.tasks if t.active and not t.closed]
    lines.append(f"  open tasks: {', '.join(open_tasks) or '-'}")
    return "\n".join(strip_control(line, keep_newlines=False) for line in lines) + "\n"


def rgb_timeline(world: World | None, dpi: int = 60) -> np.ndarray:
    """The ``rgb_array`` frame: the same picture as ``proactivity-gym show`` (see ``timeline.py``)
    of the run so far, with a black line at the current time."""
    from .timeline import episode_rgb

    if world is None:
        return np.full((64, 240, 3), 255, np.uint8)
    try:
        return episode_rgb(world.scenario, world.persona, world.log, now=world.now, dpi=dpi)
    except ModuleNotFoundError as exc:  # depends on the installed extras
        if exc.name != "matplotlib":
            raise
        raise ImportError("render_mode='rgb_array' needs matplotlib: pip install -e '.[render]'") from None
