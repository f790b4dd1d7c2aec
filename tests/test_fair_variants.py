"""Variants that stay coherent (issue #20.6), over every pair and seeds 0, 1000, 1001: a dropped
distractor drops its events and records, a drawn rule is stated by the prose itself, and the
validator checks both."""

import pytest
from gymnasium.utils import seeding

from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.spec import PERSONAS, load_scenario, shipped_names, variant
from proactive_env.spec.validate import semantic_errors
from proactive_env.spec.variant import RULE_WORDS, _cited, policy_text

SEEDS = (0, 1000, 1001)


def _drawn(name, persona, seed):
    rng, _ = seeding.np_random(seed)
    base = load_scenario(name)
    choice = variant.draw(base, persona, rng)
    return base, variant.apply(base, choice), choice


@pytest.mark.parametrize("name", shipped_names())
def test_a_dropped_distractor_sends_nothing_and_leaves_no_record_only_it_needs(name):
    """Issue #20: a distractor dropped by the seed still sent its notification and records, so
    reading them was charged as needless."""
    dropped_somewhere = False
    for persona in PERSONAS:
        for seed in SEEDS:
            base, s, _ = _drawn(name, persona, seed)
            kept = {t.id for t in s.tasks}
            dropped = [t for t in base.tasks if t.id not in kept]
            dropped_somewhere |= bool(dropped)
            triggered = {t.trigger.event for t in s.tasks if t.trigger.type == "event"}
            for ev in s.events:
                assert not any(t.trigger.type == "event" and t.trigger.event == ev.id for t in dropped) \
                    or ev.id in triggered, (seed, ev.id)
            needed = {r for t in s.tasks for r in _cited(t)} | {r for ev in s.events for r in ev.reveals}
            only_dropped = {r for t in dropped for r in _cited(t)} - needed
            assert not only_dropped & {r.id for r in s.records}, (persona, seed, only_dropped)
    assert dropped_somewhere or not load_scenario(name).variants.distractors


@pytest.mark.parametrize("name", shipped_names())
@pytest.mark.parametrize("persona", PERSONAS)
def test_the_briefing_states_every_drawn_rule_in_the_prose(name, persona):
    """Issue #20: a drawn rule ('prepare' for the operator's updates) contradicted the persona's
    prose ('a one-line heads-up is fine too'). The prose now says the drawn rule."""
    for seed in SEEDS:
        base, s, choice = _drawn(name, persona, seed)
        env = ProactivityTextEnv(name, persona)
        briefing, _ = env.reset(seed=seed)
        prose = policy_text(s, persona, choice["rules"])
        assert "{rule:" not in briefing and prose in briefing
        for category in base.variants.rules.get(persona, {}):
            assert f" — {RULE_WORDS[choice['rules'][category]]}." in prose


def test_the_validator_reports_a_drawn_rule_the_prose_does_not_state():
    s = load_scenario("pottery_studio")
    operator = s.personas["operator"]
    bad = s.model_copy(update={"personas": {**s.personas, "operator": operator.model_copy(
        update={"policy": operator.policy.replace("{rule:update}", "Keep a note (a one-line heads-up is fine too).")})}})
    assert ("personas.operator.policy", "'{rule:update}' where the prose states the update rule: a seed draws it "
            "among ['prepare', 'suggest']") in semantic_errors(bad)


def test_the_validator_reports_a_distractor_something_kept_hangs_on():
    s = load_scenario("monitor")
    distractor = s.variants.distractors[0]
    from proactive_env.spec.models import Condition

    tasks = [t.model_copy(update={"requires": [*t.requires, Condition(task=distractor, state="started")]})
             if t.id == "t12_stand_plan" else t for t in s.tasks]
    bad = s.model_copy(update={"tasks": tasks})
    assert ("variants.distractors[0]", "a task nothing requires (t12_stand_plan requires it)") in semantic_errors(bad)
