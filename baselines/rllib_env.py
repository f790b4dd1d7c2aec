"""The envs as RLlib sees them: every ``Proactivity-*`` id and the multi-assistant env registered
with Ray's registry, their observations in the masked-dict layout the action-masking RL module
reads (``{"observations": flat vector, "action_mask": 0/1}``).

Example::

    from proactive_env.baselines.rllib_env import register_rllib_envs
    register_rllib_envs()
    config = PPOConfig().environment("Proactivity-Monitor-v0")   # masked dict observation

Registration is stored in Ray's cluster-wide registry, so env runners on other nodes build the env
without importing anything first; call it after ``ray.init``.
"""

from __future__ import annotations

import gymnasium as gym
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.tune.registry import register_env

import proactive_env
from proactive_env.envs.multiagent import ProactivityParallelEnv
from proactive_env.envs.registration import SUITE_ID
from proactive_env.wrappers import MaskedDictObservation

MULTI_AGENT_ID = "proactivity_multi_v0"  # ProactivityParallelEnv.metadata["name"]


def make_masked_env(env_id: str, config: dict | None = None) -> gym.Env:
    """``gym.make(env_id, **config)`` with the masked-dict observation."""
    import proactive_env  # noqa: F401,F811  (registers the gym ids in an env-runner process)

    return MaskedDictObservation(gym.make(env_id, **dict(config or {})))


class MaskedMultiAgentEnv(MultiAgentEnv):
    """``ProactivityParallelEnv`` as an RLlib ``MultiAgentEnv``, each agent's observation in the
    masked-dict layout (all agents share spaces, so one policy can play every seat)."""

    def __init__(self, config: dict | None = None):
        super().__init__()
        self.par_env = ProactivityParallelEnv(**dict(config or {}))
        first = self.par_env.possible_agents[0]
        # A converter only: MaskedDictObservation.observation is a pure function of the raw dict.
        self.masker = MaskedDictObservation(self.par_env._envs[first])
        self.possible_agents = list(self.par_env.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: self.masker.observation_space for a in self.possible_agents}
        self.action_spaces = {a: self.par_env.action_space(a) for a in self.possible_agents}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        observations, infos = self.par_env.reset(seed=seed, options=options)
        self.agents = list(self.par_env.agents)
        return self._masked(observations), infos

    def step(self, action_dict: dict):
        observations, rewards, terminateds, truncateds, infos = self.par_env.step(action_dict)
        self.agents = list(self.par_env.agents)
        terminateds["__all__"] = not self.agents
        truncateds["__all__"] = bool(truncateds) and all(truncateds.values())
        return self._masked(observations), rewards, terminateds, truncateds, infos

    def _masked(self, observations: dict) -> dict:
        return {agent: self.masker.observation(obs) for agent, obs in observations.items()}


def register_rllib_envs() -> list[str]:
    """Register every structured-face id, the suite and ``proactivity_multi_v0`` with Ray's
    registry (``env_config`` becomes the env's keyword arguments). Returns the names."""
    names = [*proactive_env.env_ids(), SUITE_ID]
    for name in names:
        register_env(name, lambda config, name=name: make_masked_env(name, config))
    register_env(MULTI_AGENT_ID, lambda config: MaskedMultiAgentEnv(config))
    return [*names, MULTI_AGENT_ID]
