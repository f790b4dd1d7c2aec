"""Variants that stay coherent (issue #20.6), over every pair and seeds 0, 1000, 1001: a dropped
distractor drops its events and records, a drawn rule is stated by the prose itself, and the
validator checks both."""

import pytest
from gymnasium.utils import seeding

from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.spec import PERSONAS, load_scenario, shipped_names, variant
from proactive_env.spec.validate import semantic_errors
from proactive_env.spec.variant import RULE_WORDS, _cited, policy_text, stated_depths

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


def test_each_rules_own_words_read_as_that_rule_and_no_other():
    """The depth reader the validator uses on category descriptions and persona prose reads each
    rule's sentence as that rule (a negated phrase is not stated: "don't bring it to me")."""
    for rule, words in RULE_WORDS.items():
        assert stated_depths(words) == {rule}, (rule, words)
    assert stated_depths("emails to people in my name — you draft, I check and send") == {"suggest"}
    assert stated_depths("news on the firings I've asked for, on shipments and on deliveries") == set()


@pytest.mark.parametrize("name", shipped_names())
def test_no_category_description_states_a_depth(name):
    """Round 19 (pottery_studio / reviewer / 1008): the reviewer read "update (firings I need run on
    the kiln…): bring it to me for review". A description is shown beside whatever rule the run
    holds, so none states a depth of its own (household's "you draft, I check and send" did)."""
    s = load_scenario(name)
    for category, text in s.categories.items():
        assert stated_depths(text) == set(), (category, text)


def test_the_validator_reports_a_description_that_states_a_depth_and_prose_beside_a_drawn_rule():
    s = load_scenario("pottery_studio")
    bad = s.model_copy(update={"categories": {**s.categories, "update": "firings I need run — just do it"}})
    assert ("categories.update", "a description that states no depth (the rule beside it does); it reads as "
            "['execute']") in semantic_errors(bad)
    operator = s.personas["operator"]
    prose = operator.policy.replace("{rule:update}", "{rule:update} Any update: bring it to me.")
    bad = s.model_copy(update={"personas": {**s.personas, "operator": operator.model_copy(update={"policy": prose})}})
    assert any(path == "personas.operator.policy" and "{rule:update}" in why and "['suggest']" in why
               for path, why in semantic_errors(bad))


@pytest.mark.parametrize("name", shipped_names())
def test_every_category_a_task_uses_is_described_in_every_personas_briefing(name):
    """Issue #20.6: the operator's briefing never said which category running a kiln firing belongs
    to. Every category a kept task (or its work) uses appears with its description and the rule
    this run holds, for every persona and seed."""
    for persona in PERSONAS:
        for seed in SEEDS:
            _, s, choice = _drawn(name, persona, seed)
            briefing, _ = ProactivityTextEnv(name, persona).reset(seed=seed)
            for task in s.tasks:
                for category in {task.category, task.work.category} - {None}:
                    line = f"{category} ({s.categories[category]}): {RULE_WORDS[choice['rules'][category]]}"
                    assert line in briefing, (persona, seed, task.id, line)


@pytest.mark.parametrize("name", shipped_names())
def test_every_message_that_changes_a_rule_states_the_new_rule(name):
    """The agent learns a changed rule only from the user's message: each one reads (with the same
    depth reader) as every rule it sets ("from now on show me … before it goes off" is approve)."""
    for ev in load_scenario(name).events:
        if ev.policy_change is not None:
            assert set(ev.policy_change.rules.values()) <= stated_depths(ev.text), (ev.id, ev.text)


def test_the_validator_reports_a_rule_change_its_message_does_not_state():
    s = load_scenario("pottery_studio")
    index = next(i for i, ev in enumerate(s.events) if ev.policy_change is not None)
    events = list(s.events)
    events[index] = events[index].model_copy(update={"text": "Lena: morning — Rosa rang about invoices."})
    assert (f"events[{index}].text", "words that state the new invoice rule ('approve'); it reads as []") \
        in semantic_errors(s.model_copy(update={"events": events}))
