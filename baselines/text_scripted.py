"""The scripted baselines on the text face: the same decisions as their structured namesakes,
played as tool calls, so an LLM agent is compared with baselines that met the same face.

Each one reads the structured observation of the world it plays (the task slots, the rule table,
the action mask — what its structured namesake reads), takes the (verb, task) its namesake would
take, and carries it out as the text oracle would: reads the task's records, writes its notes
and messages from the task's reference facts, asks for approval with the intended action, calls
the domain tool with the intended arguments. Their TA and TR-D compare directly with an LLM's;
their TC is the content ceiling of their decisions (they write the reference facts), so it does
not (see the README).
"""

from __future__ import annotations

import json
from typing import Any

from proactive_env.envs.structured import MAX_TASKS
from proactive_env.sim import TaskState, Verb
from proactive_env.spec import format_at

from .oracle import TextOracleAgent, work_text
from .scripted import AlwaysExecuteAgent, AlwaysSuggestAgent, NoopAgent, PolicyFollowerAgent, RandomAgent

WAIT = {"tool": "wait", "arguments": {}}



class TextScriptedAgent(TextOracleAgent):
    """A structured scripted agent's decisions, as tool calls on the text face."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.name = f"text-{inner.name}"

    def reset(self, env: Any, seed: int) -> None:
        super().reset(env, seed)
        self.inner.reset(env.core, seed)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if not self.pending:
            structured = self.env.core._obs()
            action = int(self.inner.act(structured, {"action_mask": structured["action_mask"]}))
            if action == 0:
                self.pending.append(WAIT)
            else:
                verb, slot = divmod(action - 1, MAX_TASKS)
                self.pending.extend(self._calls(Verb(verb), self.world.tasks[slot]) or [WAIT])
        return json.dumps(self.pending.popleft())

    def _calls(self, verb: Verb, t: TaskState) -> list[dict]:
        spec, w = t.spec, self.world
        about = {"about": spec.id}
        if verb is Verb.DEFER:  # as the structured face defers: to the next opportunity it sees
            when = w.next_opportunity(t)
            until = {"until": format_at(when)} if when is not None else {}
            return [{"tool": "defer_task", "arguments": {"what": spec.title, **until, **about,
                                                          "plan": f"Pick up '{spec.title}' then."}}]
        if verb is Verb.PRESENT and spec.action is not None and not t.executed:  # a request, as the structured present
            return [*self._reads(t), {"tool": "request_approval", "arguments": {
                "message": work_text(t), "actions": [{"tool": spec.action.tool, "args": spec.action.args}], **about}}]
        if verb in (Verb.START, Verb.CONTINUE) and spec.work.resource is not None:  # runs now, as its namesake's
            return [*self._reads(t), {"tool": "allocate_resource", "arguments": {
                "what": spec.title, "resource": spec.work.resource, "start": format_at(w.now), **about}},
                {"tool": "write_note", "arguments": {"text": work_text(t), **about}}]
        if verb is Verb.ALLOCATE and w.free_window(t) is None:
            return []
        return super()._calls(verb, t)


TEXT_BASELINES = {f"text-{cls.name}": (lambda cls=cls: TextScriptedAgent(cls()))
                  for cls in (PolicyFollowerAgent, AlwaysSuggestAgent, AlwaysExecuteAgent, NoopAgent, RandomAgent)}
