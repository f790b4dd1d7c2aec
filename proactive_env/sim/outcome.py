"""What a run leaves behind for scoring: one outcome per task and one for the TA window.

Plain, JSON-serialisable records: the trajectory file stores them, and re-scoring a trajectory
reads them back without re-running the episode.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields


@dataclass(frozen=True)
class TaskOutcome:
    task: str
    active: bool
    chosen: int = 0  # Depth of the deepest attempted intervention
    expected: int = 0  # Depth the user wanted, as moved by what happened
    evidence_read: int = 0
    evidence_total: int = 0
    units_done: int = 0
    units: int = 0
    presented: bool = False
    executed: bool = False
    visible: bool = False
    artifact: str = ""  # the work as the user (or the world) received it
    observed: list[str] = field(default_factory=list)  # records the agent had seen when producing it
    trust: float = 0.0  # the user's trust at the task's last turn
    minute: int = 0
    action_match: float = 1.0  # share of the intended action's arguments the execution got right

    @classmethod
    def inactive(cls, task: str) -> "TaskOutcome":
        return cls(task=task, active=False)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TaskOutcome":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class TAOutcome:
    now: bool
    later: bool
    continuation: float  # 1 concrete feasible plan, 0.5 vague, 0 none or infeasible

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TAOutcome":
        return cls(bool(data["now"]), bool(data["later"]), float(data["continuation"]))
