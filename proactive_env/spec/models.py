"""Typed model of a scenario file (DESIGN.md §3).

A scenario is data: the user, their schedule and personas, shared resources, the records and
tools of the world, a timeline of events, the tasks with their expectations per persona, and the
one temporal-allocation (TA) decision window. Cross-references are checked in ``validate.py``.
"""

from __future__ import annotations

import datetime as dt
from enum import IntEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, field_validator

from .timeline import parse_at, parse_daily

PERSONAS = ("reviewer", "planner", "operator")


class Depth(IntEnum):
    """Intervention depth, ordered: the chosen depth of a task is the deepest one attempted."""

    NOOP = 0
    PREPARE = 1
    SUGGEST = 2
    EXECUTE = 3

    @classmethod
    def parse(cls, name: str) -> "Depth":
        return cls[name.upper()]


_UNQUOTED = " (unquoted, YAML reads a time like 12:00 as the number 720: put it in quotes)"


def _at(value: Any) -> int:
    if not isinstance(value, str):
        raise ValueError(f"expected a time like 'D2 09:30' as a string, got {value!r}"
                         + (_UNQUOTED if isinstance(value, int) else ""))
    return parse_at(value)


def _daily(value: Any) -> int:
    if not isinstance(value, str):
        raise ValueError(f"expected a daily time like '23:00' as a string, got {value!r}"
                         + (_UNQUOTED if isinstance(value, int) else ""))
    return parse_daily(value)


At = Annotated[
    int,
    BeforeValidator(_at),
    WithJsonSchema({"type": "string", "pattern": r"^D\d{1,3} ([01]\d|2[0-3]):[0-5]\d$",
                    "description": "day and time, e.g. 'D2 09:30'"}),
]
Daily = Annotated[
    int,
    BeforeValidator(_daily),
    WithJsonSchema({"type": "string", "pattern": r"^([01]\d|2[0-3]):[0-5]\d$",
                    "description": "time of day, e.g. '23:00'"}),
]
DepthName = Literal["noop", "prepare", "suggest", "execute"]
Identifier = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Interval(Spec):
    start: At
    end: At
    label: str = ""


class DailyInterval(Spec):
    start: Daily
    end: Daily


class User(Spec):
    name: str
    speaking_style: str = Field(description="How the user writes; templated replies follow it.")
    sleep: DailyInterval = Field(description="Nightly sleep; may cross midnight (23:00 → 07:00).")
    busy: list[Interval] = Field(default_factory=list, description="Focus blocks: the user is unavailable.")


class Persona(Spec):
    policy: str = Field(description="The persona's stated delegation policy, shown to the agent.")
    delegates: list[Identifier] = Field(
        default_factory=list, description="EXECUTE tools this persona lets the agent use without approval.")
    style: str = Field("", description="Extra speaking-style note for this persona's replies.")


class Resource(Spec):
    id: Identifier
    name: str
    kind: Literal["gpu", "tokens", "cpu", "user_time", "other"]
    capacity: int = Field(1, ge=1)
    user_busy: list[Interval] = Field(default_factory=list, description="When the user's own jobs hold it.")


class Record(Spec):
    id: Identifier
    kind: str = Field(description="message, document, calendar_event, listing, order, claim, note, ...")
    title: str
    text: str
    fields: dict[str, Any] = Field(default_factory=dict)
    appears: At | None = Field(None, description="When the record appears; absent = from the start.")


class ToolParam(Spec):
    type: Literal["string", "number", "integer", "boolean", "array", "object"]
    description: str = ""


class Tool(Spec):
    name: Identifier
    description: str
    depth: DepthName = Field(description="prepare (reads, notes), suggest (to the user) or execute (changes the world).")
    touches: Literal["read", "write"]
    params: dict[str, ToolParam] = Field(default_factory=dict)
    creates: str | None = Field(None, description="Record kind an EXECUTE of this tool creates.")


class PolicyChange(Spec):
    personas: list[Literal["reviewer", "planner", "operator"]]
    require_approval: list[Identifier] = Field(default_factory=list)
    delegate: list[Identifier] = Field(default_factory=list)


class Event(Spec):
    id: Identifier
    at: At
    kind: Literal["user_message", "notification", "file", "product", "calendar", "feedback"]
    text: str
    reveals: list[Identifier] = Field(default_factory=list, description="Records that appear with the event.")
    policy_change: PolicyChange | None = Field(None, description="Feedback that changes what the user delegates.")


class Trigger(Spec):
    type: Literal["user", "event", "agent"]
    at: At | None = None
    event: Identifier | None = None


class Condition(Spec):
    task: Identifier
    state: Literal["started", "presented", "approved", "executed"]


class Work(Spec):
    units: int = Field(1, ge=0, description="Units of work; 0 for tasks whose work is only to look.")
    minutes: int = Field(30, ge=1, description="Minutes of compute per unit.")
    resource: Identifier | None = None


class Fact(Spec):
    text: str
    source: Identifier = Field(description="The record that establishes it.")
    keywords: list[str] = Field(default_factory=list, description="Any of these in the work counts; default: text.")

    def needles(self) -> list[str]:
        return [k.lower() for k in (self.keywords or [self.text])]


class ForbiddenClaim(Spec):
    text: str
    refuted_by: Identifier = Field(description="The record that shows the claim is false.")


class Constraints(Spec):
    must_include: list[Fact] = Field(default_factory=list)
    must_not_include: list[ForbiddenClaim] = Field(default_factory=list)


class Action(Spec):
    tool: Identifier
    args: dict[str, Any] = Field(default_factory=dict)


class Expectation(Spec):
    depth: DepthName
    approval: bool = Field(False, description="For depth execute: the action needs the user's approval first.")
    declines: bool = Field(False, description="This user declines the proposal when asked.")


class Task(Spec):
    id: Identifier
    title: str
    description: str
    trigger: Trigger
    requires: list[Condition] = Field(default_factory=list, description="Activation: all must hold at trigger time.")
    latent: bool = False
    evidence: list[Identifier] = Field(default_factory=list)
    work: Work = Field(default_factory=Work)
    action: Action | None = Field(None, description="The consequential EXECUTE, if the task has one.")
    facts: list[Fact] = Field(default_factory=list, description="Reference facts the rubric judge checks.")
    constraints: Constraints = Field(default_factory=Constraints)
    weight: float = Field(1.0, gt=0)
    deadline: At
    deliver: DepthName | None = Field(None, description="Least depth that delivers the work (default: suggest if user-triggered, else prepare).")
    expect: dict[Literal["reviewer", "planner", "operator"], Expectation]

    @property
    def delivery_depth(self) -> Depth:
        if self.deliver:
            return Depth.parse(self.deliver)
        return Depth.SUGGEST if self.trigger.type == "user" else Depth.PREPARE


class TAWindow(Spec):
    start: At
    end: At
    urgent: Identifier
    competing: Identifier
    shares: str = Field(description="A resource id, or 'user_time'.")
    rationale: str


class Scenario(Spec):
    name: Identifier
    title: str
    domain: Literal["research", "travel", "living", "food", "career", "business",
                    "education", "finance", "shopping", "health"]
    version: str
    description: str
    start_date: dt.date
    timezone: str
    days: int = Field(ge=2, le=31)
    review_time: Daily = Field(default="08:30", validate_default=True, description="Daily autonomous review tick.")
    user: User
    personas: dict[Literal["reviewer", "planner", "operator"], Persona]
    always_approval: list[Identifier] = Field(default_factory=list, description="EXECUTE tools that need approval under every persona.")
    resources: list[Resource] = Field(default_factory=list)
    records: list[Record]
    tools: list[Tool]
    events: list[Event]
    tasks: list[Task]
    ta_window: TAWindow

    @field_validator("personas")
    @classmethod
    def _all_personas(cls, value: dict) -> dict:
        missing = [p for p in PERSONAS if p not in value]
        if missing:
            raise ValueError(f"expected all three personas (reviewer, planner, operator); missing {missing}")
        return value

    @property
    def end_minute(self) -> int:
        return self.days * 24 * 60
