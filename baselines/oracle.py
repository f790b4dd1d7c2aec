"""The oracle: a privileged scripted policy built from the scenario's own expectations.

It reads the world — the user's policy in force and answers, the TA decisions, the user's
schedule and the resources — and does what the scenario says is right: defers the competing
work of each TA decision at the window's start to a feasible time after it and works on the
urgent task inside it; runs work where it does not compete with the user's own use of a
resource; waits for its work to finish before showing it; reads the evidence of NOOP tasks and
shows nothing; and goes exactly as deep as the user wants — asking first where approval is
needed and executing once it is given. CI holds that it reaches the top score.

``TextOracleAgent`` plays the same decisions through the text/tool face as JSON tool calls.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import numpy as np

from proactive_env.sim import TaskState, Verb, World
from proactive_env.sim.world import RUN_TOOL
from proactive_env.spec import Depth, format_at

from .base import action_index


class OracleAgent:
    name = "oracle"

    def reset(self, env: Any, seed: int) -> None:
        self.env = env

    @property
    def world(self) -> World:
        return self.env.world

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        choice = self.decide()
        return action_index(choice[0].name.lower(), choice[1].index) if choice else 0

    def decide(self) -> tuple[Verb, TaskState] | None:
        """The next (verb, task) the scenario's expectations call for, or None to wait."""
        for task in self.world.tasks:
            if task.active and not task.closed:
                verb = self._next(task)
                if verb is not None and self.world.valid_verbs(task)[verb]:
                    return verb, task
        return None

    def holding(self, t: TaskState) -> bool | None:
        """For competing work of an open TA window: True to defer it now, False to leave it
        alone until the window closes; None if no window holds it back."""
        w = self.world
        for d in self._open_decisions():
            if d.competing == t.spec.id and w.now < d.end:
                if w.now < d.start:
                    return False
                # defer, and again if the follow-up came back inside the window; a deferral
                # with no feasible time is all it can do
                until = next((e["until"] for e in reversed(w.log) if e["type"] == "defer" and e["task"] == t.spec.id),
                             "never deferred")
                return until == "never deferred" or (until is not None and until < d.end and t.followup is None)
        return None

    def _open_decisions(self) -> list:
        """The TA decisions this run can hold: none whose urgent task's branch the user's drawn
        answer closed (privileged: the oracle reads the run's coins, as the scorer does) — nothing
        is postponed for an urgent task that will not come up."""
        scorer = getattr(self.env, "core", self.env).scorer
        return [d for d in self.world.scenario.ta_decisions if scorer.closed_by_draw(d.urgent) is None]

    def _next(self, t: TaskState) -> Verb | None:
        w = self.world
        hold = self.holding(t)
        if hold is not None:
            return Verb.DEFER if hold else None
        spec, work = t.spec, t.spec.work
        if t.units_done < work.units and w.needs_run_ok(t):  # its run is the user's call: ask for it first
            return Verb.PRESENT if w.asks_for_run(t) else None
        if not t.started:
            return self._launch(t, Verb.START)
        if t.units_done < work.units:
            return None if t.running else self._launch(t, Verb.CONTINUE)
        if spec.noop:
            return None
        policy = w.policy
        wanted = policy.wanted(spec, w.persona)
        if wanted == Depth.SUGGEST and not t.presented:
            return Verb.PRESENT
        if wanted == Depth.EXECUTE and not t.executed:
            if policy.authorised(spec):
                return Verb.EXECUTE
            if not t.presented:
                return Verb.PRESENT
        return None

    def _launch(self, t: TaskState, verb: Verb) -> Verb:
        """Work now where it does not run over the user's own use of its resource; else allocate."""
        w, work = self.world, t.spec.work
        if work.resource is not None and not w.resource_free(work.resource, w.now, w.now + work.minutes):
            if w.free_window(t) is not None:
                return Verb.ALLOCATE
        return verb

    def defer_until(self, t: TaskState) -> int | None:
        """Where the oracle defers work to: the next opportunity, after every window that holds it."""
        w = self.world
        ends = [d.end for d in self._open_decisions() if d.competing == t.spec.id and w.now < d.end]
        return w.next_opportunity(t, after=max(ends, default=None))


def work_text(t: TaskState) -> str:
    """What the text oracle writes for a task: its title, reference facts and codes."""
    spec = t.spec
    return "\n".join([spec.title, *(f.text for f in spec.facts), *(f.text for f in spec.constraints.must_include)])


class TextOracleAgent(OracleAgent):
    """The oracle's decisions as tool calls: it reads the evidence records, writes its notes and
    messages from the task's reference facts and codes, asks for approval with the explicit
    action, calls the domain tool with the intended arguments, defers with a concrete time and
    allocates compute to the free window — so the text face can be checked against the
    structured one. It names each matter with ``about``."""

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

    def _reads(self, t: TaskState) -> list[dict]:
        w = self.world
        return [{"tool": "read_record", "arguments": {"record_id": r, "about": t.spec.id}}
                for r in t.spec.evidence if r in w.store.visible and r not in t.read]

    def _clash_reads(self, t: TaskState) -> list[dict]:
        """Before postponing competing work: the records that show its clashes, not yet read (a
        postponement counts once the clash is seen)."""
        w = self.world
        shown = dict.fromkeys(r for d in w.scenario.ta_decisions if d.competing == t.spec.id for r in d.shown_by)
        return [{"tool": "read_record", "arguments": {"record_id": r, "about": t.spec.id}}
                for r in shown if r in w.store.visible and r not in w.observed]

    def _calls(self, verb: Verb, t: TaskState) -> list[dict]:
        spec, w = t.spec, self.world
        about = {"about": spec.id}
        text = work_text(t)
        if verb in (Verb.START, Verb.CONTINUE) and (spec.work.resource is None or w.free_window(t) is None):
            return [*self._reads(t), {"tool": "write_note", "arguments": {"text": text, **about}}]
        starting = verb in (Verb.START, Verb.CONTINUE)  # on the text face compute runs only where reserved
        if starting:
            verb = Verb.ALLOCATE
        if verb is Verb.DEFER:
            when = self.defer_until(t)
            until = {"until": format_at(when)} if when is not None else {}
            return [*self._clash_reads(t), {"tool": "defer_task", "arguments": {"what": spec.title, **until, **about,
                                                          "plan": f"Pick up '{spec.title}' then."}}]
        if verb is Verb.ALLOCATE:
            now_free = starting and w.resource_free(spec.work.resource, w.now, w.now + w.remaining_minutes(t))
            start = w.now if now_free else w.free_window(t)[0]
            return [*self._reads(t), {"tool": "allocate_resource", "arguments": {
                "what": spec.title, "resource": spec.work.resource, "start": format_at(start), **about}},
                {"tool": "write_note", "arguments": {"text": text, **about}}]
        if verb is Verb.PRESENT:
            if w.asks_for_run(t):
                return [*self._reads(t), {"tool": "request_approval", "arguments": {
                    "message": f"May I run '{spec.title}' on {spec.work.resource}?",
                    "actions": [{"tool": RUN_TOOL, "args": {"resource": spec.work.resource}}], **about}}]
            if spec.action is not None and w.policy.rule(spec) == "approve":
                return [*self._reads(t), {"tool": "request_approval", "arguments": {
                    "message": text, "actions": [{"tool": spec.action.tool, "args": spec.action.args}], **about}}]
            return [*self._reads(t), {"tool": "message_user", "arguments": {"text": text, **about}}]
        return [*self._reads(t), {"tool": spec.action.tool, "arguments": {**spec.action.args, **about}}]
