"""``proactivity-gym show``: one saved episode as a picture (PNG / SVG) and a page (HTML) with
its scores, why each point was lost (``explain``), trust over time, its event log and, for LLM
agents, the conversation beside it."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from ..envs.timeline import episode_figure
from ..scoring import load_trajectory
from ..replay import scenario_of
from ..scoring.results import METRICS, display, header, inline
from ..scoring.metrics import COMPONENTS
from ..spec import Scenario
from .explain import Explanation, clock, explain
from .page import render

_QUIET = {"run_start", "run_end"}


def scores_line(scores: dict) -> str:
    return " · ".join(inline(m, scores[m]) for m in METRICS if m in scores)


def trajectory_scenario(trajectory: dict) -> Scenario:
    """The exact scenario the run played: the shipped file (its version checked) with the seed's
    variant applied, as the scorer sees it."""
    return scenario_of(trajectory)


def episode_title(trajectory: dict, scenario: Scenario) -> tuple[str, str]:
    title = f"{scenario.title} — {trajectory.get('agent', '?')} — {trajectory.get('persona')} — seed {trajectory.get('seed')}"
    return title, scores_line(trajectory.get("scores", {}))


def figure_bytes(trajectory: dict, fmt: str = "png", dpi: int = 100) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    scenario = trajectory_scenario(trajectory)
    title, subtitle = episode_title(trajectory, scenario)
    fig = episode_figure(scenario, trajectory["persona"], trajectory.get("log", []), title=title, subtitle=subtitle)
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=dpi)
    return buffer.getvalue()


_TIMES = ("start", "end", "until", "minute", "sent", "made")


def describe(entry: dict, scenario: Scenario | None = None) -> str:
    """One log entry in words (unknown types as their fields; times on the scenario's clock when
    ``scenario`` is given)."""
    kind = entry.get("type", "?")
    task = entry.get("task")
    if kind == "action":
        extra = " ".join(str(entry[k]) for k in ("tool", "depth") if entry.get(k))
        return f"agent {entry.get('verb')} {task or ''} {extra}".strip()
    if kind == "decision":
        actions = ", ".join(entry.get("actions", []))
        return (f"user {entry.get('verdict')}s {task} ({actions}; rule {entry.get('rule')}; trust "
                f"{entry.get('trust_before', 0):.2f} → {entry.get('trust_after', 0):.2f})")
    if kind == "trust":
        state = "aligned" if entry.get("aligned") else (
            "MISALIGNED (over-intervention)" if entry.get("over") else "MISALIGNED (under-intervention)")
        return (f"{entry.get('cause') or entry.get('depth') or 'intervention'} on {task}: {state}; trust "
                f"{entry.get('before', 0):.2f} → {entry.get('after', 0):.2f}")
    if kind == "event":
        return f"{entry.get('kind', 'event')}: {entry.get('id')}" + (f" — {entry['text']}" if entry.get("text") else "")
    def value(k, v):
        return clock(scenario, v) if scenario is not None and k in _TIMES and isinstance(v, (int, float)) else v

    fields = ", ".join(f"{k}={value(k, v)}" for k, v in entry.items()
                       if k not in ("t", "type", "policy", "args") and v is not None)
    return f"{kind} {fields}".strip()


def _calls(turn: dict) -> list[tuple[str, str]]:
    """A turn's tool calls as (name, arguments as indented JSON)."""
    out = []
    for call in turn.get("tool_calls") or []:
        fn = call.get("function", call)
        args = fn.get("arguments", "")
        try:
            args = json.dumps(json.loads(args) if isinstance(args, str) else args, indent=1, ensure_ascii=False)
        except (TypeError, ValueError):
            args = str(args)
        out.append((str(fn.get("name", "?")), args))
    return out


def transcript_text(transcript: list[dict]) -> str:
    """An LLM agent's conversation, readable in a terminal: one block per message."""
    blocks = []
    for turn in transcript:
        role = str(turn.get("role", "?"))
        lines = [f"── {role} " + "─" * max(0, 60 - len(role))]
        if turn.get("content"):
            lines.append(str(turn["content"]))
        lines += [f"→ {name} {args}" for name, args in _calls(turn)]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _turns(transcript: list[dict]) -> list[dict]:
    return [{"role": str(turn.get("role", "?")), "content": str(turn.get("content") or ""), "calls": _calls(turn)}
            for turn in transcript]


def _picture(png: bytes | None) -> str | None:
    return f"data:image/png;base64,{base64.b64encode(png).decode()}" if png else None


def episode_page(trajectory: dict, png: bytes | None, back: str | None = None,
                 explanation: Explanation | None = None) -> str:
    """A self-contained HTML page of the episode: its scores, why points were lost, trust over
    time, the picture (embedded, when ``png`` is given), the event log and any conversation."""
    scenario = explanation.scenario if explanation else trajectory_scenario(trajectory)
    x = explanation or explain(trajectory, scenario)
    title, _ = episode_title(trajectory, scenario)
    scores = trajectory.get("scores", {})
    log = [{"at": clock(scenario, e["t"]), "type": str(e.get("type", "")), "what": describe(e, scenario)}
           for e in trajectory.get("log", []) if isinstance(e, dict) and e.get("type") not in _QUIET and "t" in e]
    return render("episode.html.j2", title=title, description=scenario.description.strip(), back=back,
                  metrics=[m for m in METRICS if m in scores], scores=scores, x=x, components=COMPONENTS,
                  settings=json.dumps(trajectory["agent_settings"]) if trajectory.get("agent_settings") else "",
                  picture=_picture(png), log=log, transcript=_turns(trajectory.get("transcript") or []))


def write_episode(path: Path, stem: Path, formats: list[str], back: str | None = None,
                  picture: bool = True) -> list[Path]:
    """Draw the trajectory at ``path`` to ``stem.<format>`` for each format (png, svg, html);
    ``picture=False``: the HTML page without the timeline picture (drawing it is most of the time)."""
    trajectory = load_trajectory(path)
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    png = figure_bytes(trajectory, "png") if "png" in formats or ("html" in formats and picture) else b""
    for fmt in formats:
        target = stem.with_name(stem.name + f".{fmt}")
        if fmt == "png":
            target.write_bytes(png)
        elif fmt == "svg":
            target.write_bytes(figure_bytes(trajectory, "svg"))
        elif fmt == "html":
            target.write_text(episode_page(trajectory, png if picture else None, back), encoding="utf-8")
        written.append(target)
    return written
