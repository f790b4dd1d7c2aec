"""Scripted baselines: random, noop, always-suggest, always-execute and the policy-follower.

They read only the observation (the task features, the rule table and the action mask), like a
learned policy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from proactive_env.envs.structured import RULE_FEATURES, TASK_FEATURES
from proactive_env.spec import MAX_CATEGORIES, MAX_TASKS, RULES

from .base import action_index

F = {name: i for i, name in enumerate(TASK_FEATURES)}
R = {name: i for i, name in enumerate(RULE_FEATURES)}


def task_rows(obs: dict[str, np.ndarray]) -> np.ndarray:
    """The per-slot task features, (MAX_TASKS, len(TASK_FEATURES))."""
    return obs["tasks"].reshape(MAX_TASKS, len(TASK_FEATURES))


def stated_rule(obs: dict[str, np.ndarray], slot: int) -> str:
    """The persona's stated rule for the task's category (the rule table joined with the task)."""
    row = task_rows(obs)[slot]
    category = int(np.argmax(row[F["category_0"]:F["category_0"] + MAX_CATEGORIES]))
    rules = obs["rules"].reshape(MAX_CATEGORIES, len(RULE_FEATURES))[category]
    return RULES[int(np.argmax(rules[R["stated_prepare"]:R["stated_prepare"] + len(RULES)]))]


def current_rule(obs: dict[str, np.ndarray], slot: int) -> str:
    """The rule in force: the stated one, unless the user's feedback has changed it."""
    row = task_rows(obs)[slot]
    category = int(np.argmax(row[F["category_0"]:F["category_0"] + MAX_CATEGORIES]))
    rules = obs["rules"].reshape(MAX_CATEGORIES, len(RULE_FEATURES))[category]
    changed = rules[R["now_prepare"]:R["now_prepare"] + len(RULES)]
    return RULES[int(np.argmax(changed))] if changed.any() else stated_rule(obs, slot)


def open_slots(obs: dict[str, np.ndarray]) -> list[int]:
    tasks = task_rows(obs)
    return [s for s in range(MAX_TASKS) if tasks[s, F["active"]] and not tasks[s, F["closed"]]]


def first_valid(mask: np.ndarray, slot: int, verbs: tuple[str, ...]) -> int:
    for verb in verbs:
        a = action_index(verb, slot)
        if mask[a]:
            return a
    return 0


def work_pending(row: np.ndarray) -> bool:
    """The task's work is not finished yet (running, allocated or not launched)."""
    return row[F["work_done"]] < 1.0


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

    def finishing(self, obs: dict[str, np.ndarray], slot: int) -> tuple[str, ...]:
        return self.finish

    def asking(self, obs: dict[str, np.ndarray], slot: int) -> tuple[str, ...] | None:
        """Before working: what to do instead while the task's run waits for the user's OK
        (None: nothing, work on)."""
        return None

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        mask, tasks = obs["action_mask"], task_rows(obs)
        for slot in open_slots(obs):
            asking = self.asking(obs, slot)
            if asking is not None:
                a = first_valid(mask, slot, asking)
                if a:
                    return a
                continue
            a = first_valid(mask, slot, ("start", "continue"))
            if a:
                return a
            if work_pending(tasks[slot]):
                continue
            a = first_valid(mask, slot, self.finishing(obs, slot))
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

    def finishing(self, obs: dict[str, np.ndarray], slot: int) -> tuple[str, ...]:
        return ("execute",) if task_rows(obs)[slot, F["has_action"]] else ("present",)


class PolicyFollowerAgent(_Greedy):
    """Follows the persona's *stated* rule for each task's category and the answers it receives,
    but ignores later feedback (policy changes, revoked delegation) and time: it never defers or
    allocates, and works the moment a task appears. It reads each task's records first and leaves
    alone what they show needs nothing."""

    name = "policy-follower"
    rule = staticmethod(stated_rule)

    def asking(self, obs: dict[str, np.ndarray], slot: int) -> tuple[str, ...] | None:
        row = task_rows(obs)[slot]
        if not (row[F["run_needs_ok"]] and work_pending(row)):
            return None
        return () if row[F["approval_pending"]] or row[F["declined"]] else ("present",)

    def finishing(self, obs: dict[str, np.ndarray], slot: int) -> tuple[str, ...]:
        row = task_rows(obs)[slot]
        if row[F["assessed"]] and not row[F["actionable"]]:
            return ()
        rule = self.rule(obs, slot)
        if rule == "prepare":
            return ()
        if rule == "suggest" or not row[F["has_action"]]:
            return ("present",)
        if rule == "approve" and not row[F["approved"]]:
            return () if row[F["declined"]] or row[F["approval_pending"]] else ("present",)
        return ("execute",)
