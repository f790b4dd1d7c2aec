"""`check` prints exact figures and names the tasks behind a failing rule."""

import re

from proactive_env.baselines import make_agent
from proactive_env.check import _aligned, _behind, _pct, check_scenario


def test_figures_are_exact_and_a_failing_rule_names_its_tasks():
    assert _pct(0.604) == "60.4%"  # a failing 60.4 % never reads as the threshold
    runs = [{"scores": {"tasks": [{"task": "t01", "depth_match": True}, {"task": "t02", "depth_match": False}]}},
            {"scores": {"tasks": [{"task": "t01", "depth_match": True}, {"task": "t02", "depth_match": True}]}}]
    assert _aligned(runs) == "t01 (2/2), t02 (1/2)"
    assert _behind(False, _aligned(runs)) == "; behind it: t01 (2/2), t02 (1/2)"
    assert _behind(True, _aligned(runs)) == ""


def test_check_on_a_shipped_scenario_prints_one_decimal_shares():
    rules = check_scenario("monitor", make_agent, seeds=1, first_seed=0)
    percents = [p for r in rules for p in re.findall(r"\d+(?:\.\d+)?%", r.detail)]
    assert percents and all(re.fullmatch(r"\d+\.\d%", p) for p in percents)
