"""Approval requests are understood by what they ask (blind play, rounds 21–22), swept over every
scenario–persona pair and seeds 0, 1000 and 1001.

A request asks the user to approve the actions it names that need approval: the agent's own steps
(reading, notes, messages, look-ups, prepare tools, a run nobody needs to OK) are dropped before
the user is asked, so a request naming them beside the action is answered as the action alone; a
request naming two open matters' actions is asked of each, answered as the two asked one after the
other; a request naming the action of a task still to come gets the same reply whatever is to come
(compared with that task removed). Played on the world's own tools (``tests/noninterference.py``'s
draw); each probe runs on a copy of the world, so the run itself is only waited through.
"""

import copy
import json

import pytest
from gymnasium.utils import seeding

from noninterference import drawn, without
from runs import ask_approval as _ask
from proactive_env.baselines import TextOracleAgent
from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.evaluate import play
from proactive_env.sim import TextTools, World
from proactive_env.sim.tools import GENERIC_TOOLS
from proactive_env.sim.world import RUN_TOOL
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1000, 1001)


def _world(s, persona, rules, seed):
    rng, _ = seeding.np_random(seed)
    world = World(s, persona, rng, rules=dict(rules), face="text")
    return world, TextTools(world)


def _decision_points(world, tools, until=None):
    """Wait through the run, yielding at every decision point (before ``until``)."""
    while not world.done:
        world.advance()
        if world.done or (until is not None and world.now >= until):
            return
        tools.settle()
        yield


def _approval_tasks_as_they_come_up(name, persona):
    """Each task with an approval action, at the first decision point it is open and not executed
    (every seed): the seed, the world and tools then, the task, its ``about`` and a plain request."""
    for seed in SEEDS:
        s, choice = drawn(name, persona, seed)
        world, tools = _world(s, persona, choice["rules"], seed)
        seen = set()
        for _ in _decision_points(world, tools):
            for task in [t for t in tools.open_tasks() if t.spec.action and not t.executed and t.index not in seen]:
                seen.add(task.index)
                yield seed, world, tools, task, _about(world, task), f"May I {task.spec.action.tool.replace('_', ' ')}?"


def _own(task):
    return {"tool": task.spec.action.tool, "args": dict(task.spec.action.args)}


def _about(world, task):
    matter = world.matter_of(task)
    return matter.id if matter is not None else None


def _own_steps(world, tools):
    """Every tool of the scenario that needs no approval now: the generic ones (a run only where no
    open matter's run waits for the user's OK) and the domain tools that do not execute."""
    run_waits = any(world.needs_run_ok(t) and t.units_done < t.spec.work.units for t in tools.open_tasks())
    generic = [name for name in GENERIC_TOOLS if name != RUN_TOOL or not run_waits]
    domain = [t.name for t in world.scenario.tools if t.name not in GENERIC_TOOLS and t.depth != "execute"]
    return [{"tool": name, "args": {}} for name in generic + domain]


@pytest.mark.parametrize("name", shipped_names())
@pytest.mark.parametrize("persona", PERSONAS)
def test_a_request_naming_the_agents_own_steps_beside_the_action_is_answered_as_the_action_alone(name, persona):
    """For every task with an approval action, when it comes up: the request naming its action and
    every step that needs no approval gets the same result, user's reply, decision and log as the
    request naming the action alone (on main: "not understood: name the exact actions")."""
    probed = 0
    for seed, world, tools, task, about, message in _approval_tasks_as_they_come_up(name, persona):
        alone = _ask(copy.deepcopy(tools), message, [_own(task)], about)
        padded = copy.deepcopy(tools)
        steps = _own_steps(padded.world, padded)
        assert _ask(padded, message, [*steps[:3], _own(task), *steps[3:]], about) == alone, \
            f"{name}/{persona}/{seed} {task.spec.id}"
        probed += 1
    assert probed >= len(SEEDS)


def _two_open_actions(world, tools):
    """Pairs of open tasks each with an approval action not yet done (in two matters, in one that
    raised both, or a need no matter concerns yet)."""
    acting = [t for t in tools.open_tasks() if t.spec.action and not t.executed]
    return [(a, b) for a in acting for b in acting if a.index < b.index]


def _oracle_points(name, persona, seed):
    """The text oracle's run, yielding its tools after every step (where waiting alone never has
    two actions open at once: the oracle's work brings up the matters that hang on it)."""
    env = ProactivityTextEnv(name, persona)
    obs, info = env.reset(seed=seed)
    agent = TextOracleAgent()
    agent.reset(env, seed)
    done = False
    while not done:
        yield env.toolbox
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated


def _ask_both_and_apart(tools, first, second, where):
    """One request naming both actions (about the first) against the two asked one after the other."""
    world = tools.world
    message = "May I do both of these?"
    result, log, inbox = _ask(copy.deepcopy(tools), message, [_own(first), _own(second)], _about(world, first))
    apart = copy.deepcopy(tools)
    one = _ask(apart, message, [_own(first)], _about(world, first))
    two = _ask(apart, message, [_own(second)], _about(world, second))
    expected = [f"{task.spec.action.tool}: {said.removeprefix('Error: request_approval: ')}"
                for task, (said, _, _) in ((first, one), (second, two))]
    assert result.removeprefix("Error: request_approval: ").split("\n") == expected, where
    assert (log, inbox) == (one[1] + two[1], one[2] + two[2]), where


@pytest.mark.parametrize("name", shipped_names())
@pytest.mark.parametrize("persona", PERSONAS)
def test_a_request_naming_two_open_matters_actions_is_asked_of_each(name, persona):
    """At the first decision point where two open tasks each have an approval action: one request
    naming both (about the first) is answered exactly as the two asked one after the other, each
    under its own matter — the same results, decisions, replies and log (on main: "not sent —
    one matter per request"). Waited through, else (no two open at once) played by the oracle."""
    probed = 0
    for seed in SEEDS:
        s, choice = drawn(name, persona, seed)
        world, tools = _world(s, persona, choice["rules"], seed)
        waited = (tools for _ in _decision_points(world, tools))
        for source in (waited, _oracle_points(name, persona, seed)):
            found = next(((at, pairs) for at in source if (pairs := _two_open_actions(at.world, at))), None)
            if found is None:
                continue
            at, pairs = found
            for first, second in pairs[:3]:
                _ask_both_and_apart(at, first, second, f"{name}/{persona}/{seed} {first.spec.id} + {second.spec.id}")
                probed += 1
            break
    if not probed:  # (monitor's planner and operator: every action is done before the next comes up)
        pytest.skip("no two approval actions are open at once, waited through or played by the oracle")


def _hidden_requests(tools, hidden):
    """What the agent is told on asking for the action of a task still to come: alone, beside a
    note (with the latest matter's id) and beside an open matter's action; each on a copy. Beside
    an open matter's action, that is answered as if asked alone and the other waits."""
    world = tools.world
    latest = list(world.matters)[-1] if world.matters else None
    open_action = next((t for t in tools.open_tasks() if t.spec.action and not t.executed), None)
    asks = [([hidden], None), ([{"tool": "write_note", "args": {}}, hidden], latest)]
    if open_action is not None:
        asks.append(([_own(open_action), hidden], _about(world, open_action)))
    message = f"May I {hidden['tool'].replace('_', ' ')}?"
    said = [_ask(copy.deepcopy(tools), message, actions, about) for actions, about in asks]
    if open_action is not None and not any(t.spec.action.tool == hidden["tool"] for t in tools.open_tasks()
                                           if t.spec.action):
        # it neither spoils nor changes the open matter's request: that is answered as if asked alone,
        # and the action no open matter calls for waits, said as it is whatever is to come
        alone = _ask(copy.deepcopy(tools), message, [_own(open_action)], _about(world, open_action))
        lines = said[-1][0].removeprefix("Error: request_approval: ").split("\n")
        assert lines[0] == f"{open_action.spec.action.tool}: {alone[0].removeprefix('Error: request_approval: ')}"
        assert lines[1].startswith(f"{hidden['tool']}: Request kept: it fits no open matter"), lines
    return said


def _points(s, persona, rules, seed):
    """The minutes of a waited-through run's decision points, and when each task came up."""
    world, tools = _world(s, persona, rules, seed)
    minutes = [world.now for _ in _decision_points(world, tools)]
    return minutes, {e["task"]: e["t"] for e in world.log if e["type"] == "task_active"}


@pytest.mark.parametrize("name", shipped_names())
@pytest.mark.parametrize("persona", PERSONAS)
def test_a_request_for_a_task_still_to_come_is_answered_alike_whatever_is_to_come(name, persona):
    """For every task with an action that comes up after the first decision point: at the first
    decision point and the last before it comes up, requests naming its action (alone, beside a
    note under the latest matter, beside an open matter's action) get the same results, replies
    and log as in the run with that task removed (non-interference, as tests/test_noninterference.py);
    beside an open matter's action, that is answered as if asked alone (on main: "not understood")."""
    compared = 0
    for seed in SEEDS:
        s, choice = drawn(name, persona, seed)
        minutes, came_up = _points(s, persona, choice["rules"], seed)
        later = {t.id: came_up[t.id] for t in s.tasks if t.action and minutes and came_up.get(t.id, 0) > minutes[0]}
        probes = {t: {minutes[0], max(m for m in minutes if m < at)} for t, at in later.items()}
        full: dict[tuple[str, int], list] = {}
        world, tools = _world(s, persona, choice["rules"], seed)
        for _ in _decision_points(world, tools):
            for task_id, at in probes.items():
                if world.now in at and not world.knowable(world.by_id[task_id]):  # (a knowable need's own
                    # action brings it up: tests/test_fair_early.py)
                    full[task_id, world.now] = _hidden_requests(tools, _own(world.by_id[task_id]))
        for task_id, at in later.items():
            cut_world, cut_tools = _world(without(s, task_id), persona, choice["rules"], seed)
            action, probed = _own(world.by_id[task_id]), set()
            for _ in _decision_points(cut_world, cut_tools, until=at):
                if (task_id, cut_world.now) in full:
                    assert _hidden_requests(cut_tools, action) == full[task_id, cut_world.now], \
                        f"{name}/{persona}/{seed} without {task_id} at {cut_world.clock_text()}"
                    probed.add(cut_world.now)
            assert probed == {m for t, m in full if t == task_id}, f"{name}/{persona}/{seed} without {task_id}: woke at other times"
            compared += len(probed)
    assert compared > 0


UNCLEAR = {"tool": "do_it_as_discussed", "args": {}}  # names no action any matter calls for


@pytest.mark.parametrize("name", shipped_names())
@pytest.mark.parametrize("persona", PERSONAS)
def test_a_request_not_understood_is_no_decline_and_the_right_request_after_it_is_answered_as_alone(name, persona):
    """For every task with an approval action, when it comes up: a request under its matter naming
    no action it calls for is "not understood" and not sent — nothing put to the user, no decision
    (on main: recorded as the user declining, so the task's wanted depth fell to a suggestion), no
    trust moved, the answer standing and the rules in force as before — and the correct request
    after it gets the same result and decision as asked alone."""
    probed = 0
    for seed, world, tools, task, about, message in _approval_tasks_as_they_come_up(name, persona):
        alone = copy.deepcopy(tools)
        alone_result = _ask(alone, message, [_own(task)], about)[0]
        first = copy.deepcopy(tools)
        w = first.world
        answers, rules = dict(w.policy.answers), dict(w.policy.rules)
        approval = w.tasks[task.index].approval
        result, log, _ = _ask(first, message, [UNCLEAR], about)
        where = f"{name}/{persona}/{seed} {task.spec.id}"
        assert "not understood" in result, (where, result)
        assert not [e for e in log if e["type"] in ("decision", "present", "trust")], (where, log)
        assert (w.policy.answers, w.policy.rules) == (answers, rules), where
        assert w.tasks[task.index].approval in (approval, "pending"), where  # queued where the user is away
        assert _ask(first, message, [_own(task)], about)[0] == alone_result, where
        assert [d.to_dict() for d in w.decisions[-1:]] == [d.to_dict() for d in alone.world.decisions[-1:]], where
        probed += 1
    assert probed >= len(SEEDS)


class _UnclearFirst(TextOracleAgent):
    """The text oracle, asking each of its approval requests first with an action no matter calls for."""

    name = "text-oracle+not-understood-first"

    def reset(self, env, seed: int) -> None:
        super().reset(env, seed)
        self.held: str | None = None

    def act(self, obs: str, info: dict) -> str:
        if self.held is not None:
            call, self.held = self.held, None
            return call
        call = super().act(obs, info)
        parsed = json.loads(call)
        if parsed.get("tool") != "request_approval":
            return call
        self.held = call
        return json.dumps({**parsed, "arguments": {**parsed["arguments"], "actions": [UNCLEAR]}})


@pytest.mark.parametrize("name", shipped_names())
def test_a_not_understood_request_before_each_of_the_text_oracles_leaves_its_scores(name):
    """Over every persona and seed, the text oracle with each approval request first asked with an
    action no matter calls for scores what it scores alone: J, TA, TR-D, trust and every task's TC."""
    for persona in PERSONAS:
        for seed in SEEDS:
            alone = play(TextOracleAgent(), name, persona, seed)["scores"]
            probed = play(_UnclearFirst(), name, persona, seed)["scores"]
            for key in ("J", "TA", "TC", "TR_D", "TR_J"):
                assert probed[key] == pytest.approx(alone[key]), (persona, seed, key)
            assert [t["TC"] for t in probed["tasks"]] == [t["TC"] for t in alone["tasks"]], (persona, seed)


def test_round_21s_flashcards_request_not_understood_is_no_decline():
    """Round 21 (exam_prep / planner / 1013): requests for the flashcards named what the player
    took the work to be, not the matter's action (``save_study_plan``), and were answered "not
    understood" — recorded as Jamie declining, so the flashcards' wanted depth fell to a
    suggestion. Now such a request is not sent, names the action, and the right one is approved."""
    name, persona, seed = "exam_prep", "planner", 1013
    s, choice = drawn(name, persona, seed)
    world, tools = _world(s, persona, choice["rules"], seed)
    cards = world.by_id["t05_flashcards"]
    for _ in _decision_points(world, tools):
        if cards in tools.open_tasks():
            break
    about = _about(world, cards)
    result, log, _ = _ask(tools, "OK to make the Quiz 3 flashcards from L20-L22 now?",
                          [{"tool": "make_flashcards", "args": {"deck": "L20-L22"}}], about)
    assert result == (f"Error: request_approval: not sent — not understood: name the exact actions "
                      f"({about}'s action: save_study_plan)"), result
    assert not log and cards.spec.id not in world.policy.answers and cards.approval is None
    result, log, _ = _ask(tools, "OK to save the Quiz 3 flashcards to your notebook?", [_own(cards)], about)
    assert [(e["verdict"], e["rule"]) for e in log if e["type"] == "decision"] == [("approve", "default_approve")], log
