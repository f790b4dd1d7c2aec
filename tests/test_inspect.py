"""The Inspect AI task: `inspect eval proactive_env/proactivity` plays the text face and its scores
are the benchmark's own, equal to the same calls through gym.make."""

import json
import os
import subprocess
import sys

import gymnasium as gym
import pytest

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from proactive_env.baselines.llm import WAIT  # noqa: E402
from proactive_env.inspect_task import SCORES  # noqa: E402

from openai_server import FakeOpenAI, tool_call  # noqa: E402

# a few real calls, an answer without a tool call (played as wait), two calls at once (one carried out)
SCRIPT = [("list_matters", {}), ("list_records", {}), None, ("read_record", {"id": "msg_price_question"}),
          [("write_note", {"text": "Arc Q27 is £142; the cable £18.", "about": "m1"}), ("wait", {})]]


def _output(step):
    usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    if step is None:
        out = ModelOutput.from_content("mockllm", "thinking aloud, no call")
    else:
        calls = step if isinstance(step, list) else [step]
        out = ModelOutput.for_tool_call("mockllm", calls[0][0], calls[0][1])
        if len(calls) > 1:
            extra = ModelOutput.for_tool_call("mockllm", calls[1][0], calls[1][1]).message.tool_calls
            out.message.tool_calls = out.message.tool_calls + extra
    out.usage = usage
    return out


def scripted():
    steps = iter(SCRIPT)

    def respond(input, tools, tool_choice, config):
        return _output(next(steps, ("wait", {})))

    return respond


def gym_scores(persona="planner", seed=1000):
    """The same calls through gym.make: the first tool call of each answer, or wait."""
    env = gym.make("Proactivity-Monitor-Text-v0", persona=persona)
    env.reset(seed=seed)
    steps = iter(SCRIPT)
    done, info = False, {}
    while not done:
        step = next(steps, ("wait", {}))
        first = step[0] if isinstance(step, list) else step
        action = WAIT if first is None else json.dumps({"name": first[0], "arguments": first[1]})
        _, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    return {m: info["scores"][m] for m in SCORES}


def test_inspect_eval_by_name_scores_what_gym_make_scores(tmp_path):
    logs = inspect_ai.eval("proactive_env/proactivity", model=get_model("mockllm/model", custom_outputs=scripted()),
                           task_args={"scenario": "monitor", "persona": "planner", "seed": 1000},
                           log_dir=str(tmp_path), display="none")
    log = logs[0]
    assert log.status == "success", log.error
    (sample,) = log.samples
    assert sample.id == "monitor-planner-s1000" and sample.metadata["split"] == "test"
    value = sample.scores["benchmark_scores"].value
    expected = gym_scores()
    assert set(value) == set(SCORES)
    assert value == pytest.approx(expected, abs=1e-12)
    assert sample.metadata["no_tool_call"] == 1 and sample.metadata["extra_tool_calls"] == 1
    # the tools offered are the face's own
    from proactive_env.envs.text import ProactivityTextEnv

    face = {t["function"]["name"] for t in ProactivityTextEnv("monitor", "planner").tools()}
    model_events = [e for e in sample.events if getattr(e, "event", None) == "model"]
    assert model_events and {t.name for t in model_events[0].tools} == face
    # the log's metrics are the means over samples, one per metric
    metrics = {s.name: s.metrics["mean"].value for s in log.results.scores}
    assert metrics["TC"] == pytest.approx(expected["TC"]) and metrics["J"] == pytest.approx(expected["J"])


def test_one_sample_per_scenario_persona_seed(tmp_path):
    from proactive_env.inspect_task import samples
    from proactive_env.spec.loader import scenario_dir

    ids = [s.id for s in samples("monitor", "all", 1000, 2)]
    assert ids == [f"monitor-{p}-s{s}" for p in ("reviewer", "planner", "operator") for s in (1000, 1001)]
    assert [s.id for s in samples("Proactivity-Monitor-Operator-v0", "all", 7)] == ["monitor-operator-s7"]
    # a new scenario where it lies, as every command takes it
    text = (scenario_dir() / "monitor.yaml").read_text().replace("name: monitor\n", "name: my_monitor\n", 1)
    (tmp_path / "my_monitor.yaml").write_text(text)
    (sample,) = samples(str(tmp_path / "my_monitor.yaml"), "planner", 1000)
    assert sample.id == "my_monitor-planner-s1000" and sample.metadata["scenario"] == str(tmp_path / "my_monitor.yaml")


def test_inspect_cli_on_an_openai_compatible_loopback_server(tmp_path):
    """The command a user types, end to end, through Inspect's own OpenAI provider."""
    with FakeOpenAI(lambda request: [tool_call("wait", {})]) as server:
        # Inspect's provider for any OpenAI-compatible server: openai-api/<name>/<model>, <NAME>_BASE_URL
        env = {**os.environ, "LOOPBACK_BASE_URL": server.base_url, "LOOPBACK_API_KEY": "test"}
        proc = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "proactive_env/proactivity",
                               "--model", "openai-api/loopback/test-model", "-T", "scenario=monitor", "-T", "persona=operator",
                               "-T", "seed=1000", "--log-dir", str(tmp_path), "--display", "none",
                               "--log-format", "json"], capture_output=True, text=True, env=env, timeout=600,
                              cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (log_file,) = tmp_path.glob("*.json")
    log = json.loads(log_file.read_text())
    value = log["samples"][0]["scores"]["benchmark_scores"]["value"]
    env = gym.make("Proactivity-Monitor-Text-v0", persona="operator")
    env.reset(seed=1000)
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(json.dumps({"name": "wait", "arguments": {}}))
        done = terminated or truncated
    assert value == pytest.approx({m: info["scores"][m] for m in SCORES}, abs=1e-12)
