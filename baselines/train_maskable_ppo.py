"""MaskablePPO (sb3-contrib) on a Proactivity-Gym env, with the action mask from the env.

    python -m proactive_env.baselines.train_maskable_ppo --env Proactivity-Monitor-v0 --timesteps 200000
    proactivity-gym train --algo maskable-ppo --env Proactivity-Monitor-v0 --timesteps 200000 --out runs/mppo
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sb3_contrib import MaskablePPO

from .training import PPOArgs, callbacks, finish, make_envs, parse_args, save_config

ALGO = "maskable-ppo"


@dataclass
class Args(PPOArgs):
    """MaskablePPO: the shared PPO hyperparameters and the common training arguments."""


def train(args: Args) -> Path:
    save_config(args, ALGO, "dict")
    envs = make_envs(args, flat=False)  # the Dict observation, action_masks() from each env
    model = MaskablePPO("MultiInputPolicy", envs, **args.model_kwargs())
    callback, scorer = callbacks(args, ALGO, "dict")
    model.learn(args.timesteps, callback=callback, progress_bar=args.progress_bar)
    envs.close()
    return finish(model, args, scorer, ALGO)


if __name__ == "__main__":
    train(parse_args(Args))
