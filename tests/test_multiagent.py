"""The PettingZoo multi-assistant env against PettingZoo's own test suites."""

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test

from proactive_env import multiagent
from proactive_env.spec import shipped_names

# Scenarios with a shared resource make the pool matter; fall back to Monitor if absent.
SCENARIOS = ",".join(s for s in ("experiments", "job_applications") if s in shipped_names()) or "monitor,monitor"
if "," not in SCENARIOS:
    SCENARIOS = f"{SCENARIOS},monitor"
# AEC api_test warnings we accept, with reasons; any other warning fails.
ALLOWED_WARNINGS = [
    ("Observation is not a NumPy array", "observations are Dicts of arrays, as in the single-agent face"),
    ("Observation space for each agent probably should be", "a Dict space of Boxes is deliberate"),
]


def make(**kwargs):
    return multiagent.parallel_env(scenarios=SCENARIOS, **kwargs)


def test_parallel_api():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parallel_api_test(make(), num_cycles=3000)


def test_parallel_seed():
    parallel_seed_test(lambda: make(pool_capacity=1), num_cycles=500)


def test_aec_api():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for message, _reason in ALLOWED_WARNINGS:
            warnings.filterwarnings("ignore", message=message)
        api_test(multiagent.env(scenarios=SCENARIOS), num_cycles=500)


def test_module_level_constructors_and_cached_spaces():
    env = multiagent.raw_env(scenarios=SCENARIOS)
    a, b = env.possible_agents
    assert env.observation_space(a) is env.observation_space(a) is env.observation_space(b)
    assert env.action_space(a) is env.action_space(b)
    assert multiagent.env(scenarios=SCENARIOS).possible_agents == env.possible_agents


def run_to_end(env, seed, policy):
    observations, infos = env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    final = {}
    while env.agents:
        actions = {a: policy(a, observations[a], infos[a]) for a in env.agents}
        observations, rewards, terms, truncs, infos = env.step(actions)
        for agent, reward in rewards.items():
            totals[agent] += reward
            if terms[agent] or truncs[agent]:
                final[agent] = infos[agent]["scores"]
    return totals, final


def test_each_agent_rewards_sum_to_its_own_j():
    rng = np.random.default_rng(0)
    env = make()
    totals, final = run_to_end(env, 3, lambda a, o, i: int(rng.choice(np.flatnonzero(i["action_mask"]))))
    assert set(final) == set(env.possible_agents)
    for agent in env.possible_agents:
        assert totals[agent] == pytest.approx(final[agent]["J"], abs=1e-6)


def test_worlds_share_one_clock():
    env = make()
    observations, infos = env.reset(seed=0)
    for _ in range(40):
        if not env.agents:
            break
        observations, *_ , infos = env.step({a: 0 for a in env.agents})
        nows = {env._envs[a].world.now for a in env.agents if not env._envs[a].world.done}
        assert len(nows) <= 1


def test_pool_capacity():
    from proactive_env.sim import SharedPool

    pool = SharedPool(capacity=2)
    pool.reserve(0, 60, "a")
    assert pool.free(30, 90, "b")
    pool.reserve(30, 90, "b")
    assert not pool.free(45, 50, "c") and pool.free(60, 120, "c") and pool.free(90, 100, "c")


def test_pool_is_shared_between_worlds():
    env = make(pool_capacity=1)
    env.reset(seed=0)
    first, second = (env._envs[a].world for a in env.possible_agents)
    resources = [r.id for r in second.scenario.resources]
    if not resources:
        pytest.skip("no shipped scenario with a shared resource")
    pools = {id(p) for w in (first, second) for p in w.pools.values()}
    assert len(pools) == 1  # every resource of every world draws on the one pool
    start = second.now
    free = [t for t in range(start, start + 7 * 1440, 30) if second.resource_free(resources[0], t, t + 30)]
    assert free, "the resource is never free"
    next(iter(first.pools.values())).reserve(free[0], free[0] + 30, "assistant_0")
    assert not second.resource_free(resources[0], free[0], free[0] + 30)
