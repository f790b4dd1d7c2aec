"""A pool of compute shared by several assistants (a lab's GPU server, a team's AI quota).

Each world that is given the same pool reserves it for its agent's work; work that needs a
resource also needs a free slot in the pool, so assistants compete for it as they do with their
own user's jobs.
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

    def free(self, start: int, end: int, owner: str) -> bool:
        """Room for one more job of ``owner`` over [start, end)?"""
        overlapping = [(s, e) for s, e, o in self.reservations if s < end and e > start]
        if len(overlapping) < self.capacity:
            return True
        # Count the worst moment: reservations overlapping each other at one instant.
        points = sorted({max(s, start) for s, _ in overlapping})
        return all(sum(1 for s, e in overlapping if s <= p < e) < self.capacity for p in points)

    def reserve(self, start: int, end: int, owner: str) -> None:
        self.reservations.append((start, end, owner))

    def reset(self) -> None:
        self.reservations.clear()
