"""Semantic checks a typed model cannot express: references, times, rules, reachability, TA.

Each check yields ``(path, expectation)``; the loader reports the first with the file name.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterator

from .derive import ACTED, action_sources, fill, fill_fields, names_hold, placeholders
from .expand import resource_use, user_busy
from .meaning import in_words, leaves, mentions, when
from .models import PERSONAS, Scenario, Task, When
from .timeline import MINUTES_PER_DAY, format_at

MIN_TASKS, MAX_TASKS = 10, 19
MAX_CATEGORIES = 8
Problem = tuple[str, str]

# States a task reaches under each rule when the agent does what the user wants.
RULE_STATES = {"prepare": {"started", "done"}, "suggest": {"started", "done", "presented"},
               "approve": {"started", "done", "presented", "approved", "executed", "begun"},
               "execute": {"started", "done", "executed", "begun"}}


def semantic_errors(s: Scenario) -> list[Problem]:
    checks = (_unique_ids, _times, _categories, _references, _tasks, _reachability, _ta_decisions,
              _drawn_rules_stated, _descriptions_state_no_depth, _prose_leaves_drawn_rules_to_placeholders,
              _policy_changes_state_their_rules,
              _distractors_alone, _declared_arguments, _reference_values_on_record, _argument_windows,
              _time_limits_on_record,
              _conditions_on_tasks, _derived_texts, _names_on_record)
    return [problem for check in checks for problem in check(s)]


def trigger_minute(s: Scenario, task: Task) -> int:
    """When the task triggers at the latest (an event's own time, or the trigger's ``at``)."""
    if task.trigger.type == "event":
        return next((e.at for e in s.events if e.id == task.trigger.event), 0)
    return task.trigger.at if task.trigger.at is not None else 0


def rules_of(s: Scenario, persona: str, category: str) -> set[str]:
    """Every rule this persona may hold for the category in some run: stated, variant or changed."""
    rules = {s.personas[persona].rules.get(category)} | set(s.variants.rules.get(persona, {}).get(category, []))
    for ev in s.events:
        change = ev.policy_change
        if change and persona in change.personas and category in change.rules:
            rules.add(change.rules[category])
    return {r for r in rules if r is not None}


def rule_at(s: Scenario, persona: str, category: str, minute: int, rules: dict[str, str] | None = None) -> str | None:
    """The persona's rule for the category at ``minute``: the run's rule (``rules``: the one a seed
    drew; default the stated one) as the scenario's unconditional feedback before then changed it.
    (A revocation the agent brings on is not foreseen: it depends on the run.)"""
    rule = (rules if rules is not None else s.personas[persona].rules).get(category)
    for ev in sorted(s.events, key=lambda e: e.at):
        change = ev.policy_change
        if change and ev.when is None and ev.at <= minute and persona in change.personas and category in change.rules:
            rule = change.rules[category]
    return rule


# The rules whose wanted play puts a matter to the user (a message, a request for their OK);
# under "prepare" the work stays private and under "execute" the action is delegated and silent.
PUT_TO_USER = frozenset({"suggest", "approve"})


def through_user(s: Scenario, d) -> bool:
    """Does the decision's competing side reach what the clash is about only through the user?
    Over the user's time, always; over a resource, where the competing work is the user's own to
    do (no compute of its own, no action the agent takes: told, the user does it on the resource)."""
    if d.shares == "user_time":
        return True
    competing = next((t for t in s.tasks if t.id == d.competing), None)
    return competing is not None and competing.work.resource is None and competing.action is None


def contested(s: Scenario, d, persona: str, rules: dict[str, str] | None = None) -> bool:
    """Is the TA decision a clash for this persona (and the run's ``rules``)? Where the competing
    side reaches the clash only through the user (``through_user``), it competes only with what is
    put to the user inside the window: if its wanted play puts nothing to them (its rule at the
    window's start is prepare: private work; or execute: a delegated, silent action), nothing it
    does there competes. And over the user's time the window is the urgent side's only chance by
    the user's time only where its play needs them: silent, it must be its chance by its deadline
    or its compute. Either failing, the decision is no decision for that persona. A competing side
    that runs on the shared resource itself contests it under every persona."""
    if not through_user(s, d):
        return True
    tasks = {t.id: t for t in s.tasks}
    competing, urgent = tasks[d.competing], tasks[d.urgent]
    if rule_at(s, persona, competing.category, d.start, rules) not in PUT_TO_USER:
        return False
    if d.shares != "user_time" or rule_at(s, persona, urgent.category, d.start, rules) in PUT_TO_USER:
        return True
    return urgent.deadline <= d.end or _opportunity(s, urgent, d.end, "") is None


def _unique_ids(s: Scenario) -> Iterator[Problem]:
    for field in ("records", "tools", "events", "tasks", "resources", "ta_decisions"):
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

    def weekly(path: str, block) -> Iterator[Problem]:
        if block.end <= block.start:
            yield f"{path}.end", "expected end after start (a weekly block does not cross midnight)"
        for j, day in enumerate(block.skip):
            if day > s.days:
                yield f"{path}.skip[{j}]", f"expected a day of the scenario (D1–D{s.days}), got D{day}"

    for i, iv in enumerate(s.user.busy):
        yield from interval(f"user.busy[{i}]", iv)
    for i, block in enumerate(s.user.weekly):
        yield from weekly(f"user.weekly[{i}]", block)
    for r, res in enumerate(s.resources):
        for i, iv in enumerate(res.user_busy):
            yield from interval(f"resources[{r}].user_busy[{i}]", iv)
        for i, block in enumerate(res.weekly):
            yield from weekly(f"resources[{r}].weekly[{i}]", block)
        for i, iv in enumerate(res.consumed):
            yield from interval(f"resources[{r}].consumed[{i}]", iv)
        if (res.user_busy or res.weekly) and not res.complaint.strip():
            yield f"resources[{r}].complaint", "expected the user's words when agent work slows their own use"
    for i, rec in enumerate(s.records):
        yield from inside(f"records[{i}].appears", rec.appears)
        last_at = rec.appears or 0
        for j, version in enumerate(rec.versions):
            yield from inside(f"records[{i}].versions[{j}].at", version.at)
            if version.at <= last_at:
                yield f"records[{i}].versions[{j}].at", "expected versions in time order, after the record appears"
            last_at = version.at
    for i, ev in enumerate(s.events):
        yield from inside(f"events[{i}].at", ev.at)
    for i, task in enumerate(s.tasks):
        yield from inside(f"tasks[{i}].trigger.at", task.trigger.at)
        yield from inside(f"tasks[{i}].trigger.earliest", task.trigger.earliest)
        yield from inside(f"tasks[{i}].deadline", task.deadline - 1)
        if task.needed_by is not None and not trigger_minute(s, task) < task.needed_by <= task.deadline:
            yield f"tasks[{i}].needed_by", "expected a time after the trigger and not after the deadline"
    for i, d in enumerate(s.ta_decisions):
        yield from interval(f"ta_decisions[{i}]", d)


def _categories(s: Scenario) -> Iterator[Problem]:
    if len(s.categories) > MAX_CATEGORIES:
        yield "categories", f"expected at most {MAX_CATEGORIES} categories (the structured face's rule table), got {len(s.categories)}"
    for p, persona in s.personas.items():
        for c in persona.rules:
            if c not in s.categories:
                yield f"personas.{p}.rules.{c}", f"expected one of the scenario's categories {sorted(s.categories)}"
        for c in s.categories:
            if c not in persona.rules:
                yield f"personas.{p}.rules", f"expected a rule for every category; {c!r} has none"
    for i, ev in enumerate(s.events):
        if ev.policy_change:
            for c in ev.policy_change.rules:
                if c not in s.categories:
                    yield f"events[{i}].policy_change.rules.{c}", f"expected one of the scenario's categories {sorted(s.categories)}"
    for p, by_category in s.variants.rules.items():
        for c in by_category:
            if c not in s.categories:
                yield f"variants.rules.{p}.{c}", f"expected one of the scenario's categories {sorted(s.categories)}"


def _references(s: Scenario) -> Iterator[Problem]:
    records = {r.id: r for r in s.records}
    tools = {t.name: t for t in s.tools}
    execute_tools = {n for n, t in tools.items() if t.depth == "execute"}
    events = {e.id for e in s.events}
    resources = {r.id for r in s.resources}
    tasks = {t.id for t in s.tasks}

    def ref(path: str, value: str | None, known, what: str) -> Iterator[Problem]:
        if value is not None and value not in known:
            yield path, f"expected the id of one of the scenario's {what}, got {value!r}"

    def when(path: str, cond: When | None) -> Iterator[Problem]:
        if cond is not None:
            yield from ref(f"{path}.task", cond.task, tasks, "tasks")

    for i, rec in enumerate(s.records):
        yield from when(f"records[{i}].when", rec.when)
    for i, ev in enumerate(s.events):
        for j, rec in enumerate(ev.reveals):
            yield from ref(f"events[{i}].reveals[{j}]", rec, records, "records")
        yield from when(f"events[{i}].when", ev.when)
    for i, task in enumerate(s.tasks):
        path = f"tasks[{i}]"
        yield from ref(f"{path}.category", task.category, s.categories, "categories")
        yield from ref(f"{path}.trigger.event", task.trigger.event, events, "events")
        for j, rec in enumerate(task.evidence):
            yield from ref(f"{path}.evidence[{j}]", rec, records, "records")
            if rec in records and (task.trigger.type != "event" or task.trigger.event in events):
                seen = _appears(s, rec)
                if seen is not None and seen > trigger_minute(s, task):
                    yield (f"{path}.evidence[{j}]",
                           f"expected evidence that exists when the task is triggered; {rec!r} appears at {format_at(seen)}")
        yield from ref(f"{path}.work.resource", task.work.resource, resources, "resources")
        yield from _run_category(s, f"{path}.work.category", task)
        if task.action:
            yield from ref(f"{path}.action.tool", task.action.tool, execute_tools, "execute tools")
            for j, name in enumerate(task.action.free_text):
                if name not in task.action.args:
                    yield f"{path}.action.free_text[{j}]", f"expected one of the action's arguments {sorted(task.action.args)}"
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
            record = records.get(fact.source)
            if record is not None and not any(n in _all_text(record).lower() for n in fact.needles()):
                yield where, f"expected the required text to appear in its source record {fact.source!r}"
        for j, claim in enumerate(task.constraints.must_not_include):
            where = f"{path}.constraints.must_not_include[{j}].refuted_by"
            yield from ref(where, claim.refuted_by, records, "records")
            yield from _in_evidence(where, claim.refuted_by, evidence, records)
    for i, tool in enumerate(s.tools):
        for j, rec in enumerate(tool.reads):
            yield from ref(f"tools[{i}].reads[{j}]", rec, records, "records")
    for i, d in enumerate(s.ta_decisions):
        if d.shares != "user_time":
            yield from ref(f"ta_decisions[{i}].shares", d.shares, resources, "resources (or 'user_time')")
    for i, task_id in enumerate(s.variants.distractors):
        task = next((t for t in s.tasks if t.id == task_id), None)
        if task is None:
            yield f"variants.distractors[{i}]", f"expected the id of one of the scenario's tasks, got {task_id!r}"
        elif not task.noop or task.requires or any(task_id in (c.task for c in t.requires) for t in s.tasks):
            yield f"variants.distractors[{i}]", "expected an unconditional NOOP task that no other task requires"


def _run_category(s: Scenario, path: str, task: Task) -> Iterator[Problem]:
    """A run that is a matter of its own: on a resource, of a task with no action of its own (the
    user's answer on the task is the answer on its run), and one every persona delegates or
    approves (a run the user only wants suggested could never produce its results)."""
    category = task.work.category
    if category is None:
        return
    if category not in s.categories:
        yield path, f"expected the id of one of the scenario's categories, got {category!r}"
    elif task.work.resource is None:
        yield path, "expected work on a resource (work.resource): only a run on a resource is a matter of its own"
    elif task.action is not None:
        yield path, "expected a task without an action: the user's answer on the task would be ambiguous"
    else:
        for persona in s.personas:
            wrong = sorted(set(rules_of(s, persona, category)) - {"approve", "execute"})
            if wrong:
                yield path, f"expected every persona to approve or delegate the run; {persona} may {wrong[0]} it"


def _all_text(record) -> str:
    return " ".join([record.title, record.text, *(v.text for v in record.versions)])


def _in_evidence(path: str, record: str, evidence: set[str], records) -> Iterator[Problem]:
    """A fact is grounded only if the agent can read its record while working on the task."""
    if record in records and record not in evidence:
        yield path, f"expected {record!r} among the task's evidence records"


def _keywords_in_text(path: str, fact) -> Iterator[Problem]:
    """Keywords are alternative phrasings the judge accepts; at least one must occur in the
    fact's own text, or work that states the fact exactly would not be recognised."""
    if fact.keywords and not any(k.lower() in fact.text.lower() for k in fact.keywords):
        yield (f"{path}.keywords",
               f"expected at least one keyword to occur in the fact's own text {fact.text!r}, got {fact.keywords}")


def _appears(s: Scenario, record: str) -> int | None:
    """The earliest a record can exist: its own ``appears`` time or the first event that reveals
    it (None: only on a branch, when its condition holds)."""
    rec = next(r for r in s.records if r.id == record)
    revealing = [e for e in s.events if record in e.reveals]
    if revealing:  # a revealed record appears with its event, and only then
        unconditional = [e.at for e in revealing if e.when is None]
        return min(unconditional) if unconditional else None
    if rec.when is not None:
        return None
    return rec.appears if rec.appears is not None else 0


def _tasks(s: Scenario) -> Iterator[Problem]:
    if not MIN_TASKS <= len(s.tasks) <= MAX_TASKS:
        yield "tasks", f"expected {MIN_TASKS}–{MAX_TASKS} tasks, got {len(s.tasks)}"
    task_ids = {t.id for t in s.tasks}
    for i, task in enumerate(s.tasks):
        path = f"tasks[{i}]"
        kind = task.trigger.type
        if kind == "event" and task.trigger.event is None:
            yield f"{path}.trigger.event", "expected the id of the event that triggers the task"
            continue
        if kind in ("user", "agent") and task.trigger.at is None:
            yield f"{path}.trigger.at", f"expected the time of a {kind}-triggered task, e.g. 'D1 09:00'"
            continue
        if task.trigger.earliest is not None and (kind != "agent" or task.trigger.earliest >= task.trigger.at):
            yield f"{path}.trigger.earliest", "expected an agent trigger whose earliest time is before its 'at'"
        if kind == "event" and task.trigger.event not in {e.id for e in s.events}:
            continue  # reported as a dangling reference
        start = trigger_minute(s, task)
        if task.deadline <= start:
            yield f"{path}.deadline", f"expected a deadline after the trigger ({format_at(start)}), got {format_at(task.deadline)}"
        if task.category in s.categories and not task.noop:
            for p in PERSONAS:
                for rule in rules_of(s, p, task.category):
                    if rule in ("approve", "execute") and task.action is None:
                        yield (f"{path}.category", f"expected an action: persona {p!r} may hold rule {rule!r} for "
                                                   f"category {task.category!r}, which only a task with an action can meet")
        for p in task.declines:
            if "approve" not in rules_of(s, p, task.category):
                yield f"{path}.declines", f"expected personas whose rule for {task.category!r} is 'approve'; {p!r} never asks"
        if task.noop and task.action is not None:
            yield f"{path}.noop", "expected no action on a task whose right behaviour is NOOP"
        for j, cond in enumerate(task.requires):
            if cond.task not in task_ids:
                yield f"{path}.requires[{j}].task", f"expected the id of one of the scenario's tasks, got {cond.task!r}"
            elif cond.task == task.id:
                yield f"{path}.requires[{j}].task", "a task cannot require itself"


def reachable_states(s: Scenario, task: Task, persona: str | None = None, declined: bool = False) -> set[str]:
    """States the expected behaviour of some persona (or of ``persona``) brings the task to;
    with ``declined``, where the user declines what is asked of it (the run's coins say so)."""
    if task.noop:
        return {"started", "done"}
    states: set[str] = set()
    for p in ([persona] if persona else PERSONAS):
        for rule in rules_of(s, p, task.category):
            reached = set(RULE_STATES[rule])
            if rule == "approve" and (declined or p in task.declines):
                reached -= {"approved", "executed", "begun"}
            states |= reached
    return states


def _reachability(s: Scenario) -> Iterator[Problem]:
    by_id = {t.id: t for t in s.tasks}
    order = {t.id: i for i, t in enumerate(s.tasks)}
    for i, task in enumerate(s.tasks):
        for j, cond in enumerate(task.requires):
            required = by_id.get(cond.task)
            if required is None or required.id == task.id:
                continue
            if cond.state not in reachable_states(s, required):
                yield (f"tasks[{i}].requires[{j}]",
                       f"expected a reachable condition: no persona's expected behaviour brings {cond.task!r} to {cond.state!r}")
            elif order[cond.task] > i:
                yield f"tasks[{i}].requires[{j}]", f"expected {cond.task!r} to be listed before the task that requires it"
    for field in ("records", "events"):
        for i, item in enumerate(getattr(s, field)):
            cond = item.when
            if cond is None or cond.task not in by_id or cond.state in ("missed", "deferred"):
                continue
            if cond.state not in reachable_states(s, by_id[cond.task]):
                yield (f"{field}[{i}].when", f"expected a reachable condition: no persona's expected behaviour "
                                             f"brings {cond.task!r} to {cond.state!r}")


def _ta_decisions(s: Scenario) -> Iterator[Problem]:
    """A decision is a clash the agent can see and win: the urgent task's chance is the window (its
    deadline closes it, or no later opportunity exists before its deadline) — never just "due
    first" —, the competing task has a feasible later opportunity, and the demand that defines the
    clash is on record before the window opens (``shown_by``)."""
    ids = {t.id: t for t in s.tasks}
    for i, d in enumerate(s.ta_decisions):
        path = f"ta_decisions[{i}]"
        for field in ("urgent", "competing"):
            if getattr(d, field) not in ids:
                yield f"{path}.{field}", f"expected the id of one of the scenario's tasks, got {getattr(d, field)!r}"
        if d.urgent == d.competing:
            yield f"{path}.competing", "expected two different tasks in a TA decision"
        yield from _shown_before(s, path, d)
        if d.urgent not in ids or d.competing not in ids:
            continue
        urgent, competing = ids[d.urgent], ids[d.competing]
        for field, task in (("urgent", urgent), ("competing", competing)):
            if task.noop:
                yield f"{path}.{field}", "expected a task with work to do (not a NOOP task)"
            if task.trigger.type == "event" and task.trigger.event not in {e.id for e in s.events}:
                continue  # reported as a dangling reference
            when = trigger_minute(s, task)
            if field == "urgent" and when != d.start:
                yield (f"{path}.start", f"expected the window to open when the urgent task {task.id!r} is "
                                        f"triggered ({format_at(when)})")
            elif field == "competing" and when >= d.end:
                yield f"{path}.competing", f"expected {task.id!r} to be triggered before the window ends ({format_at(d.end)})"
        if urgent.deadline > d.end and _opportunity(s, urgent, d.end, d.shares) is not None:
            yield (f"{path}.urgent", f"expected the window to be the urgent task's chance: its deadline by "
                                     f"{format_at(d.end)}, or no later opportunity before its deadline "
                                     f"({format_at(urgent.deadline)}), but {format_at(_opportunity(s, urgent, d.end, d.shares))} is one")
        over = _clash_over(s, d)
        if competing.deadline <= d.end:
            yield f"{path}.competing", f"expected the competing task to be able to wait: deadline after {format_at(d.end)}"
        elif _later_slot(s, competing, over) is None:
            yield (f"{path}.competing", f"expected a feasible later opportunity for {competing.id!r}: a time after "
                                        f"{format_at(over)} when its resource is free for its work, before its deadline"
                                        + ("" if over == d.end else f" (what the window took of {d.shares} is back only then)"))
        else:
            yield from _later_for_personas(s, path, d, competing)
    yield from _decoys(s, ids)
    if all(d.urgent in ids and d.competing in ids for d in s.ta_decisions):
        yield from _a_clash_for_every_persona(s)


def _clash_over(s: Scenario, d) -> int:
    """When what the window took of what the decision shares is free again: its end, or the refill
    where the shared resource is consumed then (``Resource.consumed``, a quota)."""
    res = next((r for r in s.resources if r.id == d.shares), None)
    return d.end if res is None else res.free_again(d.end)


def _rule_draws(s: Scenario, persona: str, categories: set[str]) -> Iterator[dict[str, str]]:
    """Every combination of rules a seed may draw for these categories (the rest as stated)."""
    import itertools

    stated = s.personas[persona].rules
    drawn = s.variants.rules.get(persona, {})
    names = sorted(c for c in categories if c in stated)
    options = [sorted({stated[c], *drawn.get(c, [])}) for c in names]
    for combo in itertools.product(*options):
        yield {**stated, **dict(zip(names, combo))}


def _counted_for(s: Scenario, d, persona: str) -> bool:
    """Is the decision a clash for the persona under some rules a seed may draw?"""
    ids = {t.id: t for t in s.tasks}
    categories = {ids[d.urgent].category, ids[d.competing].category}
    return any(contested(s, d, persona, rules) for rules in _rule_draws(s, persona, categories))


def _later_for_personas(s: Scenario, path: str, d, competing: Task) -> Iterator[Problem]:
    """Where the competing side is put to the user (a persona for whom the decision is a clash
    through the user), its later opportunity must find the user reachable when it starts."""
    if not through_user(s, d):
        return
    for persona in s.personas:
        if _counted_for(s, d, persona) and _later_slot(s, competing, _clash_over(s, d), reach_user=True) is None:
            yield (f"{path}.competing", f"expected a later opportunity for {competing.id!r} with {persona!r}'s user "
                                        f"reachable at its start (after {format_at(d.end)}, its work done before its deadline)")


def _a_clash_for_every_persona(s: Scenario) -> Iterator[Problem]:
    """TA's denominator for a persona is its clashes (``contested``): every persona needs one."""
    for persona in s.personas:
        if not any(_counted_for(s, d, persona) for d in s.ta_decisions):
            yield ("ta_decisions", f"expected at least one decision that is a clash for the {persona!r} persona (a "
                                   f"competing side its rules put to the user, or one that runs on the shared resource)")


def _shown_before(s: Scenario, path: str, d) -> Iterator[Problem]:
    """Every record that shows the clash exists, unconditionally, before the window opens
    (however a seed moves it)."""
    records = {r.id for r in s.records}
    for j, rid in enumerate(d.shown_by):
        if rid not in records:
            yield f"{path}.shown_by[{j}]", f"expected the id of one of the scenario's records, got {rid!r}"
            continue
        seen = _appears(s, rid)
        if seen is None or seen + (s.variants.jitter if seen else 0) > d.start:
            yield (f"{path}.shown_by[{j}]", f"expected {rid!r} to be visible before the window opens "
                                            f"({format_at(d.start)}), whatever the seed; it "
                                            + ("appears only on a branch" if seen is None else f"appears at {format_at(seen)}"))


def _decoys(s: Scenario, ids: dict[str, Task]) -> Iterator[Problem]:
    """A decoy pair looks competing and is not: both tasks open at its start, each with work that
    fits now (its compute free of the user's use, the user reachable), not on one resource, and
    neither part of a TA decision whose window overlaps it."""
    for i, p in enumerate(s.decoys):
        path = f"decoys[{i}]"
        if p.end <= p.start:
            yield path, f"expected end after start, got {format_at(p.start)} → {format_at(p.end)}"
        missing = [t for t in p.tasks if t not in ids]
        for t in missing:
            yield f"{path}.tasks", f"expected the id of one of the scenario's tasks, got {t!r}"
        if missing:
            continue
        a, b = (ids[t] for t in p.tasks)
        if a.id == b.id:
            yield f"{path}.tasks", "expected two different tasks"
        if a.work.resource is not None and a.work.resource == b.work.resource:
            yield f"{path}.tasks", f"expected tasks that do not share a resource ({a.work.resource!r})"
        if not _reachable(s, p.start):
            yield f"{path}.start", f"expected the user reachable at {format_at(p.start)}"
        for task in (a, b):
            if task.noop:
                yield f"{path}.tasks", f"expected a task with work to do, {task.id!r} is a NOOP task"
            elif not trigger_minute(s, task) <= p.start < task.deadline:
                yield f"{path}.tasks", f"expected {task.id!r} to be open at the pair's start ({format_at(p.start)})"
            elif _opportunity(s, task, p.start, "", within=p.end) != -(-p.start // 15) * 15:
                yield f"{path}.tasks", f"expected {task.id!r}'s work to fit at {format_at(p.start)}: its compute free, before its deadline"
            for d in s.ta_decisions:
                if task.id in (d.urgent, d.competing) and d.start < p.end and p.start < d.end:
                    yield f"{path}.tasks", f"expected {task.id!r} in no TA decision overlapping the pair ({d.id})"


def _reachable(s: Scenario, minute: int) -> bool:
    """Is the user awake and free of focus blocks at ``minute``?"""
    day = minute % MINUTES_PER_DAY
    a, b = s.user.sleep.start, s.user.sleep.end
    asleep = a <= day < b if a < b else day >= a or day < b
    return not asleep and not any(x <= minute < y for x, y, _ in user_busy(s))


def _free_over(s: Scenario, start: int, duration: int) -> bool:
    """Is the user reachable throughout [start, start + duration) (on the quarter hours)?"""
    return all(_reachable(s, t) for t in range(start, start + max(duration, 1), 15))


def _opportunity(s: Scenario, task: Task, after: int, shares: str, within: int | None = None) -> int | None:
    """The first start ≥ ``after`` (on the quarter hours) where the task's whole work fits before
    its deadline (and before ``within``), its compute free of the user's use and — for a clash over
    the user's time — the user reachable throughout it; None if there is none."""
    duration = task.work.units * task.work.minutes
    busy = resource_use(s, task.work.resource) if task.work.resource else []
    t = -(-after // 15) * 15
    while t + duration < task.deadline and (within is None or t < within):
        if not any(a < t + duration and b > t for a, b in busy) and (shares != "user_time" or _free_over(s, t, duration)):
            return t
        t += 15
    return None


def _later_slot(s: Scenario, task: Task, after: int, reach_user: bool = False) -> int | None:
    """A start ≥ ``after`` where the task's whole work fits before its deadline, its resource free
    (and, with ``reach_user``, the user reachable at that start: the work is the agent's minutes,
    putting it to the user a moment of theirs)."""
    t = after
    while (t := _opportunity(s, task, t, shares="")) is not None:
        if not reach_user or _reachable(s, t):
            return t
        t += 15
    return None

# ------------------------------------------------------------------ coherent variants (issue #20.6)
def _drawn_rules_stated(s: Scenario) -> Iterator[Problem]:
    """A rule a seed may draw is stated by the prose from the drawn rule (``{rule:category}``,
    rendered by ``variant.policy_text``), never in words that fit only one of the rules; every
    placeholder names a category."""
    import re

    placeholder = re.compile(r"\{rule:([A-Za-z0-9_]+)\}")
    for name, persona in s.personas.items():
        named = set(placeholder.findall(persona.policy))
        for category in sorted(named - set(s.categories)):
            yield f"personas.{name}.policy", f"{{rule:{category}}} to name a category (known: {sorted(s.categories)})"
        for category in sorted(set(s.variants.rules.get(name, {})) - named):
            yield (f"personas.{name}.policy", f"'{{rule:{category}}}' where the prose states the {category} rule: "
                   f"a seed draws it among {s.variants.rules[name][category]}")


def _descriptions_state_no_depth(s: Scenario) -> Iterator[Problem]:
    """A category's description says what the matters are, never how to handle them: the briefing
    shows it beside whatever rule this run holds (``c (description): rule words``), so a depth in
    it ("you draft, I check and send") contradicts every other rule a seed or a change may give."""
    from .variant import stated_depths

    for category, text in s.categories.items():
        depths = stated_depths(text)
        if depths:
            yield (f"categories.{category}", f"a description that states no depth (the rule beside it does); "
                                             f"it reads as {sorted(depths)}")


def _prose_leaves_drawn_rules_to_placeholders(s: Scenario) -> Iterator[Problem]:
    """A sentence of a persona's prose that states a depth names no category whose rule a seed draws
    (by its name, "update"): that rule is stated only by ``{rule:category}``, so no words outside it
    can contradict the rule drawn."""
    import re

    from .variant import RULE_PLACEHOLDER, stated_depths

    for name, persona in s.personas.items():
        drawn = s.variants.rules.get(name, {})
        prose = RULE_PLACEHOLDER.sub(". ", persona.policy)
        for sentence in re.split(r"(?<=[.!?])\s+", prose):
            depths = stated_depths(sentence)
            for category in sorted(drawn):
                if depths and mentions(sentence, category.replace("_", " ")):
                    yield (f"personas.{name}.policy", f"the {category} rule stated only by {{rule:{category}}} (a seed "
                                                      f"draws it among {sorted(drawn[category])}); this sentence states "
                                                      f"{sorted(depths)} for it: {sentence!r}")


def _policy_changes_state_their_rules(s: Scenario) -> Iterator[Problem]:
    """The user's message that changes a rule says the new depth in words (``stated_depths``):
    the agent learns the change only from it."""
    from .variant import stated_depths

    for i, ev in enumerate(s.events):
        if ev.policy_change is None:
            continue
        said = stated_depths(ev.text)
        for category, rule in sorted(ev.policy_change.rules.items()):
            if rule not in said:
                yield (f"events[{i}].text", f"words that state the new {category} rule ({rule!r}); it reads as "
                                            f"{sorted(said)}")


def _distractors_alone(s: Scenario) -> Iterator[Problem]:
    """A distractor a seed drops takes its events and records with it (``variant.apply``): so
    nothing kept may hang on it — no task requires it, no TA decision names it, no event or record
    waits for it."""
    for i, task_id in enumerate(s.variants.distractors):
        path = f"variants.distractors[{i}]"
        if task_id not in {t.id for t in s.tasks}:
            yield path, f"a task id (no task {task_id!r})"
            continue
        for t in s.tasks:
            if any(c.task == task_id for c in t.requires):
                yield path, f"a task nothing requires ({t.id} requires it)"
        for d in s.ta_decisions:
            if task_id in (d.urgent, d.competing):
                yield path, f"a task no TA decision names ({d.id} does)"
        for item in (*s.events, *s.records):
            if item.when is not None and item.when.task == task_id:
                yield path, f"a task nothing waits for ({item.id} does)"


# ------------------------------------------------------------------ declared arguments (issue #20.3)
def _declared_arguments(s: Scenario) -> Iterator[Problem]:
    """Every argument the scorer compares is declared by the tool's schema: each key of an
    action's reference, and each key inside an object argument (the object declares its keys);
    a tool's declared start is one or two of its string parameters."""
    tools = {t.name: t for t in s.tools}
    for i, tool in enumerate(s.tools):
        if len(tool.starts) > 2 or any(n not in tool.params or tool.params[n].type != "string" for n in tool.starts):
            yield (f"tools[{i}].starts", f"one string parameter (an ISO date-time) or two (a date and an HH:MM time) "
                                         f"of the tool, got {tool.starts}")
    for i, task in enumerate(s.tasks):
        if task.action is None or task.action.tool not in tools:
            continue
        yield from _declared(f"tasks[{i}].action.args", task.action.args, tools[task.action.tool].params,
                             task.action.free_text)


def _declared(path: str, args: dict, params: dict, free: list[str] = ()) -> Iterator[Problem]:
    """Each key declared; an object's keys, and (where compared) an array's object entries' keys, too."""
    for key, value in args.items():
        if key not in params:
            yield f"{path}.{key}", f"an argument the tool declares (it declares {sorted(params)})"
        elif isinstance(value, dict):
            if not params[key].properties:
                yield f"{path}.{key}", "an object argument whose keys the tool declares (properties)"
            else:
                yield from _declared(f"{path}.{key}", value, params[key].properties)
        elif isinstance(value, list) and key not in free and any(isinstance(v, dict) for v in value):
            entries = params[key].items
            if entries is None or not entries.properties:
                yield f"{path}.{key}", "an array of objects whose entries' keys the tool declares (items.properties)"
                continue
            for j, entry in enumerate(value):
                if isinstance(entry, dict):
                    yield from _declared(f"{path}.{key}[{j}]", entry, entries.properties)


def _reference_values_on_record(s: Scenario) -> Iterator[Problem]:
    """Every value the scorer compares of an action (``compared_values``) is said, on meaning, by
    something the agent can see before the task's deadline (``visible_by``) or among the values
    the tool's schema enumerates. The task's description is the author's note, never shown: it
    says nothing to the agent."""
    tools = {t.name: t for t in s.tools}
    for i, task in enumerate(s.tasks):
        if task.action is None or task.action.tool not in tools:
            continue
        params = tools[task.action.tool].params
        said = visible_by(s, task.deadline, task.id) + "\n" + json.dumps(_schema_text(params), ensure_ascii=False)
        for where, leaf in compared_values(s, task, f"tasks[{i}].action.args"):
            if not _said(said, leaf):
                yield where, (f"a value the agent can read before the deadline ({format_at(task.deadline)}): "
                              f"no record, event or enum of the tool's schema says {leaf!r}")


def _argument_windows(s: Scenario) -> Iterator[Problem]:
    """Every window of times an action takes (``Action.windows``) is one the records give: on a
    compared string argument; its ends and the reference each one point in time, all with a day
    or none; the reference inside it; each end's day and time stated by the records or events
    the agent can see before the task's deadline; and, on an argument that says when the action
    begins (``Tool.starts``), judged by TA alike throughout — every start in it on the same side
    (before, inside, after) of each TA window of its task as the reference start."""
    tools = {t.name: t for t in s.tools}
    for i, task in enumerate(s.tasks):
        if task.action is not None and task.action.tool in tools:
            for key, window in task.action.windows.items():
                problem = _window_problem(s, task, tools[task.action.tool], key, window)
                if problem:
                    yield f"tasks[{i}].action.windows.{key}", problem


def _window_problem(s: Scenario, task: Task, tool, key: str, window) -> str | None:
    """What is wrong with one window of an action's argument (None: nothing)."""
    reference = task.action.args.get(key)
    if key in task.action.free_text or not isinstance(reference, str) or key not in tool.params:
        return "a window on a compared string argument of the action (its key in args, not free text)"
    values = (window.earliest, reference, window.latest)
    stated = [when(v) for v in values]
    if any(w is None or w.minutes is None or w.minutes[0] != w.minutes[1] for w in stated) or len(
            {w.month is None for w in stated}) > 1:
        return ("ends that are, like the reference, each one point in time, all with a day (2026-04-16T01:30) "
                f"or none (01:30); got {values[0]!r}, {reference!r}, {values[2]!r}")
    lo, at, hi = (_minute_of(s, w) for w in stated)
    if not lo <= at <= hi:
        return f"a window holding the reference {reference!r}; got {values[0]!r} to {values[2]!r}"
    seen = visible_by(s, task.deadline, task.id)
    unsaid = [w for end in (values[0], values[2]) for w in _day_and_time(end) if not mentions(seen, w)]
    if unsaid:
        return f"ends the records or events state before the deadline ({format_at(task.deadline)}): none says {unsaid}"
    starts = [_start_minute(s, task, tool, key, v) for v in values] if key in tool.starts else []
    if None not in starts and len({tuple(_side(d, m) for d in s.ta_decisions if task.id in (d.urgent, d.competing))
                                   for m in starts}) > 1:
        return "a window TA judges alike throughout: on one side of each of its task's TA windows"
    return None


def _time_limits_on_record(s: Scenario) -> Iterator[Problem]:
    """Every time limit the agent is held to by a wait the scorer asks of it is one the records
    give by the time the task comes up (its trigger; ``visible_by``). The limits:

    * the deadline of a task whose action begins later (a window on an argument ``Tool.starts``
      names): the text face refuses the action after it ("over for this action"), and the
      window's latest start is what the records state (``_argument_windows``), so the deadline
      is that start, no other;
    * the deadline of each TA decision's competing task: the decision's ``later`` counts only a
      postponement before it, and the briefing says so ("before its deadline");
    * every ``needed_by``: the briefing says results count half after "a time they mention".

    A limit is stated where one sentence of a record, version or event visible by the trigger
    names its time of day and its day, on meaning (``mentions``: "9pm" is 21:00, "Wednesday 15
    April" is 15 apr): the date, the weekday, or — in a text whose day is known — "today",
    "tonight" on that day and "tomorrow" on the day before. Deadlines no wait meets (the work is
    due when it comes up) are not held here."""
    tools = {t.name: t for t in s.tools}
    competing = {d.competing for d in s.ta_decisions}
    for i, task in enumerate(s.tasks):
        seen = None
        for name, minute, window_end in _time_limits(s, task, tools, competing):
            if window_end is not None:
                if minute != window_end:
                    yield (f"tasks[{i}].{name}", f"the latest start its window states ({format_at(window_end)}): "
                                                 f"the action is refused after the deadline ({format_at(minute)})")
                continue
            seen = visible_parts(s, trigger_minute(s, task), task.id) if seen is None else seen
            if not _limit_stated(s, seen, minute):
                yield (f"tasks[{i}].{name}", f"a time the records or events state by the time the task comes up "
                                             f"({format_at(trigger_minute(s, task))}): no sentence says "
                                             f"{' '.join(_limit_words(s, minute))}")


def _time_limits(s: Scenario, task: Task, tools: dict, competing: set[str]) -> Iterator[tuple[str, int, int | None]]:
    """The task's limits ``_time_limits_on_record`` holds: (field, minute, the latest start its
    action's window states where the deadline is that window's, else None)."""
    tool = tools.get(task.action.tool) if task.action is not None else None
    ends = [_minute_of(s, w) for key, window in (task.action.windows.items() if tool is not None else ())
            if key in tool.starts and (w := when(window.latest)) is not None and w.month is not None]
    if ends:
        yield "deadline", task.deadline, max(ends)
    elif task.id in competing:
        yield "deadline", task.deadline, None
    if task.needed_by is not None:
        yield "needed_by", task.needed_by, None


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n")
_CLOCK_WORDS = {"12:00": ("noon", "midday"), "00:00": ("midnight",)}
_RELATIVE_DAYS = {0: ("today", "tonight", "this morning", "this afternoon", "this evening"), 1: ("tomorrow",)}


def _limit_words(s: Scenario, minute: int) -> tuple[str, str, str]:
    """A point in time as the words a record says it in: its date, its weekday, its time of day."""
    day = s.start_date + datetime.timedelta(days=minute // MINUTES_PER_DAY)
    rest = minute % MINUTES_PER_DAY
    return f"{day.day} {day.strftime('%b').lower()}", day.strftime("%a").lower(), f"{rest // 60:02d}:{rest % 60:02d}"


def _limit_stated(s: Scenario, parts: list[tuple[int | None, str]], minute: int) -> bool:
    """Does one sentence of the texts (each with the minute it appears) name the point in time:
    its time and its day (date, weekday, or the day relative to the text's own)?"""
    date, weekday, clock = _limit_words(s, minute)
    clocks = (clock, *_CLOCK_WORDS.get(clock, ()))
    day = minute // MINUTES_PER_DAY
    for at, text in parts:
        ahead = None if at is None else day - at // MINUTES_PER_DAY
        days = (date, weekday, *_RELATIVE_DAYS.get(ahead, ()))
        if any(any(mentions(x, c) for c in clocks) and any(mentions(x, d) for d in days)
               for x in _SENTENCE_END.split(text) if x):
            return True
    return False


def _day_and_time(value: str) -> list[str]:
    """A point in time in the words a record says it, its day and its time apart ("2026-04-16T02:00"
    → ["16 apr", "02:00"]): a record may give the day once for a span of times."""
    words = in_words(value).split(" ")
    return [" ".join(words[:-1]), words[-1]] if len(words) > 1 else words


def _start_minute(s: Scenario, task: Task, tool, key: str, value: str) -> int | None:
    """When the action begins with ``value`` for ``key``, as the scorer reads its start
    (``Tool.starts`` joined: a date-time, or a date and a time); None where it names no day."""
    stated = when("T".join(str(value if n == key else task.action.args.get(n, "")) for n in tool.starts))
    return None if stated is None or stated.month is None or stated.minutes is None else _minute_of(s, stated)


def _minute_of(s: Scenario, stated) -> int:
    """A point in time as a scenario minute (a time of day: its minute of the day)."""
    day = 0 if stated.month is None else (
        datetime.date(stated.year or s.start_date.year, stated.month, stated.day) - s.start_date).days
    return day * MINUTES_PER_DAY + stated.minutes[0]


def _side(d, minute: int) -> int:
    """Where a start lies against a TA window: before it (-1), inside it (0), at or after its end (1)."""
    return -1 if minute < d.start else 0 if minute < d.end else 1


def compared_values(s: Scenario, task: Task, path: str = "") -> Iterator[tuple[str, object]]:
    """The values of the task's reference action the scorer compares where given
    (``sim.tools.args_problem``): every declared argument not free text — a required one, and an
    optional one too (given, it must match: a start left out starts the action now, so where the
    start matters it is given) — and every leaf inside it but booleans."""
    params = next(t for t in s.tools if t.name == task.action.tool).params
    for key, value in task.action.args.items():
        if key in task.action.free_text or key not in params:
            continue
        for where, leaf in leaves(value, f"{path}.{key}" if path else key):
            if not isinstance(leaf, bool):
                yield where, leaf


def _schema_text(params: dict) -> list:
    """The values a tool's declared arguments name: their enums (a description's "0 for a free
    form" or an example says what a value looks like, not which one this matter needs)."""
    out: list = []
    for p in params.values():
        out += [*(p.enum or [])]
        out += _schema_text(p.properties)
        if p.items is not None:
            out += _schema_text({"": p.items})
    return out


ZERO_WORDS = ("free of charge", "no charge", "no extra cost", "at no cost", "no fee", "costs nothing")


def _said(text: str, value) -> bool:
    """Does ``text`` say ``value``? A zero amount is said by "free of charge", "no fee" and the like."""
    zero = isinstance(value, (int, float)) and value == 0
    return mentions(text, str(value)) or (zero and any(mentions(text, w) for w in ZERO_WORDS))


def visible_by(s: Scenario, minute: int, task: str | None = None, persona: str | None = None) -> str:
    """All the text of the records, versions and events the agent can have seen by ``minute``:
    unconditional ones, and those that wait for a state the expected behaviour (of ``persona``,
    or of some persona) reaches — never one that waits for ``task`` itself (what its own action
    brings cannot tell the agent how to do it); a text derived from an executed action reads as
    that action's reference arguments fill it (the invoice sent says the total it was sent with);
    a record an event reveals, from that event on (the world shows it then, and only then)."""
    return "\n".join(text for _, text in visible_parts(s, minute, task, persona))


def visible_parts(s: Scenario, minute: int, task: str | None = None,
                  persona: str | None = None) -> list[tuple[int | None, str]]:
    """``visible_by``'s texts apart, each with the minute it appears (a record there from the start:
    0; one that waits for a state and has no time: None, unknown)."""
    ids = {t.id: t for t in s.tasks}
    sources = action_sources(s)

    def seen(cond: When | None) -> bool:
        return cond is None or (cond.task != task and cond.task in ids
                                and cond.state in reachable_states(s, ids[cond.task], persona))

    def args(key: str) -> dict | None:  # a text under an executed action reads as the expected one did it
        source = sources.get(key)
        return ids[source].action.args if source is not None else None

    def said(key: str, *texts: str, fields: dict) -> list[str]:
        return [*(fill(x, args(key)) for x in texts), *map(str, fill_fields(fields, args(key)).values())]

    parts = [(e.at, fill(e.text, args(f"event:{e.id}"))) for e in s.events if e.at <= minute and seen(e.when)]
    revealed: dict[str, list[int]] = {}  # a record an event reveals appears with it, and only then
    for e in s.events:
        for rid in e.reveals:
            revealed.setdefault(rid, []).extend([e.at] if seen(e.when) else [])
    for r in s.records:
        shown = r.appears if r.id not in revealed else min(revealed[r.id], default=s.end_minute)
        if (shown is None or shown <= minute) and seen(r.when):
            at = shown if shown is not None else 0 if r.when is None else None  # conditional: when it holds
            parts += [(at, x) for x in said(f"record:{r.id}", r.title, r.text, fields=r.fields)]
            parts += [(v.at, x) for j, v in enumerate(r.versions, start=1) if v.at <= minute and seen(v.when)
                      for x in said(f"record:{r.id}:{j}", v.title or "", v.text, fields=v.fields)]
    return parts


# ------------------------------------------------------------------ a world that remembers (issue #20.5)
def _conditions_on_tasks(s: Scenario) -> Iterator[Problem]:
    """Versions that wait for what happened (``when``) and timed changes an action makes moot
    (``unless``) name a task and a state it can reach."""
    ids = {t.id for t in s.tasks}
    conditions = [(f"records[{i}].versions[{v}].{name}", getattr(ver, name)) for i, rec in enumerate(s.records)
                  for v, ver in enumerate(rec.versions) for name in ("when", "unless")]
    conditions += [(f"events[{i}].unless", ev.unless) for i, ev in enumerate(s.events)]
    for path, cond in conditions:
        if cond is not None and cond.task not in ids:
            yield f"{path}.task", f"a task id (no task {cond.task!r})"
        elif cond is not None and path.endswith("unless") and cond.state == "begun":
            # (the world times what waits for `begun` from the start at the call: it holds from then)
            yield f"{path}.state", "executed (an action's start makes nothing moot before it comes)"


def _derived_texts(s: Scenario) -> Iterator[Problem]:
    """A text that names the executed action's arguments (``{{items}}``, spec/derive.py) appears
    only under that action's ``executed`` state and names arguments its tool declares; ``names``
    conditions only an executed action."""
    sources = action_sources(s)
    tasks, tools = {t.id: t for t in s.tasks}, {t.name: t for t in s.tools}
    texts = [(f"events[{i}]", f"event:{ev.id}", ev.text, ev.when) for i, ev in enumerate(s.events)]
    for i, rec in enumerate(s.records):
        texts.append((f"records[{i}]", f"record:{rec.id}", f"{rec.title} {rec.text} {json.dumps(rec.fields, default=str)}",
                      rec.when))
        texts += [(f"records[{i}].versions[{v}]", f"record:{rec.id}:{v + 1}",
                   f"{ver.title or ''} {ver.text} {json.dumps(ver.fields, default=str)}", ver.when)
                  for v, ver in enumerate(rec.versions)]
    for path, key, text, when in texts:
        if when is not None and when.names and when.state not in ACTED:
            yield f"{path}.when.names", "names only with state executed or begun (what the executed action's arguments name)"
        elif when is not None and when.names and when.task in tasks and tasks[when.task].action is not None \
                and not names_hold(when.names, tasks[when.task].action.args):
            yield f"{path}.when.names", "names the task's reference action names (else no careful agent gets the branch)"
        keys = placeholders(text)
        if not keys:
            continue
        if key not in sources:
            yield path, "placeholders ({{...}}) only in a text that appears under an executed action (when: executed)"
            continue
        tool = tools.get(tasks[sources[key]].action.tool)
        for k in keys:
            if tool is not None and k not in tool.params:
                yield path, f"placeholders naming arguments of {tool.name} (it declares {sorted(tool.params)}, not {k!r})"


def _names_on_record(s: Scenario) -> Iterator[Problem]:
    """What a text waiting for an executed action names (``When.names``) comes only where the action
    includes it, so the agent must be able to read it: each name is said by what it can see before
    the action's deadline."""
    tasks = {t.id: t for t in s.tasks}
    conds = [(f"events[{i}].when.names", ev.when) for i, ev in enumerate(s.events)]
    conds += [(f"records[{i}].when.names", r.when) for i, r in enumerate(s.records)]
    conds += [(f"records[{i}].versions[{v}].when.names", ver.when) for i, r in enumerate(s.records)
              for v, ver in enumerate(r.versions)]
    for path, cond in conds:
        if cond is None or not cond.names or cond.task not in tasks:
            continue
        seen = visible_by(s, tasks[cond.task].deadline, cond.task)
        for name in cond.names:
            if not mentions(seen, name):
                yield path, (f"names the agent can read before {cond.task}'s deadline "
                             f"({format_at(tasks[cond.task].deadline)}): nothing says {name!r}")
