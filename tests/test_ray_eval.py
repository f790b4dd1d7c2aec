"""``eval --ray``: every run a Ray task on a local Ray of 2 workers; the output folder is byte for
byte that of a local eval, and a killed ``eval --ray`` resumes like a local one."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from openai_server import FakeOpenAI, Reply, tool_call  # noqa: E402

from proactive_env.spec import PERSONAS  # noqa: E402

GRID = ["--scenarios", "monitor,experiments", "--personas", "all", "--seeds", "2", "--seed", "1000"]


def eval_command(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "proactive_env.cli", "eval", "--out", str(out), *extra]


def files(folder: Path) -> dict[str, bytes]:
    """Every file the evaluation wrote; of the manifest, the configurations (its command log
    differs: another command line, another time) — and not the lock."""
    out = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
           if p.is_file() and p.name not in ("manifest.json", ".lock")}
    out["manifest.json"] = json.dumps(json.loads((folder / "manifest.json").read_text())["configurations"]).encode()
    return out


def test_ray_eval_writes_exactly_what_a_local_eval_writes(tmp_path):
    agents = ["--agents", "oracle,policy-follower,random"]
    local = subprocess.run(eval_command(tmp_path / "local", *agents, *GRID), capture_output=True, text=True, timeout=300)
    assert local.returncode == 0, local.stderr
    on_ray = subprocess.run(eval_command(tmp_path / "ray", *agents, *GRID, "--ray", "--concurrency", "2"),
                            capture_output=True, text=True, timeout=300)
    assert on_ray.returncode == 0, on_ray.stderr
    expected = files(tmp_path / "local")
    assert len(expected) == 3 * 2 * len(PERSONAS) * 2 + 2  # every trajectory, results.json and the manifest
    assert files(tmp_path / "ray") == expected


def test_killed_ray_eval_resumes_like_a_local_one(tmp_path):
    """SIGKILL mid-way (runs slowed by a scripted LLM endpoint), then the same command: finished
    runs are kept untouched, the rest are played, and the folder equals a local eval's."""
    delay = {"s": 0.03}
    out = tmp_path / "ray"
    trajectories = out / "trajectories" / "openai_test-model"
    with FakeOpenAI(lambda request: Reply(tool_calls=[tool_call("wait", {})], delay=delay["s"])) as server:
        agents = ["--agents", "openai:test-model", "--base-url", server.base_url, "--retries", "0"]
        grid = ["--scenarios", "monitor", "--personas", "all", "--seeds", "2"]
        proc = subprocess.Popen(eval_command(out, *agents, *grid, "--ray", "--concurrency", "2"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while len(list(trajectories.glob("*.json"))) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        kept = {p.name: p.stat().st_mtime_ns for p in trajectories.glob("*.json")}
        assert 2 <= len(kept) < 2 * len(PERSONAS)

        delay["s"] = 0.0
        again = subprocess.run(eval_command(out, *agents, *grid, "--ray", "--concurrency", "2"),
                               capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        local = subprocess.run(eval_command(tmp_path / "local", *agents, *grid), capture_output=True, text=True,
                               timeout=300)
        assert local.returncode == 0, local.stderr
    assert {name: (trajectories / name).stat().st_mtime_ns for name in kept} == kept
    assert files(out) == files(tmp_path / "local")


def test_ray_eval_reports_a_bad_agent_before_starting(tmp_path):
    result = subprocess.run(eval_command(tmp_path / "x", "--agents", "nobody", "--ray", "--concurrency", "2"),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "unknown agent 'nobody'" in result.stderr
