"""The oracle reaches the top score and the scripted agents score what the rules say."""

import pytest

from proactive_env.baselines import SCRIPTED
from proactive_env.spec import PERSONAS, shipped_names

from runs import CASES, mean
from runs import runs as scores


@pytest.mark.parametrize("scenario, persona", CASES)
def test_oracle_reaches_the_top(scenario, persona):
    for run in scores("oracle", scenario, persona):
        s = run["scores"]
        bad = [t for t in s["tasks"] if t["depth_match"] is not True or t["TC"] < 98]
        missed = [d for d in s["ta_decisions"] if not (d["now"] and d["later"])]
        assert s["TC"] >= 98 and s["TA"] == 1.0 and s["TR_D"] == 1.0, (run["seed"], s["TC"], bad, missed)


@pytest.mark.parametrize("scenario, persona", CASES)
def test_noop_scores_low(scenario, persona):
    assert mean("noop", scenario, persona, "TR_D") <= 0.30
    assert mean("noop", scenario, persona, "TC") <= 20
    assert mean("noop", scenario, persona, "TA") == 0.0


@pytest.mark.parametrize("scenario", shipped_names())
def test_depth_blind_agents_lose_trust_agreement(scenario):
    assert mean("always-execute", scenario, "reviewer", "TR_D") <= 0.60
    assert mean("always-suggest", scenario, "operator", "TR_D") <= 0.60


@pytest.mark.parametrize("scenario, persona", CASES)
def test_oracle_beats_every_scripted_agent(scenario, persona):
    best = mean("oracle", scenario, persona, "J")
    for agent in SCRIPTED:
        if agent != "oracle":
            assert mean(agent, scenario, persona, "J") < best, agent


@pytest.mark.parametrize("scenario", shipped_names())
def test_policy_follower_misses_time_and_feedback(scenario):
    for persona in PERSONAS:
        for follower, oracle in zip(scores("policy-follower", scenario, persona), scores("oracle", scenario, persona)):
            assert follower["scores"]["TA"] < oracle["scores"]["TA"]  # every pair, every seed
    follower = sum(mean("policy-follower", scenario, p, "TR_D") for p in PERSONAS)
    assert follower < sum(mean("oracle", scenario, p, "TR_D") for p in PERSONAS)


@pytest.mark.parametrize("agent", sorted(SCRIPTED))
@pytest.mark.parametrize("scenario, persona", CASES)
def test_rewards_sum_to_j(agent, scenario, persona):
    for run in scores(agent, scenario, persona):
        assert not run["truncated"]
        assert run["return"] == pytest.approx(run["scores"]["J"], abs=1e-6)
