"""One scale: the same run read through info, its trajectory, results.json, the training eval's
numbers (eval.csv) and the report's CSV gives the same numbers, each on the scale its unit says."""

import csv
import json

import gymnasium as gym
import pytest

from proactive_env import cli
from proactive_env.baselines import make_agent
from proactive_env.evaluate import evaluate, plan
from proactive_env.scoring import UNITS, load_results
from proactive_env.scoring.results import METRICS, display, header

SEED = 4
AGENTS = ("oracle", "policy-follower")  # TA 1 and TR-D 1; TA 0 and a TR-D between 0 and 1


def played(agent_name: str) -> dict:
    """info["scores"] at the end of one episode played straight through gym.make."""
    env = gym.make("Proactivity-Monitor-Planner-v0")
    agent = make_agent(agent_name)
    obs, info = env.reset(seed=SEED)
    agent.reset(env.unwrapped, SEED)
    terminated = truncated = False
    while not (terminated or truncated):
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
    return info["scores"]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    out = tmp_path_factory.mktemp("units")
    evaluate(plan(list(AGENTS), ["monitor"], ["planner"], [SEED]), out, make_agent)
    assert cli.main(["report", str(out), "--episodes", "none", "--formats", "png"]) == 0
    return out


def in_range(metric: str, value: float) -> bool:
    low, high = UNITS[metric]["range"]
    return low <= value <= high


@pytest.mark.parametrize("agent", AGENTS)
def test_the_same_run_reads_the_same_everywhere(evaluated, agent):
    info = played(agent)
    trajectory = json.loads(next((evaluated / "trajectories" / agent).glob("*.json")).read_text())
    document = load_results(evaluated / "results.json")
    assert document["units"] == UNITS
    (row,) = [r for r in document["rows"] if r["agent"] == agent]
    assert row["runs"] == 1 and row["TR_D_ci"] is None  # one run: no interval
    report = {r["metric"]: r for r in csv.DictReader(open(evaluated / "report" / "leaderboard.csv"))
              if r["agent"] == agent and r["view"] == "overall"}
    for metric in METRICS:
        value = info[metric]
        assert in_range(metric, value), (metric, value)
        assert trajectory["scores"][metric] == pytest.approx(value)
        assert row[metric] == pytest.approx(value)
        assert float(report[metric]["value"]) == pytest.approx(value)
        assert report[metric]["unit"] == UNITS[metric]["unit"]
    assert 0.0 < info["TR_D"] <= 1.0 and info["TA"] in (0.0, 1.0)


def test_training_evaluation_uses_the_same_scale():
    pytest.importorskip("stable_baselines3")
    from proactive_env.baselines.training import EVAL_METRICS, evaluate_policy

    result = evaluate_policy(make_agent("policy-follower"), ["monitor"], 1, SEED)  # what eval.csv records
    info = played("policy-follower")
    assert set(EVAL_METRICS) == set(METRICS)
    for metric in METRICS:
        assert result["planner"][metric] == pytest.approx(info[metric])


def test_percent_exists_only_on_screen_and_says_so(evaluated):
    assert {header(m) for m in METRICS if UNITS[m]["unit"] == "fraction" and m != "J"} == {"TA %", "TR-D %",
                                                                                          "Cont. %"}
    assert display("TR_D", 0.857) == "85.7" and display("J", 0.857) == "0.857" and display("TC", 85.7) == "85.7"
    md = (evaluated / "report" / "leaderboard.md").read_text()
    assert "| TA % | TR-D % |" in md and "Cont. %" in md
