"""The world's tools, as the text/tool face calls them (JSON arguments, text results).

Generic tools (read and list records, private notes, messages, approval requests, follow-ups,
deferral, allocation) sit beside the scenario's own domain tools. Each call that concerns a task
is attributed to at most one task, deterministically, from what it says and does
(``attribute``); the task's depth, trust and TA bookkeeping then follow the same rules as the
structured face's verbs.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import TYPE_CHECKING, Any

from ..spec import Depth, Scenario
from ..spec.timeline import format_at, parse_at
from .user import Decision

if TYPE_CHECKING:
    from .world import TaskState, World

_STR = {"type": "string"}
GENERIC_TOOLS: dict[str, dict[str, Any]] = {
    "list_records": {"description": "List the records you can see (id, kind, title).",
                     "properties": {"kind": {**_STR, "description": "only records of this kind"}}, "required": []},
    "read_record": {"description": "Read one record in full.",
                    "properties": {"record_id": _STR}, "required": ["record_id"]},
    "write_note": {"description": "Write a private working note (prepares work; the user does not see it).",
                   "properties": {"text": _STR}, "required": ["text"]},
    "message_user": {"description": "Send the user a message: a result, a suggestion or a question.",
                     "properties": {"text": _STR}, "required": ["text"]},
    "request_approval": {
        "description": "Ask the user to approve actions before you take them. List every action explicitly.",
        "properties": {"message": _STR, "actions": {
            "type": "array", "description": "the actions, each {\"tool\": name, \"args\": {...}}",
            "items": {"type": "object", "properties": {"tool": _STR, "args": {"type": "object"}},
                      "required": ["tool"]}}},
        "required": ["message", "actions"]},
    "schedule_followup": {"description": "Be woken at a later time, e.g. 'D3 09:00'.",
                          "properties": {"at": _STR, "note": _STR}, "required": ["at"]},
    "defer_task": {"description": "Explicitly postpone a piece of work, with when and how you will pick it up.",
                   "properties": {"what": _STR, "until": {**_STR, "description": "e.g. 'D3 09:00'"}, "plan": _STR},
                   "required": ["what", "plan"]},
    "allocate_resource": {
        "description": "Reserve compute (a resource id) from a start time to run a piece of work there, "
                       "e.g. overnight while the user sleeps.",
        "properties": {"what": _STR, "resource": _STR, "start": {**_STR, "description": "e.g. 'D2 01:00'"}},
        "required": ["what", "resource", "start"]},
    "wait": {"description": "Take no further action now; wait for the next event.", "properties": {},
             "required": []},
}
GENERIC_DEPTH = {"list_records": "prepare", "read_record": "prepare", "write_note": "prepare",
                 "message_user": "suggest", "request_approval": "suggest", "schedule_followup": "prepare",
                 "defer_task": "prepare", "allocate_resource": "prepare", "wait": "noop"}


class ToolError(ValueError):
    """A call the world cannot carry out; its message goes back to the agent."""


def tool_schemas(scenario: Scenario) -> list[dict]:
    """Every tool of the scenario's text face in the OpenAI function-calling format."""
    out = []
    for name, spec in GENERIC_TOOLS.items():
        out.append(_function(name, spec["description"], spec["properties"], spec["required"]))
    for tool in scenario.tools:
        if tool.name in GENERIC_TOOLS:
            continue
        props = {k: {"type": p.type, "description": p.description} for k, p in tool.params.items()}
        desc = f"{tool.description} [depth: {tool.depth}; {tool.touches}]"
        out.append(_function(tool.name, desc, props, list(props) if tool.depth == "execute" else []))
    return out


def _function(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


def parse_when(scenario: Scenario, text: str) -> int:
    """``"D3 09:00"`` or an ISO date-time in the scenario's calendar → scenario minutes."""
    text = str(text).strip()
    try:
        return parse_at(text)
    except ValueError:
        pass
    try:
        when = dt.datetime.fromisoformat(text.replace("T", " "))
    except ValueError:
        raise ToolError(f"expected a time like 'D3 09:00' or '{scenario.start_date} 09:00', got {text!r}") from None
    days = (when.date() - scenario.start_date).days
    return days * 1440 + when.hour * 60 + when.minute


def _needles(task) -> list[str]:
    words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9-]{4,}", task.title)]
    facts = [n for f in task.facts for n in f.needles()]
    codes = [n for f in task.constraints.must_include for n in f.needles()]
    return words + facts + codes


def _args_match(expected: dict, given: dict) -> float:
    """Share of the expected action's arguments the call got right (compared as JSON text)."""
    if not expected:
        return 1.0
    norm = lambda v: json.dumps(v, sort_keys=True).lower()  # noqa: E731
    return sum(1 for k, v in expected.items() if k in given and norm(given[k]) == norm(v)) / len(expected)


class ToolActions:
    """Mixin of ``World``: the text/tool face's calls."""

    def attribute(self: World, text: str = "", tool: str | None = None, args: dict | None = None) -> TaskState | None:
        """The one open task a call concerns, or None. An EXECUTE tool goes to the open task whose
        action uses it and is not done yet (best argument match); anything else to the open task whose title words,
        reference facts and codes the text mentions most. Ties go to the earliest deadline."""
        open_tasks = [t for t in self.tasks if t.active and not t.final]
        if tool is not None and tool in self.tools and self.tools[tool].depth == "execute":
            # A task whose action is done cannot license it again: a second order is a new action.
            candidates = [t for t in open_tasks if t.spec.action and t.spec.action.tool == tool and not t.executed]
            scored = [(_args_match(t.spec.action.args, args or {}), t) for t in candidates]
        else:
            lowered = text.lower()
            scored = [(sum(1 for n in _needles(t.spec) if n in lowered), t) for t in open_tasks]
            scored = [(s, t) for s, t in scored if s > 0]
        if not scored:
            return None
        return max(scored, key=lambda st: (st[0], -st[1].spec.deadline, -st[1].index))[1]

    def log_tool_error(self: World, message: str) -> None:
        self._record("tool_error", error=message[:500])

    def call_tool(self: World, name: str, args: dict) -> str:
        """Carry out one tool call at the current decision point; returns the result text."""
        if not isinstance(args, dict):
            raise ToolError(f"{name}: expected a JSON object of arguments, got {type(args).__name__}")
        handler = getattr(self, f"_tool_{name}", None)
        if handler is not None and name in GENERIC_TOOLS:
            return handler(args)
        tool = self.tools.get(name)
        if tool is None:
            raise ToolError(f"unknown tool {name!r}; the tools are listed in the tool schemas")
        if tool.depth == "execute":
            return self._tool_execute(name, args)
        if tool.depth == "suggest":
            return self._tool_message_user({"text": f"{name}: {json.dumps(args)}"})
        return self._search_records(args)

    # ------------------------------------------------------------------ reading and notes
    def _tool_list_records(self: World, args: dict) -> str:
        kind = args.get("kind")
        rows = [f"{r.id} ({r.kind}): {r.title}" for r in self.scenario.records
                if r.id in self.appeared and (kind is None or r.kind == kind)]
        return "\n".join(rows) or "No records."

    def _tool_read_record(self: World, args: dict) -> str:
        rid = _required(args, "record_id")
        record = self.records.get(rid)
        if record is None or rid not in self.appeared:
            raise ToolError(f"read_record: no record {rid!r} is visible; list_records shows what is")
        self.observed.add(rid)
        self._record("read", record=rid)
        fields = f"\nfields: {json.dumps(record.fields, default=str)}" if record.fields else ""
        return f"{record.title} ({record.kind})\n{record.text}{fields}"

    def _search_records(self: World, args: dict) -> str:
        terms = [str(v).lower() for v in args.values() if str(v).strip()]
        hits = [r for r in self.scenario.records if r.id in self.appeared
                and any(t in (r.title + " " + r.text).lower() for t in terms)][:3]
        for r in hits:
            self.observed.add(r.id)
        return "\n\n".join(f"{r.id}: {r.title}\n{r.text}" for r in hits) or "No matching records."

    def _tool_write_note(self: World, args: dict) -> str:
        text = _required(args, "text")
        task = self.attribute(text)
        self._record("action", verb="note", task=task.spec.id if task else None)
        if task is None:
            return "Noted."
        self._note_ta_text("work", task)
        task.notes.append(text)
        task.started = True
        if task.units_done < task.spec.work.units:
            self._work_unit(task)
        self._deepen(task, Depth.PREPARE)
        self.dirty.add(task.index)
        return "Noted."

    # ------------------------------------------------------------------ to the user
    def _tool_message_user(self: World, args: dict) -> str:
        text = _required(args, "text")
        task = self.attribute(text)
        self._record("action", verb="message", task=task.spec.id if task else None, text=text)
        if task is not None:
            self._note_ta_text("work", task)
            self._show(task, text)
        return "Delivered." if self.schedule.available(self.now) else "Queued: the user is not available now."

    def _tool_request_approval(self: World, args: dict) -> str:
        message = _required(args, "message")
        actions = args.get("actions")
        if not isinstance(actions, list) or not actions:
            raise ToolError("request_approval: expected 'actions', a non-empty list of {\"tool\": ..., \"args\": {...}}")
        requested = tuple(str(a.get("tool") if isinstance(a, dict) else a) for a in actions)
        tool_args = next((a.get("args") or {} for a in actions if isinstance(a, dict)), {})
        task = next((t for t in (self.attribute(tool=r, args=tool_args) for r in requested) if t), None)
        task = task or self.attribute(message)
        self._record("action", verb="request_approval", task=task.spec.id if task else None, text=message,
                     requested=list(requested))
        if task is None:
            decision = Decision("", requested, "decline", "unrecognised_action", self.now, self.trust.value,
                                self.trust.value)
            self._record("decision", **decision.to_dict())
            return self.reply(decision, "that")
        self._note_ta_text("work", task)
        self._show(task, message + "\nProposed: " + json.dumps(actions))
        self._request_decision(task, requested)
        if task.approval == "pending":
            return "Request queued: the user will decide when available."
        return self.inbox[-1]

    def _show(self: World, task: TaskState, text: str) -> None:
        task.notes.append(text)
        if not task.presented:
            task.presented = True
            self._intervene(task, Depth.SUGGEST)
        self._deepen(task, Depth.SUGGEST)
        self._snapshot(task)
        self.dirty.add(task.index)

    # ------------------------------------------------------------------ changing the world
    def _tool_execute(self: World, name: str, args: dict) -> str:
        task = self.attribute(tool=name, args=args)
        self._record("action", verb="execute", task=task.spec.id if task else None, tool=name, args=args)
        if task is None:
            self._record("refused", task=None, tool=name)
            raise ToolError(f"{name}: refused — nothing the user has asked for or approved needs this")
        self._note_ta_text("execute", task)
        task.notes.append(f"{name}({json.dumps(args, sort_keys=True)})")
        task.action_match = _args_match(task.spec.action.args, args)
        before = task.executed
        self._execute(task, args)
        if not task.executed or before:
            raise ToolError(f"{name}: refused — it needs {self.scenario.user.name}'s approval first")
        return f"Done: {name}."

    # ------------------------------------------------------------------ time
    def _tool_schedule_followup(self: World, args: dict) -> str:
        at = parse_when(self.scenario, _required(args, "at"))
        if not self.now < at < self.scenario.end_minute:
            raise ToolError(f"schedule_followup: expected a time after now ({format_at(self.now)}) "
                            f"and before the run ends")
        self._wake_at(at, str(args.get("note", "")))
        self._record("followup", at=at)
        return f"Follow-up set for {format_at(at)}."

    def _tool_defer_task(self: World, args: dict) -> str:
        what, plan = _required(args, "what"), _required(args, "plan")
        task = self.attribute(what + " " + plan)
        until = parse_when(self.scenario, args["until"]) if args.get("until") else None
        self._record("action", verb="defer", task=task.spec.id if task else None, until=until, plan=plan)
        if task is None:
            return "Deferred (not linked to any open matter)."
        self._note_ta_text("defer", task)
        task.deferred = True
        task.notes.append(f"Deferred: {plan}")
        if until is None:
            task.continuation = 0.5  # a plan without a time
            return "Deferred without a time."
        work = task.spec.work
        duration = work.minutes * max(1, work.units - task.units_done)
        feasible = (self.now < until and until + duration <= task.spec.deadline
                    and self.schedule.available(until) and self.resource_free(work.resource, until, until + duration))
        task.continuation = 1.0 if feasible else 0.0
        if feasible:
            self._set_followup(task, until)
        self.dirty.add(task.index)
        return f"Deferred to {format_at(until)}." + ("" if feasible else " (That time does not work before the deadline.)")

    def _tool_allocate_resource(self: World, args: dict) -> str:
        what, resource = _required(args, "what"), _required(args, "resource")
        start = parse_when(self.scenario, _required(args, "start"))
        task = self.attribute(what)
        if task is None or task.spec.work.resource != resource:
            raise ToolError(f"allocate_resource: no open work needs {resource!r} — say what the work is")
        work = task.spec.work
        duration = work.minutes * max(1, work.units - task.units_done)
        if task.units_done >= work.units or task.allocated:
            raise ToolError("allocate_resource: that work is already done or allocated")
        if start < self.now or start + duration > task.spec.deadline or not self.resource_free(resource, start, start + duration):
            raise ToolError(f"allocate_resource: {resource} is not free for {duration} minutes from {format_at(start)} "
                            f"before the deadline")
        self._record("action", verb="allocate", task=task.spec.id, start=start)
        self._note_ta_text("allocate", task, start)
        in_sleep = self.schedule.sleep.contains(start) and self.schedule.sleep.contains(start + duration - 1)
        self._run_allocation(task, start, duration, in_sleep)
        return f"Reserved {resource} {format_at(start)}–{format_at(start + duration)}."


def _required(args: dict, key: str) -> str:
    value = args.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ToolError(f"expected the argument {key!r}")
    return value if not isinstance(value, str) else value.strip()
