"""Non-interference (issue #20.1): nothing the agent observes depends on a task before it comes up.

The sweep plays a fixed probing script (``tests/noninterference.py``: every tool, every record
title, with and without ``about``) on every scenario–persona pair and seeds 0, 1000 and 1001,
once on the seed's scenario and once on it with a task removed: every observation before that
task comes up must be identical. Each task that comes up later in the probed run is removed on
its own (compared up to the minute it comes up); the tasks that never come up in it are removed
together (compared over the whole run). The script fires every tool with guessed arguments (none,
the schema's examples): it brings no agent-triggered task forward (only a call that is a knowable
need's own action does, tests/test_fair_early.py). The regression tests below quote the calls of blind play
that found a hidden task through what the tools said.
"""

import json

import pytest

from noninterference import drawn, probe_run, without
from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.spec import PERSONAS, shipped_names, trigger_minute

SEEDS = (0, 1000, 1001)


def _first_difference(a: list, b: list) -> str | None:
    for (minute, x), (_, y) in zip(a, b):
        if x != y:
            return f"at minute {minute}:\n  with the task:    {x[:400]}\n  without the task: {y[:400]}"
    if len(a) != len(b):
        return f"one run saw more: {(a[len(b):] or b[len(a):])[0]!r:.400}"
    return None


def _removals(s, full) -> list[tuple[list[str], int | None]]:
    """(tasks removed, minute they come up or None) for every task not up at the first decision point."""
    first = full.seen[0][0] if full.seen else 0
    later = [(t.id, full.activated[t.id]) for t in s.tasks if full.activated.get(t.id, first + 1) > first
             and t.id in full.activated]
    never = [t.id for t in s.tasks if t.id not in full.activated]
    return [([task], at) for task, at in later] + ([(never, None)] if never else [])


@pytest.mark.parametrize("scenario", shipped_names())
@pytest.mark.parametrize("persona", PERSONAS)
def test_what_the_agent_sees_never_depends_on_a_task_still_to_come(scenario, persona):
    problems = []
    for seed in SEEDS:
        s, choice = drawn(scenario, persona, seed)
        full = probe_run(s, persona, choice["rules"], seed)
        assert len(full.seen) > 100  # the script did probe
        problems += [f"seed {seed}: the probe's guessed arguments brought {t.id} forward"
                     for t in s.tasks if t.trigger.type == "agent" and full.activated.get(t.id, 10 ** 9)
                     < (t.trigger.earliest if t.trigger.earliest is not None else trigger_minute(s, t))]
        for removed, at in _removals(s, full):
            cut = s
            for task in removed:
                cut = without(cut, task)
            part = probe_run(cut, persona, choice["rules"], seed, until=at)
            before = [o for o in full.seen if at is None or o[0] < at]
            diff = _first_difference(before, [o for o in part.seen if at is None or o[0] < at])
            if diff:
                problems.append(f"seed {seed}, without {', '.join(removed)}: {diff}")
    assert not problems, "\n".join(problems[:5])


# ------------------------------------------------------------------ the faults blind play found
def _step(env, tool, **arguments):
    return env.step(json.dumps({"tool": tool, "arguments": arguments}))[0]


def _env(scenario, persona, seed=0):
    env = ProactivityTextEnv(scenario, persona)
    env.reset(seed=seed)
    return env


def test_a_kept_request_does_not_name_the_action_a_matter_to_come_calls_for():
    """Issue #20: "Request kept: no matter open now calls for send_invoice" (and book_hotel,
    order_repeat_prescription) announced a task still to come."""
    env = _env("pottery_studio", "operator", 1000)
    result = _step(env, "request_approval", message="May I send the invoice?",
                   actions=[{"tool": "send_invoice", "args": {}}])
    assert result.startswith("Request kept: it fits no open matter; it goes to") and "send_invoice" not in result


def test_a_request_whose_matter_is_over_says_the_same_as_one_whose_matter_is_to_come():
    """Issue #20: "not sent — the matter that needed X is over" was said only where no other
    matter would need X: that told the agent whether one was still to come."""
    env = _env("experiments", "reviewer")
    world = env.world
    queue = world.by_id["t06_ablation_queue"]
    while not queue.closed:
        _step(env, "wait")
    result = _step(env, "request_approval", message="OK to launch the ablation?",
                   actions=[{"tool": "launch_job", "args": {}}])
    assert result.startswith("Request kept: it fits no open matter")


def test_a_note_under_a_notice_says_nothing_of_what_it_holds_or_what_is_to_come():
    """Issue #20: "Noted under m13 (if a matter about what m13 brought comes up …)" and "m16's own
    work is over" told which notices are scored and gave a hidden deadline."""
    env = _env("monitor", "planner")
    world = env.world
    while not any(world.tasks[i].closed for m in world.matters.values() for i in m.tasks):
        _step(env, "wait")  # a matter whose own work is over, beside bare notices and open ones
    for matter in world.matters:
        result = _step(env, "write_note", text="checked the records for this", about=matter)
        assert result.split(".")[0] == f"Noted under {matter}", result


def test_a_refused_reservation_names_no_action_and_files_no_matter():
    """Issue #20: allocate_resource refusals named the matter's action tool ("its action
    submit_address_change is what acts") and, without about, filed a matter for the task the
    words found: probing every record title at each wake-up found unannounced tasks."""
    env = _env("apartment_move", "planner")
    world = env.world
    _step(env, "wait")
    matters = dict(world.matters)
    for rid in sorted(world.store.visible):
        title = world.store.view(rid).title
        result = _step(env, "allocate_resource", what=title, resource="laptop", start="D1 09:10")
        assert "no open work of that matter runs on laptop" in result
        assert not any(t.spec.action and t.spec.action.tool in result for t in world.tasks)
    assert world.matters == matters


def test_a_look_up_by_free_words_returns_the_records_that_match_every_argument_best():
    """Issue #20 (#20.5): lookup_timetable(from, to, date) returned the first three records, in id
    order, that matched any one argument, instead of train_times."""
    env = _env("conference_trip", "reviewer", 1001)
    result = _step(env, "lookup_timetable", **{"from": "Boston South Station", "to": "Providence", "date": "2026-06-14"})
    assert result.startswith("train_times: ")
