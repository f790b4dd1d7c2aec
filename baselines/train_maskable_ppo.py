"""MaskablePPO (sb3-contrib) on a Proactivity-Gym env, with the action mask from the env; by
default with the slot policy (``slot_policy.py``), ``--policy mlp`` for SB3's MultiInputPolicy.

    proactivity-gym train --algo maskable-ppo --env Proactivity-Monitor-v0 --timesteps 200000 --out runs/mppo
    python -m proactive_env.baselines.train_maskable_ppo --policy mlp --timesteps 200000
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sb3_contrib import MaskablePPO

from .slot_policy import SlotActorCriticPolicy, SlotPolicyConfig
from .training import PPOArgs, callbacks, finish, make_envs, parse_args, save_config

ALGO = "maskable-ppo"
POLICIES = ("slots", "mlp")


@dataclass
class Args(PPOArgs):
    """MaskablePPO: the policy, the shared PPO hyperparameters and the common training arguments."""

    policy: str = "slots"
    """slots: one encoder shared by the task slots, attention across them, a logit per (slot, verb)
    (baselines/slot_policy.py); mlp: SB3's MultiInputPolicy over the concatenated parts (--net-arch)"""
    d_model: int = 32
    """slot policy: width of the slot embeddings (32 and one attention layer: 25k parameters,
    2.6x the training steps/s of SlotPolicyConfig's 64 and two with 16 envs, and J 0.86 on
    Monitor's test seeds at 300k steps)"""
    n_layers: int = 1
    """slot policy: self-attention layers across slots"""
    ff_dim: int = 64
    """slot policy: hidden width of each attention layer's feed-forward block"""
    head_hidden: int = 32
    """slot policy: hidden width of the verb, NOOP and value heads"""

    def policy_kwargs(self) -> dict:
        if self.policy == "mlp":
            return super().policy_kwargs()
        return SlotPolicyConfig(d_model=self.d_model, n_layers=self.n_layers, ff_dim=self.ff_dim,
                                head_hidden=self.head_hidden).policy_kwargs()


def policy_class(name: str):
    """The SB3 policy for ``--policy NAME``."""
    if name not in POLICIES:
        raise ValueError(f"--policy: expected one of {list(POLICIES)}, got {name!r}")
    return SlotActorCriticPolicy if name == "slots" else "MultiInputPolicy"


def train(args: Args) -> Path:
    policy = policy_class(args.policy)
    save_config(args, ALGO, "dict", args.policy)
    envs = make_envs(args, flat=False)  # the Dict observation, action_masks() from each env
    model = MaskablePPO(policy, envs, **args.model_kwargs())
    callback, scorer = callbacks(args, ALGO, "dict")
    model.learn(args.timesteps, callback=callback, progress_bar=args.progress_bar)
    envs.close()
    return finish(model, args, scorer, ALGO)


if __name__ == "__main__":
    train(parse_args(Args))
