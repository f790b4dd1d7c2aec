"""An action names itself, and one judgement decides whether its arguments are the task's (issue
#20, blind play round 24, meal_planning / operator / 1022).

Round 24: the operator's Tuesday grocery checkout (t05, its own Monday-morning follow-up, filed
under m2, Greenway's slot notice) was sent twice with ``about: m1`` — Alex's request, which asked
for "a Greenway order in for Tuesday evening" — and refused with "m1 calls for no such action now
with these arguments"; the same call with ``about: m2`` was accepted, and without ``about`` it was
refused again ("no open matter calls for this action with these arguments") because attribution
demanded the optional voucher that execution does not. The order was never placed: t05 missed,
three tasks that hang on it cut off, trust 4.77 → 2.91.

The rules now (DESIGN §4): an execute, and an approval request naming an action, goes to the open
task whose action it is — ``about`` chooses only among those (several: the arguments decide) — and
whether its arguments are the task's is decided by execution's own judgement
(``TextTools.args_problem``); a call that reaches a task on wrong arguments is refused — naming
them only where it is a try on that task (``about`` chose it), which counts.
"""

from __future__ import annotations

import json

import pytest

from noninterference import text_world
from runs import blind_session
from proactive_env.baselines.probe_adversaries import compared_keys, other_value
from proactive_env.sim import ToolError
from proactive_env.sim.tools import _says_other
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1000, 1001)
CASES = [(name, persona) for name in shipped_names() for persona in PERSONAS]


class _DryRun:
    """The world's own decisions on an execute or a request, without carrying them out: what the
    call reached (a task and the argument judgement handed to the world) is recorded, so that one
    decision point can be probed with every ``about`` without changing what follows."""

    def __init__(self, world, tools):
        self.world, self.tools, self.reached = world, tools, []

    def __enter__(self):
        w = self.world

        def execute(task, args, problem=None):
            self.reached.append((task, problem))
            return problem if w.policy.authorised(task.spec) else "unauthorised"

        def present(task, *a, **k):
            self.reached.append((task, None))
            return None

        self.saved = (w.execute, w.present, self.tools._file, list(self.tools.earlier))
        w.execute, w.present = execute, present
        self.tools._file = lambda *a, **k: None
        return self

    def __exit__(self, *exc):
        w = self.world
        w.execute, w.present, self.tools._file, self.tools.earlier[:] = self.saved
        return False

    def call(self, tool: str, args: dict) -> str:
        self.reached.clear()
        try:
            return self.tools.call(tool, args)
        except ToolError as refused:
            return f"Error: {refused}"


def _optional_left_out(world, task) -> dict:
    """The reference arguments less every optional one (execution compares those only if given)."""
    action, params = task.spec.action, world.tools[task.spec.action.tool].params
    return {k: v for k, v in action.args.items() if k not in params or params[k].required}


def _twin(world, task, got) -> bool:
    """Is ``got`` another task acting with the same tool on the same compared arguments (then
    ``about``, or the free text, tells them apart)?"""
    keys = compared_keys(world, task)
    return (got is not task and got.spec.action is not None and got.spec.action.tool == task.spec.action.tool
            and all(json.dumps(got.spec.action.args.get(k), sort_keys=True) == json.dumps(task.spec.action.args[k], sort_keys=True)
                    for k in keys))


def _named_others(world, tools, task, about, args) -> list:
    """Where the named matter does not concern the task, its own open tasks acting with the same
    tool that the arguments do not say are another thing's: ``about`` chooses among those."""
    concerned = tools.concerns(world.matters[about]) if about is not None else []
    return [] if task.index in concerned else [
        t for t in tools.open_tasks() if t.index in concerned and t.spec.action and not t.executed
        and t.spec.action.tool == task.spec.action.tool and not _says_other(t, args, tools.names)]


def _probe_task(world, tools, task, where: str) -> int:
    """Every ``about`` the agent can name (and none), on the task's own arguments, on them less
    the optional ones, and on them with one compared argument changed."""
    action = task.spec.action
    abouts = [None, *world.matters]
    own = dict(action.args)
    calls = [(own, None), (_optional_left_out(world, task), None)]
    calls += [({**own, k: other_value(own[k])}, k) for k in compared_keys(world, task)]
    probes = 0
    untried: dict = {}  # about -> the replies to changed calls that tried nothing
    with _DryRun(world, tools) as dry:
        for args, changed in calls:
            for about in abouts:
                said = dry.call(action.tool, {**args, **({"about": about} if about else {})})
                probes += 1
                at = f"{where} {action.tool} about={about} changed={changed}: {said}"
                theirs = _named_others(world, tools, task, about, args)
                got, problem = dry.reached[0] if dry.reached else (None, None)
                if changed and got is None:  # nothing tried: refused saying nothing of the arguments
                    assert said.startswith(f"Error: {action.tool}: refused — not tried"), at
                    untried.setdefault(about, set()).add(said)
                elif theirs:
                    assert got in theirs or (changed and said.startswith("Error:") and changed in problem), at
                elif changed is None:  # it reached the task (refused only by the world's judgement)
                    assert got is not None and problem is None and (got is task or _twin(world, task, got)), at
                    assert said.startswith(f"Done: {action.tool}") or "approval first" in said, at
                else:  # a try (about chose the task): refused by the world, naming it
                    assert said.startswith("Error:") and changed in said and changed in problem, at
            if changed is None and not task.executed:  # asked for: the same task's request
                for about in abouts:
                    said = dry.call("request_approval", {"message": f"May I {action.tool.replace('_', ' ')}?",
                                                         "actions": [{"tool": action.tool, "args": args}],
                                                         **({"about": about} if about else {})})
                    at = f"{where} request about={about}: {said}"
                    assert dry.reached or "already approved" in said, at
                    theirs = _named_others(world, tools, task, about, args)
                    if dry.reached:
                        assert dry.reached[0][0] in theirs or dry.reached[0][0] is task or _twin(world, task, dry.reached[0][0]), at
    for about, replies in untried.items():  # the same whichever argument is off
        assert len(replies) == 1, f"{where} {action.tool} about={about}: {sorted(replies)}"
    return probes


def _carry_out(world, tools, task, where: str) -> int:
    """For real, named under a matter that is not the task's own: asked for where the rule in
    force wants the user's OK (answered now or later), then carried out where it may be."""
    action = task.spec.action
    elsewhere = next((m.id for m in world.matters.values() if task.index not in tools.concerns(m)), None)
    about = {"about": elsewhere} if elsewhere else {}
    calls = 0
    if not world.policy.authorised(task.spec) and task.approval is None:
        said = tools.call("request_approval", {"message": f"May I {action.tool.replace('_', ' ')}?", **about,
                                               "actions": [{"tool": action.tool, "args": dict(action.args)}]})
        assert said.startswith("Request under") and task.approval is not None, f"{where}: {said}"
        calls += 1
    if world.policy.authorised(task.spec):
        said = tools.call(action.tool, {**action.args, **about})
        assert said.startswith(f"Done: {action.tool} under") and task.executed, f"{where}: {said}"
        calls += 1
    return calls


@pytest.mark.parametrize("name,persona", CASES)
def test_an_open_action_is_reached_by_its_own_call_whatever_matter_it_names(name, persona):
    """Class sweep over every pair and seeds 0, 1000, 1001: at the first decision point each task
    with an action is open, its own call — with ``about`` naming every listed matter and with
    none, and with the optional arguments left out — reaches that task and is accepted (or refused
    only for want of approval, by the rule in force), and the same call with one compared argument
    changed is refused: naming that argument where ``about`` chose the task (a try, which counts),
    else before anything is tried, saying nothing of the arguments (the same reply whichever is
    off: a refusal that costs nothing is no oracle for hidden values; it named the argument until
    probe26). (Where the matter named has another open task with
    the same tool, and not this one, that the arguments do not say is another thing's, ``about``
    chooses that one; where another open task takes the
    very same arguments, ``about`` or the free text tells them apart.) The action is then carried out for real, named
    under a matter that is not its own, where the rule in force lets it."""
    probes = real = 0
    for seed in SEEDS:
        world, tools = text_world(name, persona, seed)
        probed: set[int] = set()
        while not world.done:
            world.advance()
            if world.done:
                break
            tools.settle()
            for task in [t for t in tools.open_tasks() if t.spec.action and not t.executed and t.index not in probed]:
                probed.add(task.index)
                where = f"{name}/{persona}/{seed} {world.clock_text()} {task.spec.id}"
                probes += _probe_task(world, tools, task, where)
                real += _carry_out(world, tools, task, where)
    assert probes > 0 and real > 0


def _round24(upto: int):
    return blind_session("blind24-meal_planning-operator-1022", upto)


def test_round24_the_tuesday_order_named_under_alexs_request_is_placed():
    """Round 24 (meal_planning / operator / 1022), D2 07:30: the checkout for slot T21-1800 with
    ``about: m1`` (Alex's request; call 50 of the session, and again as call 56, with the SKUs
    apart) was refused as m1's, and without about for want of the optional voucher. It is t05's
    action: both calls reach it and are accepted with m1, m2 and no about alike, and call 50 places
    the order."""
    env, calls = _round24(50)
    world = env.world
    order = world.by_id["t05_finalise_order"]
    assert order.active and not order.executed and world.clock_text() == "D2 (Mon 20 Apr) 07:30"
    for n in (50, 56):
        call = json.loads(calls[n])
        assert call["tool"] == "place_grocery_order" and call["arguments"]["about"] == "m1"
        assert "voucher" not in call["arguments"]
        for about in ("m1", "m2", None):  # said alike, without carrying it out
            args = {k: v for k, v in call["arguments"].items() if k != "about"} | ({"about": about} if about else {})
            with _DryRun(world, env.toolbox) as dry:
                said = dry.call("place_grocery_order", args)
            assert said.startswith("Done: place_grocery_order") and dry.reached[0] == (order, None), (n, about, said)
    seen = env.step(calls[50])[0]
    assert seen.startswith("Done: place_grocery_order under m1") and order.executed, seen


def test_round24_a_wrong_slot_is_named_only_to_a_try_on_its_matter():
    """The same checkout with another slot code is refused on its arguments. Led to t05 by its
    action alone (m1 does not concern it), it attempts nothing and says nothing of the arguments
    (until probe26 it named slot_code: a free oracle for the hidden slot); named under t05's own
    matter it is a try, recorded against t05, and the refusal names the argument, never the value
    expected."""
    env, calls = _round24(50)
    args = json.loads(calls[50])["arguments"] | {"slot_code": "S25-1000"}
    said = env.step(json.dumps({"tool": "place_grocery_order", "arguments": args}))[0].splitlines()[0]
    assert said.startswith("Error: place_grocery_order: refused — not tried") and "slot_code" not in said, said
    order = env.world.by_id["t05_finalise_order"]
    assert not order.executed and env.world.matter_of(order) is None  # nothing attempted, nothing filed
    tried = args | {"about": "t05_finalise_order"}  # its own matter (by the task's id, as the oracle names it)
    said = env.step(json.dumps({"tool": "place_grocery_order", "arguments": tried}))[0].splitlines()[0]
    assert said.startswith("Error: place_grocery_order: refused — arguments that do not match the matter: slot_code"), said
    assert "T21-1800" not in said and not order.executed
    assert [e["task"] for e in env.world.log if e["type"] == "execute"][-2:] == [None, "t05_finalise_order"]
