"""Semantic checks a typed model cannot express: references, times, reachability, TA window.

Each check yields ``(path, expectation)``; the loader reports the first with the file name.
"""

from __future__ import annotations

from collections.abc import Iterator

from .models import PERSONAS, Depth, Scenario, Task
from .timeline import format_at

MIN_TASKS, MAX_TASKS = 10, 19
Problem = tuple[str, str]


def semantic_errors(s: Scenario) -> list[Problem]:
    untimed = [(f"tasks[{i}].trigger.at", f"expected the time of a {t.trigger.type}-triggered task, e.g. 'D1 09:00'")
               for i, t in enumerate(s.tasks) if t.trigger.type in ("user", "agent") and t.trigger.at is None]
    if untimed:  # the checks below need every task's trigger time
        return untimed
    checks = (_unique_ids, _times, _references, _tasks, _reachability, _ta_window)
    return [problem for check in checks for problem in check(s)]


def trigger_minute(s: Scenario, task: Task) -> int:
    if task.trigger.type == "event":
        return next(e.at for e in s.events if e.id == task.trigger.event)
    return task.trigger.at  # type: ignore[return-value]


def _unique_ids(s: Scenario) -> Iterator[Problem]:
    for field in ("records", "tools", "events", "tasks", "resources"):
        seen: set[str] = set()
        for i, item in enumerate(getattr(s, field)):
            key = item.name if field == "tools" else item.id
            if key in seen:
                yield f"{field}[{i}]", f"expected a unique id, {key!r} is used twice"
            seen.add(key)


def _times(s: Scenario) -> Iterator[Problem]:
    end = s.end_minute
    last = format_at(end - 1)

    def inside(path: str, minute: int | None) -> Iterator[Problem]:
        if minute is not None and not 0 <= minute < end:
            yield path, f"expected a time inside the scenario (D1 00:00 to {last}), got {format_at(minute)}"

    def interval(path: str, iv) -> Iterator[Problem]:
        yield from inside(f"{path}.start", iv.start)
        yield from inside(f"{path}.end", iv.end - 1)
        if iv.end <= iv.start:
            yield path, f"expected end after start, got {format_at(iv.start)} → {format_at(iv.end)}"

    for i, iv in enumerate(s.user.busy):
        yield from interval(f"user.busy[{i}]", iv)
    for r, res in enumerate(s.resources):
        for i, iv in enumerate(res.user_busy):
            yield from interval(f"resources[{r}].user_busy[{i}]", iv)
    for i, rec in enumerate(s.records):
        yield from inside(f"records[{i}].appears", rec.appears)
    for i, ev in enumerate(s.events):
        yield from inside(f"events[{i}].at", ev.at)
    for i, task in enumerate(s.tasks):
        yield from inside(f"tasks[{i}].trigger.at", task.trigger.at)
        yield from inside(f"tasks[{i}].deadline", task.deadline - 1)
    yield from interval("ta_window", s.ta_window)


def _references(s: Scenario) -> Iterator[Problem]:
    records = {r.id for r in s.records}
    tools = {t.name: t for t in s.tools}
    execute_tools = {n for n, t in tools.items() if t.depth == "execute"}
    events = {e.id for e in s.events}
    resources = {r.id for r in s.resources}

    def ref(path: str, value: str | None, known, what: str) -> Iterator[Problem]:
        if value is not None and value not in known:
            yield path, f"expected the id of one of the scenario's {what}, got {value!r}"

    for p, persona in s.personas.items():
        for i, tool in enumerate(persona.delegates):
            yield from ref(f"personas.{p}.delegates[{i}]", tool, execute_tools, "execute tools")
    for i, tool in enumerate(s.always_approval):
        yield from ref(f"always_approval[{i}]", tool, execute_tools, "execute tools")
    for i, ev in enumerate(s.events):
        for j, rec in enumerate(ev.reveals):
            yield from ref(f"events[{i}].reveals[{j}]", rec, records, "records")
        if ev.policy_change:
            change = ev.policy_change
            for j, tool in enumerate(change.require_approval):
                yield from ref(f"events[{i}].policy_change.require_approval[{j}]", tool, execute_tools, "execute tools")
            for j, tool in enumerate(change.delegate):
                yield from ref(f"events[{i}].policy_change.delegate[{j}]", tool, execute_tools, "execute tools")
    for i, task in enumerate(s.tasks):
        path = f"tasks[{i}]"
        yield from ref(f"{path}.trigger.event", task.trigger.event, events, "events")
        for j, rec in enumerate(task.evidence):
            yield from ref(f"{path}.evidence[{j}]", rec, records, "records")
            if rec in records and (task.trigger.type != "event" or task.trigger.event in events):
                seen = _appears(s, rec)
                if seen > trigger_minute(s, task):
                    yield (f"{path}.evidence[{j}]",
                           f"expected evidence that exists when the task is triggered; {rec!r} appears at {format_at(seen)}")
        yield from ref(f"{path}.work.resource", task.work.resource, resources, "resources")
        if task.action:
            yield from ref(f"{path}.action.tool", task.action.tool, execute_tools, "execute tools")
        evidence = set(task.evidence)
        for j, fact in enumerate(task.facts):
            yield from ref(f"{path}.facts[{j}].source", fact.source, records, "records")
            yield from _keywords_in_text(f"{path}.facts[{j}]", fact)
            yield from _in_evidence(f"{path}.facts[{j}].source", fact.source, evidence, records)
        for j, fact in enumerate(task.constraints.must_include):
            where = f"{path}.constraints.must_include[{j}]"
            yield from ref(f"{where}.source", fact.source, records, "records")
            yield from _keywords_in_text(where, fact)
            yield from _in_evidence(f"{where}.source", fact.source, evidence, records)
            record = next((r for r in s.records if r.id == fact.source), None)
            if record is not None and not any(n in (record.title + " " + record.text).lower() for n in fact.needles()):
                yield where, f"expected the required text to appear in its source record {fact.source!r}"
        for j, claim in enumerate(task.constraints.must_not_include):
            where = f"{path}.constraints.must_not_include[{j}].refuted_by"
            yield from ref(where, claim.refuted_by, records, "records")
            yield from _in_evidence(where, claim.refuted_by, evidence, records)
    shares = s.ta_window.shares
    if shares != "user_time":
        yield from ref("ta_window.shares", shares, resources, "resources (or 'user_time')")


def _in_evidence(path: str, record: str, evidence: set[str], records: set[str]) -> Iterator[Problem]:
    """A fact is grounded only if the agent can read its record while working on the task."""
    if record in records and record not in evidence:
        yield path, f"expected {record!r} among the task's evidence records"


def _keywords_in_text(path: str, fact) -> Iterator[Problem]:
    """Keywords are alternative phrasings the judge accepts; at least one must occur in the
    fact's own text, or work that states the fact exactly would not be recognised."""
    if fact.keywords and not any(k.lower() in fact.text.lower() for k in fact.keywords):
        yield (f"{path}.keywords",
               f"expected at least one keyword to occur in the fact's own text {fact.text!r}, got {fact.keywords}")


def _appears(s: Scenario, record: str) -> int:
    """When a record first exists: its own ``appears`` time or the first event that reveals it."""
    rec = next(r for r in s.records if r.id == record)
    times = [rec.appears if rec.appears is not None else (0 if not any(record in e.reveals for e in s.events) else None)]
    times += [e.at for e in s.events if record in e.reveals]
    return min(t for t in times if t is not None)


def _tasks(s: Scenario) -> Iterator[Problem]:
    if not MIN_TASKS <= len(s.tasks) <= MAX_TASKS:
        yield "tasks", f"expected {MIN_TASKS}–{MAX_TASKS} tasks, got {len(s.tasks)}"
    task_ids = {t.id for t in s.tasks}
    for i, task in enumerate(s.tasks):
        path = f"tasks[{i}]"
        kind = task.trigger.type
        if kind == "event" and task.trigger.event is None:
            yield f"{path}.trigger.event", "expected the id of the event that triggers the task"
        if kind in ("user", "agent") and task.trigger.at is None:
            yield f"{path}.trigger.at", f"expected the time of a {kind}-triggered task, e.g. 'D1 09:00'"
        if kind == "event" and task.trigger.event not in {e.id for e in s.events}:
            continue  # reported as a dangling reference
        start = trigger_minute(s, task)
        if task.deadline <= start:
            yield f"{path}.deadline", f"expected a deadline after the trigger ({format_at(start)}), got {format_at(task.deadline)}"
        for p in PERSONAS:
            exp = task.expect.get(p)
            if exp is None:
                yield f"{path}.expect", f"expected an expectation for persona {p!r}"
                continue
            if exp.depth == "execute" and task.action is None:
                yield f"{path}.expect.{p}.depth", "expected an action on a task whose expected depth is execute"
            if exp.approval and exp.depth != "execute":
                yield f"{path}.expect.{p}.approval", "approval applies to depth execute only"
            if exp.depth == "execute" and not exp.approval and task.action is not None:
                tool = task.action.tool
                if tool in s.always_approval or tool not in s.personas[p].delegates:
                    yield (f"{path}.expect.{p}.approval",
                           f"expected approval: true, {p} does not delegate {tool!r} (see personas.{p}.delegates and always_approval)")
        noop = [p for p in PERSONAS if p in task.expect and task.expect[p].depth == "noop"]
        if noop and task.work.units:
            yield f"{path}.work.units", "expected 0 work units on a task whose right behaviour is NOOP"
        for j, cond in enumerate(task.requires):
            if cond.task not in task_ids:
                yield f"{path}.requires[{j}].task", f"expected the id of one of the scenario's tasks, got {cond.task!r}"
            elif cond.task == task.id:
                yield f"{path}.requires[{j}].task", "a task cannot require itself"


def _reachable_states(task: Task) -> set[str]:
    """States some persona's expected behaviour leads to (the oracle's branches)."""
    states = {"started"} if task.work.units else set()
    for exp in task.expect.values():
        depth = Depth.parse(exp.depth)
        if depth >= Depth.PREPARE:
            states.add("started")
        if depth >= Depth.SUGGEST:
            states.add("presented")
        if depth == Depth.EXECUTE and not exp.declines:
            states |= {"approved", "executed"} if exp.approval else {"executed"}
    return states


def _reachability(s: Scenario) -> Iterator[Problem]:
    by_id = {t.id: t for t in s.tasks}
    order = {t.id: i for i, t in enumerate(s.tasks)}
    for i, task in enumerate(s.tasks):
        for j, cond in enumerate(task.requires):
            required = by_id.get(cond.task)
            if required is None or required.id == task.id:
                continue
            if cond.state not in _reachable_states(required):
                yield (f"tasks[{i}].requires[{j}]",
                       f"expected a reachable condition: no persona's expected behaviour brings {cond.task!r} to {cond.state!r}")
            elif order[cond.task] > i:
                yield f"tasks[{i}].requires[{j}]", f"expected {cond.task!r} to be listed before the task that requires it"


def _ta_window(s: Scenario) -> Iterator[Problem]:
    w = s.ta_window
    ids = {t.id: t for t in s.tasks}
    for field in ("urgent", "competing"):
        if getattr(w, field) not in ids:
            yield f"ta_window.{field}", f"expected the id of one of the scenario's tasks, got {getattr(w, field)!r}"
    if w.urgent == w.competing:
        yield "ta_window.competing", "expected two different tasks in the TA window"
    if w.urgent in ids and w.competing in ids:
        for field in ("urgent", "competing"):
            task = ids[getattr(w, field)]
            if task.requires:
                yield f"ta_window.{field}", "expected an unconditional task: the TA window is scored on every run"
            if task.trigger.type != "event" or task.trigger.event in {e.id for e in s.events}:
                if trigger_minute(s, task) > w.start:
                    yield f"ta_window.{field}", f"expected {task.id!r} to be triggered by the window's start ({format_at(w.start)})"
        urgent, competing = ids[w.urgent], ids[w.competing]
        if urgent.deadline > w.end:
            yield "ta_window.urgent", f"expected the urgent task's deadline inside the window (by {format_at(w.end)})"
        if competing.deadline <= w.end:
            yield "ta_window.competing", f"expected the competing task to be able to wait: deadline after {format_at(w.end)}"
