"""Wrappers under Gymnasium's checker, vector envs in both modes, pickling and copying."""

import copy
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from proactive_env.baselines import OracleAgent, make_agent
from proactive_env.replay import rescore
from proactive_env.scoring import load_trajectory
from proactive_env.wrappers import (SLOT_RULE_FEATURES, DepthShaping, FlattenObservation, MaskedDictObservation,
                                    RecordTrajectory, RewardWeights, SlotRules, TextObservation)

ENV = "Proactivity-Monitor-Operator-v0"
# Allowed checker warnings, each with its reason; any other warning fails the test.
ALLOWED_WARNINGS = [
    # check_env warns whenever it is given a wrapper — which is the point of these tests.
    (r".*is different from the unwrapped version", "checking a wrapper on purpose"),
]


def strict_check(env):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for pattern, _reason in ALLOWED_WARNINGS:
            warnings.filterwarnings("ignore", message=pattern)
        check_env(env, skip_render_check=True)
WRAPPERS = {
    "flatten": lambda env: FlattenObservation(env),
    "flatten-no-mask": lambda env: FlattenObservation(env, include_mask=False),
    "masked-dict": MaskedDictObservation,
    "text": TextObservation,
    "weights": lambda env: RewardWeights(env, tc=0.2, ta=0.4, tr=0.4),
    "shaping": lambda env: DepthShaping(env, scale=0.2),
    "slot-rules": SlotRules,
}


@pytest.mark.parametrize("name", sorted(WRAPPERS))
def test_wrapper_passes_check_env(name):
    strict_check(WRAPPERS[name](gym.make(ENV).unwrapped))


def test_record_trajectory_passes_check_env(tmp_path):
    strict_check(RecordTrajectory(gym.make(ENV).unwrapped, str(tmp_path)))


@pytest.mark.parametrize("name", ["flatten", "masked-dict", "text", "weights"])
def test_action_masks_reach_through_wrappers(name):
    env = WRAPPERS[name](gym.make(ENV))
    _, info = env.reset(seed=0)
    assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))


def test_flatten_and_masked_dict_agree():
    flat, masked = FlattenObservation(gym.make(ENV)), MaskedDictObservation(gym.make(ENV))
    a, _ = flat.reset(seed=3)
    b, _ = masked.reset(seed=3)
    n = b["action_mask"].shape[0]
    assert np.array_equal(a[:-n], b["observations"]) and np.array_equal(a[-n:], b["action_mask"])


def test_text_matches_the_ansi_render():
    env = TextObservation(gym.make(ENV, render_mode="ansi"), last=40)
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(0)
    assert obs == env.render()
    assert "Monitor Purchase" in obs


def play(env, agent, seed):
    obs, info = env.reset(seed=seed)
    agent.reset(env.unwrapped, seed)
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, info = env.step(agent.act(env.unwrapped._obs(), info))
        total += reward
        done = terminated or truncated
    return total, info


@pytest.mark.parametrize("agent", ["oracle", "random", "always-suggest"])
def test_reweighted_rewards_sum_to_reweighted_j(agent):
    env = RewardWeights(gym.make(ENV), tc=0.6, ta=0.1, tr=0.3)
    total, info = play(env, make_agent(agent), seed=4)
    assert total == pytest.approx(info["weighted_J"], abs=1e-9)
    s = info["scores"]
    expected = 0.6 * s["TC"] / 100 + 0.1 * s["TA"] + 0.3 * (s["TR_D"] + (s["TR_J"] - 1) / 4) / 2
    assert info["weighted_J"] == pytest.approx(expected)


def test_recorded_trajectory_rescores_identically(tmp_path):
    env = RecordTrajectory(gym.make(ENV), str(tmp_path), agent="oracle")
    total, info = play(env, OracleAgent(), seed=0)
    (path,) = env.paths
    trajectory = load_trajectory(path)
    assert trajectory["agent"] == "oracle" and trajectory["return"] == pytest.approx(total)
    assert rescore(trajectory) == trajectory["scores"] == info["scores"]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("autoreset", [gym.vector.AutoresetMode.NEXT_STEP, gym.vector.AutoresetMode.SAME_STEP])
def test_make_vec(mode, autoreset):
    envs = gym.make_vec("Proactivity-Monitor-v0", 2, vectorization_mode=mode,
                        vector_kwargs={"autoreset_mode": autoreset})
    obs, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(400):
        actions = [int(rng.choice(np.flatnonzero(m))) for m in obs["action_mask"]]
        obs, reward, terminated, truncated, info = envs.step(np.array(actions))
        assert obs["tasks"].shape[0] == 2 and reward.shape == (2,)
        episodes += int(np.sum(terminated | truncated))
    envs.close()
    assert episodes >= 2


def test_pickle_and_deepcopy_mid_episode():
    env = gym.make(ENV)
    env.reset(seed=1)
    for _ in range(5):
        env.step(int(np.flatnonzero(env.unwrapped.action_masks())[-1]))
    for clone in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env)):
        a = clone.step(0)
        b = copy.deepcopy(env).step(0)
        assert a[1] == b[1] and all(np.array_equal(a[0][k], b[0][k]) for k in a[0])


@pytest.mark.parametrize("agent", ["oracle", "random", "always-execute"])
def test_depth_shaping_is_potential_based(agent):
    env = DepthShaping(gym.make(ENV), scale=0.5)
    total, info = play(env, make_agent(agent), seed=2)
    assert total == pytest.approx(info["scores"]["J"], abs=1e-9)  # the shaping terms cancel out


def test_slot_rules_give_each_slot_its_categorys_rule_stated_and_in_force():
    """Where the user's feedback changes a rule (the policy-follower's Monitor run meets the
    scripted policy changes), the in-force half follows it and the stated half stays."""
    from proactive_env.spec import RULES

    env = SlotRules(gym.make("Proactivity-Monitor-Planner-v0"))
    agent = make_agent("policy-follower")
    obs, info = env.reset(seed=0)
    agent.reset(env.unwrapped, 0)
    stated = dict(env.unwrapped._variant["rules"])
    changed, done = False, False
    while not done:
        world = env.unwrapped.world
        table = obs["slot_rules"].reshape(-1, len(SLOT_RULE_FEATURES))
        for t in world.tasks:
            expected = np.zeros(len(SLOT_RULE_FEATURES), np.float32)
            expected[RULES.index(stated[t.spec.category])] = 1.0
            expected[len(RULES) + RULES.index(world.policy.rules[t.spec.category])] = 1.0
            assert np.array_equal(table[t.index], expected), t.spec.id
            changed |= world.policy.rules[t.spec.category] != stated[t.spec.category]
        assert not table[len(world.tasks):].any()  # empty slots
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated
    assert changed
    assert env.unwrapped.trajectory(agent="x")["observation_extras"] == ["slot_rules"]
    plain = gym.make("Proactivity-Monitor-Planner-v0").unwrapped
    plain.reset(seed=0)
    assert "observation_extras" not in plain.trajectory(agent="x")
