"""A user who writes in their sleep hours is up from then on, judged as known at the time (issue 20:
blind round 26, exam_prep / planner / 1030).

Jamie writes "up early, quiz nerves" at D3 07:10 and asks for a 20-minute transcript before the
laptop is theirs at 07:45; Jamie's stated sleep ends at 07:30. The world still counted Jamie
asleep: the text face said "asleep", and the run started at 07:10 was sleep-time work (put to the
user as such, declined for it on an unlucky coin). Mechanism (``World._up``,
``Schedule.woken``): when the user's words (a message or feedback) come in a night, that night
ends there — from then on the world reaches them, answers what waited for them and runs no
sleep-time work; before they come nothing changes. A first fix (sleep28) cut each night at the
user's words ahead of time, so a reply before the words (a queued message's "sees it D3 07:10")
gave a hidden event's time away: the counterfactual sweep below plays a fixed probe with the
words where they are and moved to the night's end, and every observation and every judgement
logged before the words must be the same. Swept over every pair and seeds 0/1000/1001.
"""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from gymnasium.utils import seeding

from noninterference import _probe, drawn
from proactive_env.baselines.oracle import TextOracleAgent
from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.evaluate import play
from proactive_env.sim import TextTools, ToolError, World
from proactive_env.sim.schedule import Intervals
from proactive_env.sim.world import USER_SPEAKS
from proactive_env.spec import PERSONAS, Scenario, shipped_names, user_busy
from proactive_env.spec.timeline import MINUTES_PER_DAY, parse_at

SEEDS = (0, 1000, 1001)
PAIRS = [(name, persona) for name in shipped_names() for persona in PERSONAS]
PROBE_STEP = 30  # the probe wakes every half hour of a night before the user's words in it


def _nights(s: Scenario) -> list[tuple[int, int]]:
    """The user's nights as they state them (``user.sleep``), in scenario minutes, from the night
    before the first day to the one after the last."""
    start, end = s.user.sleep.start, s.user.sleep.end
    length = (end - start) % MINUTES_PER_DAY
    return [(day * MINUTES_PER_DAY + start, day * MINUTES_PER_DAY + start + length) for day in range(-1, s.days + 1)]


def _night_words(s: Scenario) -> list[tuple[int, tuple[int, int]]]:
    """The user's words that come at a fixed time inside one of their stated nights: (index of
    the event, the night's span)."""
    nights = _nights(s)
    return [(i, next((a, b) for a, b in nights if a <= e.at < b)) for i, e in enumerate(s.events)
            if e.kind in USER_SPEAKS and e.when is None and e.unless is None and any(a <= e.at < b for a, b in nights)]


@functools.lru_cache(maxsize=None)
def _cases() -> tuple[tuple[str, str, int, int, tuple[int, int]], ...]:
    """(scenario, persona, seed, event index, night) for every pair and seed whose variant has the
    user's words in a night."""
    return tuple((name, persona, seed, i, night) for name, persona in PAIRS for seed in SEEDS
                 for i, night in _night_words(drawn(name, persona, seed)[0]))


def _permissive(s: Scenario, persona: str, seed: int) -> World:
    """The variant's world with every kind of work delegated: a run is never refused for want of an OK."""
    return World(s, persona, np.random.default_rng(seed), rules={c: "execute" for c in s.categories})


def test_the_sweep_exercises_words_in_a_night():
    """Where the user speaks in their sleep hours varies by variant: the sweeps below must meet some."""
    cases = _cases()
    assert len(cases) >= 9, cases  # exam_prep's e05c_transcripts, D3 07:10, for every persona and seed
    assert {c[0] for c in cases} >= {"exam_prep"}


@pytest.mark.parametrize("name,persona", PAIRS)
def test_the_user_is_up_from_their_words_in_a_night_and_not_before(name, persona):
    for case in (c for c in _cases() if c[:2] == (name, persona)):
        seed, index, (start, _) = case[2:]
        s = drawn(name, persona, seed)[0]
        at = s.events[index].at
        stated = Intervals(_nights(s)).spans
        w = _permissive(s, persona, seed)
        w.advance_to(at - 1)  # before the words: the nights as stated, a request waits for the morning
        assert w.schedule.sleep.spans == stated and not w.schedule.available(at - 1), (seed, at)
        asked = next(t for t in w.tasks if t.active and not t.closed and t.spec.action is not None)
        assert w.present(asked, "May I?", request=True) is None and asked.approval == "pending"
        w.advance_to(at)  # from the words: that night ends there, and no other
        assert w.schedule.sleep.spans == [(a, at if a == start else b) for a, b in stated], (seed, at)
        if any(a <= at < b for a, b, _ in user_busy(s)):
            continue  # (up, but in a focus block: nothing more to see)
        assert asked.approval != "pending" and w.decisions[-1].minute == at, (seed, asked.spec.id)
        assert TextTools(w).call("message_user", {"text": "Morning!"}).startswith("Delivered"), (seed, at)
        ran = 0
        for task in (t for t in w.tasks if t.active and not t.running and t.spec.work.resource is not None
                     and t.units_done < t.spec.work.units and t.spec.deadline > at + w.remaining_minutes(t)):
            w.allocate(task, at)  # work started when the user has spoken is not sleep-time work
            work = [e for e in w.log if e["type"] == "work" and e["task"] == task.spec.id][-1]
            assert work["t"] == at and not work["sleep_time"], (seed, task.spec.id, work)
            ran += 1
        assert ran, (seed, "no open work to start at the words")


def _probed(s: Scenario, persona: str, rules: dict, seed: int, until: int, night: tuple[int, int]):
    """The non-interference probe (``noninterference._probe``) played until ``until``, woken besides
    every half hour of ``night`` before it (a message queued, runs reserved, approval asked while the
    user sleeps): every observation, and the log (every judgement the world made), before ``until``."""
    rng, _ = seeding.np_random(seed)
    world = World(s, persona, rng, rules=dict(rules), face="text")
    tools = TextTools(world)
    seen: list[tuple[int, str]] = []
    read = [0]
    used: set[str] = set()

    def call(tool: str, **args) -> None:
        try:
            result = tools.call(tool, {k: v for k, v in args.items() if v is not None})
        except ToolError as exc:
            result = f"Error: {exc}"
        seen.append((world.now, f"{tool} {sorted(args.items())!r} -> {result}"))
        seen.extend((world.now, line) for line in world.inbox[read[0]:])
        read[0] = len(world.inbox)

    for minute in range(night[0], until, PROBE_STEP):
        if minute > 0:
            world.wake_at(minute, "probe")
    world.advance()
    while not world.done and world.now < until:
        tools.settle()
        _probe(world, call, used)
        call("message_user", text="A note for when you are up.")
        world.advance()
    return [o for o in seen if o[0] < until], [e for e in world.log if e["t"] < until]


def _moved(s: Scenario, index: int, minute: int) -> Scenario:
    """The scenario with one event moved to ``minute`` (nothing else changed)."""
    events = list(s.events)
    events[index] = events[index].model_copy(update={"at": minute})
    return s.model_copy(update={"events": events})


@pytest.mark.parametrize("name,persona", PAIRS)
def test_nothing_before_the_users_words_depends_on_when_they_come(name, persona):
    """Counterfactual play: the probe on the variant and on it with the user's words in the night
    moved to the night's stated end sees the same and logs the same judgements before the words."""
    for case in (c for c in _cases() if c[:2] == (name, persona)):
        seed, index, night = case[2:]
        s, choice = drawn(name, persona, seed)
        at = s.events[index].at
        here = _probed(s, persona, choice["rules"], seed, at, night)
        later = _probed(_moved(s, index, night[1]), persona, choice["rules"], seed, at, night)
        assert any("sees it" in text for _, text in here[0]), "the probe queued no message in the night"
        assert here[0] == later[0], (seed, next((a, b) for a, b in zip(*(here[0], later[0])) if a != b))
        assert here[1] == later[1], (seed, next((a, b) for a, b in zip(*(here[1], later[1])) if a != b))


def _step(env, tool, **arguments):
    return env.step(json.dumps({"tool": tool, "arguments": arguments}))[0]


def test_sleep28s_leak_a_message_queued_at_0600_is_seen_when_the_stated_night_ends():
    """sleep28's regression: on exam_prep a message queued at D3 06:00 was "seen D3 07:10", the time
    of Jamie's message still to come. As known at 06:00 Jamie is up at 07:30; when Jamie writes at
    07:10 they are up then, and the text face says so."""
    for persona in PERSONAS:
        env = ProactivityTextEnv("exam_prep", persona)
        env.reset(seed=0)
        _step(env, "schedule_followup", at="D3 06:00")
        while env.core.world.now < parse_at("D3 06:00"):
            _step(env, "wait")
        result = _step(env, "message_user", text="Morning plan: flashcards before the quiz.")
        assert "sees it D3 (Wed 13 May) 07:30" in result, result
        while env.core.world.now < parse_at("D3 07:10"):
            obs = _step(env, "wait")
        assert "Jamie is asleep" not in obs and "Jamie is available" in obs, obs[-300:]


@functools.lru_cache(maxsize=None)
def _oracle_played(persona: str, seed: int) -> list[dict]:
    agent = TextOracleAgent()
    play(agent, "exam_prep", persona, seed)
    return agent.world.log


def test_round_26_exam_prep_the_transcript_run_at_0710_is_not_sleep_time_work():
    """Round 26's case, as played: exam_prep / planner / 1030 — the L22 transcript started at 07:10,
    after Jamie's "up early", is not sleep-time work, and no decision on it is judged as such."""
    log = _oracle_played("planner", 1030)
    work = [e for e in log if e["type"] == "work" and e["task"] == "t14_transcripts"]
    assert work and work[0]["start"] == parse_at("D3 07:10") and not work[0]["sleep_time"], work
    assert not [e for e in log if e["type"] == "decision" and e["rule"] == "sleep_time_work"
                and e["task"] == "t14_transcripts"]
    env = ProactivityTextEnv("exam_prep", "planner")
    env.reset(seed=1030)
    obs = ""
    while env.core.world.now < parse_at("D3 07:10"):
        obs = _step(env, "wait")
    assert env.core.world.now == parse_at("D3 07:10") and "up early" in obs
    assert "Jamie is asleep" not in obs and "Jamie is available" in obs, obs[-300:]


def test_the_structured_clock_follows_the_night_as_it_stands():
    """The structured face keeps its clock columns per minute (a cache kept across resets while the
    schedule is the same): a night cut where the user spoke must show from the cut on, and must not
    outlive the episode it was cut in. The night is cut by hand (as ``World._up`` cuts it) in one
    episode of a reused env and the clock read minute by minute through it; the next episode, where
    nothing cuts it, must read the night as stated."""
    from proactive_env.envs.structured import _CLOCK, ProactivityEnv

    env = ProactivityEnv("exam_prep", persona="planner")
    env.reset(seed=0)
    night = next(span for span in env.world.schedule.sleep.spans if span[0] > 0 and span[1] - span[0] > 120)
    minutes = range(night[0], night[1] + 30, 5)

    def asleep(cut: int | None) -> dict[int, float]:
        env.reset(seed=0)
        world, flags = env.world, {}
        for minute in minutes:
            world.now = minute
            if cut is not None and minute == cut:
                world.schedule = world.schedule.woken(minute)
            env._clock_update()
            flags[minute] = float(env._cells[_CLOCK.start + 5])
        return flags

    stated = {m: float(env.world.schedule.sleep.contains(m)) for m in minutes}
    assert asleep(None) == stated
    cut = minutes[len(minutes) // 2]
    assert asleep(cut) == {m: (flag if m < cut else 0.0) for m, flag in stated.items()}
    assert asleep(None) == stated
