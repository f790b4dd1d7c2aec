"""Recurring schedules expanded into spans of scenario minutes (the loader's one place for it)."""

from __future__ import annotations

from .models import Scenario
from .timeline import MINUTES_PER_DAY


def weekly_spans(s: Scenario, block) -> list[tuple[int, int]]:
    """A weekly block over the scenario's days, less its skipped days: ``[(start, end), ...]``."""
    spans = []
    for day in range(s.days):
        if s.weekday(day * MINUTES_PER_DAY) in block.days and day + 1 not in block.skip:
            base = day * MINUTES_PER_DAY
            spans.append((base + block.start, base + block.end))
    return spans


def user_busy(s: Scenario) -> list[tuple[int, int, str]]:
    """The user's focus blocks: one-off and weekly, with their labels."""
    out = [(b.start, b.end, b.label) for b in s.user.busy]
    out += [(a, b, w.label) for w in s.user.weekly for a, b in weekly_spans(s, w)]
    return sorted(out)


def resource_use(s: Scenario, resource_id: str) -> list[tuple[int, int]]:
    """When the user's own use holds a resource: one-off and weekly spans."""
    return [(a, b) for a, b, _ in resource_use_labelled(s, resource_id)]


def resource_use_labelled(s: Scenario, resource_id: str) -> list[tuple[int, int, str]]:
    """The user's own uses of a resource, each with its label, unmerged."""
    res = next(r for r in s.resources if r.id == resource_id)
    spans = [(b.start, b.end, b.label) for b in res.user_busy]
    spans += [(a, b, w.label) for w in res.weekly for a, b in weekly_spans(s, w)]
    return sorted(spans)
