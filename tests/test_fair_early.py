"""A need the agent could see is the agent's from then on (issue #20: decisions that need
foresight, a world that remembers the agent; blind round 25, experiments / planner / 1025).

Round 25: at D2 08:30 the player read the booking sheet (the second half of Wednesday night free,
bookable until 18:00 on the day) and, as the planner's policy says ("booking: just do it"), called
``book_gpu_slot`` with the scenario's own reference arguments for t08_book_wednesday. It was
refused — "no open matter calls for book_gpu_slot now" — because t08 is an agent-triggered task
whose trigger was D2 09:00, half an hour later: a reason that is the scorer's schedule, not the
world's state. The player never retried; t08 was missed and the ablation chain behind it cut off.

The rule now (DESIGN.md §4): an agent-triggered task (a latent need) is brought forward by the
agent's own call that is that need's action — an execute of its tool on the task's own arguments
(``TextTools.args_problem``, the one judgement), or an approval request listing it — made once the
need is knowable (``World.knowable``: from its ``earliest`` where declared, else once every record
of its evidence is visible). The call then goes as it would once the task has come up. Any other
call is said as before, whatever is to come (non-interference).

The sweep plays the text oracle on every scenario–persona pair and seeds 0, 1000, 1001, and makes
each knowable need's action (or its request, where the rule wants asking) at the first minute it
is knowable and before its trigger; before it, the same call with one compared argument changed
is refused (or kept) exactly as where the need could never come up.
"""

from __future__ import annotations

import copy
import json
import pathlib

import pytest

from proactive_env.baselines.oracle import TextOracleAgent, work_text
from proactive_env.baselines.probe_adversaries import other_value
from proactive_env.evaluate import make_env
from proactive_env.sim import TextTools
from proactive_env.spec import PERSONAS, format_at, shipped_names, trigger_minute
from proactive_env.spec.timeline import parse_at
from runs import episode

SEEDS = (0, 1000, 1001)
SCORES = ("TC", "TA", "TR_D", "J")
ROUND25 = pathlib.Path(__file__).parent.parent / "docs" / "blind-sessions" / "blind25-experiments-planner-1025.session.json"


def _play(agent, name: str, persona: str, seed: int):
    """One text episode of ``agent``; its scores and the world as it ended."""
    env, _ = episode(agent, name, persona, seed)
    world = env.unwrapped.core.world
    scores = env.unwrapped.trajectory(agent=agent.name)["scores"]
    env.close()
    return scores, world


class _WatchedOracle(TextOracleAgent):
    """The text oracle, noting the first minute each (task, state) was reached (seen after its calls)."""

    def reset(self, env, seed):
        super().reset(env, seed)
        self.reached_at: dict[tuple[str, str], int] = {}

    def act(self, obs, info):
        for key in self.world._reached:
            self.reached_at.setdefault(key, self.world.now)
        return super().act(obs, info)


def _knowable_at(world, reached_at: dict, task) -> int | None:
    """The first minute the need was knowable in the oracle's run (None: never), from the log."""
    shown = {}
    for entry in world.log:
        if entry["type"] == "record":
            shown.setdefault(entry["id"], entry["t"])
    spec = task.spec
    if not all(r in world.store.visible for r in spec.evidence) or not spec.evidence:
        return None
    times = [shown.get(r, 0) for r in spec.evidence]
    times += [reached_at.get((c.task, c.state), 10 ** 9) for c in spec.requires]
    return spec.trigger.earliest if spec.trigger.earliest is not None else max(times)


def _told_apart(world, task) -> bool:
    """Is the task's action told apart from every other task's by its arguments?"""
    tools, args = TextTools(world), dict(task.spec.action.args)
    return not any(o is not task and o.spec.action and o.spec.action.tool == task.spec.action.tool
                   and tools.args_problem(o, args) is None for o in world.tasks)


def _the_call(world, task) -> dict | None:
    """The need's action as the rule in force wants it made: carried out, or asked for."""
    action, rule = task.spec.action, world.policy.rule(task.spec)
    about = {"about": task.spec.id}  # (as the oracle names its matters)
    if rule == "execute":
        return {"tool": action.tool, "arguments": {**action.args, **about}}
    if rule == "approve":
        return {"tool": "request_approval", "arguments": {
            "message": work_text(task), "actions": [{"tool": action.tool, "args": dict(action.args)}], **about}}
    return None


def _changed(world, tools, task, call: dict) -> dict | None:
    """The call with one compared argument changed (None: the action compares none)."""
    action = task.spec.action
    compared = [k for k in action.args if k not in action.free_text]
    if not compared:
        return None
    args = {**action.args, compared[0]: other_value(action.args[compared[0]])}
    assert tools.args_problem(task, args) is not None
    if call["tool"] == "request_approval":
        return {**call, "arguments": {**call["arguments"], "actions": [{"tool": action.tool, "args": args}]}}
    return {"tool": action.tool, "arguments": args}


def _reply(world, tools, call: dict) -> str:
    try:
        return tools.call(call["tool"], call["arguments"])
    except Exception as exc:  # (a ToolError: the refusal is the reply)
        return f"Error: {exc}"


class _EarlyOracle(TextOracleAgent):
    """The text oracle, which also makes each knowable need's action at the first minute it is
    knowable (it sets a follow-up there where that is no decision point of its own)."""

    def __init__(self, due: dict[str, int]):
        super().__init__()
        self.due = due

    def reset(self, env, seed):
        super().reset(env, seed)
        self.toolbox = env.toolbox
        self.made: dict[str, dict] = {}  # task -> its call, the reply, and whether a changed one was said as today
        self.sent: str | None = None
        self.waits = [{"tool": "schedule_followup", "arguments": {"at": format_at(at), "note": "look again"}}
                      for at in sorted(set(self.due.values())) if at > env.core.world.now]

    def act(self, obs, info):
        if self.sent is not None:
            self.made[self.sent]["reply"] = obs
            self.sent = None
        if self.waits:
            return json.dumps(self.waits.pop(0))
        w = self.world
        for task_id, at in self.due.items():
            task = w.by_id[task_id]
            if task_id in self.made or w.now < at or task.triggered or not w.knowable(task):
                continue
            call = _the_call(w, task)
            if call is None:
                continue
            self.made[task_id] = {"call": json.dumps(call), "alike": self._refused_alike(task, call)}
            self.sent = task_id
            return json.dumps(call)
        return super().act(obs, info)

    def _refused_alike(self, task, call: dict) -> bool:
        """Is the call with one compared argument changed said exactly as where the need could
        never come up (and does it leave the need latent)?"""
        here = copy.deepcopy((self.world, self.toolbox))
        gone = copy.deepcopy((self.world, self.toolbox))
        changed = _changed(*here, here[0].by_id[task.spec.id], call)
        if changed is None:
            return True
        gone[0].by_id[task.spec.id].triggered = True  # (it came up inactive: it never will)
        return (_reply(*here, changed) == _reply(*gone, changed)
                and not here[0].by_id[task.spec.id].triggered)


def _refused(reply: str) -> bool:
    return reply.startswith("Error") or reply.startswith("Request kept")


@pytest.mark.parametrize("name", shipped_names())
def test_a_knowable_need_acted_on_before_its_trigger_is_carried_out_and_scores_as_the_oracle(name):
    """Class sweep (module doc): every agent-triggered task with an action that is knowable before
    its trigger in the oracle's run."""
    problems, checked = [], 0
    for persona in PERSONAS:
        for seed in SEEDS:
            watched = _WatchedOracle()
            base, world = _play(watched, name, persona, seed)
            due = {}
            for task in world.tasks:
                if task.spec.trigger.type != "agent" or task.spec.action is None or not task.active:
                    continue
                if not _told_apart(world, task):
                    continue  # its call fits another task's action as well: that one may take it
                at = _knowable_at(world, watched.reached_at, task)
                if at is not None and at < trigger_minute(world.scenario, task.spec):
                    due[task.spec.id] = at
            if not due:
                continue
            early = _EarlyOracle(due)
            scores, _ = _play(early, name, persona, seed)
            for task_id, made in early.made.items():
                checked += 1
                if _refused(made["reply"]):
                    problems.append(f"{persona}/{seed} {task_id}: {made['call'][:200]} -> {made['reply'][:300]}")
                if not made["alike"]:
                    problems.append(f"{persona}/{seed} {task_id}: a changed argument was said otherwise than today")
            if any(scores[k] < base[k] - 1e-9 for k in SCORES):
                problems.append(f"{persona}/{seed}: {({k: scores[k] for k in SCORES})} < oracle {({k: base[k] for k in SCORES})}")
    assert not problems, "\n".join(problems[:8])
    if name in ("experiments", "job_applications", "pottery_studio"):
        assert checked > 0  # the sweep did reach needs known before their trigger


def _begun_at_once(call: str) -> str:
    parsed = json.loads(call)
    parsed.get("arguments", parsed).pop("begin")
    return json.dumps(parsed)


def test_round25_the_wednesday_booking_made_at_0830_is_carried_out():
    """Round 25 (experiments / planner / 1025): the player's own calls, replayed; at D2 08:30
    (call 60) the booking with the reference arguments is done, and t08 comes up then."""
    session = json.loads(ROUND25.read_text())
    env = make_env(session["scenario"], session["persona"], "text", None)
    env.reset(seed=session["seed"])
    world = env.unwrapped.core.world
    for i, call in enumerate(session["calls"][:60]):
        # call 24 relaunched the eval with a `begin` two days after it was due: carried out at once
        # when played, refused since begin27 (tests/test_fair_begin.py); replayed as it ran then
        env.step(_begun_at_once(call) if i == 24 else call)
    booking = json.loads(session["calls"][60])
    assert booking["tool"] == "book_gpu_slot" and world.now == parse_at("D2 08:30")
    t08 = world.by_id["t08_book_wednesday"]
    assert not t08.triggered
    said = env.step(session["calls"][60])[0]
    assert said.startswith("Done: book_gpu_slot"), said
    assert t08.executed and t08.trigger == parse_at("D2 08:30")
    env.close()
