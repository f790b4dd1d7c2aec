"""DQN (Stable-Baselines3) on the flattened observation, without masks.

    proactivity-gym train --algo dqn --env Proactivity-Monitor-v0 --timesteps 200000 --out runs/dqn
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stable_baselines3 import DQN

from .training import CommonArgs, callbacks, finish, make_envs, net_arch, parse_args, save_config

ALGO = "dqn"


@dataclass
class Args(CommonArgs):
    """DQN: the common training arguments and DQN's hyperparameters."""

    n_envs: int = 1
    """parallel envs (DQN: one; its train_freq and learning_starts count vector steps)"""
    learning_rate: float = 1e-4
    """Adam learning rate"""
    buffer_size: int = 100_000
    """replay buffer size (transitions)"""
    learning_starts: int = 5_000
    """environment steps collected before learning starts"""
    batch_size: int = 128
    """minibatch size"""
    gamma: float = 0.995
    """discount factor"""
    train_freq: int = 4
    """environment steps between gradient updates"""
    target_update_interval: int = 2_000
    """environment steps between target-network updates"""
    exploration_fraction: float = 0.3
    """share of training over which ε falls from 1 to its final value"""
    exploration_final_eps: float = 0.05
    """final ε of the ε-greedy exploration"""
    net_arch: str = "256,256"
    """hidden layer sizes of the Q-network, comma-separated"""


def train(args: Args) -> Path:
    save_config(args, ALGO, "flat")
    envs = make_envs(args, flat=True)
    model = DQN(
        "MlpPolicy", envs, learning_rate=args.learning_rate, buffer_size=args.buffer_size,
        learning_starts=args.learning_starts, batch_size=args.batch_size, gamma=args.gamma,
        train_freq=args.train_freq, target_update_interval=args.target_update_interval,
        exploration_fraction=args.exploration_fraction, exploration_final_eps=args.exploration_final_eps,
        policy_kwargs={"net_arch": net_arch(args.net_arch)},
        tensorboard_log=str(Path(args.out) / "tb"), seed=args.seed, device="cpu", verbose=0)
    callback, scorer = callbacks(args, ALGO, "flat")
    model.learn(args.timesteps, callback=callback, progress_bar=args.progress_bar)
    envs.close()
    return finish(model, args, scorer, ALGO)


if __name__ == "__main__":
    train(parse_args(Args))
