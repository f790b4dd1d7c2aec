"""When the user can be reached and when shared compute is free.

Intervals are half-open ``[start, end)`` in scenario minutes, precomputed once per scenario so
the simulator's questions are bisections, not scans.
"""

from __future__ import annotations

import dataclasses
import math
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from ..spec import Scenario, resource_use, user_busy
from ..spec.timeline import MINUTES_PER_DAY

SEARCH_STEP = 15  # minutes between candidate times when looking for a free window (on the quarter hours)
FreeCheck = Callable[[int, int], bool]  # is the compute a piece of work needs free over [start, end)?


def _merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


class Intervals:
    """A sorted, merged set of half-open intervals."""

    __slots__ = ("spans", "starts")

    def __init__(self, spans: list[tuple[int, int]]):
        self.spans = _merge(spans)
        self.starts = [s for s, _ in self.spans]

    def contains(self, minute: int) -> bool:
        i = bisect_right(self.starts, minute) - 1
        return i >= 0 and minute < self.spans[i][1]

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect_right(self.starts, end - 1) - 1
        return i >= 0 and self.spans[i][1] > start

    def next_start(self, minute: int) -> float:
        """The start of the first interval that begins after ``minute`` (inf: none)."""
        i = bisect_right(self.starts, minute)
        return self.starts[i] if i < len(self.starts) else math.inf

    def end_of(self, minute: int) -> int:
        """First minute at or after ``minute`` outside the set."""
        i = bisect_right(self.starts, minute) - 1
        return self.spans[i][1] if i >= 0 and minute < self.spans[i][1] else minute


_SCHEDULES: dict[tuple, tuple] = {}


@dataclass(frozen=True)
class Schedule:
    sleep: Intervals
    unavailable: Intervals  # sleep and focus blocks
    resource_busy: dict[str, Intervals]
    end: int
    busy: Intervals  # focus blocks

    @classmethod
    def of(cls, s: Scenario) -> "Schedule":
        """The scenario's schedule, built once per user and resources: a seed's variant shares
        them with the file (a Schedule is never changed after it is built)."""
        key = (id(s.user), id(s.resources), s.days, s.start_date, s.end_minute)
        hit = _SCHEDULES.get(key)
        if hit is not None and hit[0] is s.user and hit[1] is s.resources:
            return hit[2]
        if len(_SCHEDULES) >= 256:
            _SCHEDULES.clear()
        schedule = cls._build(s)
        _SCHEDULES[key] = (s.user, s.resources, schedule)  # (held: their ids stay theirs)
        return schedule

    @classmethod
    def _build(cls, s: Scenario) -> "Schedule":
        sleep: list[tuple[int, int]] = []
        start, end = s.user.sleep.start, s.user.sleep.end
        for day in range(-1, s.days + 1):
            base = day * MINUTES_PER_DAY
            if start < end:
                sleep.append((base + start, base + end))
            else:  # crosses midnight
                sleep.append((base + start, base + MINUTES_PER_DAY + end))
        busy = [(a, b) for a, b, _ in user_busy(s)]
        resources = {r.id: Intervals(resource_use(s, r.id)) for r in s.resources}
        return cls(Intervals(sleep), Intervals(sleep + busy), resources, s.end_minute, Intervals(busy))

    def woken(self, minute: int) -> "Schedule":
        """This schedule with the night that holds ``minute`` ending there: the user is up from
        ``minute`` (they have spoken in their sleep hours). A new schedule; this one is unchanged."""
        sleep = [(a, min(b, minute) if a <= minute < b else b) for a, b in self.sleep.spans]
        sleep = [(a, b) for a, b in sleep if b > a]
        return dataclasses.replace(self, sleep=Intervals(sleep), unavailable=Intervals(sleep + self.busy.spans))

    def available(self, minute: int) -> bool:
        return not self.unavailable.contains(minute)

    def next_available(self, minute: int) -> int:
        return self.unavailable.end_of(minute)

    def resource_free(self, resource: str | None, start: int, end: int) -> bool:
        return resource is None or not self.resource_busy[resource].overlaps(start, end)

    def next_opportunity(self, after: int, free: FreeCheck | None, duration: int, deadline: int) -> int | None:
        """Earliest time ≥ ``after`` (on the search grid) when the user is reachable and
        ``free(start, start + duration)`` holds (None: work that needs no compute, always free),
        finishing by ``deadline``."""
        t = -(-after // SEARCH_STEP) * SEARCH_STEP
        unavailable = self.unavailable.contains  # (``available``, bound once: the search's inner loop)
        while t + duration < deadline:
            if unavailable(t):  # the grid points up to the end of this unavailable span are too
                t = -(-self.next_available(t) // SEARCH_STEP) * SEARCH_STEP
                continue
            if free is None or free(t, t + duration):
                return t
            t += SEARCH_STEP
        return None

    def next_free_window(self, after: int, free: FreeCheck, duration: int, deadline: int,
                         idle_fallback: bool) -> tuple[int, bool] | None:
        """Where to run ``duration`` minutes of work: the user's sleep time if it fits before the
        deadline, else (with ``idle_fallback``) the first window where ``free`` holds.
        Returns (start, in_sleep_time)."""
        fallback = None
        t = -(-after // SEARCH_STEP) * SEARCH_STEP
        while t + duration < deadline:
            asleep = self.sleep.contains(t)
            if not asleep and (fallback is not None or not idle_fallback):
                # only a start in the user's sleep can still be chosen: go to the next sleep span
                t = max(t + SEARCH_STEP, -(-self.sleep.next_start(t) // SEARCH_STEP) * SEARCH_STEP)
                continue
            if free(t, t + duration):
                if asleep and self.sleep.contains(t + duration - 1):
                    return t, True
                if fallback is None and idle_fallback:
                    fallback = t
            t += SEARCH_STEP
        return (fallback, False) if fallback is not None else None
