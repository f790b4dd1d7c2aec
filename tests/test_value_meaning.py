"""Values on meaning, not wording (issue #20, round 23): one comparison (``spec.meaning.same_value``)
serves look-ups by record field and the check of an action's arguments, so a date, a time, an id,
an amount or a name with an aside is the same value in any usual form in both.

A generated battery over the whole suite: every scenario-persona pair and seeds 0, 1000, 1001
(values are drawn per seed through the variant), every look-up tool with each argument that names
a record field and each value a readable record holds there, and every compared leaf of every
task's reference action. Each value is paraphrased (date forms: ISO, "14 May", "Thu 14 May",
"May 14th", "Thursday, May 14, 2026", "14/05" where unambiguous; times "2pm", "14:00h"; a
parenthetical aside; other case; an id's spacing; an amount with its currency) and each paraphrase
must find the same records / be accepted; a different value (the next day, another time, a digit
or a word changed, another enum value, another amount) must not find the record / must be refused.
Round 23's cases: check_room_availability with a date and a group size found nothing; an
emergency contact with "(brother)" added was refused.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterator
from typing import Any

import pytest

from noninterference import text_world
from proactive_env.sim.tools import args_problem, record_names
from proactive_env.spec import load_scenario, shipped_names
from proactive_env.spec.meaning import When, when
from proactive_env.spec.validate import compared_values

SEEDS = (0, 1000, 1001)
TRIPLES = [(n, p, seed) for n in shipped_names() for p in load_scenario(n).personas for seed in SEEDS]
MONTHS = "January February March April May June July August September October November December".split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
ASIDE = " (as on record)"


# ------------------------------------------------------------------ the generator
def _ordinal(n: int) -> str:
    return f"{n}{'th' if 11 <= n <= 13 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _clock_forms(minute: int) -> list[str]:
    hour, rest = divmod(minute, 60)
    twelve = f"{hour % 12 or 12}{f':{rest:02d}' if rest else ''}{'pm' if hour >= 12 else 'am'}"
    return [f"{hour:02d}:{rest:02d}h", twelve]


def _date_forms(stated: When, year: int) -> list[str]:
    """A date written in the usual ways (with and without year and weekday)."""
    day = dt.date(stated.year or year, stated.month, stated.day)
    name, weekday = MONTHS[day.month - 1], WEEKDAYS[day.weekday()]
    forms = [f"{day.day} {name[:3]}", f"{weekday[:3]} {day.day} {name[:3]}", f"{name} {_ordinal(day.day)}",
             f"{weekday}, {name} {day.day}, {day.year}", f"{day.day} {name} {day.year}", day.isoformat()]
    if day.day > 12:  # a numeric date only where it has one reading
        forms += [f"{day.day}/{day.month:02d}", f"{day.month:02d}/{day.day}/{day.year}"]
    return forms


def _when_forms(stated: When, year: int) -> list[str]:
    """A date, time, date and time, or span in other usual forms."""
    times = None
    if stated.minutes is not None:
        start, end = stated.minutes
        times = [f"{a} to {b}" for a, b in zip(_clock_forms(start), _clock_forms(end))] if start != end \
            else _clock_forms(start)
    if stated.month is None:
        return times or []
    dates = _date_forms(stated, year)
    return dates if times is None else [f"{d} {t}" for d, t in zip(dates, times * len(dates))]


def _other_when(value: str, stated: When, year: int) -> str:
    """Another date (the next day) or another time (half an hour later), in the value's own form."""
    if stated.month is not None:
        day = dt.date(stated.year or year, stated.month, stated.day)
        return value.replace(day.isoformat(), (day + dt.timedelta(days=1)).isoformat(), 1) if day.isoformat() in value \
            else f"{(day + dt.timedelta(days=1)).isoformat()}"
    start = stated.minutes[0] + 30
    return re.sub(r"\d{1,2}:\d{2}", f"{start // 60 % 24:02d}:{start % 60:02d}", value, count=1)


def paraphrases(value: Any, key: str, year: int) -> list[Any]:
    """Ways to give ``value`` that keep its meaning (module doc)."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        sign = "£" if key.endswith("_gbp") else "$" if key.endswith("_usd") else ""
        return [str(value), f"{sign}{value:,.2f}"]
    if not isinstance(value, str):
        return []
    stated = when(value)
    if stated is not None:
        return _when_forms(stated, year)
    out = [value.upper(), value.lower(), value + ASIDE]
    if re.fullmatch(r"[A-Za-z]+-\d+", value):
        out.append(value.replace("-", " "))
    return [o for o in out if o != value]


def different(value: Any, key: str, year: int, enum: list | None = None) -> Any:
    """A value that means something else (None: none made)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value + 7 if value else 15
    if not isinstance(value, str):
        return None
    if enum:
        return next((e for e in enum if e != value), None)
    stated = when(value)
    if stated is not None:
        return _other_when(value, stated, year)
    digits = list(re.finditer(r"\d", value))
    if digits:
        last = digits[-1]
        return value[:last.start()] + str((int(last[0]) + 3) % 10) + value[last.end():]
    longest = max(re.findall(r"[A-Za-z]+", value), key=len, default=None)  # a word that names it, not "the"
    return value.replace(longest, "Quorlax", 1) if longest else None


# ------------------------------------------------------------------ look-ups
def _returned(result: str) -> set[str]:
    return set(re.findall(r"^([a-z][a-z0-9_]*): .* \([a-z_]+\)$", result, re.M))


def _look_up_cases(name: str, persona: str, seed: int) -> Iterator[tuple]:
    """(tool, argument, value, record id) for each value a readable record holds in a field a
    look-up argument names, every record visible."""
    world, tools = text_world(name, persona, seed)
    for record in world.scenario.records:
        world.store.show(record.id)
    for tool in world.scenario.tools:
        if tool.touches != "read" or tool.depth != "prepare" or tool.name == "read_record":
            continue
        for key in tool.params:
            field = tools._field_args(tool, {key: "x"}).get(key)
            if field is None:
                continue
            for rid in sorted(set(tool.reads) or set(world.store.visible)):
                held = world.store.view(rid).fields.get(field)
                for value in (held if isinstance(held, list) else [held]):
                    if value is not None and not isinstance(value, (dict, list, bool)):
                        yield tools, tool, key, value, rid


@functools.lru_cache(maxsize=None)
def look_up_battery(name: str, persona: str, seed: int) -> tuple[list[str], list[str], int]:
    """(paraphrases that did not find what the value finds, different values that found the
    record anyway, cases checked)."""
    year = load_scenario(name).start_date.year
    missed, loose, checked = [], [], 0
    for tools, tool, key, value, rid in _look_up_cases(name, persona, seed):
        found = _returned(tools.call(tool.name, {key: value}))
        for form in paraphrases(value, key, year):
            got = _returned(tools.call(tool.name, {key: form}))
            checked += 1
            if got != found:
                missed.append(f"{name}/{persona}/{seed} {tool.name}({key}={form!r}) for {value!r}: {sorted(got)} != {sorted(found)}")
        other = different(value, key, year)
        held = world_field(tools, rid, tools._field_args(tool, {key: "x"})[key])
        if other is not None and other not in held:
            checked += 1
            if rid in _returned(tools.call(tool.name, {key: other})):
                loose.append(f"{name}/{persona}/{seed} {tool.name}({key}={other!r}) found {rid} (holds {value!r})")
    return missed, loose, checked


def world_field(tools, rid: str, field: str) -> list:
    held = tools.world.store.view(rid).fields.get(field)
    return held if isinstance(held, list) else [held]


# ------------------------------------------------------------------ arguments
def _set(args: Any, path: str, value: Any) -> Any:
    """A copy of ``args`` with the leaf at ``path`` (``a.b[0].c``) replaced."""
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", path)

    def put(node: Any, rest: list[str]) -> Any:
        if not rest:
            return value
        head, tail = rest[0], rest[1:]
        if head.startswith("["):
            i = int(head[1:-1])
            return [put(v, tail) if j == i else v for j, v in enumerate(node)]
        return {**node, head: put(node[head], tail)}

    return put(args, parts)


def _param_at(params: dict, path: str):
    """The declared parameter at a leaf's path (None: not declared there)."""
    parts = [p for p in re.findall(r"[^.\[\]]+|\[\d+\]", path) if not p.startswith("[")]
    param = params.get(parts[0])
    for part in parts[1:]:
        if param is None:
            return None
        param = param.items if param.items is not None and part not in (param.properties or {}) else param
        param = (param.properties or {}).get(part) if param is not None else None
    return param


@functools.lru_cache(maxsize=None)
def argument_battery(name: str, persona: str, seed: int) -> tuple[list[str], list[str], int]:
    """(paraphrases of a reference leaf refused, different values accepted, cases checked)."""
    world, _ = text_world(name, persona, seed)
    s = world.scenario
    year, names = s.start_date.year, record_names(s)
    tools = {t.name: t for t in s.tools}
    refused, loose, checked = [], [], 0
    for task in s.tasks:
        if task.action is None:
            continue
        action, params = task.action, tools[task.action.tool].params
        assert args_problem(action.args, action.args, action.free_text, params, names) is None, task.id
        for path, leaf in compared_values(s, task):
            key = path.split(".")[-1].split("[")[0]
            for form in paraphrases(leaf, key, year):
                checked += 1
                problem = args_problem(action.args, _set(action.args, path, form), action.free_text, params, names)
                if problem is not None:
                    refused.append(f"{name}/{persona}/{seed} {task.id}.{path}={form!r} for {leaf!r}: {problem}")
            param = _param_at(params, path)
            other = different(leaf, key, year, list(param.enum) if param is not None and param.enum else None)
            if other is not None:
                checked += 1
                if args_problem(action.args, _set(action.args, path, other), action.free_text, params, names) is None:
                    loose.append(f"{name}/{persona}/{seed} {task.id}.{path}={other!r} accepted for {leaf!r}")
    return refused, loose, checked


# ------------------------------------------------------------------ the sweeps
@pytest.mark.parametrize("name,persona,seed", TRIPLES)
def test_a_look_up_finds_the_same_records_for_any_form_of_a_value_and_not_for_another(name, persona, seed):
    missed, loose, checked = look_up_battery(name, persona, seed)
    assert not missed, f"{len(missed)} paraphrases found other records:\n" + "\n".join(missed[:10])
    assert not loose, f"{len(loose)} other values found the record:\n" + "\n".join(loose[:10])


@pytest.mark.parametrize("name,persona,seed", TRIPLES)
def test_an_action_accepts_any_form_of_its_values_and_refuses_another_value(name, persona, seed):
    refused, loose, checked = argument_battery(name, persona, seed)
    assert checked
    assert not refused, f"{len(refused)} paraphrases refused:\n" + "\n".join(refused[:10])
    assert not loose, f"{len(loose)} other values accepted:\n" + "\n".join(loose[:10])


def test_a_look_up_argument_judges_only_the_records_that_hold_its_field():
    """Round 23 (exam_prep): check_room_availability(date, people=4) found nothing — only the
    room request holds `people`, and it holds no `date`. The group size asks nothing of the
    listing; a wrong date still finds nothing."""
    world, tools = text_world("exam_prep", "planner", 1000)
    world.advance()
    found = _returned(tools.call("check_room_availability", {"date": "2026-05-14", "people": 4}))
    assert "calder_rooms" in found
    assert "calder_rooms" not in _returned(tools.call("check_room_availability", {"date": "2026-05-15", "people": 4}))


def test_an_emergency_contact_with_an_aside_is_that_contact():
    """Round 23 (conference_trip): "Arun Raman (brother), +44 7700 900482" was refused for
    "Arun Raman, +44 7700 900482"; another name or number is still refused."""
    s = load_scenario("conference_trip")
    task = next(t for t in s.tasks if t.id == "t04_travel_registration")
    params = next(t for t in s.tools if t.name == task.action.tool).params
    for contact, ok in (("Arun Raman (brother), +44 7700 900482", True), ("Arun Raman, my brother, +44 7700 900482", True),
                        ("Arun Raman (brother), +44 7700 900483", False), ("Ravi Raman (brother), +44 7700 900482", False)):
        given = _set(task.action.args, "details.emergency_contact", contact)
        assert (args_problem(task.action.args, given, task.action.free_text, params, record_names(s)) is None) is ok, contact


@pytest.mark.parametrize("name", shipped_names())
def test_a_look_up_by_free_words_returns_what_it_reads_for_any_form_of_a_date(name):
    """A look-up that lists its records and is given only free words (no argument names a field:
    lookup_timetable's from, to and date) ranks what it reads and returns some of it, whatever
    form a date takes ("14/06" as "14 Jun")."""
    world, tools = text_world(name, "planner", 0)
    for record in world.scenario.records:
        world.store.show(record.id)
    year = world.scenario.start_date.year
    for tool in world.scenario.tools:
        if tool.touches != "read" or tool.depth != "prepare" or not tool.reads:
            continue
        args = {k: p.example for k, p in tool.params.items() if isinstance(p.example, str)}
        if not args or tools._field_args(tool, args):
            continue
        found = _returned(tools.call(tool.name, args))
        assert found and found <= set(tool.reads), (tool.name, args, found)
        for key, value in args.items():
            for form in paraphrases(value, key, year)[:4]:
                got = _returned(tools.call(tool.name, {**args, key: form}))
                assert got and got <= set(tool.reads), (tool.name, key, form, got)
