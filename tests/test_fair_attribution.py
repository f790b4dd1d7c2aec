"""Attribution (issue #20, blind-play rounds 18 and 25): a request or an action sent with
``about: <matter>`` goes to the open task whose action it is — the named matter's where it has
one, else the matter whose action it is (round 24; round 18 refused it, and the round-24 player's
order was never placed) — never kept and later attributed elsewhere (a request for an action no
open matter calls for now is kept for a task that comes up with it: tests/test_early_work.py),
and a kept request about one date never approves an action on another."""

import json

import pytest
from gymnasium.utils import seeding

from noninterference import drawn
from proactive_env.sim import TextTools, ToolError, World
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1000, 1001)


def _world(s, persona, rules, seed):
    rng, _ = seeding.np_random(seed)
    world = World(s, persona, rng, rules=dict(rules), face="text")
    return world, TextTools(world)


@pytest.mark.parametrize("name", shipped_names())
@pytest.mark.parametrize("persona", PERSONAS)
def test_an_action_named_under_a_matter_without_it_goes_to_the_matter_whose_action_it_is(name, persona):
    """Class sweep over every pair and three seeds (issue #20 round 24, reversing round 18's rule):
    at every decision point, for every open action and every listed matter that does not concern
    it nor any other open action with its tool, a request (and an execute) naming that matter with the action's own arguments reaches the
    task whose action it is — said under that task's own matter, which it stays under (the named
    matter gains nothing) — and nothing is kept for later. (An action names itself: DESIGN §4.)"""
    probes = 0
    for seed in SEEDS:
        s, choice = drawn(name, persona, seed)
        world, tools = _world(s, persona, choice["rules"], seed)
        while not world.done:
            world.advance()
            if world.done:
                break
            tools.settle()
            for task in [t for t in tools.open_tasks() if t.spec.action and not t.executed]:
                for matter in list(world.matters.values()):
                    owner = world.matter_of(task)
                    if task.index in tools.concerns(matter) or task.executed or owner is None:
                        continue  # (a need no matter concerns yet joins the matter named: tests/test_fair_about.py)
                    if any(t.spec.action and not t.executed and t.spec.action.tool == task.spec.action.tool
                           for t in tools.open_tasks() if t.index in tools.concerns(matter)):
                        continue  # the named matter has an open action with that tool: about chooses it (tests/test_fair_actions.py)
                    kept, filed = len(tools.earlier), list(matter.tasks)
                    action = {"tool": task.spec.action.tool, "args": dict(task.spec.action.args)}
                    for tool, args in (("request_approval", {"message": "Please approve this.", "actions": [action],
                                                             "about": matter.id}),
                                       (action["tool"], {**action["args"], "about": matter.id})):
                        if tool == "request_approval" and world.policy.answers.get(task.spec.id) == "approve":
                            continue  # (approved already: said so, not asked again)
                        since = len(world.log)
                        try:
                            said = tools.call(tool, args)
                        except ToolError as refused:
                            said = str(refused)
                        probes += 1
                        where = f"{name}/{persona}/{seed} {tool} about {matter.id} for {owner.id}'s {task.spec.id}: {said}"
                        assert f" under {owner.id}" in said and f"the matter whose action it is, not {matter.id}" in said, where
                        assert any(e["type"] in ("present", "execute") and e.get("task") == task.spec.id
                                   for e in world.log[since:]), where  # it reached the task (refused or not)
                        assert len(tools.earlier) == kept and matter.tasks == filed, where
    assert probes > 0


def _exam_prep(persona="operator", seed=1003):
    s, choice = drawn("exam_prep", persona, seed)
    return _world(s, persona, choice["rules"], seed)


def _advance_to(world, tools, minute):
    while not world.done and world.now < minute:
        world.advance()
        tools.settle()


def test_a_request_about_m1_for_an_action_no_open_matter_calls_for_waits_for_the_task_it_fits():
    """Round 18 (exam_prep / operator / 1003): a request sent with `about: m1` was kept and filed
    later under another matter; round 18 refused it instead, and round 19 showed the refusal loses
    a careful agent's early work. Now it is kept — said word for word as without about — and
    counts for the task that comes up with that action and fits its arguments (the room
    confirmation), never for another add_calendar_event."""
    world, tools = _exam_prep()
    _advance_to(world, tools, 9 * 60 + 1)
    first = next(iter(world.matters))
    call = {"message": "Shall I put the room confirmation in your calendar for Thursday?", "about": first,
            "actions": [{"tool": "add_calendar_event", "args": {
                "title": "Confirm Calder room G14 (CLB-440917) in the app before 12:00", "date": "2026-05-14"}}]}
    kept = tools.call("request_approval", call)
    assert kept == tools.call("request_approval", {k: v for k, v in call.items() if k != "about"})
    assert kept.startswith("Request kept: it fits no open matter") and len(tools.earlier) == 2
    confirmation, booking = world.by_id["t06_room_confirmation"], world.by_id["t03_room_booking"]
    while not world.done and not confirmation.active:  # it comes up once the room is booked
        world.advance()
        tools.settle()
        if booking.active and not booking.executed:
            tools.call("book_study_room", {**booking.spec.action.args, "about": "t03_room_booking"})
    tools.settle()
    assert not tools.earlier and confirmation.presented
    assert not any(t.presented for t in world.tasks if t is not confirmation and t.spec.action
                   and t.spec.action.tool == "add_calendar_event")


def test_a_kept_request_about_one_date_never_approves_an_action_on_another():
    """Round 18 (exam_prep m18): an approval given to a request about one date counted for a new
    matter about another — the request for the 22 May deadline (t10's action, still to come) was
    claimed by the Sunday-session entry of 17 May, because a claim needed only most arguments."""
    world, tools = _exam_prep("planner", 0)
    session, check = world.by_id["t11_sunday_session"], world.by_id["t10_extension_check"]
    deadline = {"title": "Submit BMS2033 Lab report 2 — due 16:00 (extension EXT-24817)", "date": "2026-05-22",
                "end": "16:00"}

    def owner(args, text, task):  # a kept request, judged as the live one when the task comes up
        return tools._request_owner(("add_calendar_event",), args, None, text, among=[task])

    assert owner(deadline, "the lab report's new deadline", session) is None
    own = {"title": "Study session at Priya's", "date": "2026-05-17", "start": "14:00", "end": "16:00",
           "location": "14 Ashcroft Road"}
    assert owner(own, "Sunday's session", session) is session
    assert owner({**deadline, "location": "Turnitin"}, "x", check) is check


def test_an_action_naming_a_notice_still_reaches_the_need_it_brought_up():
    """What the rule keeps: an action named under a notice (a matter of no task of its own) goes to
    the open need no matter concerns yet whose arguments it gives."""
    world, tools = _exam_prep("operator", 0)
    task = world.by_id["t06_room_confirmation"]
    while not world.done and not task.active:
        world.advance()
        tools.settle()
        if world.by_id["t03_room_booking"].active and not world.by_id["t03_room_booking"].executed:
            args = dict(world.by_id["t03_room_booking"].spec.action.args)
            tools.call("book_study_room", {**args, "about": "t03_room_booking"})
    notice = next(m for m in world.matters.values() if not m.tasks and "CLB-440917" in m.title)
    said = tools.call("add_calendar_event", {**task.spec.action.args, "about": notice.id})
    assert said.startswith("Done: add_calendar_event") and task.executed, said
