"""Learned agents: a Stable-Baselines3 / sb3-contrib model playing like any other agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from proactive_env.wrappers.observation import PARTS

ALGOS = ("maskable-ppo", "ppo", "dqn")
CONFIG = "agent.json"


def load_model(algo: str, path: str | Path):
    if algo == "maskable-ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO.load(path, device="cpu")
    if algo == "ppo":
        from stable_baselines3 import PPO

        return PPO.load(path, device="cpu")
    if algo == "dqn":
        from stable_baselines3 import DQN

        return DQN.load(path, device="cpu")
    raise ValueError(f"unknown algorithm {algo!r}; expected one of {ALGOS}")


class PolicyAgent:
    """Plays a trained model. ``observation`` is ``"dict"`` (the env's own observation, for
    ``MultiInputPolicy``) or ``"flat"`` (``FlattenObservation``, for ``MlpPolicy``)."""

    def __init__(self, model, algo: str, observation: str, name: str = "sb3"):
        self.model, self.algo, self.observation, self.name = model, algo, observation, name

    def reset(self, env: Any, seed: int) -> None:
        pass

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        x = np.concatenate([obs[p] for p in PARTS], dtype=np.float32) if self.observation == "flat" else obs
        if self.algo == "maskable-ppo":
            action, _ = self.model.predict(x, deterministic=True, action_masks=obs["action_mask"].astype(bool))
        else:
            action, _ = self.model.predict(x, deterministic=True)
        return int(action)


def load_agent(spec: str) -> PolicyAgent:
    """``sb3:PATH`` → the model saved at PATH (a ``.zip``; its ``agent.json`` beside it says how
    it was trained)."""
    path = Path(spec.split(":", 1)[1])
    config_path = path.parent / CONFIG
    if not path.exists():
        raise ValueError(f"{spec}: no saved model at {path}")
    if not config_path.exists():
        raise ValueError(f"{spec}: expected {config_path} (written by `proactivity-gym train`) beside the model")
    config = json.loads(config_path.read_text())
    return PolicyAgent(load_model(config["algo"], path), config["algo"], config["observation"], name=spec)
