"""Fuzzing both faces with what a model or a careless caller might send (issue 11).

* Text face: 10⁴ random and type-confused tool calls across the suite; no exception escapes, every
  observation is text within the observation space, and no call makes the world fail (a fault).
* Structured face: 10⁵ random actions of every type (ints in and out of range, floats, strings,
  numpy scalars and arrays, None, ...); no exception, and the same seed gives the same trajectory.
"""

import hashlib
import json
import random

import gymnasium as gym
import numpy as np
import pytest

from proactive_env.envs import env_name
from proactive_env.envs.text import MAX_ACTION
from proactive_env.spec import PERSONAS, load_scenario, shipped_names

TEXT_CALLS = 10_000
STRUCTURED_ACTIONS = 100_000


def _value(rng: random.Random, depth: int = 0, ids: tuple = ()):
    kind = rng.randrange(14)
    if kind == 0:
        return rng.choice(ids) if ids else "r1"
    if kind == 1:
        return rng.choice(["", " ", "D2 09:00", "2026-13-45 25:61", "tomorrow", "D99 99:99", "\x00", "é" * 40])
    if kind == 2:
        return rng.randint(-2**70, 2**70)
    if kind == 3:
        return rng.choice([0.5, -1e308, 1e-308, 3.0])
    if kind == 4:
        return rng.choice([True, False, None])
    if kind == 5 and depth < 4:
        return [_value(rng, depth + 1, ids) for _ in range(rng.randrange(4))]
    if kind == 6 and depth < 4:
        return {rng.choice(["tool", "args", "x", "text"]): _value(rng, depth + 1, ids) for _ in range(rng.randrange(4))}
    if kind == 7:
        return "x" * rng.choice([1, 1000, MAX_ACTION, MAX_ACTION * 2])
    return "".join(rng.choice("abc XYZ:-{}[]\"'\\0123456789") for _ in range(rng.randrange(30)))


def _call(rng: random.Random, tools: list[dict], ids: tuple):
    """One tool call: well-formed, type-confused or malformed, in any of the accepted shapes."""
    shape = rng.randrange(20)
    if shape == 0:
        return rng.choice([None, 7, 3.5, [], ["wait"], b"\xff\xfe", "", "{", "null", '"wait"', "[" * 3000,
                           '{"tool": "wait", "arguments": ' + "9" * 5000 + "}", "{\"tool\": NaN}"])
    if shape == 1:
        return {"tool": _value(rng, ids=ids), "arguments": _value(rng, ids=ids)}
    tool = rng.choice(tools)["function"]
    name = tool["name"] if rng.random() > 0.05 else rng.choice(["nope", "WAIT", "read_record "])
    params = tool["parameters"]["properties"]
    args = {}
    for key, spec in params.items():
        if rng.random() < 0.2:
            continue  # missing
        if rng.random() < 0.6 and spec.get("type") == "string":
            args[key] = rng.choice(ids) if key == "record_id" and ids else _value(rng, ids=ids) if rng.random() < 0.3 else "D2 09:00"
        else:
            args[key] = _value(rng, ids=ids)
    if rng.random() < 0.1:
        args[rng.choice(["about", "extra", ""])] = _value(rng, ids=ids)
    if shape == 2:
        return json.dumps({"name": name, "arguments": json.dumps(args)})  # the OpenAI shape
    if shape == 3:
        return {"tool": name, "arguments": args}  # an already-parsed dict
    return json.dumps({"tool": name, "arguments": args})


def _fuzz_text() -> tuple[int, list[dict]]:
    rng = random.Random(11)
    per_pair = TEXT_CALLS // (len(shipped_names()) * len(PERSONAS)) + 1
    calls, faults = 0, []
    for scenario in shipped_names():
        ids = tuple(r.id for r in load_scenario(scenario).records)
        for persona in PERSONAS:
            env = gym.make(f"Proactivity-{env_name(scenario)}-Text-v0", persona=persona).unwrapped
            obs, _ = env.reset(seed=rng.randrange(2000))
            tools = env.tools()
            for _ in range(per_pair):
                obs, reward, terminated, truncated, info = env.step(_call(rng, tools, ids))
                calls += 1
                assert isinstance(obs, str) and env.observation_space.contains(obs)
                assert np.isfinite(reward)
                if terminated or truncated:
                    faults += env.faults
                    env.reset(seed=rng.randrange(2000))
            faults += env.faults
    return calls, faults


def test_text_face_survives_random_and_type_confused_tool_calls():
    calls, faults = _fuzz_text()
    assert calls >= TEXT_CALLS
    assert all(f["tool"] and f["error"] for f in faults)  # each fault is counted with what failed


def test_no_tool_call_makes_the_world_fail():
    _, faults = _fuzz_text()
    assert faults == [], f"{len(faults)} calls made the world fail: {faults[:3]}"


def _action(rng: np.random.Generator, n: int):
    kind = int(rng.integers(16))
    i = int(rng.integers(-3, n + 3))
    return [i, i, i, i, np.int64(i), np.int32(i), np.uint8(abs(i) % 256), np.array(i), np.array([i]), float(i),
            i + 0.5, str(i), np.float32(i), bool(i % 2), None, np.array([i, i])][kind]


def _run_structured(seed: int, steps: int) -> str:
    rng = np.random.default_rng(seed)
    digest = hashlib.sha256()
    names = shipped_names()
    env, episode, rewards, invalid = None, 0, [], []
    for _ in range(steps):
        if env is None:
            scenario, persona = names[episode % len(names)], PERSONAS[episode % len(PERSONAS)]
            env = gym.make(f"Proactivity-{env_name(scenario)}-{persona.capitalize()}-v0").unwrapped
            obs, info = env.reset(seed=seed + episode)
            n = env.action_space.n
        obs, reward, terminated, truncated, info = env.step(_action(rng, n))
        rewards.append(reward)
        invalid.append(info["invalid_action"])
        if terminated or truncated:  # the episode's trajectory, its rewards and its last observation
            digest.update(json.dumps(env.trajectory("fuzz"), sort_keys=True, default=str).encode())
            digest.update(np.array(rewards).tobytes() + np.array(invalid).tobytes())
            digest.update(np.concatenate([np.ravel(v).astype(np.float64) for v in obs.values()]).tobytes())
            env, episode, rewards, invalid = None, episode + 1, [], []
    digest.update(np.array(rewards).tobytes() + np.array(invalid).tobytes())
    return digest.hexdigest()


@pytest.mark.parametrize("seed", [0])
def test_structured_face_survives_random_actions_of_every_type_deterministically(seed):
    first = _run_structured(seed, STRUCTURED_ACTIONS)
    assert first == _run_structured(seed, STRUCTURED_ACTIONS)
    assert first != _run_structured(seed + 1, 2_000)


# ---------------------------------------------------------------------------------- by class (issue 22)
# The generators of tests/fuzz_classes.py enumerate each class from the code (every option of
# every command, every tool of every scenario, every MCP tool, every printing path of a
# credential); here each class runs whole where it is fast and sampled where a case is a run.
def _outcomes(results) -> dict:
    bad = [seen for outcome, seen in results if outcome not in ("clear error", "handled")]
    assert not bad, "\n".join(map(str, bad[:10]))
    return {}


def test_every_cli_option_refuses_each_malformed_value_of_its_type(tmp_path):
    import fuzz_classes as fc

    from proactive_env import cli

    cases = list(fc.cli_cases(cli.build_parser()))
    assert {c.command for c in cases} >= {"eval", "run", "play", "validate", "mcp", "rescore", "check"}
    assert any(c.option == "--temperature" for c in cases) and any(c.option == "--port" for c in cases)
    rng = random.Random(22)
    numeric = [c for c in cases if c.numeric]  # parse-time refusals: all of them
    sample = numeric + rng.sample([c for c in cases if not c.numeric], 40)
    _outcomes(fc.judge_cli(case, tmp_path, 120) for case in sample)


def test_every_text_face_tool_names_the_key_it_refuses():
    import fuzz_classes as fc

    for name in shipped_names():
        env = gym.make(f"Proactivity-{env_name(name)}-Text-v0").unwrapped
        env.reset(seed=0)
        _outcomes(fc.judge_text_call(env, call, key) for _, call, key in fc.text_cases(env.tools()))


def test_every_mcp_tool_takes_malformed_arguments_and_foreign_paths(tmp_path):
    pytest.importorskip("mcp")
    import fuzz_classes as fc

    from proactive_env.mcp_server import EpisodeHost, McpArgs

    folders = fc.mcp_folders(tmp_path)
    host = EpisodeHost(McpArgs(scenario="monitor", out=tmp_path / "out", scenario_dirs=(folders[0],)))
    cases = list(fc.mcp_cases(host))
    assert {tool for _, tool, _ in cases} >= {"start_episode", "get_scores", "end_episode", "write_note"}
    _outcomes(fc.judge_mcp(host, tool, arguments, folders) for _, tool, arguments in cases)


def test_a_secret_with_any_special_character_leaks_through_no_printing_path():
    pytest.importorskip("openai")
    import fuzz_classes as fc
    from openai_server import FakeOpenAI

    secrets = fc.secrets()
    assert len(secrets) == 3 * 33
    with FakeOpenAI() as server:
        for secret in random.Random(22).sample(secrets, 12) + ['pa"ss/w@rd:x']:
            paths = list(fc.secret_paths(secret, server))
            assert len(paths) >= 8
            _outcomes(fc.judge_secret(path, text, secret) for path, text in paths)
