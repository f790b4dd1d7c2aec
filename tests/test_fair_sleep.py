"""A user who speaks is awake (issue 20: blind round 26, exam_prep / planner / 1030).

Jamie writes "up early, quiz nerves" at D3 07:10 and asks for a 20-minute transcript before the
laptop is theirs at 07:45; Jamie's stated sleep ends at 07:30. The world still counted Jamie
asleep: the text face said "asleep", and the run started at 07:10 was sleep-time work (put to the
user as such, and declined with that reason on an unlucky coin). Mechanism
(``spec.expand.sleep_spans``): each night ends at the user's first words in it, wherever the world
asks whether the user sleeps; the stated sleep (``nights``) is what the agent plans with and what
the validator's TA checks read; a variant never moves the user's words across their sleep
(``variant._bounds``). Swept over every pair and seeds 0/1000/1001.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from proactive_env.envs.structured import ProactivityEnv
from proactive_env.sim import World
from proactive_env.spec import USER_SPEAKS, awake_span, parse_scenario, shipped_names
from proactive_env.spec.expand import nights
from proactive_env.spec.timeline import parse_at

SEEDS = (0, 1000, 1001)
SKELETON = Path(__file__).parent.parent / "docs" / "skeleton.yaml"
PAIRS = [(name, persona) for name in shipped_names() for persona in ("reviewer", "planner", "operator")]


def _variant_world(name: str, persona: str, seed: int) -> World:
    env = ProactivityEnv(scenario=name, persona=persona)
    env.reset(seed=seed)
    return env.world


def _work_started_at(w: World, minute: int, task) -> dict | None:
    """The work entry of ``task`` started at ``minute`` (brought up then if its event has not);
    None where it cannot come up (what it hangs on is not reached)."""
    w.advance_to(minute)
    if not task.active and not w.trigger_task(task):
        return None
    w.start(task)
    return [e for e in w.log if e["type"] == "work" and e["task"] == task.spec.id][-1]


@pytest.mark.parametrize("name,persona", PAIRS)
def test_the_user_is_awake_whenever_they_speak_and_work_they_ask_for_then_is_not_sleep_time_work(name, persona):
    for seed in SEEDS:
        s = _variant_world(name, persona, seed).scenario
        for event in (e for e in s.events if e.kind in USER_SPEAKS and e.when is None):
            w = _variant_world(name, persona, seed)
            assert not w.schedule.sleep.contains(event.at), (seed, event.id)
            for task in (t for t in w.tasks if t.spec.trigger.type == "event" and t.spec.trigger.event == event.id
                         and t.spec.work.units and not t.spec.requires):
                work = _work_started_at(w, event.at, task)
                assert work is not None and not (work["start"] == event.at and work["sleep_time"]), \
                    (seed, task.spec.id, work)
                break  # one world per event: the first task it brings up


@pytest.mark.parametrize("name", shipped_names())
def test_a_variant_never_moves_the_users_words_across_their_sleep(name):
    env = ProactivityEnv(scenario=name, persona="planner")
    asleep = {e.id: awake_span(env.base, e.at) is None for e in env.base.events if e.kind in USER_SPEAKS}
    for seed in range(30):
        env.reset(seed=seed)
        for e in env.scenario.events:
            if e.id in asleep:
                assert (awake_span(env.scenario, e.at) is None) == asleep[e.id], (seed, e.id, e.at)


def test_a_jitter_keeps_words_written_just_after_waking_out_of_the_night(tmp_path):
    data = yaml.safe_load(SKELETON.read_text())  # Alex wakes at 07:00; the jitter is 30 minutes
    data["events"].append({"id": "e09_morning", "at": "D3 07:05", "kind": "user_message",
                           "text": "Alex: morning! off to the shop later."})
    path = tmp_path / "skeleton.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    env = ProactivityEnv(scenario=str(path), persona="planner")
    moved = set()
    for seed in range(40):
        env.reset(seed=seed)
        at = next(e.at for e in env.scenario.events if e.id == "e09_morning")
        assert awake_span(env.scenario, at) is not None, (seed, at)
        moved.add(at)
    assert len(moved) > 1  # the jitter does move it, inside the morning


def test_words_in_the_night_end_it_there_and_only_there():
    data = yaml.safe_load(SKELETON.read_text())
    snacks = next(e for e in data["events"] if e["id"] == "e06_snacks")
    snacks["at"] = "D2 06:20"  # Alex sleeps 23:00–07:00
    s = parse_scenario(data, "skeleton.yaml")
    w = World(s, "planner", np.random.default_rng(0))
    night = next((a, b) for a, b in nights(s) if a <= parse_at("D2 06:20") < b)
    assert w.schedule.sleep.contains(parse_at("D2 06:19")) and w.schedule.sleep.contains(night[0])
    assert not w.schedule.sleep.contains(parse_at("D2 06:20")) and w.schedule.available(parse_at("D2 06:20"))
    assert w.schedule.sleep.contains(parse_at("D3 02:00"))  # the next night is whole
    task = next(t for t in w.tasks if t.spec.id == "t06_newsletter")  # 5 minutes, no resource
    work = _work_started_at(w, parse_at("D2 06:20"), task)
    assert work["start"] == parse_at("D2 06:20") and not work["sleep_time"]


def test_exam_prep_transcript_asked_for_at_0710_runs_awake():
    """Round 26's case, as quoted: the L22 transcript started when Jamie asks is not sleep-time work."""
    for persona in ("reviewer", "planner", "operator"):
        w = _variant_world("exam_prep", persona, 1030)
        asked = next(e for e in w.scenario.events if e.id == "e05c_transcripts")
        task = next(t for t in w.tasks if t.spec.id == "t14_transcripts")
        work = _work_started_at(w, asked.at, task)
        assert work["start"] == asked.at == parse_at("D3 07:10") and not work["sleep_time"]
