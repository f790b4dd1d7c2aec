"""The structured env against Gymnasium's and SB3's checkers, parametrized over the registry."""

import json
import pickle
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import proactive_env
from proactive_env.envs import ACTION_TABLE, N_ACTIONS

IDS = proactive_env.env_ids()
# Warnings we accept from the checkers, each with its reason. Everything else is an error.
ALLOWED_WARNINGS: list[tuple[str, str]] = []


def rollout(env, seed, steps=400, policy_seed=0):
    """(observations, rewards, infos) of a masked-random rollout."""
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    trace = [(obs, 0.0, info)]
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((obs, reward, info))
        if terminated or truncated:
            obs, info = env.reset()
            trace.append((obs, 0.0, info))
    return trace


def test_registry_lists_every_scenario_and_persona():
    assert "Proactivity-Monitor-v0" in IDS
    for persona in ("Reviewer", "Planner", "Operator"):
        assert f"Proactivity-Monitor-{persona}-v0" in IDS
    assert all(i in gym.registry for i in IDS)
    gym.register_envs(proactive_env)


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_check_env(env_id):
    env = gym.make(env_id, render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for message, _reason in ALLOWED_WARNINGS:
            warnings.filterwarnings("ignore", message=message)
        check_env(env.unwrapped)
    env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_check_env(env_id):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for message, _reason in ALLOWED_WARNINGS:
            warnings.filterwarnings("ignore", message=message)
        sb3_check_env(gym.make(env_id).unwrapped, warn=True)


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_everything(env_id):
    a = rollout(gym.make(env_id), seed=7)
    b = rollout(gym.make(env_id), seed=7)
    assert len(a) == len(b)
    for (oa, ra, ia), (ob, rb, ib) in zip(a, b):
        assert all(np.array_equal(oa[k], ob[k]) for k in oa)
        assert ra == rb
        assert json.dumps(ia, sort_keys=True, default=str) == json.dumps(ib, sort_keys=True, default=str)


SCRIPT = """
import hashlib, json, sys, numpy as np, gymnasium as gym, proactive_env
env = gym.make(sys.argv[1]); rng = np.random.default_rng(3)
obs, info = env.reset(seed=11); out = []
for _ in range(300):
    obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    out.append([float(r), hashlib.sha256(b"".join(obs[k].tobytes() for k in sorted(obs))).hexdigest(),
                json.dumps(info, sort_keys=True, default=lambda a: a.tolist())])
    if term or trunc:
        obs, info = env.reset(seed=12)
print(json.dumps(out))
"""


def test_determinism_across_processes():
    runs = [subprocess.run([sys.executable, "-c", SCRIPT, "Proactivity-Monitor-v0"], capture_output=True,
                           text=True, check=True).stdout for _ in range(2)]
    assert runs[0] == runs[1] and len(json.loads(runs[0])) == 300


def test_persona_is_sampled_from_the_seed():
    env = gym.make("Proactivity-Monitor-v0")
    personas = {env.reset(seed=s)[1]["persona"] for s in range(30)}
    assert personas == {"reviewer", "planner", "operator"}
    assert env.reset(seed=5)[1]["persona"] == env.reset(seed=5)[1]["persona"]


def test_action_table_and_masks_agree():
    env = gym.make("Proactivity-Monitor-Operator-v0")
    obs, info = env.reset(seed=0)
    assert len(ACTION_TABLE) == N_ACTIONS == env.action_space.n
    assert ACTION_TABLE[0] == ("noop", None)
    assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (N_ACTIONS,)
    assert np.array_equal(env.unwrapped.action_masks(), obs["action_mask"].astype(bool))
    assert np.array_equal(info["action_mask"], obs["action_mask"])


@pytest.mark.parametrize("action", [-1, N_ACTIONS, N_ACTIONS + 5])
def test_out_of_range_action_becomes_noop(action):
    env = gym.make("Proactivity-Monitor-Operator-v0").unwrapped
    env.reset(seed=0)
    before = env.world.now
    _, _, _, _, info = env.step(action)
    assert info["invalid_action"] is True and env.world.now >= before


def test_masked_action_becomes_noop():
    env = gym.make("Proactivity-Monitor-Operator-v0")
    obs, info = env.reset(seed=0)
    masked = int(np.flatnonzero(info["action_mask"] == 0)[0])
    log_len = len(env.unwrapped.world.log)
    _, _, _, _, info = env.step(masked)
    assert info["invalid_action"] is True
    assert not any(e["type"] == "action" for e in env.unwrapped.world.log[log_len:])


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
@pytest.mark.parametrize("env_id", IDS)
def test_render(env_id, mode):
    env = gym.make(env_id, render_mode=mode)
    obs, info = env.reset(seed=1)
    while len(np.flatnonzero(info["action_mask"])) == 1:  # wait until there is something to do
        obs, _, _, _, info = env.step(0)
    env.step(int(np.flatnonzero(info["action_mask"])[-1]))
    frame = env.render()
    if mode == "ansi":
        assert isinstance(frame, str) and env.unwrapped.scenario.title in frame and "agent" in frame
    else:
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
        assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 3  # more than a blank canvas


def test_spec_serialises_and_pickles():
    env = gym.make("Proactivity-Monitor-Reviewer-v0")
    assert json.loads(env.spec.to_json())["kwargs"] == {"scenario": "monitor", "persona": "reviewer"}
    env.reset(seed=0)
    env.step(0)
    clone = pickle.loads(pickle.dumps(env))
    a = clone.step(0)
    b = env.step(0)
    assert a[1] == b[1] and all(np.array_equal(a[0][k], b[0][k]) for k in a[0])


def test_info_scores_running_and_final():
    env = gym.make("Proactivity-Monitor-Operator-v0")
    obs, info = env.reset(seed=0)
    assert set(info["scores"]) == {"TC", "TA", "TR_D", "TR_J", "J"}
    terminated = truncated = False
    while not (terminated or truncated):
        obs, _, terminated, truncated, info = env.step(0)
    assert terminated and "tasks" in info["scores"] and "components" in info["scores"]


def test_approval_decisions_are_structured_records_in_info():
    from proactive_env.baselines import OracleAgent

    env = gym.make("Proactivity-Monitor-Reviewer-v0")
    obs, info = env.reset(seed=0)
    agent = OracleAgent()
    agent.reset(env.unwrapped, 0)
    seen, done = [], False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        seen += info.get("decisions", [])
        done = terminated or truncated
    assert seen and all({"verdict", "rule", "trust_before", "trust_after", "task", "actions"} <= set(d) for d in seen)
    logged = [e for e in env.unwrapped.world.log if e["type"] == "decision" and e["rule"] != "user_unavailable"]
    assert [d["rule"] for d in seen] == [e["rule"] for e in logged]
    # "Approved" is not "done": every approval was followed by the execution it allows.
    approved = {d["task"] for d in seen if d["verdict"] == "approve"}
    executed = {e["task"] for e in env.unwrapped.world.log if e["type"] == "execute" and e["ok"]}
    assert approved <= executed


def test_no_task_column_states_the_depth_a_task_wants():
    """Over every pair (oracle play, two seeds): among tasks alike in whether they have an action
    (none can be executed without one), no single task column separates the depths the user
    wants — the agent must join category and rule table and track answers."""
    from collections import defaultdict

    from proactive_env.baselines import make_agent
    from proactive_env.envs.structured import MAX_TASKS, TASK_FEATURES, ProactivityEnv
    from proactive_env.spec import PERSONAS, shipped_names

    rows = defaultdict(list)  # (has an action, wanted depth) -> rows seen while the task was open
    for scenario in shipped_names():
        for persona in PERSONAS:
            for seed in (0, 1000):
                env = ProactivityEnv(scenario, persona=persona)
                obs, info = env.reset(seed=seed)
                agent = make_agent("oracle")
                agent.reset(env, seed)
                done = False
                while not done:
                    table = obs["tasks"].reshape(MAX_TASKS, len(TASK_FEATURES))
                    for t in env.world.tasks:
                        if t.active and not t.closed:
                            wanted = env.scorer.policy.wanted(t.spec, persona)
                            rows[(t.spec.action is not None, wanted)].append(table[t.index])
                    obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
                    done = terminated or truncated
    groups = {key: np.array(value) for key, value in rows.items()}
    assert {(has, d.name) for has, d in groups} >= {(True, "SUGGEST"), (True, "EXECUTE"), (False, "NOOP"),
                                                     (False, "PREPARE"), (False, "SUGGEST")}  # the sweep saw them
    separated = []
    for (has_a, a), x in groups.items():
        for (has_b, b), y in groups.items():
            if has_a == has_b and a < b:
                separated += [(has_a, a.name, b.name, name) for c, name in enumerate(TASK_FEATURES)
                              if x[:, c].max() < y[:, c].min() or y[:, c].max() < x[:, c].min()]
    assert not separated
