"""``proactivity-gym show``: one saved episode as a picture (PNG / SVG) and a page (HTML) with
its scores, its event log and, for LLM agents, the conversation beside it."""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path

from ..envs.timeline import episode_figure
from ..scoring import load_trajectory
from ..scoring.trajectory import scenario_of
from ..scoring.results import METRICS, display, header, inline
from ..spec import Scenario, format_at
from .page import page

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


def describe(entry: dict) -> str:
    """One log entry in words (unknown types as their fields)."""
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
        state = "aligned" if entry.get("aligned") else "MISALIGNED"
        return (f"{state}: {task} at {entry.get('depth')} (expected {entry.get('expected', '?')}); trust "
                f"{entry.get('before', 0):.2f} → {entry.get('after', 0):.2f}")
    if kind == "event":
        return f"{entry.get('kind', 'event')}: {entry.get('id')}" + (f" — {entry['text']}" if entry.get("text") else "")
    fields = ", ".join(f"{k}={v}" for k, v in entry.items() if k not in ("t", "type", "policy", "args"))
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


def _transcript_html(transcript: list[dict]) -> str:
    parts = []
    for turn in transcript:
        role = str(turn.get("role", "?"))
        body = html.escape(str(turn.get("content") or ""))
        calls = [f"<div class='call'>→ <b>{html.escape(name)}</b><pre>{html.escape(args)}</pre></div>"
                 for name, args in _calls(turn)]
        parts.append(f"<div class='turn {html.escape(role)}'><div class='role'>{html.escape(role)}</div>"
                     f"<pre>{body}</pre>{''.join(calls)}</div>")
    return "\n".join(parts)


def episode_page(trajectory: dict, png: bytes, back: str | None = None) -> str:
    """A self-contained HTML page of the episode (the picture embedded)."""
    scenario = trajectory_scenario(trajectory)
    title, _ = episode_title(trajectory, scenario)
    scores = trajectory.get("scores", {})
    score_cells = "".join(f"<th>{html.escape(header(m))}</th>" for m in METRICS if m in scores)
    score_values = "".join(f"<td>{display(m, scores[m])}</td>" for m in METRICS if m in scores)
    rows = "\n".join(
        f"<tr class='{html.escape(e.get('type', ''))}'><td>{format_at(e['t'])}</td>"
        f"<td>{html.escape(e.get('type', ''))}</td><td>{html.escape(describe(e))}</td></tr>"
        for e in trajectory.get("log", []) if e.get("type") not in _QUIET and "t" in e)
    picture = f"<img alt='episode timeline' src='data:image/png;base64,{base64.b64encode(png).decode()}'>"
    transcript = trajectory.get("transcript")
    main = (f"<section><h2>Timeline</h2>{picture}</section>"
            f"<section><h2>Event log</h2><table class='log'><tr><th>time</th><th>type</th><th>what</th></tr>"
            f"{rows}</table></section>")
    if transcript:
        body = (f"<div class='split'><div>{main}</div><aside><h2>Conversation ({len(transcript)} turns)</h2>"
                f"<div class='transcript'>{_transcript_html(transcript)}</div></aside></div>")
    else:
        body = main
    nav = f"<p><a href='{html.escape(back)}'>← report</a></p>" if back else ""
    head = (f"{nav}<h1>{html.escape(title)}</h1><p class='meta'>{html.escape(scenario.description.strip())}</p>"
            f"<table class='scores'><tr>{score_cells}</tr><tr>{score_values}</tr></table>"
            f"<p class='meta'>TA, TR-D and continuation on screen in %; data files hold fractions."
            + (f" Agent settings: {html.escape(json.dumps(trajectory['agent_settings']))}"
               if trajectory.get("agent_settings") else "") + "</p>")
    return page(title, head + body)


def write_episode(path: Path, stem: Path, formats: list[str], back: str | None = None) -> list[Path]:
    """Draw the trajectory at ``path`` to ``stem.<format>`` for each format (png, svg, html)."""
    trajectory = load_trajectory(path)
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    png = figure_bytes(trajectory, "png") if {"png", "html"} & set(formats) else b""
    for fmt in formats:
        target = stem.with_name(stem.name + f".{fmt}")
        if fmt == "png":
            target.write_bytes(png)
        elif fmt == "svg":
            target.write_bytes(figure_bytes(trajectory, "svg"))
        elif fmt == "html":
            target.write_text(episode_page(trajectory, png, back), encoding="utf-8")
        written.append(target)
    return written
