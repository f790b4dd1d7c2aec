"""Agent jobs on a resource, up to its capacity (a lab's GPU server, a team's AI quota, a kiln).

One ``SharedPool`` per resource holds the jobs of every assistant that uses it: the
multi-assistant env gives several worlds the same pool, so their assistants compete for the
slots as they do with their own users' use.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SharedPool:
    capacity: int = 1
    reservations: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, owner)

    def __post_init__(self) -> None:
        if self.capacity < 1:
            raise ValueError(f"capacity: expected at least 1 slot, got {self.capacity}")

    def load(self, start: int, end: int) -> int:
        """The most jobs running at one instant of [start, end)."""
        overlapping = [(s, e) for s, e, _ in self.reservations if s < end and e > start]
        if len(overlapping) < 2:
            return len(overlapping)
        points = sorted({max(s, start) for s, _ in overlapping})
        return max(sum(1 for s, e in overlapping if s <= p < e) for p in points)

    def free(self, start: int, end: int, owner: str = "") -> bool:
        """Room for one more job over [start, end)?"""
        return self.load(start, end) < self.capacity

    def earliest(self, after: int, duration: int) -> int:
        """The first start ≥ ``after`` with room for a job of ``duration`` (jobs beyond capacity queue)."""
        for start in sorted({after} | {e for _, e, _ in self.reservations if e > after}):
            if self.free(start, start + duration):
                return start
        raise AssertionError("a pool always frees up after its last reservation")

    def reserve(self, start: int, end: int, owner: str) -> None:
        self.reservations.append((start, end, owner))

    def running(self, minute: int, owner: str | None = None) -> int:
        return sum(1 for s, e, o in self.reservations if s <= minute < e and (owner is None or o == owner))

    def reset(self) -> None:
        self.reservations.clear()
