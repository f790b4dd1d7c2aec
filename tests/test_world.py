"""The reacting world, one test per mechanism, on the authoring guide's small scenario
(docs/skeleton.yaml: Alex's book club), changed in memory where a test needs it."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from proactive_env.sim import World
from proactive_env.spec import parse_scenario, shipped_names, user_busy
from proactive_env.spec.timeline import parse_at

SKELETON = Path(__file__).parent.parent / "docs" / "skeleton.yaml"


def scenario(change=None):
    data = yaml.safe_load(SKELETON.read_text())
    if change:
        change(data)
    return parse_scenario(data, "skeleton.yaml")


def world(s, persona="planner") -> World:
    return World(s, persona, np.random.default_rng(0))


def run_until(w: World, minute: int) -> None:
    w.advance_to(minute)


def entries(w: World, kind: str, **match) -> list[dict]:
    return [e for e in w.log if e["type"] == kind and all(e.get(k) == v for k, v in match.items())]


def test_a_job_runs_for_its_duration_and_finishes_later():
    w = world(scenario())
    run_until(w, parse_at("D1 20:00"))  # the PC is free in the evening
    task = next(t for t in w.tasks if t.spec.work.resource == "home_pc")
    w.trigger_task(task)
    w.start(task)
    job = entries(w, "work", task=task.spec.id)[-1]
    assert job["start"] == w.now and job["end"] == w.now + task.spec.work.minutes
    assert task.running and task.units_done == 0
    w.advance()
    assert w.now == job["end"] and task.units_done == 1 and not task.running
    assert entries(w, "work_done", task=task.spec.id) and "Work finished" in w.inbox[-1]


def test_two_jobs_beyond_capacity_queue():
    def two_on_the_pc(data):
        data["tasks"][0]["work"] = {"units": 1, "minutes": 60, "resource": "home_pc"}
    s = scenario(two_on_the_pc)
    w = world(s)
    run_until(w, parse_at("D1 20:00"))
    first, second = [t for t in w.tasks if t.spec.work.resource == "home_pc"][:2]
    for task in (first, second):
        w.trigger_task(task)
        w.start(task)
    a, b = entries(w, "work", task=first.spec.id)[-1], entries(w, "work", task=second.spec.id)[-1]
    assert s.resources[0].capacity == 1
    assert b["start"] == a["end"] > a["start"]  # the second job waits for the slot


def test_a_job_over_the_users_own_use_slows_them_and_costs_trust():
    s = scenario()
    w = world(s)
    run_until(w, parse_at("D1 10:00"))  # Alex works on the PC 09:00–17:30 on weekdays
    task = next(t for t in w.tasks if t.spec.work.resource == "home_pc")
    w.trigger_task(task)
    before = w.trust.value
    w.start(task)
    assert entries(w, "intrusion", task=task.spec.id)
    assert w.inbox[-1].endswith(f"{s.user.name}: {s.resources[0].complaint}")  # in the scenario's words
    hit = entries(w, "trust", cause="intrusion")[-1]
    assert not hit["aligned"] and w.trust.value < before


def test_a_conditional_event_fires_only_after_its_condition():
    s = scenario()
    conditional = next(e for e in s.events if e.when is not None)
    quiet = world(s)
    while not quiet.done:
        quiet.advance()
    assert not entries(quiet, "event", id=conditional.id)  # never without its condition
    w = world(s, persona="operator")  # the operator delegates the order
    order = next(t for t in w.tasks if t.spec.id == conditional.when.task)
    while not order.active:
        w.advance()
    w.start(order)
    while order.running:
        w.advance()
    assert w.execute(order, dict(order.spec.action.args)) is None
    executed_at = w.now
    assert not entries(w, "event", id=conditional.id)  # never before
    while not entries(w, "event", id=conditional.id):
        w.advance()
    fired = entries(w, "event", id=conditional.id)[0]["t"]
    assert fired >= max(conditional.at, executed_at + conditional.when.after)


def test_a_later_version_of_a_record_replaces_the_earlier_at_its_time():
    s = scenario()
    record = next(r for r in s.records if r.versions)
    w = world(s)
    first_change = record.versions[0].at
    run_until(w, first_change - 1)
    assert w.store.view(record.id).text == record.text
    run_until(w, first_change)
    assert w.store.view(record.id).text == record.versions[0].text
    run_until(w, record.versions[-1].at)
    view = w.store.view(record.id)
    assert view.text == record.versions[-1].text and view.fields == {**record.fields, **record.versions[-1].fields}
    assert entries(w, "record", id=record.id, version=len(record.versions))


def test_a_weekly_block_expands_across_the_week_with_its_exception():
    s = scenario()
    block = s.user.weekly[0]
    spans = [(a, b) for a, b, label in user_busy(s) if label == block.label]
    days = [a // 1440 + 1 for a, _ in spans]
    weekdays = [d for d in range(1, s.days + 1) if s.weekday((d - 1) * 1440) in block.days]
    assert days == [d for d in weekdays if d not in block.skip] and set(block.skip) <= set(weekdays)
    assert all(b - a == block.end - block.start and a % 1440 == block.start for a, b in spans)
    w = world(s)
    assert not w.schedule.available(parse_at("D1 10:00")) and w.schedule.available(parse_at(f"D{block.skip[0]} 10:00"))


def test_the_agents_own_follow_up_brings_an_agent_triggered_task_forward():
    s = scenario()
    task_spec = next(t for t in s.tasks if t.trigger.earliest is not None)
    w = world(s)
    w.wake_at(task_spec.trigger.earliest + 30, "check the sale")
    while w.now < task_spec.trigger.earliest + 30:
        w.advance()
    task = next(t for t in w.tasks if t.spec.id == task_spec.id)
    assert task.active and w.now == task_spec.trigger.earliest + 30 < task_spec.trigger.at


def _contended() -> list[str]:
    from proactive_env.check import _started_at_once_over_use
    from proactive_env.spec import load_scenario

    return [n for n in shipped_names() if _started_at_once_over_use(load_scenario(n))]


@pytest.mark.parametrize("name", _contended())
def test_working_at_once_over_a_contended_resource_loses_ta_and_trust(name):
    """'Always now' (the policy-follower starts every job the moment it can) runs into the user's
    own use on every scenario where some job, started when its task comes up, would run over it
    (``check``'s rule: monitor's one laptop job, since suite 0.6.0, comes up as the laptop is
    freed), and loses TA and trust there."""
    from runs import runs

    played = runs("policy-follower", name, "reviewer")
    assert any(e["type"] == "intrusion" for r in played for e in r["log"])
    assert all(r["scores"]["TA"] < 1 for r in played)
    assert any(e["type"] == "trust" and e["cause"] == "intrusion" and e["after"] < e["before"]
               for r in played for e in r["log"])


@pytest.mark.parametrize("name", ["monitor", "experiments", "medications"])
def test_noops_world_stays_quiet(name):
    """Branches a do-nothing agent never opens never fire (conditions on a missed deadline aside)."""
    from runs import runs

    from proactive_env.spec import load_scenario

    s = load_scenario(name)
    opened = {r.id for r in s.records if r.when and r.when.state != "missed"} | {
        e.id for e in s.events if e.when and e.when.state != "missed"}
    assert opened
    for run in runs("noop", name, "planner"):
        assert not {e.get("id") for e in run["log"] if e["type"] in ("record", "event")} & opened

def test_a_run_the_user_decides_is_asked_for_on_the_structured_face_too():
    """ALLOCATE of Tomás's sweep before Dana's OK is refused (and oversteps); PRESENT then asks
    for the run without delivering results; once approved, ALLOCATE runs it."""
    from proactive_env.sim import Verb
    from proactive_env.spec import load_scenario

    w = World(load_scenario("experiments"), "planner", np.random.default_rng(0))
    sweep = w.by_id["t07_sweep"]
    while not sweep.active:
        w.advance()
    w.advance_to(w.free_window(sweep)[0] - 30)
    assert w.act(Verb.ALLOCATE, sweep.index) and not sweep.running
    assert entries(w, "run_refused", task="t07_sweep") and entries(w, "trust", task="t07_sweep", over=True)
    assert w.act(Verb.PRESENT, sweep.index)
    asked = entries(w, "present", task="t07_sweep")[-1]
    assert asked["run"] and asked["request"] == ["allocate_resource"] and not sweep.presented
    while sweep.approval in (None, "pending"):
        w.advance()
    assert sweep.approval == "approve"
    assert w.act(Verb.ALLOCATE, sweep.index) and sweep.running
