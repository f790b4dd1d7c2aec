"""Probing adversaries: the text oracle, but every action it takes is first sent wrong, to read
what the refusals say (issue #20: refusals are never a free oracle for hidden arguments).

``probe-then-correct`` plays as the text oracle does, and before each execute the oracle makes it
sends the same call once per compared argument (declared by the tool, not free text) with that
argument changed to a value that means something else — without ``about`` and with it — and only
then the oracle's own call. An agent that could read, from refusals that cost nothing, which
arguments are off could search for hidden reference values at no cost; a careful one derives them
from the records. CI holds every member of the family, on every pair and seeds 0, 1000, 1001, to
scores no better than the text oracle's, and every refusal that recorded nothing against a task
to say the same whatever argument was off (tests/test_adversaries.py).

Members: which probes are sent (``unnamed``: without ``about`` only; ``named``: with it only;
both, the family's own name).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from proactive_env.sim import TaskState

from .oracle import TextOracleAgent

WAYS = {"probe-then-correct": (False, True), "probe-unnamed-then-correct": (False,),
        "probe-named-then-correct": (True,)}  # name: with about? for each probe sent


def other_value(value: Any) -> Any:
    """A value of the same JSON type and shape that means something else."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value * 3 + 977
    if isinstance(value, dict):
        return {k: other_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [other_value(value[0])] if value else ["Zq-0000 none"]
    return "Zq-0000 nothing of the kind"


def compared_keys(world, task: TaskState) -> list[str]:
    """The task's action arguments execution compares: declared by the tool, not free text."""
    action = task.spec.action
    params = world.tools[action.tool].params
    return [k for k in action.args if k not in action.free_text and k in params]


class ProbeThenCorrect(TextOracleAgent):
    """The text oracle, each of its executes preceded by one probe per compared argument (that
    argument changed), sent the ways ``named`` lists (every unnamed probe first). ``probes`` keeps,
    for the tests, each probe's task, changed key, whether it named the matter, the minute it was
    made, the first line of its reply and the task the world recorded it against (None: nothing
    was attempted)."""

    def __init__(self, name: str = "probe-then-correct", named: tuple[bool, ...] = (False, True)):
        self.name, self.named = name, named

    def reset(self, env: Any, seed: int) -> None:
        super().reset(env, seed)
        self.probes: list[dict] = []
        self._sent: dict | None = None  # the probe whose reply the next observation holds
        self._log_at = 0

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if self._sent is not None:
            tried = [e for e in self.world.log[self._log_at:] if e["type"] == "execute"]
            self._sent.update(reply=obs.splitlines()[0] if obs else "", against=tried[0]["task"] if tried else None)
            self.probes.append(self._sent)
            self._sent = None
        if not self.pending:
            choice = self.decide()
            calls = self._calls(*choice) if choice else [{"tool": "wait", "arguments": {}}]
            self.pending.extend(c for call in calls for c in self._probed(call, choice))
        call = self.pending.popleft()
        self._sent, self._log_at = call.pop("probe", None), len(self.world.log)
        return json.dumps(call)

    def _probed(self, call: dict, choice: tuple | None) -> list[dict]:
        """The call, preceded by its probes where it is the chosen task's action."""
        task = choice[1] if choice else None
        action = task.spec.action if task is not None else None
        if action is None or call["tool"] != action.tool:
            return [call]
        own = {k: v for k, v in call["arguments"].items() if k != "about"}
        probes = [{"tool": action.tool, "arguments": {**own, key: other_value(own[key]),
                                                       **({"about": task.spec.id} if named else {})},
                   "probe": {"task": task.spec.id, "key": key, "named": named, "at": self.world.now}}
                  for named in self.named for key in compared_keys(self.world, task) if key in own]
        return [*probes, call]


def _member(name: str, named: tuple[bool, ...]) -> Callable[[], ProbeThenCorrect]:
    return lambda: ProbeThenCorrect(name, named)


PROBE_ADVERSARIES: dict[str, Callable[[], ProbeThenCorrect]] = {name: _member(name, named) for name, named in WAYS.items()}
