"""An evaluation killed mid-way (SIGTERM, SIGKILL) and started again with the same command: every
run ends up on disk exactly once, finished runs are not played again, results.json is complete.

The scripted endpoint runs in a thread of this test process, so it outlives the killed eval and
sees which runs the restarted one plays."""

import json
import signal
import subprocess
import sys
import time

import pytest
from openai_server import FakeOpenAI, Reply, tool_call

from proactive_env.scoring import load_trajectory
from proactive_env.spec import PERSONAS, load_scenario

RUNS = len(PERSONAS) * 2


def eval_command(base_url: str, out, concurrency: int) -> list[str]:
    return [sys.executable, "-m", "proactive_env.cli", "eval", "--agents", "openai:test-model",
            "--scenarios", "monitor", "--personas", "all", "--seeds", "2", "--base-url", base_url,
            "--retries", "0", "--timeout", "10", "--concurrency", str(concurrency), "--out", str(out)]


def run_of(request: dict) -> str:
    """The trajectory file name of the run a request belongs to (persona by its policy, seed)."""
    personas = load_scenario("monitor").personas
    briefing = request["messages"][1]["content"]
    persona = next(p for p in PERSONAS if personas[p].policy.split("{rule:")[0] in briefing)  # (drawn rules fill the rest)
    return f"monitor-{persona}-s{request['seed']}.json"


@pytest.mark.parametrize("sig, concurrency", [(signal.SIGTERM, 1), (signal.SIGKILL, 2), (signal.SIGINT, 2)])
def test_killed_evaluation_resumes_without_rerunning(tmp_path, sig, concurrency):
    delay = {"s": 0.04}  # slow answers while the first eval runs, so it is killed mid-way
    out = tmp_path / "out"
    trajectories = out / "trajectories" / "openai_test-model"
    with FakeOpenAI(lambda request: Reply(tool_calls=[tool_call("wait", {})], delay=delay["s"])) as server:
        proc = subprocess.Popen(eval_command(server.base_url, out, concurrency), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(list(trajectories.glob("*.json"))) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == {signal.SIGTERM: 128 + signal.SIGTERM, signal.SIGKILL: -signal.SIGKILL,
                                   signal.SIGINT: 130}[sig], stderr
        if sig == signal.SIGTERM:
            assert "terminated; finished runs are kept" in stderr and "Traceback" not in stderr
        kept = {p.name: p.stat().st_mtime_ns for p in trajectories.glob("*.json")}
        assert 2 <= len(kept) < RUNS
        before = len(server.requests)

        delay["s"] = 0.0
        again = subprocess.run(eval_command(server.base_url, out, concurrency), capture_output=True, text=True,
                               timeout=120)
        assert again.returncode == 0, again.stderr
        replayed = {run_of(r) for r in server.requests[before:]}
        whole = subprocess.run(eval_command(server.base_url, tmp_path / "whole", concurrency), capture_output=True,
                               text=True, timeout=120)  # the same evaluation, never interrupted
        assert whole.returncode == 0, whole.stderr

    files = sorted(p.name for p in trajectories.glob("*.json"))
    assert files == sorted(f"monitor-{p}-s{s}.json" for p in PERSONAS for s in (1000, 1001))
    assert {name: (trajectories / name).stat().st_mtime_ns for name in kept} == kept
    assert not replayed & set(kept) and replayed == set(files) - set(kept)
    for name in files:
        trajectory = load_trajectory(trajectories / name)
        assert trajectory["llm_usage"]["calls"] == len(trajectory["actions"])
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert sorted(r["persona"] for r in rows) == sorted(PERSONAS) and all(r["runs"] == 2 for r in rows)
    assert (out / "results.json").read_bytes() == (tmp_path / "whole" / "results.json").read_bytes()
