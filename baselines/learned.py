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


class RLlibAgent:
    """Plays an RLlib RL module trained on the masked-dict observation (``MaskedPPOTorchRLModule``):
    the most likely valid action."""

    def __init__(self, module, name: str = "rllib"):
        self.module, self.name = module, name
        self.masker = None

    def reset(self, env: Any, seed: int) -> None:
        from proactive_env.wrappers import MaskedDictObservation

        self.masker = MaskedDictObservation(env)  # a converter only; it never steps the env

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        import torch
        from ray.rllib.core.columns import Columns

        masked = self.masker.observation(obs)
        batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in masked.items()}}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        return int(torch.argmax(logits[0]))


def load_rllib_agent(spec: str) -> RLlibAgent:
    """``rllib:PATH`` → the RL module at PATH: ``policy/`` or ``best_policy/`` written by
    ``proactivity-gym train --algo rllib-ppo``, or an algorithm checkpoint with one module."""
    path = Path(spec.split(":", 1)[1]).resolve()
    if not path.is_dir():
        raise ValueError(f"{spec}: no saved RLlib policy at {path}")
    modules = path / "learner_group" / "learner" / "rl_module"
    if modules.is_dir():
        found = sorted(p for p in modules.iterdir() if p.is_dir())
        if len(found) != 1:
            raise ValueError(f"{spec}: expected one RL module under {modules}, found {[p.name for p in found]}")
        path = found[0]
    try:
        from ray.rllib.core.rl_module.rl_module import RLModule
    except ImportError as exc:
        raise ValueError(f"{spec}: needs the rllib extra ({exc.name} is missing): "
                         "pip install 'proactivity-gym[rllib]'") from None
    try:
        module = RLModule.from_checkpoint(str(path))
    except (FileNotFoundError, ValueError, KeyError) as exc:
        raise ValueError(f"{spec}: {path} is not an RLlib RL module checkpoint ({exc})") from None
    return RLlibAgent(module, name=spec)
