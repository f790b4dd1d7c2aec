"""Scripted baselines: random, noop, always-suggest, always-execute and the policy-follower.

They read only the observation (the task features and the action mask), like a learned policy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from proactive_env.envs.structured import TASK_FEATURES
from proactive_env.spec import MAX_TASKS

from .base import action_index

F = {name: i for i, name in enumerate(TASK_FEATURES)}


def task_rows(obs: dict[str, np.ndarray]) -> np.ndarray:
    """The per-slot task features, (MAX_TASKS, len(TASK_FEATURES))."""
    return obs["tasks"].reshape(MAX_TASKS, len(TASK_FEATURES))


def _open_slots(obs: dict[str, np.ndarray]) -> list[int]:
    tasks = task_rows(obs)
    return [s for s in range(MAX_TASKS) if tasks[s, F["active"]] and not tasks[s, F["final"]]]


def _first_valid(mask: np.ndarray, slot: int, verbs: tuple[str, ...]) -> int:
    for verb in verbs:
        a = action_index(verb, slot)
        if mask[a]:
            return a
    return 0


class RandomAgent:
    """Uniform among the valid actions (NOOP included), from its own seeded generator."""

    name = "random"

    def reset(self, env: Any, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        valid = np.flatnonzero(obs["action_mask"])
        return int(self.rng.choice(valid))


class NoopAgent:
    """Never intervenes."""

    name = "noop"

    def reset(self, env: Any, seed: int) -> None:
        pass

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        return 0


class _Greedy:
    """Works on every open task as soon as it can, then goes as deep as its script says."""

    name = "greedy"
    finish: tuple[str, ...] = ()

    def reset(self, env: Any, seed: int) -> None:
        pass

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        mask = obs["action_mask"]
        for slot in _open_slots(obs):
            a = _first_valid(mask, slot, ("start", "continue") + self.finish)
            if a:
                return a
        return 0


class AlwaysSuggestAgent(_Greedy):
    """Does the work of every task now and presents it for review; never executes."""

    name = "always-suggest"
    finish = ("present",)


class AlwaysExecuteAgent(_Greedy):
    """Does the work of every task now and executes it without asking (presents only tasks
    that have nothing to execute)."""

    name = "always-execute"
    finish = ("execute", "present")

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        mask, tasks = obs["action_mask"], task_rows(obs)
        for slot in _open_slots(obs):
            finish = ("execute",) if tasks[slot, F["has_action"]] else ("present",)
            a = _first_valid(mask, slot, ("start", "continue") + finish)
            if a:
                return a
        return 0


class PolicyFollowerAgent:
    """Follows the persona's *stated* policy for each task and the approvals it receives, but
    ignores later feedback (policy changes, revoked delegation) and time: it never defers or
    allocates, and works the moment a task appears."""

    name = "policy-follower"

    def reset(self, env: Any, seed: int) -> None:
        pass

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        mask, tasks = obs["action_mask"], task_rows(obs)
        for slot in _open_slots(obs):
            row = tasks[slot]
            if row[F["stated_noop"]]:
                continue
            a = _first_valid(mask, slot, ("start", "continue"))
            if a or row[F["stated_prepare"]]:
                if a:
                    return a
                continue
            if row[F["stated_suggest"]]:
                a = _first_valid(mask, slot, ("present",))
            elif row[F["stated_needs_approval"]] and not row[F["approved"]]:
                a = _first_valid(mask, slot, ("present",))
            else:
                a = _first_valid(mask, slot, ("execute",))
            if a:
                return a
        return 0
