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
    also put in ``info["weighted_J"]``.

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
