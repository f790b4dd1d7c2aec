"""The oracle: a privileged scripted policy built from the scenario's own expectations.

It reads the world (the expected depth now, the TA window, the user's schedule and the
resources) and does what the scenario says is right: defer the competing task in the TA window
and pick it up after, run work in a free window when the user holds its resource, read the
evidence of NOOP tasks without acting, and go exactly as deep as the user wants — asking first
where approval is needed and executing once it is given. CI holds that it reaches the top score.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from proactive_env.sim import TaskState, Verb, World
from proactive_env.spec import Depth

from .base import action_index


class OracleAgent:
    name = "oracle"

    def reset(self, env: Any, seed: int) -> None:
        self.world: World = env.world

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        for task in self.world.tasks:
            if task.active and not task.final:
                verb = self._next(task)
                if verb is not None and self.world.valid(verb, task):
                    return action_index(verb.name.lower(), task.index)
        return 0

    def _next(self, t: TaskState) -> Verb | None:
        w = self.world
        window, now = w.window, w.now
        if t.index == w.by_id[window.competing] and now < window.end:
            in_window = now >= window.start
            return Verb.DEFER if in_window and not t.deferred else None
        expected = w.expected_depth(t)
        work = t.spec.work
        if t.units_done < work.units:
            if t.allocated:
                return None
            if not w.resource_free(work.resource, now, now + work.minutes) and w.free_window(t) is not None:
                return Verb.ALLOCATE
            return Verb.CONTINUE if t.started else Verb.START
        if not t.started:
            return Verb.START  # read the evidence (and, for NOOP tasks, nothing more)
        if expected == Depth.SUGGEST and not t.presented:
            return Verb.PRESENT
        if expected == Depth.EXECUTE and not t.executed:
            return Verb.EXECUTE
        return None
