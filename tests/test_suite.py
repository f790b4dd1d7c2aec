"""The scenario suite as the benchmark defines it: ten domains, 124 tasks, what each scenario
must contain."""

import pytest

from proactive_env import env_ids
from proactive_env.spec import PERSONAS, SUITE_VERSION, Depth, load_scenario, shipped_names

DOMAINS = {"research", "travel", "living", "food", "career", "business", "education", "finance", "shopping",
           "health"}
COMPLETE = len(shipped_names()) == len(DOMAINS)


@pytest.mark.skipif(not COMPLETE, reason="the suite is not complete yet")
def test_ten_domains_and_124_tasks():
    scenarios = [load_scenario(n) for n in shipped_names()]
    assert {s.domain for s in scenarios} == DOMAINS
    assert sum(len(s.tasks) for s in scenarios) == 124
    assert len(env_ids()) == 40
    assert SUITE_VERSION


@pytest.mark.parametrize("name", shipped_names())
def test_scenario_contents(name):
    s = load_scenario(name)
    tasks = s.tasks
    assert 10 <= len(tasks) <= 19
    assert any(t.latent for t in tasks)
    assert any(t.requires for t in tasks)
    assert any(all(e.depth == "noop" for e in t.expect.values()) for t in tasks)
    assert s.ta_window.urgent != s.ta_window.competing
    assert all(set(t.expect) == set(PERSONAS) for t in tasks)
    differ = sum(len({Depth.parse(e.depth) for e in t.expect.values()}) > 1 for t in tasks)
    assert 3 * differ >= len(tasks), f"depths differ on {differ}/{len(tasks)} tasks"
    assert s.user.sleep.start != s.user.sleep.end and s.days >= 2
    assert any(e.policy_change for e in s.events), "no feedback that changes what the user delegates"
    assert any(t.constraints.must_include or t.constraints.must_not_include for t in tasks)
