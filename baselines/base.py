"""The agent interface every baseline implements, scripted, learned or LLM."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from proactive_env.envs import VERBS
from proactive_env.spec import MAX_TASKS


class Agent(Protocol):
    """Plays one episode at a time on the structured env.

    ``reset`` is called after ``env.reset`` with the unwrapped env (privileged agents may look at
    its world; honest ones use only observations) and the episode's seed.
    """

    name: str

    def reset(self, env: Any, seed: int) -> None: ...

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int: ...


def action_index(verb: str, slot: int) -> int:
    """Index in the published action table of ``verb`` applied to task ``slot``."""
    return 1 + VERBS.index(verb) * MAX_TASKS + slot
