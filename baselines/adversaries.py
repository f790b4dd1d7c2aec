"""Adversaries: cheap rules that would score well on a benchmark that measures artefacts.

Each is built from one failure class of a scorer that ignores timing, depth or content
(DESIGN.md §5); CI holds each far below the oracle on the full suite (tests/test_adversaries.py).
The structured ones read only the observation; the text ones know the open tasks (as the text
oracle does) so that they are as strong as their rule allows.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import numpy as np

from proactive_env.sim import TaskState
from proactive_env.spec import format_at

from .oracle import TextOracleAgent
from .scripted import F, PolicyFollowerAgent, _Greedy, first_valid, open_slots, task_rows
from .text_scripted import TextScriptedAgent


class DeferEverythingAgent(PolicyFollowerAgent):
    """Defers every task the moment it appears, then, once the follow-up comes, acts at the depth
    the persona's stated rule asks for (as the policy-follower does)."""

    name = "defer-everything"

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        tasks, mask = task_rows(obs), obs["action_mask"]
        for slot in open_slots(obs):
            if not tasks[slot, F["deferred"]]:
                a = first_valid(mask, slot, ("defer",))
                if a:
                    return a
        for slot in open_slots(obs):
            if tasks[slot, F["followup_pending"]]:
                continue
            a = first_valid(mask, slot, ("start", "continue"))
            if a:
                return a
            if tasks[slot, F["work_done"]] >= 1.0:
                a = first_valid(mask, slot, self.finishing(obs, slot))
                if a:
                    return a
        return 0


class AllocateEverythingAgent:
    """Only ever allocates work to the next free window; never reads, presents or executes."""

    name = "allocate-everything"

    def reset(self, env: Any, seed: int) -> None:
        pass

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        for slot in open_slots(obs):
            a = first_valid(obs["action_mask"], slot, ("allocate",))
            if a:
                return a
        return 0


class PersonaBlindAgent(_Greedy):
    """Ignores the persona (the rule table and the feedback): asks before every action and
    carries it out when approved, presents everything else, and leaves alone what its records
    show needs nothing — a careful assistant that never learns who it serves."""

    name = "persona-blind"

    def finishing(self, obs: dict[str, np.ndarray], slot: int) -> tuple[str, ...]:
        row = task_rows(obs)[slot]
        if row[F["assessed"]] and not row[F["actionable"]]:
            return ()
        if row[F["has_action"]] and row[F["approved"]]:
            return ("execute",)
        return ("present",)


class AskOnEverythingAgent(_Greedy):
    """Asks the user about every task (an approval request where it has an action) and executes
    only what the user approves."""

    name = "ask-on-everything"

    def finishing(self, obs: dict[str, np.ndarray], slot: int) -> tuple[str, ...]:
        return ("execute",) if task_rows(obs)[slot, F["approved"]] else ("present",)


class PrepareOnlyAgent(_Greedy):
    """Does all the work, privately, and never delivers any of it."""

    name = "prepare-only"
    finish = ()


class _TextScript(TextOracleAgent):
    """A text-face agent that plays a fixed script per open task, once each."""

    face = "text"

    def reset(self, env: Any, seed: int) -> None:
        super().reset(env, seed)
        self.done: set[str] = set()

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if not self.pending:
            for task in self.world.tasks:
                if task.active and not task.closed and task.spec.id not in self.done:
                    self.done.add(task.spec.id)
                    self.pending.extend(self.script(task))
                    break
            if not self.pending:
                self.pending.append({"tool": "wait", "arguments": {}})
        return json.dumps(self.pending.popleft())

    def script(self, task: TaskState) -> list[dict]:
        raise NotImplementedError


class ReadEverythingAgent(TextOracleAgent):
    """The text oracle, plus a read of every visible record at every decision point."""

    name = "read-everything"

    def reset(self, env: Any, seed: int) -> None:
        super().reset(env, seed)
        self.read_at: int | None = None

    def act(self, obs: str, info: dict[str, Any]) -> str:
        w = self.world
        if self.read_at != w.now and not self.pending:
            self.read_at = w.now
            self.pending.extend({"tool": "read_record", "arguments": {"record_id": r}} for r in sorted(w.store.visible))
        return super().act(obs, info)


class ClaimSpamAgent(_TextScript):
    """Tells the user every matter is handled, and says everything a careless assistant would
    (the forbidden claims), without reading anything."""

    name = "claim-spam"

    def script(self, task: TaskState) -> list[dict]:
        claims = " ".join(c.text for c in task.spec.constraints.must_not_include)
        text = f"All done: {task.spec.title} is handled, I've taken care of everything. {claims}"
        return [{"tool": "message_user", "arguments": {"text": text, "about": task.spec.id}}]


class PasteRecordsAgent(_TextScript):
    """Reads each task's records and pastes them to the user as its work."""

    name = "paste-the-records"

    def script(self, task: TaskState) -> list[dict]:
        w = self.world
        evidence = [r for r in task.spec.evidence if r in w.store.visible]
        pasted = "\n\n".join(w.store.view(r).render() for r in evidence) or task.spec.title
        reads = [{"tool": "read_record", "arguments": {"record_id": r, "about": task.spec.id}} for r in evidence]
        return [*reads, {"tool": "message_user", "arguments": {"text": pasted, "about": task.spec.id}}]


class EmptyArgumentsAgent(_TextScript):
    """Calls each open task's action with no arguments at all."""

    name = "empty-arguments"

    def script(self, task: TaskState) -> list[dict]:
        if task.spec.action is None:
            return []
        return [{"tool": task.spec.action.tool, "arguments": {"about": task.spec.id}}]


class BroadcastEarlyAgent(TextOracleAgent):
    """Sends the user every record as it appears, linked to no matter, and notes it too: a bet
    that work kept for matters not yet come up is credited to whatever comes up later."""

    name = "broadcast-early"

    def reset(self, env: Any, seed: int) -> None:
        super().reset(env, seed)
        self.sent: set[str] = set()

    def act(self, obs: str, info: dict[str, Any]) -> str:
        w = self.world
        if not self.pending:
            for rid in sorted(w.store.visible - self.sent):
                self.sent.add(rid)
                text = w.store.view(rid).render()
                self.pending.extend([{"tool": "write_note", "arguments": {"text": text}},
                                     {"tool": "message_user", "arguments": {"text": f"Heads-up: {text}"}}])
            if not self.pending:
                self.pending.append({"tool": "wait", "arguments": {}})
        return json.dumps(self.pending.popleft())


class _FollowerPlus(TextScriptedAgent):
    """The text policy-follower with one cheap rule added (the subclass's), under its own name."""

    name = ""

    def __init__(self) -> None:
        super().__init__(PolicyFollowerAgent())
        self.name = type(self).name


class PostponeEarlyAgent(_FollowerPlus):
    """The text policy-follower, plus a postponement of every record's subject to a day later as
    the record appears, linked to no matter: a bet that postponements kept for matters not yet
    come up buy TA's "later" without any judgement of timing."""

    name = "postpone-early"

    def reset(self, env: Any, seed: int) -> None:
        super().reset(env, seed)
        self.postponed: set[str] = set()

    def act(self, obs: str, info: dict[str, Any]) -> str:
        w = self.world
        if not self.pending:
            until = min(w.now + 1440, w.scenario.end_minute - 1)
            for rid in sorted(w.store.visible - self.postponed):
                self.postponed.add(rid)
                if until > w.now:
                    self.pending.append({"tool": "defer_task", "arguments": {
                        "what": w.store.view(rid).render(), "until": format_at(until), "plan": "Later."}})
        return json.dumps(self.pending.popleft()) if self.pending else super().act(obs, info)


class PiggybackAgent(_FollowerPlus):
    """The text policy-follower, with every visible record pasted under each note and message it
    writes on a matter: a bet that a needle-rich note or message on one matter is also credited
    to needs nothing announced, without the agent having judged them."""

    name = "piggyback"

    def act(self, obs: str, info: dict[str, Any]) -> str:
        call = json.loads(super().act(obs, info))
        args = call["arguments"]
        if call["tool"] in ("write_note", "message_user") and args.get("about"):
            w = self.world
            pasted = "\n".join(w.store.view(r).render() for r in sorted(w.store.visible))
            call = {**call, "arguments": {**args, "text": f"{args['text']}\n\nAlso:\n{pasted}"}}
        return json.dumps(call)


STRUCTURED = (DeferEverythingAgent, AllocateEverythingAgent, PersonaBlindAgent, AskOnEverythingAgent, PrepareOnlyAgent)
TEXT = (ReadEverythingAgent, ClaimSpamAgent, PasteRecordsAgent, EmptyArgumentsAgent, BroadcastEarlyAgent,
        PostponeEarlyAgent, PiggybackAgent)
