"""PPO (Stable-Baselines3) on the flattened observation, without masks: a masked action it picks
becomes NOOP in the env, so it must learn what is valid.

    proactivity-gym train --algo ppo --env Proactivity-Monitor-v0 --timesteps 200000 --out runs/ppo
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stable_baselines3 import PPO

from .training import CommonArgs, callbacks, finish, make_envs, parse_args, save_config

ALGO = "ppo"


@dataclass
class Args(CommonArgs):
    learning_rate: float = 3e-4
    n_steps: int = 1024
    batch_size: int = 256
    n_epochs: int = 10
    gamma: float = 0.995
    gae_lambda: float = 0.95
    ent_coef: float = 0.01
    net_arch: str = "256,256"


def train(args: Args) -> Path:
    save_config(args, ALGO, "flat")
    envs = make_envs(args, flat=True)
    model = PPO(
        "MlpPolicy", envs, learning_rate=args.learning_rate, n_steps=args.n_steps, batch_size=args.batch_size,
        n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda, ent_coef=args.ent_coef,
        policy_kwargs={"net_arch": [int(n) for n in args.net_arch.split(",")]},
        tensorboard_log=str(Path(args.out) / "tb"), seed=args.seed, device="cpu", verbose=0)
    callback, scorer = callbacks(args, ALGO, "flat")
    model.learn(args.timesteps, callback=callback, progress_bar=args.progress_bar)
    envs.close()
    return finish(model, args, scorer, ALGO)


if __name__ == "__main__":
    train(parse_args(Args))
