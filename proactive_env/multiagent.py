"""PettingZoo environments: several assistants sharing one clock and one pool of compute.

    from proactive_env import multiagent
    env = multiagent.parallel_env(scenarios="experiments,job_applications", pool_capacity=1)
    observations, infos = env.reset(seed=0)

``parallel_env`` is the native ``ParallelEnv``; ``env`` is its AEC conversion; ``raw_env`` is
the class.
"""

from __future__ import annotations

from pettingzoo.utils import parallel_to_aec

from .envs.multiagent import ProactivityParallelEnv

raw_env = ProactivityParallelEnv


def parallel_env(**kwargs) -> ProactivityParallelEnv:
    return ProactivityParallelEnv(**kwargs)


def env(**kwargs):
    """The AEC version (agents act in turn; the clock moves once all have waited)."""
    return parallel_to_aec(parallel_env(**kwargs))


__all__ = ["ProactivityParallelEnv", "env", "parallel_env", "raw_env"]
