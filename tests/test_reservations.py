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
