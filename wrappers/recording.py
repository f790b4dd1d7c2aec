"""Recording episodes as trajectory files the evaluator can re-score."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

from proactive_env.scoring import write_json_atomic


class RecordTrajectory(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Write one trajectory file per finished episode to ``directory`` — the format
    ``proactive_env.scoring.rescore`` and ``proactivity-gym eval`` use — named
    ``<scenario>-<persona>-s<seed>-e<episode>.json``.

    Example::

        env = RecordTrajectory(gym.make("Proactivity-Monitor-v0"), "runs/traj", agent="my-policy")
    """

    def __init__(self, env: gym.Env, directory: str, agent: str = "agent"):
        gym.utils.RecordConstructorArgs.__init__(self, directory=directory, agent=agent)
        gym.Wrapper.__init__(self, env)
        self.directory = Path(directory)
        self.agent = agent
        self.episode = 0
        self.paths: list[Path] = []
        self._return = 0.0

    def reset(self, **kwargs):
        self._return = 0.0
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._return += float(reward)
        if terminated or truncated:
            base = self.env.unwrapped
            trajectory = base.trajectory(agent=self.agent)
            trajectory["return"] = self._return
            trajectory["truncated"] = bool(truncated)
            self.directory.mkdir(parents=True, exist_ok=True)
            path = self.directory / f"{base.scenario.name}-{base.persona}-s{trajectory['seed']}-e{self.episode}.json"
            write_json_atomic(path, trajectory)
            self.paths.append(path)
            self.episode += 1
        return obs, reward, terminated, truncated, info

    def action_masks(self):
        return self.env.get_wrapper_attr("action_masks")()
