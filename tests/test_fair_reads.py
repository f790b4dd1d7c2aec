"""Fair reads and grounding (issue #20.7): reading what a shown message or notification brought is
never needless, nor is reading the user's calendar; a fact is grounded in what the agent had read
by the time it wrote it, not frozen at a delivery."""

import json

import pytest

from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1000, 1001)


def _step(env, tool, **arguments):
    return env.step(json.dumps({"tool": tool, "arguments": arguments}))


@pytest.mark.parametrize("scenario", shipped_names())
def test_reading_what_a_shown_notice_brought_and_the_calendar_is_never_needless(scenario):
    """Issue #20: reading the records of a matter the agent was shown was charged as needless
    (metrics counted only reads some task needs)."""
    for persona in PERSONAS:
        for seed in SEEDS:
            env = ProactivityTextEnv(scenario, persona)
            env.reset(seed=seed)
            world, read, done = env.world, set(), False
            while not done:
                for rid in sorted(world.store.visible - read):
                    if rid in env.core.scorer.brought or world.store.view(rid).kind.startswith("calendar"):
                        _step(env, "read_record", record_id=rid)
                        read.add(rid)
                done = _step(env, "wait")[2]
            assert read, (persona, seed)
            assert not read & env.core.scorer._needless(), (persona, seed)


@pytest.mark.parametrize("scenario", shipped_names())
def test_reading_the_records_that_show_a_decisions_clash_is_never_needless(scenario):
    """Issue #20.7: records that define a TA decision (its ``shown_by``: the rota, the quota
    dashboard, the booking sheet) are what the timing is decided from; once either of its tasks
    has come up, reading them costs nothing, whether or not a task lists them as evidence."""
    for persona in PERSONAS:
        for seed in SEEDS:
            env = ProactivityTextEnv(scenario, persona)
            env.reset(seed=seed)
            world, read, done = env.world, set(), False
            decisions = world.scenario.ta_decisions
            while not done:
                for d in decisions:
                    if world.by_id[d.urgent].active or world.by_id[d.competing].active:
                        for rid in sorted(set(d.shown_by) & world.store.visible - read):
                            _step(env, "read_record", record_id=rid)
                            read.add(rid)
                done = _step(env, "wait")[2]
            assert read, (persona, seed)
            assert not read & env.core.scorer._needless(), (persona, seed)


def test_a_fact_written_after_reading_its_source_is_grounded_though_the_matter_was_delivered_before():
    """Issue #20: grounding was frozen at the first delivery (for a kept request, the moment the
    game released it): a fact the agent wrote after reading its source counted as ungrounded."""
    env = ProactivityTextEnv("monitor", "planner")
    env.reset(seed=0)
    world = env.world
    setup = world.by_id["t01_setup"]
    while not setup.active:
        _step(env, "wait")
    matter = world.matter_of(setup).id
    _step(env, "message_user", about=matter, text="Looking at 27-inch 1440p monitors and the cable now; more soon.")
    assert "listing_arcvue" not in world.observed
    _step(env, "read_record", record_id="listing_arcvue", about=matter)
    _step(env, "message_user", about=matter, text="Best fit so far: the Arcvue Q27 (ARC-Q27), 27-inch 1440p.")
    done = False
    while not done:
        done = _step(env, "wait")[2]
    score = next(s for s in env.core.scorer.scores if s.task == "t01_setup")
    assert score.diagnostics["grounding"] == 1.0


def test_a_look_up_after_the_agents_rebooking_shows_the_booking_as_it_now_stands():
    """Issue #20 (#20.5): after a confirmed rebooking, check_booking still showed the old flight,
    and a timed notice then said the seats the agent had taken were gone."""
    from proactive_env.baselines import TextOracleAgent

    env = ProactivityTextEnv("conference_trip", "operator")
    obs, info = env.reset(seed=0)
    world, agent = env.world, TextOracleAgent()
    agent.reset(env, 0)
    retime = world.by_id["t10_return_retime"]
    while not retime.executed and not world.done:
        obs, _, done, _, info = env.step(agent.act(obs, info))
    assert retime.executed
    while world.now < 3 * 1440 + 12 * 60 + 30:
        obs, _, done, _, info = env.step(agent.act(obs, info))
    booking = env.toolbox.call("check_booking", {"reference": "K7QX2P"})
    assert "AB 7714" in booking.split("flight_confirmation:")[-1] and "changed" in booking
    assert "no longer available" not in world.store.view("airline_retime").text


def test_a_note_under_a_notice_that_brought_no_record_still_counts_for_what_it_concerns():
    """Issue #20 (#20.5): a note under a delivery event without `reveals` counted for nothing
    (it waited for a matter whose records included none)."""
    from proactive_env.sim import TextTools

    env = ProactivityTextEnv("monitor", "planner")
    env.reset(seed=0)
    world = env.world
    tools: TextTools = env.toolbox
    notice = world.raise_matter("Parcel update", [], records=())
    tools.call("write_note", {"text": "x", "about": notice.id})
    assert "records" not in tools.earlier[-1]
