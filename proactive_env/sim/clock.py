"""The event queue: what happens next, in time order (ties broken by kind, then by insertion)."""

from __future__ import annotations

import heapq
from enum import IntEnum


class Q(IntEnum):
    """Queue entry kinds; the value orders entries that fall on the same minute."""

    RECORD = 0  # a record appears or changes
    CLOSE = 1  # a task's deadline passes
    EVENT = 2
    TRIGGER = 3
    WORK_DONE = 4
    DECIDE = 5  # the user gets round to a pending approval request
    FOLLOWUP = 6  # a follow-up the agent set on a task
    REVIEW = 7  # the daily autonomous review
    WAKE = 8  # a follow-up the agent set with a note
    END = 9


_KINDS = {int(q): q for q in Q}  # Q by value, without the enum's call (the simulator's inner loop)


class EventQueue:
    __slots__ = ("_heap", "_seq")

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, int, int]] = []
        self._seq = 0

    def push(self, minute: int, kind: Q, payload: int) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (minute, int(kind), self._seq, payload))

    def extend(self, items: list[tuple[int, int, int]]) -> None:
        """Push many (minute, kind as an int, payload) items at once, in order: the same entries
        as pushing each in turn (each gets the next insertion number), so they pop in the same
        order (every entry's key is distinct), heapified once instead of sifted one by one."""
        seq, heap = self._seq, self._heap
        heap.extend((minute, kind, seq + i, payload) for i, (minute, kind, payload) in enumerate(items, start=1))
        self._seq = seq + len(items)
        heapq.heapify(heap)

    def pop(self) -> tuple[int, Q, int]:
        minute, kind, _, payload = heapq.heappop(self._heap)
        return minute, _KINDS[kind], payload

    def remove(self, items: list[tuple[int, "Q", int]]) -> None:
        """Take queued items (minute, kind, payload) out again: what a withdrawn reservation released."""
        gone = [(m, int(k), p) for m, k, p in items]
        kept = []
        for entry in self._heap:
            key = (entry[0], entry[1], entry[3])
            if key in gone:
                gone.remove(key)
            else:
                kept.append(entry)
        self._heap = kept
        heapq.heapify(self._heap)

    def peek_minute(self) -> int | None:
        return self._heap[0][0] if self._heap else None

    def __bool__(self) -> bool:
        return bool(self._heap)
