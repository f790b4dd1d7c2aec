"""RLlib RL modules with action masking, both reading the masked-dict observation
(``{"observations": ..., "action_mask": ...}``) and adding ``log(mask)`` to the action logits,
so masked actions are never sampled nor learned from:

* ``SlotPPOTorchRLModule`` (the default of ``train --algo rllib-ppo``): the slot network of
  ``slot_policy.py`` — the same network MaskablePPO and BC train — over the flat observation
  split back into its parts; ``model_config`` takes ``SlotPolicyConfig``'s fields.
* ``MaskedPPOTorchRLModule`` (``--policy mlp``): PPO's default torch RL module, its encoder fed
  ``observations``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

from .slot_policy import SlotNetwork, SlotPolicyConfig, split_flat


def _check_masked(name: str, observation_space: gym.Space) -> None:
    if not (isinstance(observation_space, gym.spaces.Dict)
            and {"observations", "action_mask"} <= set(observation_space.spaces)):
        raise ValueError(f"{name}: expected a Dict observation space with 'observations' and "
                         f"'action_mask' (wrap the env in MaskedDictObservation), got {observation_space}")


class SlotPPOTorchRLModule(TorchRLModule, ValueFunctionAPI):
    """The slot network as a PPO RL module: logits per (slot, verb) and NOOP, masked; the value
    from the pool (``compute_values``; ``_forward_train`` keeps it as the embeddings)."""

    def setup(self) -> None:
        _check_masked(type(self).__name__, self.observation_space)
        fields = {f.name for f in dataclasses.fields(SlotPolicyConfig)}
        config = SlotPolicyConfig(**{k: v for k, v in (self.model_config or {}).items() if k in fields})
        self.network = SlotNetwork(config)

    def _logits_and_values(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        logits, values = self.network(split_flat(obs["observations"].float()))
        return _masked_logits(logits, obs["action_mask"]), values

    def _forward(self, batch: dict, **kwargs) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: self._logits_and_values(batch)[0]}

    def _forward_train(self, batch: dict, **kwargs) -> dict[str, Any]:
        logits, values = self._logits_and_values(batch)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: values}

    def compute_values(self, batch: dict, embeddings: Any = None) -> torch.Tensor:
        if embeddings is not None:  # the values _forward_train computed on this batch
            return embeddings
        return self._logits_and_values(batch)[1]


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """The encoder, policy and value heads are built for ``observation_space["observations"]``;
    the module itself keeps the full Dict space so RLlib's connectors pass the mask through."""

    def __init__(self, *, observation_space: gym.spaces.Dict, **kwargs):
        _check_masked("MaskedPPOTorchRLModule", observation_space)
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


def _masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return logits + torch.clamp(torch.log(mask.float()), min=FLOAT_MIN)


def _masked(output: dict, mask: torch.Tensor) -> dict:
    output[Columns.ACTION_DIST_INPUTS] = _masked_logits(output[Columns.ACTION_DIST_INPUTS], mask)
    return output
