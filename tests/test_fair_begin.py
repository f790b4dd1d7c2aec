"""An action told when to begin is carried out then, or refused (issue #20, item 5: a world that
remembers the agent), over all 30 pairs and seeds 0, 1000, 1001.

The principle (``Tool.starts``, ``World.start_problem``): a tool declares the arguments that say
when its action begins (a Slurm job's ``begin``, a kiln firing's ``date`` and ``start``); the world
reads them on every call: what follows the action's run (``when: begun``) comes from that start,
and the reply says it in the scenario's clock; a start before now, or at or after the deadline
where the task's reference starts the action at once, is refused. Found by blind round 25: a
relaunch told to begin two days out was accepted and ran at once."""

from __future__ import annotations

import datetime
import json

from gymnasium.utils import seeding

from proactive_env.baselines import TextOracleAgent
from proactive_env.evaluate import play
from proactive_env.replay import rescore
from proactive_env.scoring.judge import RubricJudge
from proactive_env.sim.tools import parse_when
from proactive_env.spec import PERSONAS, load_scenario, shipped_names, variant
from runs import episode

SEEDS = (0, 1000, 1001)
PAIRS = [(s, p) for s in shipped_names() for p in PERSONAS]
LATER = 30  # minutes: a start this much after the call, where the reference starts at once


def _variant(name: str, persona: str, seed: int):
    base = load_scenario(name)
    rng, _ = seeding.np_random(seed)
    return variant.apply(base, variant.draw(base, persona, rng))


def _iso(s, minute: int) -> str:
    moment = datetime.datetime.combine(s.start_date, datetime.time()) + datetime.timedelta(minutes=minute)
    return moment.strftime("%Y-%m-%dT%H:%M")


class StartOracle(TextOracleAgent):
    """The text oracle, giving one task's action the start ``pick(world, action)`` returns (a
    scenario minute; None: the reference's own) wherever it states the action (its request for
    approval and its call); it notes the call's result and the start it gave."""

    def __init__(self, task: str, pick, quoted: dict | None = None):
        self.task, self.pick, self.quoted = task, pick, quoted
        self.name = f"text-oracle+start:{task}"

    def reset(self, env, seed: int) -> None:
        super().reset(env, seed)
        self.action = next(t.action for t in env.world.scenario.tasks if t.id == self.task)
        self.tool = self.world.tools[self.action.tool]
        self.result: str | None = None
        self.start: int | None = None
        self.calling = False

    def _with_start(self, args: dict) -> dict:
        if self.quoted is not None:  # a recorded call, word for word (the matter it named: the oracle's)
            return {**self.quoted, **({"about": args["about"]} if "about" in args else {})}
        minute = self.pick(self.world, self.action)
        if minute is None:
            return args
        self.start = minute
        stamp = _iso(self.world.scenario, minute)
        if len(self.tool.starts) == 1:
            return {**args, self.tool.starts[0]: stamp}
        day, clock = stamp.split("T")  # a date and an HH:MM time
        return {**args, self.tool.starts[0]: day, self.tool.starts[1]: clock}

    def act(self, obs: str, info: dict) -> str:
        if self.calling:
            self.result, self.calling = obs, False
        call = json.loads(super().act(obs, info))
        args = call["arguments"]
        if call["tool"] == self.action.tool and self.result is None and self._the_task(args):
            call["arguments"], self.calling = self._with_start(args), True
        for item in args.get("actions") or []:
            if item.get("tool") == self.action.tool and self._the_task(item.get("args") or {}):
                item["args"] = self._with_start(item.get("args") or {})
        return json.dumps(call)

    def _the_task(self, args: dict) -> bool:
        """Is this the task's own action (the oracle states it with the reference arguments)?"""
        return all(args.get(k) == v for k, v in self.action.args.items())


def _start(s, tool, args: dict) -> int | None:
    """When the action begins by its tool's declared start arguments (None: left out, at once)."""
    values = [args.get(n) for n in tool.starts]
    return None if all(v in (None, "") for v in values) else parse_when(s, "T".join(str(v) for v in values))


def _later(world, action) -> int | None:
    """Inside what the task allows, later than the reference: a window's latest end; where the
    reference starts at once, a little after the call (before the deadline); else the reference."""
    s, tool = world.scenario, world.tools[action.tool]
    window = next((w for k, w in action.windows.items() if k in tool.starts), None)
    if window is not None:
        return _start(s, tool, {tool.starts[0]: window.latest})
    if _start(s, tool, action.args) is None:
        task = next(t for t in s.tasks if t.action is action)
        return min(world.now + LATER, task.deadline - 1)
    return None


def _past_due(world, action) -> int:
    task = next(t for t in world.scenario.tasks if t.action is action)
    return task.deadline + 2 * 24 * 60


def _before_now(world, action) -> int:
    return world.now - 60


def _cases(at_once_only: bool = False):
    """(scenario, persona, seed, variant, task) for every task whose action's tool declares a start
    (with ``at_once_only``: whose reference starts it at once)."""
    for name, persona in PAIRS:
        for seed in SEEDS:
            s = _variant(name, persona, seed)
            tools = {t.name: t for t in s.tools}
            for task in s.tasks:
                tool = tools.get(task.action.tool) if task.action else None
                if tool is None or not tool.starts:
                    continue
                if at_once_only and _start(s, tool, task.action.args) is not None:
                    continue
                yield name, persona, seed, s, task


def _waiting_for_begun(s, task_id: str) -> list[tuple[str, str, int, int]]:
    """What waits for the task's ``begun``: (log type, id, its own time, minutes after the start)."""
    items = [("record", r.id, r.appears or 0, r.when.after) for r in s.records
             if r.when is not None and (r.when.task, r.when.state) == (task_id, "begun")]
    return items + [("event", e.id, e.at, e.when.after) for e in s.events
                    if e.when is not None and (e.when.task, e.when.state) == (task_id, "begun")]


def test_an_action_given_a_later_start_takes_effect_then_and_the_reply_says_when():
    """Every task whose tool declares a start, moved later inside what the task allows (or the
    reference's own start, where that is the only one it takes): the call is done, the reply says
    when it begins in the scenario's clock, the world logs that start, and nothing that follows the
    run (``when: begun``) appears before it — it does appear after, in time, where the run goes on;
    rescoring the run gives its live scores."""
    executed = appeared = 0
    for name, persona, seed, s, task in _cases():
        agent = StartOracle(task.id, _later)
        run = play(agent, name, persona, seed)
        done = [e for e in run["log"] if e["type"] == "execute" and e.get("task") == task.id and e["ok"]]
        if not done:  # (this persona's user does it themselves, or declines it)
            continue
        case = (name, persona, seed, task.id, agent.result)
        start = agent.start if agent.start is not None else _start(s, agent.tool, task.action.args)
        executed += 1
        assert done[0].get("begins") == start and start > done[0]["t"], case
        assert agent.result.startswith("Done:") and f"it begins {agent.world.clock_text(start)}" in agent.result, case
        for kind, item, at, after in _waiting_for_begun(s, task.id):
            shown = [e["t"] for e in run["log"] if e["type"] == kind and e.get("id") == item]
            assert all(t >= max(at, start + after) for t in shown), (case, item, shown)
            due = max(at, start + after)
            if due < s.end_minute - 1:
                assert shown, (case, item, "never appeared")
                appeared += 1
        assert rescore(run, judges=[RubricJudge()]) == run["scores"], case  # the run replays as played
    assert executed >= 24  # the relaunch (planner, operator) and the ablation (all): 3 seeds each
    assert appeared >= 12  # the relaunch's results, from its start


def test_a_start_after_the_deadline_of_an_action_due_at_once_is_refused_and_nothing_runs():
    """Where the reference starts the action at once, a start past its deadline is refused, naming
    the argument: nothing is executed and nothing that waits for it is released."""
    seen = 0
    for name, persona, seed, s, task in _cases(at_once_only=True):
        agent = StartOracle(task.id, _past_due)
        env, obs = episode(agent, name, persona, seed, stop=lambda agent, obs: agent.calling)
        world = env.unwrapped.world
        env.close()
        if not agent.calling:
            continue  # the oracle never calls it here (the user does it themselves)
        case = (name, persona, seed, task.id, obs[:300])
        assert obs.startswith("Error:") and "after this matter is due" in obs, case
        assert f"due ({world.clock_text(world.by_id[task.id].spec.deadline)})" in obs, case  # when: a limit said
        assert f"'{agent.tool.starts[0]}'" in obs, case
        assert not world.by_id[task.id].executed and (task.id, "begun") not in world._reached, case
        seen += 1
    assert seen >= 6  # the relaunch: planner and operator, 3 seeds


def test_a_start_before_now_is_refused():
    seen = 0
    for name, persona, seed, s, task in _cases(at_once_only=True):
        agent = StartOracle(task.id, _before_now)
        env, obs = episode(agent, name, persona, seed, stop=lambda agent, obs: agent.calling)
        world = env.unwrapped.world
        env.close()
        if not agent.calling:
            continue
        assert obs.startswith("Error:") and "before now" in obs, (name, persona, seed, task.id, obs[:300])
        assert not world.by_id[task.id].executed
        seen += 1
    assert seen >= 6


# Blind round 25 (docs/blind-sessions/blind25-experiments-planner-1025.session.json, call 24): the
# OOM-fix relaunch, due D1 11:30, told to begin two days out; it was "Done" and ran at once.
ROUND_25_CALL = {"job_name": "ep60-imagenet-c-bs128", "node": "apl-gpu02", "gpus": "4-7",
                 "script": "eval_robustness.py",
                 "args": {"config": "configs/eval/imagenet_c.yaml", "ckpt": "runs/distill-v3-final/ckpt_ep60.pt",
                          "overrides": ["eval.batch_size=128"], "booking": "NS-0414-G2B"},
                 "begin": "2026-04-15T04:15", "time_limit": "03:00:00"}


def test_round_25_a_relaunch_told_to_begin_two_days_after_it_is_due_is_refused():
    agent = StartOracle("t01_oom_error", None, quoted=ROUND_25_CALL)
    env, obs = episode(agent, "experiments", "planner", 1025, stop=lambda agent, obs: agent.calling)
    world = env.unwrapped.world
    env.close()
    assert agent.calling, "the oracle reached the relaunch"
    assert obs.startswith("Error: launch_job: refused") and "'begin'" in obs and "D3 (Wed 15 Apr) 04:15" in obs, obs
    assert not world.by_id["t01_oom_error"].executed
    assert not any(e["type"] == "record" and e["id"] == "slurm_eval_done" for e in world.log)
