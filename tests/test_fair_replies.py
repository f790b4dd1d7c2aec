"""One request, one kind of answer (issue 20 item 1/8; blind round 25).

Round 25: in monitor / operator / 1024, after the approved ``install_update`` a note said the
firmware's run needs the laptop reserved; a ``request_approval`` listing ``allocate_resource`` was
refused "not understood: name the exact actions (m8's action: install_update)", while in
experiments / planner / 1025 a request listing a run nobody needed to OK was sent and answered
"nothing here to approve". The same kind of request got two kinds of answer, by which path judged
it. The rule now: every reply to a request says a judgement of the one table
(``sim.world.REQUEST_STATUS``: the words are the judgement's, fields fill in names and ids); a
request listing only the agent's own steps (notes, messages, reads, look-ups, prepare tools, a run
nobody needs to OK) is "nothing here to approve", naming them, and is not sent, whatever the
matter named holds.

Swept over every pair and seeds 0, 1000, 1001: at a few moments of the text oracle's play (its
first step, its first approval request, just after its first action) a fixed battery — each tool of
the scenario listed alone, with and without ``about`` (and each open matter's action on its own
arguments); a name that is no tool; an empty list; an
open action with one of the agent's own steps beside it — gets statuses of the table only, and
each kind of request the same status in every scenario (names and ids aside).
"""

from __future__ import annotations

import copy
import functools
import json
import re

import pytest

from proactive_env.baselines import TextOracleAgent
from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.sim.tools import GENERIC_TOOLS
from proactive_env.sim.world import REQUEST_STATUS, RUN_TOOL
from proactive_env.spec import PERSONAS, shipped_names
from runs import ask_approval, blind_session

SEEDS = (0, 1000, 1001)
CASES = [(name, persona) for name in shipped_names() for persona in PERSONAS]
NO_TOOL = {"tool": "do_it_as_discussed", "args": {}}
MESSAGE = "Is this OK with you?"


@functools.lru_cache(maxsize=None)
def _patterns() -> dict[str, re.Pattern]:
    """Each judgement's words as a pattern: its template, any field standing for any text."""
    return {judgement: re.compile(".*?".join(map(re.escape, re.split(r"\{\w+\}", template.format_map(_Braces())))))
            for judgement, template in REQUEST_STATUS.items()}


class _Braces(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def judgement_of(status: str) -> str | None:
    """The judgement of the table whose words the status is (None: none)."""
    return next((j for j, p in _patterns().items() if p.fullmatch(status)), None)


def _statuses(result: str, inbox: list[str]) -> list[str]:
    """The status each part of a request's result says: where it was sent and answered, the user's
    "[your request: ...]"; else what the text face said ("not sent — ...", "Request kept: ...")."""
    lines = result.removeprefix("Error: request_approval: ").split("\n")
    answers = iter(re.findall(r"\[your request: (.*?)\]$", "\n".join(inbox), re.M))
    said = []
    for line in lines:
        line = re.sub(r"^[\w ,]+: (?=not sent — |Request )", "", line)  # a part of a split request
        if line.startswith("not sent — "):
            said.append(line.removeprefix("not sent — "))
        elif " sent; " in line:
            said.append(next(answers, "(no answer)"))
        else:
            said.append(re.sub(r"^Request (under \S+ |\([^)]*\) )?", "", line.split(". Its arguments")[0]).rstrip("."))
    return said


def _ask(tools, actions, about) -> tuple[list[str], int]:
    """The request's statuses and how many log entries it added."""
    result, log, inbox = ask_approval(tools, MESSAGE, actions, about)
    return _statuses(result, inbox), len(log)


def _own_steps(world, tools) -> set[str]:
    """The tools of the scenario that need no OK now: the generic ones (a run only where no open
    matter's run waits for the user's OK) and the domain tools that do not execute."""
    run_waits = any(world.needs_run_ok(t) and t.units_done < t.spec.work.units for t in tools.open_tasks())
    generic = {name for name in GENERIC_TOOLS if name != RUN_TOOL or not run_waits}
    return generic | {t.name for t in world.scenario.tools if t.name not in GENERIC_TOOLS and t.depth != "execute"}


def _moments(name: str, persona: str, seed: int):
    """The text oracle's tools at its first step, at its first approval request and just after its
    first action (the run stops there)."""
    env = ProactivityTextEnv(name, persona)
    obs, info = env.reset(seed=seed)
    agent = TextOracleAgent()
    agent.reset(env, seed)
    wanted = {"start": True, "request": True, "acted": True}
    yield "start", env.toolbox
    wanted.pop("start")
    done = False
    while not done and wanted:
        call = agent.act(obs, info)
        tool = json.loads(call).get("tool")
        if tool == "request_approval" and wanted.pop("request", None):
            yield "request", env.toolbox
        obs, _, terminated, truncated, info = env.step(call)
        done = terminated or truncated
        if tool in env.toolbox.world.tools and env.toolbox.world.tools[tool].depth == "execute" \
                and wanted.pop("acted", None):
            yield "acted", env.toolbox


def _battery(tools) -> list[tuple[str, str, str | None]]:
    """(kind, status, judgement) for the fixed battery at one moment. The kinds that must be
    answered alike everywhere are asked one after the other on one copy (each must change
    nothing); the scenario's actions one after the other on another; an open action, alone and
    beside a note, on copies of their own (its judgement there: "same" where it is the alone one's)."""
    world = tools.world
    latest = list(world.matters)[-1] if world.matters else None
    names = sorted(GENERIC_TOOLS.keys() - {"request_approval"} | {t.name for t in world.scenario.tools})
    own = _own_steps(world, tools)
    said: list[tuple[str, str, str | None]] = []
    quiet = copy.deepcopy(tools)
    for about in (None, latest):
        for kind, actions in [*[("own step", [{"tool": n, "args": {}}]) for n in names if n in own],
                              ("no tool", [NO_TOOL]), ("empty", [])]:
            statuses, logged = _ask(quiet, actions, about)
            if logged:  # put to the user, not the judgement alone: said so (and asked on afresh after it)
                quiet = copy.deepcopy(tools)
            said += [(kind, status, f"sent, {judgement_of(status)}" if logged else judgement_of(status))
                     for status in statuses]
        acting = copy.deepcopy(tools)
        own_args = [{"tool": t.spec.action.tool, "args": dict(t.spec.action.args)}
                    for t in tools.open_tasks() if t.spec.action]
        for actions in [*[[{"tool": n, "args": {}}] for n in names if n not in own], *[[a] for a in own_args]]:
            said += [("action", status, judgement_of(status)) for status in _ask(acting, actions, about)[0]]
    action = next((t for t in tools.open_tasks() if t.spec.action and not t.executed), None)
    if action is not None:
        matter = world.matter_of(action)
        about = matter.id if matter is not None else None
        asked = [{"tool": action.spec.action.tool, "args": dict(action.spec.action.args)}]
        alone = _ask(copy.deepcopy(tools), asked, about)[0]
        mixed = _ask(copy.deepcopy(tools), [{"tool": "write_note", "args": {}}, *asked], about)[0]
        same = [judgement_of(s) for s in mixed] == [judgement_of(s) for s in alone]
        said.append(("action beside an own step", mixed[0], "same" if same else judgement_of(mixed[0])))
    return said


@functools.lru_cache(maxsize=None)
def _judged(name: str, persona: str) -> tuple[tuple[str, str, str, str | None], ...]:
    """(where, kind, status, judgement) for every battery request of the pair, every seed and moment."""
    return tuple((f"{name}/{persona}/{seed} {moment}", *row) for seed in SEEDS
                 for moment, tools in _moments(name, persona, seed) for row in _battery(tools))


EXPECTED = {"own step": "nothing", "no tool": "unrecognised_action", "empty": "malformed",
            "action beside an own step": "same"}


@pytest.mark.parametrize("name,persona", CASES)
def test_every_reply_to_a_request_says_a_judgement_of_the_one_table(name, persona):
    """Every status the battery gets is one of ``REQUEST_STATUS``'s judgements."""
    judged = _judged(name, persona)
    assert {kind for _, kind, _, _ in judged} >= {"own step", "no tool", "empty", "action"}
    strays = [(where, kind, status) for where, kind, status, _ in judged if judgement_of(status) is None]
    assert not strays, strays[:5]


@pytest.mark.parametrize("name,persona", CASES)
def test_the_same_kind_of_request_gets_the_same_judgement_in_every_scenario(name, persona):
    """Own steps alone: "nothing here to approve" (naming them), not sent; a name that is no tool:
    not understood; an empty list: malformed; an action beside an own step: as the action alone (on
    round 25's code, allocate_resource or a note alone under a matter with an action was "not
    understood", under one without sent and answered "nothing here to approve")."""
    off = [(where, kind, status) for where, kind, status, judgement in _judged(name, persona)
           if kind in EXPECTED and judgement != EXPECTED[kind]]
    assert not off, off[:5]


def test_round_25s_reservation_request_is_nothing_to_approve():
    """Round 25 (monitor / operator / 1024, call 63): after the approved firmware install, asking
    to reserve the laptop (a run nobody needs to OK) was "not understood: name the exact actions
    (m8's action: install_update)"; in experiments / planner / 1025 (call 25) a request for a run
    nobody needed to OK was sent and answered "nothing here to approve". Both now get the one
    judgement, not sent."""
    for stem, at in (("blind25-monitor-operator-1024", 63), ("blind25-experiments-planner-1025", 25)):
        env, calls = blind_session(stem, at)
        log = len(env.world.log)
        obs = env.step(calls[at])[0]
        assert "not sent — nothing here to approve: allocate_resource needs no OK now (your own step)" in obs, obs
        assert [e["type"] for e in env.world.log[log:]] == ["tool_error"], env.world.log[log:]  # nothing put to the user
