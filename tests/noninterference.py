"""A fixed probing player for the non-interference sweep (issue #20.1).

``probe_run`` plays one scenario–persona–seed on the text face's tools with a script that uses
only what the agent sees: at every decision point it lists, reads every visible record with and
without ``about``, reserves every resource for every record title, calls every domain tool and
asks approval for every execute tool (with no arguments, and with the schema's examples), for a run
and for a note alone, with and without ``about``; on every record title it has not
used before it writes a note, a message and a postponement, with and without ``about`` (once:
what is kept waits for a matter, and repeating it would only grow that list). It returns every observation with the minute it was made. Played once on the
scenario and once on the scenario with one task removed, the observations before that task
comes up must be identical: nothing the agent sees depends on a task it could not know of yet.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from gymnasium.utils import seeding

from proactive_env.sim import TextTools, ToolError, World
from proactive_env.spec import Scenario, load_scenario, variant

LATER = 180  # a postponement looks this far ahead


@functools.lru_cache(maxsize=None)
def drawn(name: str, persona: str, seed: int) -> tuple[Scenario, dict]:
    """The seed's variant of a scenario, as the env draws it (cached: one draw per pair and seed)."""
    rng, _ = seeding.np_random(seed)
    base = load_scenario(name)
    choice = variant.draw(base, persona, rng)
    return variant.apply(base, choice), choice


def text_world(name: str, persona: str, seed: int) -> tuple[World, TextTools]:
    """The text face's world and tools for a pair and seed, on the variant and rules the seed draws."""
    s, choice = drawn(name, persona, seed)
    rng, _ = seeding.np_random(seed)
    world = World(s, persona, rng, rules=dict(choice["rules"]), face="text")
    return world, TextTools(world)


def without(s: Scenario, task_id: str) -> Scenario:
    """The scenario with one task taken out (nothing else: what hangs on it never comes up)."""
    return s.model_copy(update={"tasks": [t for t in s.tasks if t.id != task_id]})


@dataclass
class Run:
    seen: list[tuple[int, str]]  # (minute, text) of every observation, in order
    activated: dict[str, int]  # task id -> the minute it came up


def probe_run(s: Scenario, persona: str, rules: dict, seed: int, until: int | None = None) -> Run:
    """Play the probing script (module doc) until the run ends or the clock passes ``until``."""
    rng, _ = seeding.np_random(seed)
    world = World(s, persona, rng, rules=dict(rules), face="text")
    tools = TextTools(world)
    seen: list[tuple[int, str]] = []
    read = [0, 0]
    used: set[str] = set()

    def news() -> None:
        lines = world.inbox[read[0]:]
        read[0] = len(world.inbox)
        lines += [f"record {e['id']} v{e['version']}" for e in world.log[read[1]:] if e["type"] == "record"]
        read[1] = len(world.log)
        if lines:
            seen.append((world.now, "\n".join(lines)))

    def call(name: str, **args) -> None:
        try:
            result = tools.call(name, {k: v for k, v in args.items() if v is not None})
        except ToolError as exc:
            result = f"Error: {exc}"
        seen.append((world.now, f"{name} {sorted(args.items())!r} -> {result}"))
        news()

    world.advance()
    while not world.done and (until is None or world.now < until):
        tools.settle()
        news()
        _probe(world, call, used)
        world.advance()
    activated = {e["task"]: e["t"] for e in world.log if e["type"] == "task_active"}
    return Run(seen, activated)


def _probe(world: World, call, used: set[str]) -> None:
    """One decision point of the script: the same calls whatever the scenario holds unseen."""
    s = world.scenario
    call("list_records")
    call("list_matters")
    latest = list(world.matters)[-1] if world.matters else None
    titles = []
    for rid in sorted(world.store.visible):
        titles.append(world.store.view(rid).title)
        for about in (None, latest):
            call("read_record", record_id=rid, about=about)
    at = world.clock_text(world.now + LATER) if world.now + LATER < s.end_minute else None
    for title in titles:
        for about in (None, latest):
            for r in s.resources:
                call("allocate_resource", what=title, resource=r.id, start=world.clock_text(), about=about)
            if title in used:
                continue
            call("write_note", text=title, about=about)
            call("message_user", text=title, about=about)
            if at is not None:
                call("defer_task", what=title, plan="pick it up then", until=at, about=about)
        used.add(title)
    subject = titles[-1] if titles else "this"
    for about in (None, latest):  # a run, and one of the agent's own steps, asked for alone
        call("request_approval", message=f"May I reserve what {subject} needs?",
             actions=[{"tool": "allocate_resource", "args": {}}], about=about)
        call("request_approval", message=f"May I note {subject}?", actions=[{"tool": "write_note", "args": {}}],
             about=about)
        for tool in s.tools:
            first = next(iter(tool.params), None)
            call(tool.name, about=about)
            if first is not None:
                call(tool.name, **{first: subject}, about=about)
            if tool.depth == "execute":
                call("request_approval", message=f"May I {tool.name.replace('_', ' ')}? ({subject})",
                     actions=[{"tool": tool.name, "args": {}}], about=about)
                shown = {k: p.example for k, p in tool.params.items() if p.example is not None}  # the schema's examples
                call("request_approval", message=f"May I {tool.name.replace('_', ' ')} like this?",
                     actions=[{"tool": tool.name, "args": shown}], about=about)
