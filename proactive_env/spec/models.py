"""Typed model of a scenario file (DESIGN.md §3, docs/scenarios.md).

A scenario is data: the user, their schedule (one-off and weekly blocks) and personas (a stated
policy and a rule per action category), shared resources, records (with versions over time) and
tools of the world, a timeline of events (some conditional on what happened), the tasks, the
temporal-allocation (TA) decisions, and the bounds within which a seed draws a variant.
Cross-references are checked in ``validate.py``.
"""

from __future__ import annotations

import datetime as dt
import functools
import zoneinfo
from enum import IntEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, field_validator, model_validator

from .meaning import Window
from .timeline import parse_at, parse_daily, parse_when

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


PersonaName = Literal["reviewer", "planner", "operator"]
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEKDAYS: tuple[str, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
Rule = Literal["prepare", "suggest", "approve", "execute"]
RULES: tuple[str, ...] = ("prepare", "suggest", "approve", "execute")


def _day(value: Any) -> int:
    if not isinstance(value, str) or not value.startswith("D") or not value[1:].isdigit() or int(value[1:]) < 1:
        raise ValueError(f"expected a day like 'D3', got {value!r}")
    return int(value[1:])


DayRef = Annotated[int, BeforeValidator(_day), WithJsonSchema({"type": "string", "pattern": r"^D\d{1,3}$",
                                                                "description": "a day of the scenario, e.g. 'D3'"})]


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Interval(Spec):
    start: At
    end: At
    label: str = ""


class DailyInterval(Spec):
    start: Daily
    end: Daily


class Weekly(Spec):
    """A block that recurs on the given weekdays (the loader expands it over the scenario's days)."""

    days: list[Weekday] = Field(min_length=1)
    start: Daily
    end: Daily = Field(description="After start: a weekly block does not cross midnight.")
    label: str = ""
    skip: list[DayRef] = Field(default_factory=list, description="Days on which it does not happen, e.g. ['D5'].")


class Replies(Spec):
    """The user's wording for each kind of answer; ``{what}`` is what the agent asked about, in its words."""

    approve: str = "Yes, go ahead: {what}."
    decline: str = "No, please don't: {what}."
    acknowledge: str = "Thanks, I've seen it — I'll handle {what} myself."
    nothing: str = "Thanks for letting me know."
    unrecognised: str = "I'm not sure what you want me to approve — tell me exactly what you'd do."
    incomplete: str = "I can't approve part of this; tell me everything you intend to do."
    unavailable: str = "(no reply yet: {name} is not available)"
    revoked: str = "Please check with me before you do anything like that again."


class User(Spec):
    name: str
    speaking_style: str = Field(description="How the user writes; templated replies follow it.")
    sleep: DailyInterval = Field(description="Nightly sleep; may cross midnight (23:00 → 07:00).")
    busy: list[Interval] = Field(default_factory=list, description="One-off focus blocks: the user is unavailable.")
    weekly: list[Weekly] = Field(default_factory=list, description="Recurring blocks (work, classes, commute).")

    @field_validator("sleep")
    @classmethod
    def _waking_hours(cls, value: DailyInterval) -> DailyInterval:
        if value.start == value.end:  # read as crossing midnight, it would last all day
            raise ValueError("expected sleep to end at another time than it starts (e.g. 23:00 to 07:00); "
                             "a sleep that ends when it starts leaves no waking hours")
        return value


class Persona(Spec):
    policy: str = Field(description="The persona's stated delegation policy, shown to the agent.")
    rules: dict[Identifier, Rule] = Field(
        description="Per action category: prepare (keep it to your notes), suggest (bring it to me; I act), "
                    "approve (ask me, then do it), execute (just do it).")
    style: str = Field("", description="Extra speaking-style note for this persona's replies.")
    replies: Replies | None = Field(None, description="This persona's wording (default: the scenario's).")


class Resource(Spec):
    id: Identifier
    name: str
    kind: str = Field(description="gpu, tokens, cpu, car, kiln, ... (free text)")
    capacity: int = Field(1, ge=1, le=64, description="Agent jobs that can run on it at once; more queue.")
    user_busy: list[Interval] = Field(default_factory=list, description="One-off spans when the user's own use holds it.")
    weekly: list[Weekly] = Field(default_factory=list, description="Recurring spans of the user's own use.")
    complaint: str = Field("", description="What the user says when agent work slows their own use, in their words.")
    consumed: list[Interval] = Field(default_factory=list, description=(
        "Spans where the resource is consumed, not shared in time: a token quota whose remainder serves "
        "one job until it refills at the span's end. What a job takes of it then is free again only at "
        "the span's end, not when the job ends. Outside them it is shared in time (free when a job ends)."))

    def free_again(self, t: int) -> int:
        """When what a job holding the resource until ``t`` took of it is free again: at ``t`` where
        it is shared in time; at the refill (the span's end) inside a span where it is consumed."""
        return next((c.end for c in self.consumed if c.start <= t < c.end), t)


class When(Spec):
    """A condition on the world: the task reached the state (``after`` minutes ago at least)."""

    task: Identifier
    state: Literal["started", "done", "presented", "approved", "executed", "begun", "deferred", "missed"] = Field(
        description="started: work launched; done: all its work finished; presented, approved, executed; "
                    "begun: its executed action took effect, at the start it was given (``Tool.starts``; "
                    "none: when executed), e.g. a job ran; deferred; missed: its deadline passed without "
                    "what the user wanted")
    after: int = Field(0, ge=0, le=7 * 24 * 60)
    names: list[str] = Field(default_factory=list, description=(
        "With state executed: holds only if the executed action's arguments name every one of these (a "
        "substitution notice exists only for an item that was ordered; spec/derive.py)."))


class Version(Spec):
    at: At = Field(description="When it replaces the last version (not before this if `when` is set).")
    title: str | None = None
    text: str
    fields: dict[str, Any] = Field(default_factory=dict)
    when: When | None = Field(None, description="Applies only once this holds (e.g. the agent's own action "
                                                "changed what the record shows).")
    unless: When | None = Field(None, description="Skipped if this holds by its time (an action made it moot).")


class Record(Spec):
    id: Identifier
    kind: str = Field(description="message, document, calendar_event, listing, order, claim, note, ...")
    title: str
    text: str
    fields: dict[str, Any] = Field(default_factory=dict)
    appears: At | None = Field(None, description="When the record appears (not before this if `when` is set).")
    when: When | None = Field(None, description="Appears only once this holds.")
    versions: list[Version] = Field(default_factory=list, description="Later versions, each replacing the last at its time.")


class ToolParam(Spec):
    type: Literal["string", "number", "integer", "boolean", "array", "object"]
    description: str = ""
    required: bool = False
    example: Any = None
    enum: list[Any] | None = Field(None, description="The values a categorical argument may take.")
    properties: dict[str, ToolParam] = Field(default_factory=dict, description=(
        "An object's declared keys: the only ones an action's reference may hold (and the scorer compare)."))
    items: ToolParam | None = Field(None, description=(
        "An array's entries, declared (an array of objects declares their keys under items.properties)."))


class Tool(Spec):
    name: Identifier
    description: str
    depth: DepthName = Field(description="prepare (reads, notes), suggest (to the user) or execute (changes the world).")
    touches: Literal["read", "write"]
    params: dict[str, ToolParam] = Field(default_factory=dict)
    creates: str | None = Field(None, description="Record kind an EXECUTE of this tool creates.")
    lookup: str | None = Field(None, description="Read tools: the record field the first parameter is matched on.")
    starts: list[Identifier] = Field(default_factory=list, description=(
        "Execute tools whose action runs later: the parameters that say when it begins (one ISO date-time, "
        "or a date and an HH:MM time; omitted, it begins now). The world carries the action out then (what "
        "waits for it ``begun`` comes from then; a start in the past, or after the deadline where the "
        "reference gives none, is refused); the scorer reads its start like an allocation's: after a clash, "
        "a postponement of it; inside, its run."))
    reads: list[Identifier] = Field(default_factory=list, description=(
        "Read tools: the records the tool reads (default: any visible record). An argument named like "
        "a record field is matched on that field (a listed record without it: on its text)."))

    def start(self, args: dict, start_date: dt.date) -> int | None:
        """When an action with ``args`` begins, from the parameters it declares for that, in
        scenario minutes; None where the tool declares none or the call leaves them out (it
        begins now). Raises ``ValueError`` where they are given and say no time."""
        values = [args.get(n) for n in self.starts]
        if all(v in (None, "") for v in values):
            return None
        return parse_when(start_date, "T".join(str(v) for v in values))


class PolicyChange(Spec):
    personas: list[PersonaName]
    rules: dict[Identifier, Rule] = Field(description="Categories whose rule changes, and to what.")


class Event(Spec):
    id: Identifier
    at: At = Field(description="When it fires (not before this if `when` is set).")
    kind: Literal["user_message", "notification", "file", "product", "calendar", "feedback"]
    text: str
    reveals: list[Identifier] = Field(default_factory=list, description="Records that appear with the event.")
    when: When | None = Field(None, description="Fires only once this holds.")
    unless: When | None = Field(None, description="Does not fire if this holds by its time (an action made it moot).")
    policy_change: PolicyChange | None = Field(None, description="Feedback that changes what the user delegates.")


class Trigger(Spec):
    type: Literal["user", "event", "agent"]
    at: At | None = None
    event: Identifier | None = None
    earliest: At | None = Field(None, description="Agent triggers: a follow-up the agent set in [earliest, at) "
                                                   "brings the task forward to it.")


class Condition(Spec):
    task: Identifier
    state: Literal["started", "presented", "approved", "executed"]


class Work(Spec):
    units: int = Field(1, ge=1, le=20, description="Units of work; each runs for `minutes` once launched.")
    minutes: int = Field(30, ge=1, le=24 * 60, description="Minutes one unit runs (on the resource, if any).")
    resource: Identifier | None = None
    category: Identifier | None = Field(None, description=(
        "Where running this work on its resource is itself a kind of matter the user decides (e.g. launching a "
        "job they did not ask for): that category's rule governs the run — execute: delegated; approve: it "
        "needs the user's OK first. None: running it is part of preparing the task."))


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


class ArgWindow(Spec):
    """The span of times the user takes for a time argument of an action, ends included: each a
    date and time ("2026-04-16T02:00") or a time of day ("20:30"), as the reference value is."""

    earliest: str
    latest: str


class Action(Spec):
    tool: Identifier
    args: dict[str, Any] = Field(default_factory=dict)
    free_text: list[str] = Field(default_factory=list, description="Arguments that are free text: never required "
                                                                   "to match (the judge reads them).")
    windows: dict[Identifier, ArgWindow] = Field(default_factory=dict, description=(
        "Time arguments (top-level keys of args) the user takes anywhere in a span: any time inside "
        "it, on the right day, is right, and none outside; the args keep the reference value, the "
        "one the oracle gives. A record visible before the deadline states the span's ends "
        "(spec/validate.py). Without a window a time is compared as the reference states it."))

    @functools.cached_property
    def compared(self) -> dict[str, Any]:
        """The arguments as given values are compared with: each windowed one as its ``Window``."""
        return {k: Window(v, self.windows[k].earliest, self.windows[k].latest) if k in self.windows else v
                for k, v in self.args.items()}


class Task(Spec):
    id: Identifier
    title: str
    description: str
    category: Identifier = Field(description="The kind of matter (purchase, plan, claim, update, ...); "
                                             "the personas' rules speak of categories.")
    trigger: Trigger
    requires: list[Condition] = Field(default_factory=list, description="Activation: all must hold at trigger time.")
    latent: bool = False
    noop: bool = Field(False, description="The right behaviour is to do nothing the user sees (the records show "
                                          "there is nothing to do).")
    declines: list[PersonaName] = Field(default_factory=list, description="Personas who say no when asked.")
    evidence: list[Identifier] = Field(default_factory=list)
    work: Work = Field(default_factory=Work)
    action: Action | None = Field(None, description="The consequential EXECUTE, if the task has one.")
    facts: list[Fact] = Field(default_factory=list, description="Reference facts the rubric judge checks.")
    constraints: Constraints = Field(default_factory=Constraints)
    weight: float = Field(1.0, gt=0, le=100)
    deadline: At
    needed_by: At | None = Field(None, description="When the user needs the result (default: the deadline); "
                                                   "outputs delivered later count half.")


class TADecision(Spec):
    """A clash: in [start, end) the urgent task must be handled and the competing one postponed
    (or its run moved) to a feasible later time. "Urgent" is the story's: the work whose only
    chance is the window (the user free, the compute idle, an offer open), not the nearer deadline."""

    id: Identifier
    start: At
    end: At
    urgent: Identifier
    competing: Identifier
    shares: str = Field(description="A resource id, or 'user_time'.")
    rationale: str
    shown_by: list[Identifier] = Field(min_length=1, description=(
        "Records that show the agent, before the window opens, the demand that defines the clash "
        "(the user's calendar block, the resource's booking, the offer that closes)."))


class Decoy(Spec):
    """Two matters that look competing but do not clash (different resources or none, both fit,
    the user free): postponing or moving either inside [start, end) is needless and costs."""

    id: Identifier
    start: At
    end: At
    tasks: list[Identifier] = Field(min_length=2, max_length=2)
    rationale: str


class Variants(Spec):
    """What a seed may vary (DESIGN.md §3): timing, rules within the persona, distractors, order."""

    jitter: int = Field(0, ge=0, le=120, description="Events and records without a condition move by up to this "
                                                      "many minutes either way (15-minute steps).")
    distractors: list[Identifier] = Field(default_factory=list, description="NOOP tasks present on about half the seeds.")
    rules: dict[PersonaName, dict[Identifier, list[Rule]]] = Field(
        default_factory=dict, description="Per persona and category, the rules a seed may draw instead of the stated one.")


class Scenario(Spec):
    name: Identifier
    title: str
    domain: str = Field(description="research, travel, living, food, career, business, education, finance, "
                                    "shopping, health, ... (free text)")
    version: str
    description: str
    start_date: dt.date
    timezone: str
    days: int = Field(ge=2, le=31)
    review_time: Daily = Field(default="08:30", validate_default=True, description="Daily autonomous review tick.")
    user: User
    replies: Replies = Field(default_factory=Replies)
    personas: dict[PersonaName, Persona]
    categories: dict[Identifier, str] = Field(description="Each action category, described as the user would.")
    resources: list[Resource] = Field(default_factory=list, max_length=4)
    records: list[Record]
    tools: list[Tool]
    events: list[Event]
    tasks: list[Task]
    ta_decisions: list[TADecision] = Field(min_length=1)
    decoys: list[Decoy] = Field(default_factory=list, description="Pairs that look competing and are not.")
    variants: Variants = Field(default_factory=Variants)

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"expected an IANA time zone such as Europe/London, got {value[:60]!r}") from None
        return value

    @model_validator(mode="after")
    def _user_available_sometime(self) -> "Scenario":
        """A user asleep or busy for the whole episode can read nothing and decide nothing."""
        from .expand import user_busy

        day, end = 24 * 60, self.end_minute
        start, stop = self.user.sleep.start, self.user.sleep.end
        blocked = [(d * day + start, d * day + stop + (0 if start < stop else day)) for d in range(-1, self.days + 1)]
        blocked += [(a, b) for a, b, _ in user_busy(self)]
        reached = 0
        for a, b in sorted(blocked):
            if a > reached:
                return self  # a free minute before this block
            reached = max(reached, b)
            if reached >= end:
                break
        if reached >= end:
            raise ValueError("user: expected some time in the episode when the user is neither asleep nor busy; "
                             "sleep, busy and weekly blocks cover all of it")
        return self

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

    def weekday(self, minute: int) -> str:
        """The weekday ('mon' … 'sun') of a scenario minute."""
        return WEEKDAYS[(self.start_date.weekday() + minute // (24 * 60)) % 7]
