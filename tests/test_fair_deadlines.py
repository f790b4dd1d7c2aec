"""Hidden time limits (issue #20.2, "every decision winnable from what was seen"): a deadline the
agent is held to by a wait the scorer asks of it, and every needed-by time, is stated by what it
can see when the task comes up (spec/validate.py::_time_limits_on_record), over every pair and
seeds 0, 1000, 1001."""

import pytest
from gymnasium.utils import seeding

from proactive_env.spec import PERSONAS, load_scenario, shipped_names, variant
from proactive_env.spec.timeline import parse_at
from proactive_env.spec.validate import _limit_stated, _time_limits_on_record, semantic_errors

SEEDS = (0, 1000, 1001)


def _with_task(s, task_id, **update):
    tasks = [t.model_copy(update=update) if t.id == task_id else t for t in s.tasks]
    return s.model_copy(update={"tasks": tasks}), next(i for i, t in enumerate(tasks) if t.id == task_id)


def test_the_ablation_is_needed_by_the_latest_start_its_window_states():
    """Blind round 25: launch_job deferred to D4 01:30, the free slot's start, was refused as "over
    for this action: it was needed by D3 (Wed 15 Apr) 21:00" — a time no record gives; the plan
    says it "has to start by 02:00". The deadline of an action that begins later is its window's
    latest start, and the validator refuses any other."""
    s = load_scenario("experiments")
    task = next(t for t in s.tasks if t.id == "t06_ablation_queue")
    assert task.deadline == parse_at("D4 02:00")
    old, index = _with_task(s, task.id, deadline=parse_at("D3 21:00"))
    assert (f"tasks[{index}].deadline", "the latest start its window states (D4 02:00): the action is refused "
                                        "after the deadline (D3 21:00)") in semantic_errors(old)


@pytest.mark.parametrize("name, task_id, field", [
    ("conference_trip", "t07_collab_dinner", "deadline"),  # TA competing: its postponement must land before it
    ("exam_prep", "t13_lockdown_update", "needed_by"),     # results count half after it
])
def test_the_validator_refuses_a_limit_no_record_states(name, task_id, field):
    s = load_scenario(name)
    task = next(t for t in s.tasks if t.id == task_id)
    moved, index = _with_task(s, task_id, **{field: getattr(task, field) - 20})
    problems = [p for p, _ in semantic_errors(moved)]
    assert f"tasks[{index}].{field}" in problems, problems


def test_a_day_is_stated_by_its_date_its_weekday_or_relative_to_the_text():
    s = load_scenario("exam_prep")  # D1 is Monday 11 May
    tonight = [(parse_at("D2 11:00"), "i've got 21:00 till about 23:15 tonight then bed.")]
    assert _limit_stated(s, tonight, parse_at("D2 21:00"))
    assert not _limit_stated(s, tonight, parse_at("D3 21:00"))
    assert _limit_stated(s, [(None, "Reply by 9pm on Tuesday.")], parse_at("D2 21:00"))
    assert _limit_stated(s, [(parse_at("D1 08:00"), "Due tomorrow at noon.")], parse_at("D2 12:00"))
    assert not _limit_stated(s, [(None, "Tuesday is busy. The shop closes at 21:00.")], parse_at("D2 21:00"))


@pytest.mark.parametrize("name", shipped_names())
def test_every_time_limit_is_on_record_in_every_variant(name):
    base = load_scenario(name)
    assert list(_time_limits_on_record(base)) == []
    for persona in PERSONAS:
        for seed in SEEDS:
            rng, _ = seeding.np_random(seed)
            s = variant.apply(base, variant.draw(base, persona, rng))
            assert list(_time_limits_on_record(s)) == [], (persona, seed)
