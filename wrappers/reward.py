"""Re-weighting the reward's 3T objectives at wrap time."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from proactive_env.scoring import Weights


def weighted_j(scores: dict[str, float], weights: Weights) -> float:
    """J of running scores (TC 0–100, TA, TR_D in [0, 1], TR_J 1–5) under ``weights``."""
    s_tr = (scores["TR_D"] + (scores["TR_J"] - 1.0) / 4.0) / 2.0
    return weights.tc * scores["TC"] / 100.0 + weights.ta * scores["TA"] + weights.tr * s_tr


class RewardWeights(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Pay the change in J under other weights λ (normalised), from the running scores the env
    reports in ``info["scores"]``; over an episode the rewards sum to the re-weighted J, which is
    also put in ``info["weighted_J"]``. The running scores are sums over fixed denominators, so
    the change at a step is the re-weighted share of what became final at it (as in the env).

    Example::

        env = RewardWeights(gym.make("Proactivity-Monitor-v0"), tc=0.2, ta=0.4, tr=0.4)
    """

    def __init__(self, env: gym.Env, tc: float = 1 / 3, ta: float = 1 / 3, tr: float = 1 / 3):
        gym.utils.RecordConstructorArgs.__init__(self, tc=tc, ta=ta, tr=tr)
        gym.Wrapper.__init__(self, env)
        self.weights = Weights(tc, ta, tr)
        self._last = 0.0

    def reset(self, **kwargs) -> tuple[Any, dict]:
        obs, info = self.env.reset(**kwargs)
        self._last = 0.0
        info["weighted_J"] = 0.0
        return obs, info

    def step(self, action):
        obs, _, terminated, truncated, info = self.env.step(action)
        j = weighted_j(info["scores"], self.weights)
        reward, self._last = j - self._last, j
        info["weighted_J"] = j
        return obs, reward, terminated, truncated, info

    def action_masks(self):
        return self.env.get_wrapper_attr("action_masks")()


class DepthShaping(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Optional potential-based shaping (Ng et al., 1999): adds ``Φ(s') − Φ(s)`` to the reward,
    with Φ = ``scale`` × the share of open tasks that have already reached the depth the user
    wants now (privileged: the shaping knows the user's policy), measured from its value at reset,
    and Φ = 0 at the end of an episode. The shaping terms of an episode sum to zero (Φ starts and
    ends at 0), so returns still sum to J and the optimal policy is unchanged; it only pays
    earlier for getting the depth right. Off unless you wrap with it. The env's own
    ``reward_shaping=True`` shapes by each task's and TA window's share of J in prospect instead.

    Example::

        env = DepthShaping(gym.make("Proactivity-Monitor-v0"), scale=0.1)
    """

    def __init__(self, env: gym.Env, scale: float = 0.1):
        gym.utils.RecordConstructorArgs.__init__(self, scale=scale)
        gym.Wrapper.__init__(self, env)
        self.scale = scale
        self._phi = self._phi0 = 0.0

    def potential(self) -> float:
        world = self.env.unwrapped.world
        open_tasks = [t for t in world.tasks if t.active and not t.closed]
        if world.done or not open_tasks:
            return 0.0
        return self.scale * sum(world.reached_wanted(t) for t in open_tasks) / len(open_tasks)

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._phi0, self._phi = self.potential(), 0.0
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        phi = 0.0 if terminated or truncated else self.potential() - self._phi0
        reward, self._phi = reward + phi - self._phi, phi
        return obs, reward, terminated, truncated, info

    def action_masks(self):
        return self.env.get_wrapper_attr("action_masks")()
