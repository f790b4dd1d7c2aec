"""The oracle: a privileged scripted policy built from the scenario's own expectations.

It reads the world (the expected depth now, the TA window, the user's schedule and the
resources) and does what the scenario says is right: defer the competing task in the TA window
and pick it up after, run work in a free window when the user holds its resource, read the
evidence of NOOP tasks without acting, and go exactly as deep as the user wants — asking first
where approval is needed and executing once it is given. CI holds that it reaches the top score.

``TextOracleAgent`` plays the same decisions through the text/tool face as JSON tool calls.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import numpy as np

from proactive_env.sim import TaskState, Verb, World
from proactive_env.spec import Depth, format_at

from .base import action_index


class OracleAgent:
    name = "oracle"

    def reset(self, env: Any, seed: int) -> None:
        self.world: World = env.world
        self.looked: set[int] = set()  # tasks whose records it has looked at (text face)

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        choice = self.decide()
        return action_index(choice[0].name.lower(), choice[1].index) if choice else 0

    def decide(self) -> tuple[Verb, TaskState] | None:
        """The next (verb, task) the scenario's expectations call for, or None to wait."""
        for task in self.world.tasks:
            if task.active and not task.final:
                verb = self._next(task)
                if verb is not None and self.world.valid(verb, task):
                    return verb, task
        return None

    def _next(self, t: TaskState) -> Verb | None:
        w = self.world
        window, now = w.window, w.now
        if t.index == w.by_id[window.competing] and now < window.end:
            in_window = now >= window.start
            return Verb.DEFER if in_window and not t.deferred else None
        expected = w.expected_depth(t)
        work = t.spec.work
        started = t.started or t.index in self.looked
        if t.units_done < work.units:
            if t.allocated:
                return None
            if not w.resource_free(work.resource, now, now + work.minutes) and w.free_window(t) is not None:
                return Verb.ALLOCATE
            return Verb.CONTINUE if started else Verb.START
        if not started:
            return Verb.START  # read the evidence (and, for NOOP tasks, nothing more)
        if expected == Depth.SUGGEST and not t.presented:
            return Verb.PRESENT
        if expected == Depth.EXECUTE and not t.executed:
            return Verb.EXECUTE
        return None


class TextOracleAgent(OracleAgent):
    """The oracle's decisions as tool calls: it reads the evidence records, writes its notes and
    messages from the task's reference facts and codes, asks for approval with the explicit
    action, calls the domain tool with the intended arguments, defers with a concrete time and
    allocates compute to the free window — so the text face can be checked against the
    structured one."""

    name = "text-oracle"
    face = "text"

    def reset(self, env: Any, seed: int) -> None:
        super().reset(env, seed)
        self.pending: deque[dict] = deque()

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if not self.pending:
            choice = self.decide()
            self.pending.extend(self._calls(*choice) if choice else [{"tool": "wait", "arguments": {}}])
        return json.dumps(self.pending.popleft())

    def _calls(self, verb: Verb, t: TaskState) -> list[dict]:
        spec, w = t.spec, self.world
        text = "\n".join([spec.title, *(f.text for f in spec.facts), *(f.text for f in spec.constraints.must_include)])
        if verb in (Verb.START, Verb.CONTINUE):
            calls = [] if t.index in self.looked else [
                {"tool": "read_record", "arguments": {"record_id": r}} for r in spec.evidence if r in w.appeared]
            self.looked.add(t.index)
            if spec.work.units or w.expected_depth(t) == Depth.PREPARE:
                calls.append({"tool": "write_note", "arguments": {"text": text}})
            return calls or [{"tool": "wait", "arguments": {}}]
        if verb is Verb.DEFER:
            when = w.next_opportunity(t)
            until = {"until": format_at(when)} if when is not None else {}
            return [{"tool": "defer_task", "arguments": {"what": spec.title, **until,
                                                          "plan": f"Pick up '{spec.title}' then."}}]
        if verb is Verb.ALLOCATE:
            start, _ = w.free_window(t)
            return [{"tool": "allocate_resource", "arguments": {"what": spec.title, "resource": spec.work.resource,
                                                                 "start": format_at(start)}}]
        if verb is Verb.PRESENT:
            if spec.action is not None and w.needs_approval(t):
                return [{"tool": "request_approval", "arguments": {
                    "message": text, "actions": [{"tool": spec.action.tool, "args": spec.action.args}]}}]
            return [{"tool": "message_user", "arguments": {"text": text}}]
        return [{"tool": spec.action.tool, "arguments": dict(spec.action.args)}]
