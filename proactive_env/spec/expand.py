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


USER_SPEAKS = ("user_message", "feedback")  # the event kinds that are the user's own words


def nights(s: Scenario) -> list[tuple[int, int]]:
    """The user's nights as their stated sleep gives them (``user.sleep``), in scenario minutes,
    from the night before the first day to the night after the last (one that crosses midnight
    ends on the next day)."""
    start, end = s.user.sleep.start, s.user.sleep.end
    length = end - start if start < end else MINUTES_PER_DAY - start + end
    return [(day * MINUTES_PER_DAY + start, day * MINUTES_PER_DAY + start + length) for day in range(-1, s.days + 1)]


def wake_ups(s: Scenario) -> tuple[int, ...]:
    """The minutes the user surely speaks (a message or feedback of theirs that waits for nothing
    and nothing cancels) inside one of their nights. (One that hangs on what the agent does is
    not known at reset, when the world's schedule is built.)"""
    spoken = sorted(e.at for e in s.events if e.kind in USER_SPEAKS and e.when is None and e.unless is None)
    return tuple(m for m in spoken if any(a <= m < b for a, b in nights(s)))


def sleep_spans(s: Scenario) -> list[tuple[int, int]]:
    """When the user sleeps: their nights, each ending at their first words in it. A user who
    writes is awake — the world reaches them and runs no sleep-time work from then on (a story's
    "up early"); what they said of their sleep is what the agent could plan with."""
    early = wake_ups(s)
    cut = [(a, min([m for m in early if a <= m < b], default=b)) for a, b in nights(s)]
    return [(a, b) for a, b in cut if b > a]


def awake_span(s: Scenario, minute: int) -> tuple[int, int] | None:
    """The waking hours by the stated sleep (``nights``) that ``minute`` falls in, as
    ``(first minute, last minute)``; None where it is in a night."""
    lo = -MINUTES_PER_DAY
    for a, b in nights(s):
        if a <= minute < b:
            return None
        if minute < a:
            return lo, a - 1
        lo = b
    return lo, s.end_minute + MINUTES_PER_DAY


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
