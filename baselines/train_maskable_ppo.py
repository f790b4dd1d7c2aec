"""MaskablePPO (sb3-contrib) on a Proactivity-Gym env, with the action mask from the env.

    python -m proactive_env.baselines.train_maskable_ppo --env Proactivity-Monitor-v0 --timesteps 200000
    proactivity-gym train --algo maskable-ppo --env Proactivity-Monitor-v0 --timesteps 200000 --out runs/mppo
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sb3_contrib import MaskablePPO

from .training import CommonArgs, callbacks, finish, make_envs, parse_args, save_config

ALGO = "maskable-ppo"


@dataclass
class Args(CommonArgs):
    learning_rate: float = 3e-4
    n_steps: int = 1024
    """rollout length per env"""
    batch_size: int = 256
    n_epochs: int = 10
    gamma: float = 0.995
    gae_lambda: float = 0.95
    ent_coef: float = 0.01
    net_arch: str = "256,256"


def train(args: Args) -> Path:
    save_config(args, ALGO, "dict")
    envs = make_envs(args, flat=False)  # the Dict observation, action_masks() from each env
    model = MaskablePPO(
        "MultiInputPolicy", envs, learning_rate=args.learning_rate, n_steps=args.n_steps,
        batch_size=args.batch_size, n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda,
        ent_coef=args.ent_coef, policy_kwargs={"net_arch": [int(n) for n in args.net_arch.split(",")]},
        tensorboard_log=str(Path(args.out) / "tb"), seed=args.seed, device="cpu", verbose=0)
    callback, scorer = callbacks(args, ALGO, "dict")
    model.learn(args.timesteps, callback=callback, progress_bar=args.progress_bar)
    envs.close()
    return finish(model, args, scorer, ALGO)


if __name__ == "__main__":
    train(parse_args(Args))
