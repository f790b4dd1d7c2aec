"""A policy for a set of task slots: one encoder shared by every slot, self-attention across
slots, and pointer-style logits per (slot, verb) — the default learner of ``proactivity-gym train``.

The structured env's observation is a set: 19 task slots, shuffled per seed, each a row of the
same features, plus a rule table per action category. A flat MLP must learn the category × rule
join and the routing from a slot's row to that slot's six logits once for every slot. This
network learns them once:

1. **Join.** Each slot's row (37 features) is joined with its category's rule row (9: present,
   the stated rule, the rule in force when feedback changed it) — ``category one-hot @ rules`` —
   so every slot reads the depth rule that applies to it (46 features per slot).
2. **Shared slot encoder.** One MLP maps every joined row to a ``d_model`` embedding.
3. **Context token.** The clock, the resources, the latest feedback and the whole rule table go
   through their own MLP into one more token, which is never padded.
4. **Self-attention across slots** (``n_layers`` pre-norm Transformer encoder layers, no
   positional encoding): slots compare deadlines, resources and states. Unused slots
   (``slot_used`` = 0) are padding: no slot attends to them.
5. **Pool.** The context token's output, the mean and the max over used slots.
6. **Heads.** Per slot, an MLP on ``[slot, context token]`` gives six logits, one per verb; they
   are laid out as the env's action table (index ``1 + verb·19 + slot``). The NOOP logit and the
   value come from the pool. The env's action mask is applied to the logits as for any masked
   policy (sb3-contrib's ``MaskableCategorical``), so a masked action is never sampled.

Permuting the slots (rows of ``tasks``) permutes the per-slot logits the same way and leaves
NOOP and the value unchanged: the network is permutation-equivariant by construction
(``tests/test_slot_policy.py`` checks it).

The torch parts (``SlotEncoder``, ``SlotHeads``, ``SlotNetwork``) have no SB3 dependency: the
SB3 policy (``SlotActorCriticPolicy``), behaviour cloning (``bc.py``) and the RLlib module
(``rllib_module.py``) wrap the same network.

Example::

    from sb3_contrib import MaskablePPO
    from proactive_env.baselines.slot_policy import SlotActorCriticPolicy, SlotPolicyConfig
    model = MaskablePPO(SlotActorCriticPolicy, env, policy_kwargs=SlotPolicyConfig().policy_kwargs())
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from proactive_env.envs.structured import (CLOCK_FEATURES, FEEDBACK_KINDS, MAX_RESOURCES, N_ACTIONS, N_VERBS,
                                           RESOURCE_FEATURES, RULE_FEATURES, TASK_FEATURES)
from proactive_env.spec import MAX_CATEGORIES, MAX_TASKS

N_TASK = len(TASK_FEATURES)
N_RULE = len(RULE_FEATURES)
CATEGORY = slice(TASK_FEATURES.index("category_0"), TASK_FEATURES.index("category_0") + MAX_CATEGORIES)
SLOT_USED = TASK_FEATURES.index("slot_used")
N_CONTEXT = len(CLOCK_FEATURES) + MAX_RESOURCES * len(RESOURCE_FEATURES) + (len(FEEDBACK_KINDS) + MAX_CATEGORIES + 1) \
    + MAX_CATEGORIES * N_RULE
# The observation parts the network reads, with their shapes (the action mask is applied to the logits).
PARTS = {"clock": len(CLOCK_FEATURES), "tasks": MAX_TASKS * N_TASK, "resources": MAX_RESOURCES * len(RESOURCE_FEATURES),
         "rules": MAX_CATEGORIES * N_RULE, "feedback": len(FEEDBACK_KINDS) + MAX_CATEGORIES + 1}


@dataclasses.dataclass(frozen=True)
class SlotPolicyConfig:
    """Sizes of the slot network."""

    d_model: int = 64
    """width of every slot embedding and of the context token"""
    n_heads: int = 4
    """attention heads per layer"""
    n_layers: int = 2
    """self-attention layers across slots"""
    ff_dim: int = 128
    """hidden width of each attention layer's feed-forward block"""
    head_hidden: int = 64
    """hidden width of the per-slot verb head, the NOOP head and the value head"""

    def policy_kwargs(self) -> dict[str, int]:
        """Keyword arguments of ``SlotActorCriticPolicy`` (plain ints: a saved model stores them as JSON)."""
        return dataclasses.asdict(self)


def split_flat(x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The parts of a flat observation (``MaskedDictObservation``'s ``observations``: every part
    but the mask, concatenated in the env's order), as the network reads them."""
    if x.shape[-1] != sum(PARTS.values()):
        raise ValueError(f"slot policy: expected {sum(PARTS.values())} flat features, got {x.shape[-1]}")
    return dict(zip(PARTS, torch.split(x, list(PARTS.values()), dim=-1)))


def check_observation_space(space: gym.Space) -> None:
    """ValueError unless ``space`` is the structured env's Dict observation (or has its parts)."""
    if not isinstance(space, gym.spaces.Dict):
        raise ValueError(f"slot policy: expected the structured env's Dict observation, got {space}")
    for name, size in PARTS.items():
        part = space.spaces.get(name)
        if part is None or int(np.prod(part.shape)) != size:
            got = None if part is None else part.shape
            raise ValueError(f"slot policy: observation[{name!r}]: expected {size} values, got {got} "
                             "(the structured env's Dict observation, not a flattened one)")


def _mlp(n_in: int, hidden: int, n_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out))


class SlotEncoder(nn.Module):
    """Observation parts → per-slot embeddings ``(B, 19, d)`` and the pool ``(B, 3d)``."""

    def __init__(self, config: SlotPolicyConfig):
        super().__init__()
        d = config.d_model
        self.slot_in = _mlp(N_TASK + N_RULE, d, d)
        self.context_in = _mlp(N_CONTEXT, d, d)
        layer = nn.TransformerEncoderLayer(d, config.n_heads, config.ff_dim, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.attention = nn.TransformerEncoder(layer, config.n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.pool_dim = 3 * d

    def forward(self, obs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Returns (slots, pool, used): embeddings per slot, the pooled summary, and which slots hold a task."""
        batch = obs["tasks"].shape[0]
        tasks = obs["tasks"].reshape(batch, MAX_TASKS, N_TASK).float()
        rules = obs["rules"].reshape(batch, MAX_CATEGORIES, N_RULE).float()
        joined = torch.cat([tasks, tasks[..., CATEGORY] @ rules], dim=-1)  # each slot with its category's rule
        used = tasks[..., SLOT_USED] > 0.5
        context = torch.cat([obs["clock"], obs["resources"].reshape(batch, -1), obs["feedback"],
                             rules.reshape(batch, -1)], dim=-1).float()
        tokens = torch.cat([self.context_in(context)[:, None], self.slot_in(joined)], dim=1)
        padding = torch.cat([torch.zeros_like(used[:, :1]), ~used], dim=1)  # the context token is never padding
        out = self.norm(self.attention(tokens, src_key_padding_mask=padding))
        summary, slots = out[:, 0], out[:, 1:]
        weight = used.unsqueeze(-1).float()
        mean = (slots * weight).sum(1) / weight.sum(1).clamp(min=1.0)
        top = slots.masked_fill(~used.unsqueeze(-1), float("-inf")).amax(1)
        top = torch.where(used.any(1, keepdim=True), top, torch.zeros_like(top))
        return slots, torch.cat([summary, mean, top], dim=-1), used


class SlotHeads(nn.Module):
    """Per-slot verb logits, the NOOP logit and the value's hidden layer."""

    def __init__(self, config: SlotPolicyConfig, pool_dim: int):
        super().__init__()
        d, h = config.d_model, config.head_hidden
        self.verb = _mlp(2 * d, h, N_VERBS)
        self.noop = _mlp(pool_dim, h, 1)
        self.value_hidden = nn.Sequential(nn.Linear(pool_dim, h), nn.ReLU())
        self.latent_dim_vf = h
        for head in (self.verb[-1], self.noop[-1]):  # near-uniform first policy, as SB3's 0.01-gain output layer
            nn.init.orthogonal_(head.weight, gain=0.01)
            nn.init.zeros_(head.bias)

    def logits(self, slots: torch.Tensor, pool: torch.Tensor) -> torch.Tensor:
        """``(B, 115)`` logits in the action table's order: NOOP, then verb-major blocks of 19 slots."""
        summary = pool[:, None, : slots.shape[-1]].expand_as(slots)
        per_slot = self.verb(torch.cat([slots, summary], dim=-1))  # (B, 19, 6)
        return torch.cat([self.noop(pool), per_slot.transpose(1, 2).reshape(slots.shape[0], -1)], dim=-1)


class SlotNetwork(nn.Module):
    """The whole network as one module: ``forward(obs) → (logits, value)``; BC and RLlib use it."""

    def __init__(self, config: SlotPolicyConfig = SlotPolicyConfig()):
        super().__init__()
        self.config = config
        self.encoder = SlotEncoder(config)
        self.heads = SlotHeads(config, self.encoder.pool_dim)
        self.value_out = nn.Linear(self.heads.latent_dim_vf, 1)

    def forward(self, obs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        slots, pool, _ = self.encoder(obs)
        return self.heads.logits(slots, pool), self.value_out(self.heads.value_hidden(pool)).squeeze(-1)


# ---------------------------------------------------------------------------------------- SB3
try:
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
except ImportError:  # the torch network above still works without the rl extra
    MaskableActorCriticPolicy = BaseFeaturesExtractor = None  # type: ignore[assignment,misc]

if MaskableActorCriticPolicy is not None:

    class SlotFeaturesExtractor(BaseFeaturesExtractor):
        """SB3 features extractor: ``SlotEncoder``'s slots and pool, flattened into one vector
        (``19·d + 3d``) that ``SlotExtractorHeads`` splits again."""

        def __init__(self, observation_space: gym.spaces.Dict, config: SlotPolicyConfig = SlotPolicyConfig()):
            check_observation_space(observation_space)
            encoder = SlotEncoder(config)
            super().__init__(observation_space, features_dim=MAX_TASKS * config.d_model + encoder.pool_dim)
            self.encoder = encoder

        def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
            slots, pool, _ = self.encoder(observations)
            return torch.cat([slots.flatten(1), pool], dim=-1)

    class SlotExtractorHeads(nn.Module):
        """SB3's ``mlp_extractor`` slot: ``latent_pi`` is the 115 logits themselves (the policy's
        ``action_net`` is the identity), ``latent_vf`` the value's hidden layer."""

        def __init__(self, config: SlotPolicyConfig, pool_dim: int):
            super().__init__()
            self.d_model = config.d_model
            self.heads = SlotHeads(config, pool_dim)
            self.latent_dim_pi, self.latent_dim_vf = N_ACTIONS, self.heads.latent_dim_vf

        def _split(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            n = MAX_TASKS * self.d_model
            return features[:, :n].reshape(-1, MAX_TASKS, self.d_model), features[:, n:]

        def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return self.forward_actor(features), self.forward_critic(features)

        def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
            return self.heads.logits(*self._split(features))

        def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
            return self.heads.value_hidden(self._split(features)[1])

    class SlotActorCriticPolicy(MaskableActorCriticPolicy):
        """``MaskableActorCriticPolicy`` with the slot network: ``SlotFeaturesExtractor`` as the
        features extractor, ``SlotExtractorHeads`` as the ``mlp_extractor``, and an identity
        ``action_net``, so the per-(slot, verb) logits reach the masked distribution unchanged.
        Masking, ``predict(..., action_masks=...)``, ``evaluate_actions`` and saving are
        MaskablePPO's own. The network's sizes are the ``SlotPolicyConfig`` fields, as keywords."""

        def __init__(self, observation_space: gym.spaces.Dict, action_space: gym.spaces.Discrete, lr_schedule,
                     d_model: int = 64, n_heads: int = 4, n_layers: int = 2, ff_dim: int = 128, head_hidden: int = 64,
                     **kwargs: Any):
            if not (isinstance(action_space, gym.spaces.Discrete) and action_space.n == N_ACTIONS):
                raise ValueError(f"slot policy: expected the action space Discrete({N_ACTIONS}), got {action_space}")
            self.slot_config = SlotPolicyConfig(d_model, n_heads, n_layers, ff_dim, head_hidden)
            for fixed in ("features_extractor_class", "features_extractor_kwargs", "net_arch"):
                kwargs.pop(fixed, None)  # set here: they describe this network
            kwargs.setdefault("ortho_init", False)  # PyTorch's own init for attention; small output layers above
            super().__init__(observation_space, action_space, lr_schedule, net_arch=[],
                             features_extractor_class=SlotFeaturesExtractor,
                             features_extractor_kwargs={"config": self.slot_config}, **kwargs)

        def _build_mlp_extractor(self) -> None:
            self.mlp_extractor = SlotExtractorHeads(self.slot_config, self.features_extractor.encoder.pool_dim)

        def _build(self, lr_schedule) -> None:
            super()._build(lr_schedule)
            self.action_net = nn.Identity()  # the logits are built per slot in the mlp_extractor
            self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

        def _get_constructor_parameters(self) -> dict[str, Any]:
            data = super()._get_constructor_parameters()
            for fixed in ("features_extractor_class", "features_extractor_kwargs", "net_arch"):
                data.pop(fixed, None)
            return {**data, **dataclasses.asdict(self.slot_config)}
