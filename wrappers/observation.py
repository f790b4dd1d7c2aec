"""Observation wrappers: a flat vector for MLP policies, the RLlib-style masked dict, text, and
each slot's category rule (opt-in)."""

from __future__ import annotations

import string

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from proactive_env.envs.render import ansi_timeline
from proactive_env.envs.structured import MAX_TASKS, RULE_FEATURES, TASK_FEATURES
from proactive_env.spec import MAX_CATEGORIES, RULES

PARTS = ("clock", "tasks", "resources", "rules", "feedback", "action_mask")


class _MaskForwarding:
    """Keeps ``action_masks()`` reachable on the wrapper itself (sb3-contrib calls it)."""

    def action_masks(self) -> np.ndarray:
        return self.env.get_wrapper_attr("action_masks")()


class FlattenObservation(_MaskForwarding, gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Concatenate the Dict observation into one float32 vector, for SB3's ``MlpPolicy``.

    The parts are concatenated in a fixed order — clock, tasks, resources, rules, feedback and (unless
    ``include_mask=False``) the action mask — so a policy sees which actions are valid.

    Example::

        env = FlattenObservation(gym.make("Proactivity-Monitor-v0"))
        model = stable_baselines3.PPO("MlpPolicy", env)
    """

    def __init__(self, env: gym.Env, include_mask: bool = True):
        gym.utils.RecordConstructorArgs.__init__(self, include_mask=include_mask)
        gym.ObservationWrapper.__init__(self, env)
        self.parts = PARTS if include_mask else PARTS[:-1]
        size = sum(int(np.prod(env.observation_space[p].shape)) for p in self.parts)
        self.observation_space = spaces.Box(0.0, 1.0, (size,), np.float32)

    def observation(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return np.concatenate([observation[p] for p in self.parts], dtype=np.float32)


class MaskedDictObservation(_MaskForwarding, gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """``{"observations": <flat float32 vector>, "action_mask": <0/1 vector>}`` — the layout RLlib's
    action-masking RL modules expect.

    Example::

        env = MaskedDictObservation(gym.make("Proactivity-Monitor-Operator-v0"))
        obs, info = env.reset(seed=0)
        logits = logits + np.log(obs["action_mask"])   # in the policy
    """

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        self._flat = FlattenObservation(env, include_mask=False)
        self.observation_space = spaces.Dict({
            "observations": self._flat.observation_space,
            "action_mask": spaces.Box(0.0, 1.0, env.observation_space["action_mask"].shape, np.float32),
        })

    def observation(self, observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"observations": self._flat.observation(observation),
                "action_mask": observation["action_mask"].astype(np.float32)}


TEXT_CHARSET = frozenset(string.printable + "£€—–→←×…’‘“”·±≥≤é")


class TextObservation(_MaskForwarding, gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """The observation as text: the same timeline as the ``ansi`` render (the last ``last`` log
    entries and the open tasks), for LLM-style agents that read rather than parse arrays.
    Characters outside ``TEXT_CHARSET`` become ``?``; text beyond ``max_length`` is cut from the
    front so the newest entries stay.

    Example::

        env = TextObservation(gym.make("Proactivity-Monitor-Reviewer-v0"))
        obs, info = env.reset(seed=0)
        print(obs)
    """

    def __init__(self, env: gym.Env, last: int = 30, max_length: int = 8192):
        gym.utils.RecordConstructorArgs.__init__(self, last=last, max_length=max_length)
        gym.ObservationWrapper.__init__(self, env)
        self.last = last
        self.observation_space = spaces.Text(max_length=max_length, min_length=0,
                                             charset=frozenset(TEXT_CHARSET))

    def observation(self, observation) -> str:
        text = ansi_timeline(self.env.unwrapped.world, last=self.last)
        text = "".join(c if c in TEXT_CHARSET else "?" for c in text)
        return text[-self.observation_space.max_length:]


SLOT_RULE_FEATURES = (*(f"stated_{r}" for r in RULES), *(f"in_force_{r}" for r in RULES))
_CATEGORY = slice(TASK_FEATURES.index("category_0"), TASK_FEATURES.index("category_0") + MAX_CATEGORIES)
_STATED = slice(RULE_FEATURES.index(f"stated_{RULES[0]}"), RULE_FEATURES.index(f"stated_{RULES[-1]}") + 1)
_NOW = slice(RULE_FEATURES.index(f"now_{RULES[0]}"), RULE_FEATURES.index(f"now_{RULES[-1]}") + 1)


def slot_rules(observation: dict[str, np.ndarray]) -> np.ndarray:
    """(MAX_TASKS, 8) float32: per task slot, its category's stated rule and the rule in force
    (one-hot over prepare / suggest / approve / execute; zeros for an empty slot) — the join of
    ``tasks``' category columns with the ``rules`` table, nothing the observation does not hold."""
    tasks = observation["tasks"].reshape(MAX_TASKS, len(TASK_FEATURES))
    rules = observation["rules"].reshape(MAX_CATEGORIES, len(RULE_FEATURES))
    stated, changed = rules[:, _STATED], rules[:, _NOW]
    in_force = np.where(changed.any(axis=1, keepdims=True), changed, stated)
    category = tasks[:, _CATEGORY]  # one-hot, zeros for an empty slot
    return np.concatenate([category @ stated, category @ in_force], axis=1, dtype=np.float32)


class SlotRules(_MaskForwarding, gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Add ``obs["slot_rules"]`` (``MAX_TASKS`` × 8, flattened): each slot's category rule, as
    stated and as in force (``SLOT_RULE_FEATURES``) — the same rule an LLM agent reads in its
    briefing, joined for it. Opt-in: the shipped observation leaves the join to the agent, and a
    policy that shares weights across slots learns it; no column states the depth a task wants
    (a rule is per category; explicit answers and the task's own state still decide it). The
    wrapper names itself in the env's trajectories (``observation_extras``) and in
    ``env.spec.additional_wrappers``, so a run made with it says so.

    Example::

        env = SlotRules(gym.make("Proactivity-Monitor-v0"))
        obs, info = env.reset(seed=0)
        obs["slot_rules"].reshape(19, 8)
    """

    name = "slot_rules"

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        self.observation_space = spaces.Dict({
            **env.observation_space.spaces,
            "slot_rules": spaces.Box(0.0, 1.0, (MAX_TASKS * len(SLOT_RULE_FEATURES),), np.float32),
        })
        extras = getattr(env.unwrapped, "observation_extras", None)
        if extras is not None and self.name not in extras:
            extras.append(self.name)

    def observation(self, observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {**observation, "slot_rules": slot_rules(observation).ravel()}
