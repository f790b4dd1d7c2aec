"""Compute the agent can manage (issue #20, blind round 19): a reservation (``allocate_resource``)
can be moved (reserve again) or withdrawn (``cancel: true``) until it starts, and a withdrawn one
scores as never made; a reservation that would run into the user's known use — its own queued
jobs included — is refused up front, on every resource of every scenario."""

from __future__ import annotations

import json

import pytest
from gymnasium.utils import seeding

from noninterference import drawn
from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.envs.timeline import _jobs
from proactive_env.scoring import RunScorer, score_log
from proactive_env.sim import TextTools, ToolError, World
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1000, 1001)
SCORES = ("TC", "TA", "TR_D", "J")


def _play(name, persona, seed, withdraw: bool):
    """Wait through the run; with ``withdraw``, at each decision point reserve every open compute
    work that is neither done nor running at its next free window ahead, move it, then cancel it.
    Returns (world, what the reservations said, the scores fed as the env feeds them)."""
    s, choice = drawn(name, persona, seed)
    rng, _ = seeding.np_random(seed)
    world = World(s, persona, rng, rules=dict(choice["rules"]), face="text")
    tools = TextTools(world)
    live = RunScorer(s, persona)
    said = []
    world.advance()
    while not world.done:
        tools.settle()
        live.feed(world.log)
        if withdraw:
            for task in [t for t in tools.open_tasks() if t.spec.work.resource and not t.running
                         and t.units_done < t.spec.work.units and not world.needs_run_ok(t)]:
                said.extend(_reserve_move_cancel(world, tools, task))
        live.feed(world.log)
        world.advance()
    live.feed(world.log)
    return world, said, live.breakdown()


def _reserve_move_cancel(world, tools, task) -> list[str]:
    window = world.free_window(task)
    if window is None or window[0] <= world.now:
        return []
    start, resource = window[0], task.spec.work.resource
    pools = list(world.pools[resource].reservations)
    call = {"what": task.spec.title, "resource": resource, "about": task.spec.id}
    reserved = tools.call("allocate_resource", {**call, "start": world.clock_text(start)})
    assert reserved.startswith("Reserved"), reserved
    moved = tools.call("allocate_resource", {**call, "start": world.clock_text(start)})  # moved onto the same slot
    assert moved.startswith("Moved your reservation"), moved
    cancelled = tools.call("allocate_resource", {**call, "cancel": True})
    assert cancelled.startswith("Cancelled your reservation") and "never made" in cancelled, cancelled
    assert world.pools[resource].reservations == pools and not task.running and world.reservation(task) is None
    with pytest.raises(ToolError, match="nothing to cancel"):
        tools.call("allocate_resource", {**call, "cancel": True})
    return [reserved, moved, cancelled]


@pytest.mark.parametrize("name", shipped_names())
def test_a_withdrawn_reservation_scores_and_plays_as_never_made(name):
    """Class sweep, every pair and three seeds: a run in which every compute work is reserved,
    moved and withdrawn at every decision point ends exactly as the run without them: the same
    observations after each withdrawal, the same scores (live, and rescored from the log) and the
    same jobs in the episode's timeline plot."""
    tried = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            plain, _, base = _play(name, persona, seed, withdraw=False)
            probed, said, live = _play(name, persona, seed, withdraw=True)
            tried += len(said)
            assert probed.inbox == plain.inbox
            assert _jobs(probed.log, probed.scenario) == _jobs(plain.log, plain.scenario)  # the plot draws none of them
            rescored = score_log(probed.scenario, persona, probed.log)
            for scores in (live, rescored):
                assert {k: scores[k] for k in SCORES} == {k: base[k] for k in SCORES}, (persona, seed)
    if any(t.work.resource for t in drawn(name, "planner", 0)[0].tasks):
        assert tried > 0


def _step(env, tool, **arguments):
    return env.step(json.dumps({"tool": tool, "arguments": arguments}))[0].split("\nNow:")[0]


def test_round19_a_second_job_queued_into_the_users_use_is_refused_up_front():
    """Round 19 (apartment_move): the backup took the laptop; a second job on it, reserved "from
    now", queued behind the first into Sam's evening render with no warning, and Sam complained.
    It is refused up front, saying where the user's use is and that the agent's own job holds the
    laptop; the first reservation can then be moved or cancelled."""
    env = ProactivityTextEnv("apartment_move", "operator")
    env.reset(seed=1006)
    world = env.world
    backup, deposit = world.by_id["t13_laptop_backup"], world.by_id["t06_deposit_evidence"]
    while not (backup.active and deposit.active):
        _step(env, "wait")
    first = _step(env, "allocate_resource", what="backup", resource="laptop", start="D5 22:00",
                  about=world.matter_of(backup).id)
    assert first.startswith("Reserved laptop D5 (Fri 17 Apr) 22:00–D6 (Sat 18 Apr) 06:00"), first
    second = _step(env, "allocate_resource", what="deposit evidence", resource="laptop", start="D5 21:00",
                   about=world.matter_of(deposit).id)
    assert "your own jobs hold laptop until D6 (Sat 18 Apr) 06:00" in second and "reserve a time it is free" in second
    assert not deposit.running
    moved = _step(env, "allocate_resource", what="backup", resource="laptop", start="D5 23:00",
                  about=world.matter_of(backup).id)
    assert moved.startswith("Moved your reservation: reserved laptop D5 (Fri 17 Apr) 23:00"), moved
    cancelled = _step(env, "allocate_resource", what="backup", resource="laptop", start="D5 23:00", cancel=True,
                      about=world.matter_of(backup).id)
    assert cancelled.startswith("Cancelled your reservation of laptop"), cancelled
    assert _step(env, "allocate_resource", what="deposit evidence", resource="laptop", start="D5 22:00",
                 about=world.matter_of(deposit).id).startswith("Reserved laptop D5 (Fri 17 Apr) 22:00")


def _put_after_the_clash(name, persona, seed, d, move: bool, cancel: bool = False):
    """Wait until decision ``d``'s window is open with both its tasks up, read what shows the
    clash, reserve the competing
    work at the first quarter hour from the window's end that the tools accept, and — with
    ``move`` — once the window has closed, move it to the next later time they accept (with
    ``cancel``, withdraw it then). Returns (the TA label of ``d`` live and rescored, whether the
    reservation was made, and moved or cancelled, the world)."""
    s, choice = drawn(name, persona, seed)
    rng, _ = seeding.np_random(seed)
    world = World(s, persona, rng, rules=dict(choice["rules"]), face="text")
    tools = TextTools(world)
    live = RunScorer(s, persona)
    competing, urgent = world.by_id[d.competing], world.by_id[d.urgent]
    call = {"what": competing.spec.title, "resource": competing.spec.work.resource, "about": competing.spec.id}
    reserved = moved = False
    world.advance()
    while not world.done:
        tools.settle()
        if not reserved and competing.active and urgent.active and d.start <= world.now < d.end:
            for record in d.shown_by:  # the clash in view: the records that show it
                tools.call("read_record", {"record_id": record})
            reserved = _reserve_from(world, tools, call, d.end) is not None
        elif reserved and (move or cancel) and not moved and world.now >= d.end:
            held = world.reservation(competing)
            if held is not None and cancel:
                moved = tools.call("allocate_resource", {**call, "cancel": True}).startswith("Cancelled")
            elif held is not None:
                moved = _reserve_from(world, tools, call, held[0] + 15) is not None
        live.feed(world.log)
        world.advance()
    live.feed(world.log)
    rescored = score_log(world.scenario, persona, world.log)
    label = lambda scores: next((x["now"], x["later"]) for x in scores["ta_decisions"] if x["id"] == d.id)  # noqa: E731
    return (label(live.breakdown()), label(rescored)), reserved, moved, world


def _reserve_from(world, tools, call, start):
    """Reserve (or move) at the first quarter hour from ``start`` the tools accept; its reply."""
    t = -(-start // 15) * 15
    while t < world.scenario.end_minute:
        try:
            return tools.call("allocate_resource", {**call, "start": world.clock_text(t)})
        except ToolError:
            t += 15
    return None


@pytest.mark.parametrize("name", shipped_names())
def test_a_reservation_moved_later_still_keeps_the_postponement_it_made(name):
    """Blind round 27 (experiments / operator / 1033): the calibration was reserved for Tuesday
    night while the Monday clash over the GPUs was in view, then moved to Wednesday 04:30 the next
    morning; the move scored as a new reservation made after the window, the first one as never
    made, and the decision was lost. A move is the same reservation at its new time. Class sweep,
    every decision over a resource, every pair and three seeds: the competing work reserved after
    the clash while it is in view, then moved later once the window has closed, is labelled as
    the unmoved run is (live and rescored), and put later."""
    def over_compute(s):  # the decisions whose competing work runs on what they share
        return [d for d in s.ta_decisions if next(t for t in s.tasks if t.id == d.competing).work.resource == d.shares]

    tried = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            for d in over_compute(drawn(name, persona, seed)[0]):
                plain, reserved, _, _ = _put_after_the_clash(name, persona, seed, d, move=False)
                if not reserved:
                    continue
                after_move, _, moved, _ = _put_after_the_clash(name, persona, seed, d, move=True)
                if not moved:
                    continue
                tried += 1
                assert after_move == plain and plain[0][1], (persona, seed, d.id, plain, after_move)
    if over_compute(drawn(name, "planner", 0)[0]):
        assert tried > 0


@pytest.mark.parametrize("name", shipped_names())
def test_why_says_the_decision_as_the_run_finally_stands(name):
    """``show --why`` read each decision when its window closed; a reservation withdrawn after that
    re-scores it (round 27: "later ✓" printed beside a TA that counted it lost). Class sweep, every
    pair and three seeds: the competing work put after the clash in view, then cancelled once the
    window has closed, is lost, and the explanation says the labels the score counts."""
    from proactive_env.report.explain import explain

    tried = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            s = drawn(name, persona, seed)[0]
            for d in (d for d in s.ta_decisions if d.shares != "user_time"):
                labels, reserved, cancelled, world = _put_after_the_clash(name, persona, seed, d, move=False,
                                                                          cancel=True)
                if not (reserved and cancelled):
                    continue
                tried += 1
                why = explain({"persona": persona, "seed": seed, "log": world.log}, world.scenario)
                row = next(r for r in why.decisions if r.decision == d.id)
                assert labels[0] == labels[1] == (row.now, row.later) and not row.later, (persona, seed, d.id)
    if name in ("experiments", "pottery_studio"):
        assert tried > 0


def test_round27_the_calibration_moved_to_wednesday_keeps_mondays_decision():
    """Blind round 27, experiments / operator / 1033, as played: the calibration reserved on D1 at
    09:40 for Tuesday 21:00 (after the GPU clash, in view), moved on D2 at 08:30 to Wednesday
    04:30. Monday's decision is won (it was lost: TA 0.667, J 0.826)."""
    from runs import played_case

    scores = played_case("blind27-experiments-operator-1033").trajectory(agent="blind-27")["scores"]
    assert next(d for d in scores["ta_decisions"] if d["id"] == "ta1_monday_gpus")["later"]
    assert scores["TA"] == 1.0


def _waiting_for_start(s):
    """(task, record or event id, its ``after``) for what waits for a compute task's ``started``."""
    compute = {t.id for t in s.tasks if t.work.resource}
    items = [(r.id, r.when) for r in s.records] + [(e.id, e.when) for e in s.events]
    return [(w.task, i, w.after) for i, w in items if w is not None and w.state == "started" and w.task in compute]


@pytest.mark.parametrize("name", shipped_names())
def test_what_follows_a_reserved_run_waits_for_the_run(name):
    """Blind round 27 (experiments / operator / 1033): the calibration, reserved for Tue 21:00 and
    moved to Wed 04:30, had its results file appear at Tue 21:45 — timed from the call that first
    reserved it. Class sweep, every pair and three seeds, every record or event that waits for a
    compute task's start: with the run reserved from an hour ahead and then moved a quarter hour
    later, it appears no sooner than its ``after`` from where the run begins."""
    tried = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            s, choice = drawn(name, persona, seed)
            waiting = _waiting_for_start(s)
            for task_id in sorted({t for t, _, _ in waiting}):
                rng, _ = seeding.np_random(seed)
                world = World(s, persona, rng, rules=dict(choice["rules"]), face="text")
                tools, task = TextTools(world), world.by_id[task_id]
                call = {"what": task.spec.title, "resource": task.spec.work.resource, "about": task_id}
                begins = None
                world.advance()
                while not world.done and begins is None:
                    tools.settle()
                    if task.active and not world.needs_run_ok(task) and \
                            _reserve_from(world, tools, call, world.now + 60) is not None:
                        first = world.reservation(task)
                        if first is not None and _reserve_from(world, tools, call, first[0] + 15) is not None:
                            begins = world.reservation(task)[0]
                    world.advance()
                if begins is None:
                    continue
                while not world.done:
                    world.advance()
                for _, item, after in (w for w in waiting if w[0] == task_id):
                    shown = [e["t"] for e in world.log if e["type"] in ("record", "event") and e["id"] == item]
                    assert all(t >= begins + after for t in shown), (persona, seed, item, shown, begins)
                    tried += bool(shown)
    if _waiting_for_start(drawn(name, "planner", 0)[0]):
        assert tried > 0


@pytest.mark.parametrize("name", shipped_names())
def test_a_reservation_refused_as_too_late_says_when_the_work_is_due(name):
    """Blind round 28 (apartment_move / reviewer / 1035): "would not finish in time (start from now,
    finish before it is due)" — the player found a start that worked by trial. A limit the agent
    is held to is said: the refusal names the due time. Every pair, three seeds, every compute
    work once it is up: reserved to start a quarter hour too late, the refusal names its deadline."""
    tried = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            s, choice = drawn(name, persona, seed)
            rng, _ = seeding.np_random(seed)
            world = World(s, persona, rng, rules=dict(choice["rules"]), face="text")
            tools, asked = TextTools(world), set()
            world.advance()
            while not world.done:
                tools.settle()
                for task in [t for t in tools.open_tasks() if t.spec.work.resource and t.spec.id not in asked
                             and not t.running and t.units_done < t.spec.work.units and not world.needs_run_ok(t)]:
                    asked.add(task.spec.id)
                    late = task.spec.deadline - world.remaining_minutes(task) + 15
                    with pytest.raises(ToolError) as refused:
                        tools.call("allocate_resource", {"what": task.spec.title, "resource": task.spec.work.resource,
                                                         "about": task.spec.id, "start": world.clock_text(late)})
                    assert f"it is due: {world.clock_text(task.spec.deadline)}" in str(refused.value), str(refused.value)
                    tried += 1
                world.advance()
    if any(t.work.resource for t in drawn(name, "planner", 0)[0].tasks):
        assert tried > 0
