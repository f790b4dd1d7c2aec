"""A promise in a reply is kept (issue #20, blind play round 24, job_applications / planner / 1021).

Round 24: the thank-you request (``request_approval`` with ``about: m15`` at D4 16:15, a quarter of
an hour before its task came up) was "Request kept: ... (you will be told)"; when the task came up
it never reached Morgan — its ``cc`` was left out, and the kept request was judged by a second,
tighter matcher than a live request (one that demanded most compared arguments, optional ones
included) — and nothing ever said so. The task was missed.

The rules now (DESIGN §4): every kept item (request, note, message, postponement) ends in exactly
one of two ways, each said: it counts for a task, or it is dropped — at the latest when it can no
longer count (a follow-up a day on; whatever is still kept when the run ends) — saying why. A
kept request is judged as the same request asked at the moment a task with the action it names
comes up (``TextTools._request_owner``, the live request's judgement: named under the matter, a
request partly off is still its request): it counts for it, the keys where its arguments are off
named; where that task does not take it though its arguments do not say it is another thing's,
the agent is told at once, naming the keys that differ and never a value (it stays kept: what is
still to come may take it, and saying otherwise would tell whether anything is). Swept over every
pair and seeds 0, 1000, 1001 on the text oracle's play with its requests also sent before their
tasks come up.
"""

from __future__ import annotations

import functools
import json

import pytest

from proactive_env.baselines import TextOracleAgent
from proactive_env.baselines.probe_adversaries import compared_keys, other_value
from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.sim.world import headline
from proactive_env.spec import PERSONAS, shipped_names
from proactive_env.spec.timeline import parse_at
from runs import blind_session

SEEDS = (0, 1000, 1001)
CASES = [(name, persona) for name in shipped_names() for persona in PERSONAS]
KEPT = "Request kept: it fits no open matter"


class _EarlyAsker(TextOracleAgent):
    """The text oracle, which also asks for each later task's action at its own last wait before
    that task comes up (``early``: task id -> the minute of that wait in the oracle's own run),
    with the reference arguments or with one compared argument changed (``changed``)."""

    name = "text-oracle+early-requests"

    def __init__(self, early: dict[str, int], changed: bool):
        self.early, self.changed = early, changed

    def reset(self, env, seed: int) -> None:
        super().reset(env, seed)
        self.asked: list[list] = []  # [task id, minute, message, reply, the key changed]
        self.queue: list[tuple[int, str]] = []
        self.last: int | None = None

    def act(self, obs: str, info: dict) -> str:
        if self.last is not None:  # the observation answers the request made last
            self.asked[self.last][3], self.last = obs, None
        if self.queue:
            self.last, call = self.queue.pop(0)
            return call
        call = super().act(obs, info)
        if json.loads(call)["tool"] != "wait":
            return call
        w = self.world
        for task in w.tasks:
            at = self.early.get(task.spec.id)
            if at is None or task.active or task.triggered or w.now < at:
                continue
            del self.early[task.spec.id]
            args, keys, key = dict(task.spec.action.args), compared_keys(w, task), None
            if self.changed and keys:  # each compared key in turn, over the tasks
                key = keys[task.index % len(keys)]
                args[key] = other_value(args[key])
            message = f"Request {len(self.asked) + 1}: may I go ahead with this when it is due?"
            self.asked.append([task.spec.id, w.now, message, None, key])
            self.queue.append((len(self.asked) - 1, json.dumps({"tool": "request_approval", "arguments": {
                "message": message, "actions": [{"tool": task.spec.action.tool, "args": args}]}})))
        if self.queue:
            self.pending.appendleft(json.loads(call))  # the oracle's wait, after the requests
            self.last, call = self.queue.pop(0)
        return call


@functools.lru_cache(maxsize=None)
def _oracle_waits(name: str, persona: str, seed: int) -> dict[str, int]:
    """The text oracle's own run: for each task with an action that comes up after the first
    decision point, the minute of the oracle's last wait before it came up."""
    env = ProactivityTextEnv(name, persona)
    obs, info = env.reset(seed=seed)
    agent = TextOracleAgent()
    agent.reset(env, seed)
    waits, done = [], False
    while not done:
        call = agent.act(obs, info)
        if json.loads(call)["tool"] == "wait":
            waits.append(env.world.now)
        obs, _, terminated, truncated, info = env.step(call)
        done = terminated or truncated
    up = {e["task"]: e["t"] for e in env.world.log if e["type"] == "task_active"}
    first = waits[0] if waits else 0
    out = {}
    for task in env.world.tasks:
        at = up.get(task.spec.id)
        before = [m for m in waits if m < at] if at is not None else []
        if task.spec.action is not None and at is not None and at > first and before:
            out[task.spec.id] = before[-1]
    return out


ENDINGS = (" now counts", " counted for nothing", " counts for nothing more")  # how a kept item ends, said


def _said_of(world, item: dict) -> list[str]:
    """What the agent was told of a kept item (each line names it by kind, time and words)."""
    name = f"Your {item['kind']} of {world.clock_text(item['t'])} (\"{headline(item['text'], 60)}\")"
    return [line.split(name, 1)[1] for line in world.inbox if name in line]


def _unsaid_endings(env, agent, seed: int) -> list[str]:
    """Plays the run to its end, watching every item the face keeps (a note's shadow that already
    counted, ``also``, promised nothing); returns those whose ending the agent was never told."""
    obs, info = env.reset(seed=seed)
    agent.reset(env, seed)
    seen: dict[int, dict] = {}
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated
        seen.update((id(item), item) for item in env.toolbox.earlier if "also" not in item)
    w = env.world
    return [f"{item['kind']} of {w.clock_text(item['t'])}: {item['text'][:60]}" for item in seen.values()
            if not any(line.startswith(ENDINGS) for line in _said_of(w, item))]


@pytest.mark.parametrize("name,persona", CASES)
def test_every_kept_item_counts_or_is_dropped_and_said(name, persona):
    """Class sweep: the text oracle, with each later task's request also sent at its last wait
    before the task comes up — with the reference arguments, and with one compared argument
    changed (each key in turn over the tasks) — leaves no kept item without its ending said: each
    counts for a task or is dropped saying why, by the end of the run at the latest. A request on
    the reference arguments counts for its task when that comes up; one with a key changed never
    counts, and where the matter whose action it names does not take it, the agent is told naming
    that key, never its value."""
    early_requests = 0
    for seed in SEEDS:
        early = _oracle_waits(name, persona, seed)
        for changed in (False, True):
            env = ProactivityTextEnv(name, persona)
            agent = _EarlyAsker(dict(early), changed)
            unsaid = _unsaid_endings(env, agent, seed)
            assert not unsaid, f"{name}/{persona}/{seed} changed={changed}: never said how they ended: {unsaid}"
            assert not env.toolbox.earlier, "something is still kept after the run ended"
            for task_id, minute, message, reply, key in agent.asked:
                if reply is None or not reply.startswith(KEPT):
                    continue  # taken at once by an open matter (another task's, on the same arguments): not kept
                early_requests += 1
                lines = _said_of(env.world, {"kind": "request", "t": minute, "text": message})
                at = (name, persona, seed, task_id, key, lines)
                if not changed and env.world.by_id[task_id].active:  # (one that never came up: said at the end)
                    assert any(line.startswith(" now counts for") for line in lines), at
                if changed and key is not None:
                    assert not any(line.startswith(" now counts") for line in lines), at
                    for line in lines:
                        if line.startswith(" was not put"):  # the key named, never a value
                            assert key in line and "Zq-0000" not in line, at
    assert early_requests > 0 or not any(_oracle_waits(name, persona, s) for s in SEEDS)


# ------------------------------------------------------------------ round 24, as played
def _round24(upto: int):
    return blind_session("blind24-job_applications-planner-1021", upto)


def test_round24_the_thank_you_asked_before_its_task_came_up_reaches_morgan():
    """Round 24, D4 16:15 (call 89 of the session): the thank-you to Hannah and Marcus, asked under
    m15 a quarter of an hour before t10 came up, without t10's optional ``cc`` — "Request kept ...
    (you will be told)". At 16:30 t10 came up and the request was never put to Morgan, and nothing
    said so (on the old code: still kept at the end of the run, t10 never presented). The need was
    knowable then (its records were all visible), so the request, its own action on its own
    arguments, brings it up at once (tests/test_fair_early.py) and Morgan answers it."""
    env, calls = _round24(89)
    call = json.loads(calls[89])
    assert call["tool"] == "request_approval" and call["arguments"]["about"] == "m15"
    assert [a["tool"] for a in call["arguments"]["actions"]] == ["send_email"]
    assert "cc" not in call["arguments"]["actions"][0]["args"]
    assert call["arguments"]["actions"][0]["args"]["to"] == ["hannah.lowe@copperleafcu.ca", "marcus.bell@copperleafcu.ca"]
    world, thanks = env.world, env.world.by_id["t10_thank_you"]
    assert world.clock_text() == "D4 (Fri 1 May) 16:15" and not thanks.active
    said = env.step(calls[89])[0]
    assert said.startswith("Request under m15 sent") and "[your request: approved]" in said, said
    assert thanks.active and thanks.presented and world.policy.answers.get(thanks.spec.id) == "approve"
    assert not [i for i in env.toolbox.earlier if i["kind"] == "request" and i["t"] == parse_at("D4 16:15")]


def test_round24_the_heads_up_kept_before_its_task_is_told_when_its_matter_does_not_take_it():
    """Round 24, D4 07:45 (call 73): the referees' heads-up to Ana alone, kept before t11 (to Ana and
    Jon) came up at D5 09:00; it was never put to Morgan and nothing said so. Now, when t11 comes
    up, the agent is told it was not put to Morgan and which argument differs (``to``, never an
    address); and the same request asked live under m16 (call 97) is m16's request (one of two
    recipients named agrees: it is not another thing's), the key said."""
    env, calls = _round24(73)
    said = env.step(calls[73])[0]
    assert said.startswith(KEPT), said
    heads_up = env.world.by_id["t11_reference_headsup"]
    seen = ""
    for n in range(74, 97):
        seen += "\n" + env.step(calls[n])[0]
    assert heads_up.active
    line = next(ln for ln in seen.splitlines() if "Your request of D4 (Fri 1 May) 07:45" in ln)
    assert line.endswith("was not put to Morgan: m16 calls for send_email now, and arguments that do not match "
                         "the matter: to. If it was meant for m16, ask again with its own arguments; it stays "
                         "kept for a matter it fits."), line
    assert "@" not in line.split("was not put", 1)[1]
    live = env.step(calls[97])[0]
    assert live.startswith("Request under m16 sent") and "(arguments that do not match the matter: to)" in live, live
