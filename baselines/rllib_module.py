"""PPO's default torch RL module with action masking: it reads the masked-dict observation
(``{"observations": ..., "action_mask": ...}``), feeds ``observations`` to the usual encoder and
adds ``log(mask)`` to the action logits, so masked actions are never sampled nor learned from."""

from __future__ import annotations

import gymnasium as gym
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.utils.torch_utils import FLOAT_MIN


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """The encoder, policy and value heads are built for ``observation_space["observations"]``;
    the module itself keeps the full Dict space so RLlib's connectors pass the mask through."""

    def __init__(self, *, observation_space: gym.spaces.Dict, **kwargs):
        if not (isinstance(observation_space, gym.spaces.Dict)
                and {"observations", "action_mask"} <= set(observation_space.spaces)):
            raise ValueError("MaskedPPOTorchRLModule: expected a Dict observation space with 'observations' and "
                             f"'action_mask' (wrap the env in MaskedDictObservation), got {observation_space}")
        super().__init__(observation_space=observation_space["observations"], **kwargs)
        self.observation_space = observation_space

    def _forward(self, batch: dict, **kwargs) -> dict:
        mask, batch = _split(batch)
        return _masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        mask, batch = _split(batch)
        return _masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict, embeddings=None):
        if isinstance(batch[Columns.OBS], dict):
            _, batch = _split(batch)
        return super().compute_values(batch, embeddings)


def _split(batch: dict) -> tuple[torch.Tensor, dict]:
    """The mask, and the batch with the flat observation in place of the dict (a copy: RLlib
    reuses the batch, e.g. for ``compute_values`` after ``_forward_train``)."""
    obs = batch[Columns.OBS]
    return obs["action_mask"], {**batch, Columns.OBS: obs["observations"]}


def _masked(output: dict, mask: torch.Tensor) -> dict:
    output[Columns.ACTION_DIST_INPUTS] = output[Columns.ACTION_DIST_INPUTS] + torch.clamp(torch.log(mask), min=FLOAT_MIN)
    return output
