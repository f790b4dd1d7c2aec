"""What the world says back about an action the agent executed, derived from that action.

A record or event that confirms an executed action (an order confirmation, a booking, an
invoice sent) must state what the agent actually did, not what the scenario's reference action
holds: the agent's free-text arguments (the items of an order, its totals, a job's name) may
differ from the reference and are never compared. Such text names the executed arguments with
placeholders, filled when the world shows it:

- ``{{items}}``: the argument as given (a list of objects reads "Bok choy 1 lb (qty 1, price_usd
  2.99); ...", a list of strings "a, b").
- ``{{items|count}}``: how many entries; ``{{items|sum:price_usd}}``: the sum of a numeric key
  over the entries; ``{{total_usd|money}}``: an amount as "$76.93".
- ``{{total_usd|money || items|sum:price_usd|money}}``: the first alternative the agent's
  arguments resolve; a quoted alternative (``'none'``) is literal.

A field whose whole value is one placeholder takes the argument's value itself (a list stays a
list). A later change about the action (a substitution notice) exists only where the executed
arguments name what it is about (``When.names``): the world never substitutes an item that was
not ordered. Leaving an item out dodges nothing: the matter such a change would raise never comes,
and what it would have brought counts 0 in J (its branch is one the oracle opens; tests/test_fair_names.py);
the validator checks that each name is on record before the action's deadline. Which action a text derives from is the condition it appears under
(``action_sources``); the validator checks that every placeholder names a declared argument of
that action's tool.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .meaning import entity_names, mentions

PLACEHOLDER = re.compile(r"\{\{(.+?)\}\}")
_FILTERS = {"count", "money", "sum"}
ACTED = frozenset({"executed", "begun"})  # the states of an executed action: its texts derive from its arguments


class Unresolved(LookupError):
    """An alternative the executed arguments do not give."""


def placeholders(text: str) -> list[str]:
    """The argument keys a text's placeholders read (literals left out)."""
    keys = []
    for expr in PLACEHOLDER.findall(text):
        for alternative in expr.split("||"):
            head = alternative.strip().split("|")[0].strip()
            if head and not head.startswith("'"):
                keys.append(head)
    return keys


def fill(text: str, args: dict | None) -> str:
    """``text`` with its placeholders filled from the executed ``args`` (None: unfilled text is
    returned as it is, for a text no action stands behind)."""
    if args is None or "{{" not in text:
        return text
    return PLACEHOLDER.sub(lambda m: _render(_resolve(m[1], args)), text)


def fill_fields(fields: dict, args: dict | None) -> dict:
    """A record's fields with placeholders filled; a field that is one placeholder takes the value."""
    if args is None:
        return fields
    return {k: _fill_value(v, args) for k, v in fields.items()}


def _fill_value(value: Any, args: dict) -> Any:
    if isinstance(value, str):
        whole = PLACEHOLDER.fullmatch(value.strip())
        return _resolve(whole[1], args) if whole else fill(value, args)
    if isinstance(value, list):
        return [_fill_value(v, args) for v in value]
    if isinstance(value, dict):
        return {k: _fill_value(v, args) for k, v in value.items()}
    return value


def _resolve(expr: str, args: dict) -> Any:
    for alternative in expr.split("||"):
        alternative = alternative.strip()
        if alternative.startswith("'") and alternative.endswith("'"):
            return alternative[1:-1]
        try:
            return _apply(alternative, args)
        except Unresolved:
            continue
    return "(not stated)"


def _apply(alternative: str, args: dict) -> Any:
    key, *filters = [part.strip() for part in alternative.split("|")]
    if key not in args or args[key] in (None, "", []):
        raise Unresolved(key)
    value = args[key]
    for f in filters:
        name, _, arg = f.partition(":")
        if name == "count":
            value = len(value) if isinstance(value, list) else len([p for p in str(value).split(",") if p.strip()])
        elif name == "sum":
            entries = value if isinstance(value, list) else [value]
            numbers = [_number(e.get(arg)) for e in entries if isinstance(e, dict)]
            if not numbers or any(n is None for n in numbers):
                raise Unresolved(alternative)
            value = round(sum(numbers), 2)
        elif name == "money":
            number = _number(value)
            if number is None:
                raise Unresolved(alternative)
            value = f"${number:,.2f}"
        else:
            raise ValueError(f"unknown placeholder filter {name!r} (expected one of {sorted(_FILTERS)})")
    return value


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    match = re.search(r"-?\d[\d,]*(?:\.\d+)?", str(value or ""))
    return float(match[0].replace(",", "")) if match else None


def _render(value: Any) -> str:
    if isinstance(value, list):
        sep = "; " if any(isinstance(v, dict) for v in value) else ", "
        return sep.join(_render(v) for v in value)
    if isinstance(value, dict):
        items = list(value.items())
        if not items:
            return ""
        (_, first), rest = items[0], items[1:]
        extra = ", ".join(f"{k} {_render(v)}" for k, v in rest)
        return f"{_render(first)} ({extra})" if extra else _render(first)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def names_hold(names: list[str], args: dict | None) -> bool:
    """Do the executed arguments name every one of ``names`` (on meaning, whole terms)?"""
    if not names:
        return True
    if args is None:
        return False
    text = _words_of(args)
    return all(mentions(text, n) for n in names)


def _words_of(value: Any) -> str:
    if isinstance(value, dict):
        return " ; ".join(_words_of(v) for v in value.values())
    if isinstance(value, list):
        return " ; ".join(_words_of(v) for v in value)
    return json.dumps(value, ensure_ascii=False).strip('"') if not isinstance(value, str) else value


def action_sources(scenario) -> dict[str, str]:
    """Which executed action each conditioned text derives from: keys ``record:<id>``,
    ``record:<id>:<version>`` (1-based) and ``event:<id>``, values the task id whose
    ``executed`` state it appears under (a record revealed by an event, under the event's)."""
    tasks = {t.id: t for t in scenario.tasks}

    def of(when) -> str | None:
        if when is not None and when.state in ACTED and tasks.get(when.task) and tasks[when.task].action:
            return when.task
        return None

    out: dict[str, str] = {}
    revealing = {rid: ev.when for ev in scenario.events for rid in ev.reveals if ev.when is not None}
    for ev in scenario.events:
        if (task := of(ev.when)) is not None:
            out[f"event:{ev.id}"] = task
    for rec in scenario.records:
        base = of(rec.when) or of(revealing.get(rec.id))
        if base is not None:
            out[f"record:{rec.id}"] = base
        for v, version in enumerate(rec.versions, start=1):
            if (task := of(version.when) or base) is not None:
                out[f"record:{rec.id}:{v}"] = task
    return out


def record_names(s) -> frozenset[str]:
    """The entities the scenario's records name by their titles (every version's title too):
    ``meaning.entity_names``, for comparing an action's arguments (a record's own title names its
    entity: "The Weybosset Hotel" for "The Weybosset Hotel, Providence")."""
    return entity_names(title for r in s.records for title in (r.title, *(v.title for v in r.versions)))


def conditioned_names(s, task_id: str) -> tuple[str, ...]:
    """What the world's later texts about a task's executed action name (``When.names`` of the
    events, records and versions that wait for it): each comes only where the action includes the
    item (no substitution notice for an item never ordered)."""
    conds = [ev.when for ev in s.events] + [r.when for r in s.records] + [v.when for r in s.records for v in r.versions]
    names = (n for c in conds if c is not None and c.task == task_id and c.state in ACTED for n in c.names)
    return tuple(dict.fromkeys(names))
