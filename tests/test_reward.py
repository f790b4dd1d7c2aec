"""The reward (DESIGN.md §6): each counted task and TA decision pays its fixed share of J when its
outcome is final, so credit lands on what earned it and the rewards of an episode sum to J, for
every agent on every scenario–persona pair, with or without potential-based shaping."""

import numpy as np
import pytest

from proactive_env.baselines import make_agent
from proactive_env.envs.structured import ACTION_TABLE, MAX_TASKS, VERBS, ProactivityEnv
from proactive_env.spec import PERSONAS, shipped_names

CASES = [(s, p) for s in shipped_names() for p in PERSONAS]
AGENTS = ("oracle", "random", "policy-follower", "always-execute", "defer-everything")
SEEDS = (1, 1000)


def _play(scenario, persona, seed, agent="oracle", shaping=False, perturb_at=None):
    """One episode; per step the reward and the units of J that became final (share), and the
    step each task closed at. ``perturb_at``: that step's action becomes ``execute`` on its slot."""
    env = ProactivityEnv(scenario, persona=persona, reward_shaping=shaping)
    obs, info = env.reset(seed=seed)
    player = make_agent(agent)
    player.reset(env, seed)
    steps, closed_at, before, done = [], {}, dict(env.scorer.contributions()), False
    while not done:
        action = player.act(obs, info)
        if len(steps) == perturb_at:
            action = 1 + VERBS.index("execute") * MAX_TASKS + ACTION_TABLE[action][1]
        seen = len(env.world.log)
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        for entry in env.world.log[seen:]:
            if entry["type"] == "task_closed":
                closed_at.setdefault(entry["task"], len(steps))
        now = env.scorer.contributions()
        steps.append((reward, {u: v for u, v in now.items() if before.get(u) != v}))
        before = dict(now)
    assert not truncated
    return env, info, steps, closed_at


@pytest.mark.parametrize("shaping", [False, True], ids=["unshaped", "shaped"])
@pytest.mark.parametrize("agent", AGENTS)
def test_rewards_sum_to_j_on_every_pair(agent, shaping):
    for scenario, persona in CASES:
        for seed in SEEDS:
            env = ProactivityEnv(scenario, persona=persona, reward_shaping=shaping)
            obs, info = env.reset(seed=seed)
            player = make_agent(agent)
            player.reset(env, seed)
            total, done = 0.0, False
            while not done:
                obs, reward, terminated, truncated, info = env.step(player.act(obs, info))
                total += reward
                done = terminated or truncated
            assert not truncated
            assert total == pytest.approx(info["scores"]["J"], abs=1e-9), (scenario, persona, seed)
            assert sum(env.scorer.contributions().values()) == pytest.approx(info["scores"]["J"], abs=1e-12)


@pytest.mark.parametrize("agent", ("oracle", "random"))
def test_each_share_is_paid_once_when_final_and_never_moves(agent):
    """Unshaped, a step's reward is exactly the shares that became final at it; a share, once
    paid, never changes (no running mean re-weighs it), and a task is paid at its close."""
    for scenario, persona in CASES:
        env, info, steps, closed_at = _play(scenario, persona, 2, agent)
        paid_at = {}
        for step, (reward, new) in enumerate(steps):
            for unit in new:
                assert unit not in paid_at, (scenario, persona, unit)  # paid once: final when it appears
                paid_at[unit] = step
            assert reward == pytest.approx(sum(new.values()), abs=1e-12)
        for unit, step in paid_at.items():
            if unit.startswith("task:") and unit[5:] in closed_at:
                assert step == closed_at[unit[5:]], (scenario, persona, unit)


def test_shares_use_fixed_denominators():
    """The denominators are known at reset: the same for every agent on a (pair, seed), and each
    task's share is its own weighted term over them."""
    for scenario, persona in CASES:
        ends = {a: _play(scenario, persona, 1000, a)[:2] for a in ("oracle", "noop", "random")}
        denominators = {a: env.scorer.denominators() for a, (env, _) in ends.items()}
        assert denominators["oracle"] == denominators["noop"] == denominators["random"], (scenario, persona)
        d = denominators["oracle"]
        for agent, (env, info) in ends.items():
            w = env.weights
            weights = {t.id: t.weight for t in env.scenario.tasks}
            for task in info["scores"]["tasks"]:
                if not task["counted"]:
                    continue
                tr_j = task["TR_J"] if task["TR_J"] is not None else (1.0 if task["task"] in env.scorer.meant_to_see else 5.0)
                term = (w.tc * weights[task["task"]] * task["TC"] / (100 * d["weight"])
                        + w.tr * (bool(task["depth_match"]) + (tr_j - 1) / 4) / (2 * d["tasks"]))
                assert task["J_share"] == pytest.approx(term, abs=1e-12), (scenario, persona, agent, task["task"])
            assert len(info["scores"]["tasks"]) >= d["tasks"]  # every counted task is scored, cut off or not


# A wrong-depth action: the oracle's present of a task the reviewer wants to review becomes an
# (unauthorised, refused) execute; everything else is the oracle's own play.
PERTURBED = ("monitor", "reviewer", 0, "t06_purchase_review")


def _perturbation(shaping):
    scenario, persona, seed, task = PERTURBED
    env, info, steps, closed = _play(scenario, persona, seed, shaping=shaping)
    at = next(k for k, a in enumerate(env._actions) if ACTION_TABLE[a] == ("present", _slot(env, task)))
    return (env, info, steps, closed), _play(scenario, persona, seed, shaping=shaping, perturb_at=at), at


def _slot(env, task_id):
    return next(t.index for t in env.world.tasks if t.spec.id == task_id)


def test_a_wrong_depth_action_costs_exactly_its_tasks_term_at_its_close():
    (env, info, steps, closed), (env_p, info_p, steps_p, closed_p), at = _perturbation(shaping=False)
    task = PERTURBED[3]
    assert steps_p[:at] == steps[:at]
    paid = {u: (k, v) for k, (_, new) in enumerate(steps) for u, v in new.items()}
    paid_p = {u: (k, v) for k, (_, new) in enumerate(steps_p) for u, v in new.items()}
    unit = f"task:{task}"
    assert paid_p[unit][0] == closed_p[task] > at  # paid when the task closes, not at the action
    for u, (k, v) in paid_p.items():  # nothing else moved before the task's close
        if k < closed_p[task]:
            assert v == pytest.approx(paid[u][1], abs=1e-12), u
    ours = {t["task"]: t for t in info["scores"]["tasks"]}[task]
    theirs = {t["task"]: t for t in info_p["scores"]["tasks"]}[task]
    assert ours["depth_match"] is True and theirs["depth_match"] is False
    d, w = env.scorer.denominators(), env.weights
    weight = next(t.weight for t in env.scenario.tasks if t.id == task)
    term = (w.tc * weight * (theirs["TC"] - ours["TC"]) / (100 * d["weight"])
            + w.tr * (-1 + (theirs["TR_J"] - ours["TR_J"]) / 4) / (2 * d["tasks"]))
    assert paid_p[unit][1] - paid[unit][1] == pytest.approx(term, abs=1e-12)
    reward_at_close = steps_p[closed_p[task]][0]
    others = sum(v for u, v in steps_p[closed_p[task]][1].items() if u != unit)
    assert reward_at_close == pytest.approx(paid[unit][1] + term + others, abs=1e-12)


def test_shaping_shows_a_wrong_depth_action_within_a_few_steps_and_keeps_the_return():
    (env, info, steps, _), (env_p, info_p, steps_p, _), at = _perturbation(shaping=True)
    rewards, rewards_p = [r for r, _ in steps], [r for r, _ in steps_p]
    assert rewards_p[:at] == rewards[:at]
    first = next(k for k, (a, b) in enumerate(zip(rewards, rewards_p)) if a != b)
    assert at <= first <= at + 2
    prospect = env.weights.tr / 2 / env.scorer.denominators()["tasks"]  # the task's TR-D share, in prospect
    assert rewards[first] - rewards_p[first] == pytest.approx(prospect, abs=1e-12)
    assert sum(rewards) == pytest.approx(info["scores"]["J"], abs=1e-9)
    assert sum(rewards_p) == pytest.approx(info_p["scores"]["J"], abs=1e-9)


def test_shaping_is_off_by_default_and_checked():
    assert ProactivityEnv("monitor").reward_shaping is False
    with pytest.raises(ValueError, match="reward_shaping"):
        ProactivityEnv("monitor", reward_shaping="yes")


@pytest.mark.parametrize("shaping", [False, True], ids=["unshaped", "shaped"])
def test_pettingzoo_rewards_follow_the_same_rule(shaping):
    """Each assistant of the multi-assistant env is paid by the same rule on its own run; one that
    reached its per-point cap while the others act only waits (its observation stays in bounds)."""
    from proactive_env.envs.multiagent import ProactivityParallelEnv

    env = ProactivityParallelEnv(scenarios="experiments,job_applications", reward_shaping=shaping)
    space = env.observation_space(env.possible_agents[0])
    for seed in (0, 35):
        rng = np.random.default_rng(seed)
        observations, infos = env.reset(seed=seed)
        totals, final = dict.fromkeys(env.possible_agents, 0.0), {}
        while env.agents:
            actions = {a: _busy(rng, observations[a]["action_mask"], waits=a.endswith("1")) for a in env.agents}
            observations, rewards, terms, truncs, infos = env.step(actions)
            for agent, reward in rewards.items():
                assert space.contains(observations[agent])
                totals[agent] += reward
                if terms[agent] or truncs[agent]:
                    final[agent] = infos[agent]["scores"]["J"]
        assert totals == pytest.approx(final, abs=1e-9)


def _busy(rng, mask, waits):
    """A random valid action; one that never waits while anything else is valid, unless ``waits``."""
    valid = np.flatnonzero(mask if waits else mask[1:]) + (0 if waits else 1)
    return int(rng.choice(valid)) if len(valid) else 0
