"""A training env over several scenarios: scenario and persona are sampled per episode."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from ..spec import shipped_names
from .structured import ProactivityEnv


def _names(arg: str, value: object) -> list[str]:
    """Scenario names from a comma-separated string or a list of strings (as Python callers write
    them); anything else is a ValueError naming the argument."""
    if isinstance(value, str):
        return [s.strip() for s in value.split(",") if s.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(s, str) for s in value):
        return [s.strip() for s in value if s.strip()]
    raise ValueError(f"{arg}: expected a comma-separated string or a list of scenario names, got {value!r:.80}")


class SuiteEnv(gym.Env):
    """Each episode plays one scenario of ``scenarios`` (``"all"``, or shipped names comma-separated
    or as a list, less ``exclude``, given the same way), drawn with the env's own generator, with the persona fixed
    or drawn per episode. Every scenario shares the same observation and action spaces, so one
    policy can be trained across them and evaluated on a held-out scenario. ``reward_shaping``
    is passed to each scenario's env (``ProactivityEnv``; default False).

    Example::

        env = gym.make("Proactivity-Suite-v0", exclude="monitor")   # hold Monitor Purchase out
    """

    metadata = ProactivityEnv.metadata

    def __init__(self, scenarios: str = "all", exclude: str = "", persona: str | None = None,
                 weights: dict[str, float] | None = None, render_mode: str | None = None,
                 reward_shaping: bool = False):
        shipped = shipped_names()
        names = shipped if scenarios == "all" else _names("scenarios", scenarios)
        dropped = set(_names("exclude", exclude))
        for arg, given in (("scenarios", names), ("exclude", sorted(dropped))):
            unknown = [n for n in given if n not in shipped]
            if unknown:  # a misspelt held-out scenario would silently be trained on
                raise ValueError(f"{arg}: unknown scenario(s) {unknown}; expected names from {shipped}")
        self.names = [n for n in names if n not in dropped]
        if not self.names:
            raise ValueError(f"no scenario left to train on: scenarios={scenarios!r}, exclude={exclude!r}")
        self.envs = [ProactivityEnv(n, persona=persona, weights=weights, render_mode=render_mode,
                                    reward_shaping=reward_shaping) for n in self.names]
        self.observation_space = self.envs[0].observation_space
        self.action_space = self.envs[0].action_space
        self.render_mode = render_mode
        self.current = self.envs[0]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        index = int(self.np_random.integers(len(self.envs)))
        if self.envs[index] is not self.current:
            self.current.release()  # (only the current scenario's episode is ever read: one held, not ten)
        self.current = self.envs[index]
        obs, info = self.current.reset(seed=int(self.np_random.integers(2**31)), options=options)
        info["scenario"] = self.names[index]
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.current.step(action)
        info["scenario"] = self.current.scenario.name
        return obs, reward, terminated, truncated, info

    def action_masks(self):
        return self.current.action_masks()

    def render(self):
        return self.current.render()

    @property
    def world(self):
        return self.current.world

    def trajectory(self, agent: str) -> dict:
        return self.current.trajectory(agent)
