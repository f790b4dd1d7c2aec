"""The text/tool face: same world and scorer as the structured face, JSON tool calls, errors
as observations."""

import json
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from proactive_env.baselines import OracleAgent, TextOracleAgent
from proactive_env.envs import text_env_ids
from proactive_env.evaluate import play
from proactive_env.spec import PERSONAS, shipped_names


@pytest.mark.parametrize("env_id", text_env_ids())
def test_check_env(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(env_id).unwrapped)


def test_tool_schemas_are_openai_functions():
    env = gym.make("Proactivity-Monitor-Text-v0").unwrapped
    tools = env.tools()
    names = [t["function"]["name"] for t in tools]
    assert {"read_record", "write_note", "message_user", "request_approval", "schedule_followup", "defer_task",
            "allocate_resource", "wait", "place_order", "submit_claim"} <= set(names)
    assert len(names) == len(set(names))
    for tool in tools:
        assert tool["type"] == "function"
        params = tool["function"]["parameters"]
        assert params["type"] == "object" and set(params["required"]) <= set(params["properties"])
        json.dumps(tool)


@pytest.mark.parametrize("bad", ["{not json", "[1, 2]", '{"arguments": {}}', '{"tool": "read_record", "arguments": 5}',
                                 '{"tool": "read_record", "arguments": {}}', '{"tool": "nope", "arguments": {}}',
                                 '{"tool": "read_record", "arguments": {"record_id": "not_a_record"}}',
                                 '{"tool": "schedule_followup", "arguments": {"at": "yesterday"}}'])
def test_malformed_calls_come_back_as_errors(bad):
    env = gym.make("Proactivity-Monitor-Text-v0", persona="planner")
    env.reset(seed=0)
    before = env.unwrapped.world.now
    obs, reward, terminated, truncated, info = env.step(bad)
    assert obs.startswith("Error: ") and info["invalid_action"] is True
    assert reward == 0.0 and not terminated and env.unwrapped.world.now == before


def setup_call(persona: str):
    """A Monitor text env waiting at the setup task, and the save_plan call that task intends."""
    env = gym.make("Proactivity-Monitor-Text-v0", persona=persona)
    env.reset(seed=0)
    world = env.unwrapped.world
    while "t01_setup" not in {t.spec.id for t in world.tasks if t.active}:
        env.step('{"tool": "wait", "arguments": {}}')
    args = next(t for t in world.tasks if t.spec.id == "t01_setup").spec.action.args
    return env, world, json.dumps({"tool": "save_plan", "arguments": args})


def test_an_unauthorised_execute_is_refused_and_changes_nothing():
    env, world, call = setup_call("reviewer")
    obs, *_ = env.step(call)
    assert obs.startswith("Error: save_plan: refused") and not any(t.executed for t in world.tasks)
    attempt = [e for e in world.log if e["type"] == "execute"]
    assert len(attempt) == 1 and not attempt[0]["ok"] and attempt[0]["reason"] == "unauthorised"


@pytest.mark.parametrize("scenario", shipped_names())
@pytest.mark.parametrize("persona", PERSONAS)
def test_text_oracle_scores_like_the_structured_oracle(scenario, persona):
    text = play(TextOracleAgent(), scenario, persona, 0)
    structured = play(OracleAgent(), scenario, persona, 0)
    for key in ("TA", "TR_D"):
        assert text["scores"][key] == pytest.approx(structured["scores"][key])
    assert text["scores"]["TC"] == pytest.approx(structured["scores"]["TC"], abs=2)  # TC is per face
    assert text["scores"]["TR_D"] == 1.0 and text["scores"]["TA"] == 1.0 and text["scores"]["TC"] >= 98
    assert text["return"] == pytest.approx(text["scores"]["J"], abs=1e-6)
    assert all(isinstance(a, dict) for a in text["actions"])


def test_a_done_action_cannot_be_repeated():
    env, world, call = setup_call("planner")  # the planner delegates save_plan
    first, *_ = env.step(call)
    second, *_ = env.step(call)
    assert first.startswith("Done: save_plan") and second.startswith("Error: save_plan: ")
    assert sum(e["ok"] for e in world.log if e["type"] == "execute") == 1
