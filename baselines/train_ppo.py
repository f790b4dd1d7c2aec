"""PPO (Stable-Baselines3) on the flattened observation, without masks: a masked action it picks
becomes NOOP in the env, so it must learn what is valid.

    proactivity-gym train --algo ppo --env Proactivity-Monitor-v0 --timesteps 200000 --out runs/ppo
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stable_baselines3 import PPO

from .training import PPOArgs, callbacks, finish, make_envs, parse_args, save_config

ALGO = "ppo"


@dataclass
class Args(PPOArgs):
    """PPO: the shared PPO hyperparameters and the common training arguments."""


def train(args: Args) -> Path:
    save_config(args, ALGO, "flat")
    envs = make_envs(args, flat=True)
    model = PPO("MlpPolicy", envs, **args.model_kwargs())
    callback, scorer = callbacks(args, ALGO, "flat")
    model.learn(args.timesteps, callback=callback, progress_bar=args.progress_bar)
    envs.close()
    return finish(model, args, scorer, ALGO)


if __name__ == "__main__":
    train(parse_args(Args))
