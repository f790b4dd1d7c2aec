"""The scenario suite as the benchmark defines it: ten domains, what each scenario must contain."""

import pytest

from proactive_env import env_ids
from proactive_env.spec import PERSONAS, SUITE_VERSION, load_scenario, shipped_names

DOMAINS = {"research", "travel", "living", "food", "career", "business", "education", "finance", "shopping",
           "health"}
COMPLETE = len(shipped_names()) == len(DOMAINS)


@pytest.mark.skipif(not COMPLETE, reason="the suite is not complete yet")
def test_ten_domains_and_at_least_30_ta_decisions():
    scenarios = [load_scenario(n) for n in shipped_names()]
    assert {s.domain for s in scenarios} == DOMAINS
    assert sum(len(s.ta_decisions) for s in scenarios) >= 30
    assert len(env_ids()) == 40
    assert SUITE_VERSION


@pytest.mark.parametrize("name", shipped_names())
def test_scenario_contents(name):
    s = load_scenario(name)
    tasks = s.tasks
    assert 10 <= len(tasks) <= 19
    assert any(t.latent for t in tasks)
    assert any(t.requires for t in tasks)
    assert any(t.noop for t in tasks)
    assert len(s.ta_decisions) >= 2 and all(d.urgent != d.competing for d in s.ta_decisions)
    differ = sum(len({s.personas[p].rules[t.category] for p in PERSONAS}) > 1 for t in tasks if not t.noop)
    assert 3 * differ >= len(tasks), f"rules differ on {differ}/{len(tasks)} tasks"
    assert s.user.sleep.start != s.user.sleep.end and s.days >= 2
    assert any(e.policy_change for e in s.events), "no feedback that changes what the user delegates"
    assert any(t.constraints.must_include or t.constraints.must_not_include for t in tasks)
    assert any(e.when is not None for e in s.events) or any(r.when is not None for r in s.records)
    assert s.variants.jitter > 0
