"""The evaluation CLI: results table, results.json, trajectories, resume, re-scoring."""

import json
import subprocess
import sys

import pytest

from proactive_env.baselines import make_agent
from proactive_env.evaluate import evaluate, plan
from proactive_env.replay import rescore
from proactive_env.scoring import RubricJudge, load_trajectory

KEYS = ("agent", "scenario", "persona", "runs", "TC", "TA", "TR_D", "TR_J", "J")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "proactive_env.cli", *args], capture_output=True, text=True)


def test_eval_cli_prints_table_and_writes_results(tmp_path):
    proc = cli("eval", "--agents", "oracle,noop", "--scenarios", "monitor", "--personas", "all",
               "--seeds", "2", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    for header in ("TC", "TA %", "TR-D %", "TR-J", "Cont. %", "J", "By persona", "continuation quality"):
        assert header in proc.stdout
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert len(rows) == 2 * 3
    assert all(set(KEYS) <= set(row) and row["runs"] == 2 for row in rows)
    assert len(list((tmp_path / "trajectories").rglob("*.json"))) == 2 * 3 * 2


def test_eval_resumes_without_rerunning(tmp_path):
    keys = plan(["oracle", "random"], ["monitor"], ["planner"], range(3))
    evaluate(keys[:4], tmp_path, make_agent)  # "stopped" after four runs
    stamps = {k: k.path(tmp_path).stat().st_mtime_ns for k in keys[:4]}
    seen = []
    evaluate(keys, tmp_path, make_agent, on_run=lambda key, skipped: seen.append((key, skipped)))
    assert [skipped for _, skipped in seen] == [True] * 4 + [False] * 2
    assert all(k.path(tmp_path).stat().st_mtime_ns == stamps[k] for k in keys[:4])
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert sorted(r["runs"] for r in rows) == [3, 3]


def test_damaged_trajectory_is_rerun(tmp_path):
    keys = plan(["noop"], ["monitor"], ["operator"], range(1))
    evaluate(keys, tmp_path, make_agent)
    keys[0].path(tmp_path).write_text("{ half a file")
    seen = []
    evaluate(keys, tmp_path, make_agent, on_run=lambda key, skipped: seen.append(skipped))
    assert seen == [False]
    load_trajectory(keys[0].path(tmp_path))


@pytest.mark.parametrize("agent", ["oracle", "random", "always-execute"])
def test_rescoring_a_trajectory_gives_identical_scores(tmp_path, agent):
    keys = plan([agent], ["monitor"], ["reviewer"], range(1))
    evaluate(keys, tmp_path, make_agent)
    trajectory = load_trajectory(keys[0].path(tmp_path))
    again = rescore(trajectory, judges=[RubricJudge()])
    assert again == trajectory["scores"]


def test_run_cli_prints_timeline():
    proc = cli("run", "--scenario", "monitor", "--persona", "operator", "--agent", "oracle", "--seed", "0")
    assert proc.returncode == 0, proc.stderr
    assert "Monitor Purchase" in proc.stdout and "agent start" in proc.stdout and '"J"' in proc.stdout


def test_eval_cli_rejects_unknown_names(tmp_path):
    proc = cli("eval", "--agents", "nobody", "--out", str(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "nobody" in proc.stderr
    proc = cli("eval", "--scenarios", "atlantis", "--out", str(tmp_path))
    assert proc.returncode == 2 and "atlantis" in proc.stderr
