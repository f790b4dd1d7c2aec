"""The simulated world of one run: clock, records, tasks and their work, resources, user, trust.

Event-driven: the agent acts at *decision points* (an event, a task trigger, a follow-up it
scheduled, finished work, a user reply, the daily review). Actions take effect at the current
minute; work runs for its duration and finishes later; ``advance()`` moves the clock to the next
decision point. The world records what happened in ``log`` (DESIGN.md §2: "the world simulates;
the scorer judges"): it decides no score, notes no TA outcome and snapshots no verdict. The
user's reactions (approvals, trust, complaints, revoked delegation) are simulation and are
logged as such.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from ..spec import Depth, Scenario, Task, trigger_minute, variant
from ..spec.derive import action_sources, fill, names_hold
from ..spec.models import Replies
from ..spec.timeline import MINUTES_PER_DAY, format_at
from .clock import EventQueue, Q
from .policy import PolicyState
from .pool import SharedPool
from .records import RecordStore
from .schedule import FreeCheck, Schedule
from .trust import TrustModel
from .user import Decision, Rephraser, decide, reply

USER_SPEAKS = ("user_message", "feedback")  # the event kinds that are the user's own words
FOLLOWUP_DELAY = 60  # a deferral looks at least an hour ahead
RUN_TOOL = "allocate_resource"  # what an approval request names to ask for a task's run


class Verb(IntEnum):
    START = 0
    CONTINUE = 1
    DEFER = 2
    ALLOCATE = 3
    PRESENT = 4
    EXECUTE = 5


_NOTHING_VALID = (False,) * len(Verb)
_RECORD, _CLOSE, _EVENT, _TRIGGER, _REVIEW, _END = map(int, (Q.RECORD, Q.CLOSE, Q.EVENT, Q.TRIGGER, Q.REVIEW, Q.END))
_VERB_NAMES = {verb: verb.name.lower() for verb in Verb}  # as the log names them
_DEPTH_NAMES = {depth: depth.name.lower() for depth in Depth}


@dataclass(slots=True)
class TaskState:
    spec: Task
    index: int
    trigger: int
    triggered: bool = False
    active: bool = False
    closed: bool = False
    started: bool = False
    taken_up: bool = False  # a note took up its compute work before any run of it was reserved
    units_done: int = 0
    running: bool = False  # a unit (or an allocation) is launched and not finished
    allocated: bool = False
    followup: int | None = None
    deferred: bool = False
    presented: bool = False
    approval: str | None = None  # pending | approve | decline | acknowledge
    executed: bool = False
    exec_refused: bool = False  # refused; cleared when an approval arrives
    run_refused: bool = False  # its run was refused (the user's call); cleared when an approval arrives
    competed: bool = False  # some of its work ran over the user's own use of the resource
    sleep_work: bool = False  # its work ran in the user's sleep
    read: set[str] = field(default_factory=set)  # evidence records read for it
    versions_read: dict[str, int] = field(default_factory=dict)  # of each record read for it, the version read
    welcomed: set[tuple] = field(default_factory=set)  # the aligned interventions the user has seen on it
    # (``seen_signature``): one shown again with nothing new is a repeat, not a new intervention


@dataclass(slots=True)
class Matter:
    """Something the agent was told about (a message or notification it saw) or took up itself,
    with an id it can name in its calls (``about``). Every event the agent sees raises one,
    whether or not a task hangs on it, so the list reveals nothing the agent has not seen."""

    id: str
    title: str  # in the user's (or the agent's own) words
    raised: int
    tasks: list[int] = field(default_factory=list)  # the tasks it concerns (hidden from the agent); a task
    # that comes up joins a matter a call for it named (text face: calls stay under the matter they name)
    own: bool = False  # taken up by the agent, not raised by an event
    records: tuple[str, ...] = ()  # the records its event brought
    joined: list[int] = field(default_factory=list)  # of ``tasks``, those that joined it by a call naming it


@dataclass(slots=True)
class FeedbackEvent:
    """What the user said back, as the structured face sees it."""

    kind: str  # approve | decline | acknowledge | nothing | policy_change | revoked | complaint
    minute: int
    category: str | None = None


@dataclass
class World:
    scenario: Scenario
    persona: str
    rng: np.random.Generator
    rules: dict[str, str] | None = None  # the rules drawn for this run (default: the persona's stated ones)
    coins: dict[str, float] | None = None  # the user's coins, task id → uniform (``spec.variant.coins``; default:
    # tossed from ``rng`` in the scenario's task order): every stochastic answer about a task reads its coin
    pools: dict[str, SharedPool] | None = None  # shared with other assistants (multi-agent env)
    owner: str = "agent"
    face: str = "structured"  # structured: the agent's work text is composed from what it read (scoring/compose.py)
    rephrase: Rephraser | None = None  # rewords the user's templated replies; never changes a decision
    now: int = 0
    log: list[dict] = field(default_factory=list)
    inbox: list[str] | None = field(default_factory=list)  # what the agent is told, in words (the text
    # face reads it); None where no one reads it (the structured face): then nothing is worded
    decisions: list[Decision] = field(default_factory=list)
    feedback: list[FeedbackEvent] = field(default_factory=list)
    observed: set[str] = field(default_factory=set)  # records the agent has read
    done: bool = False
    grace: bool = False
    dirty: set[int] = field(default_factory=set)
    matters: dict[str, Matter] = field(default_factory=dict)
    reviewed_at: int = -1  # the minute a review line was last said
    came_up: list[int] = field(default_factory=list)  # the tasks that have come up, in order

    def __post_init__(self) -> None:
        s = self.scenario
        persona = s.personas[self.persona]
        self.schedule = Schedule.of(s)  # as known now: a night is cut where the user has spoken in it (``_up``)
        self.trust = TrustModel()
        self.policy = PolicyState(dict(self.rules or persona.rules))
        self.replies: Replies = _replies(s.replies, persona.replies)
        event_at: dict[str, int] = {}
        for ev in s.events:  # (trigger_minute's look-up of an event's time, once for all the tasks)
            event_at.setdefault(ev.id, ev.at)
        self.tasks = [TaskState(t, i, event_at.get(t.trigger.event, 0) if t.trigger.type == "event"
                                else trigger_minute(s, t)) for i, t in enumerate(s.tasks)]
        self.by_id = {t.spec.id: t for t in self.tasks}
        self.tools = {t.name: t for t in s.tools}
        self.store = RecordStore(s.records, _action_sources(s))  # confirmations read as the agent's action was done
        self.pools = self.pools if self.pools is not None else {}
        for r in s.resources:
            self.pools.setdefault(r.id, SharedPool(r.capacity))
        self.resources = {r.id: r for r in s.resources}
        self._queue = EventQueue()
        self._waiting: dict[tuple[str, str], list[tuple[str, int]]] = {}  # (task, state) → items to release
        self._reached: set[tuple[str, str]] = set()
        self._pending_request: dict[int, tuple[str, ...]] = {}
        self._wake_notes: list[str] = []
        self._reserved: dict[int, tuple[int, int, int, bool, bool]] = {}  # task → (start, end, id, sleep_work before, started by it)
        self._released: dict[tuple[str, str], tuple[list, list]] = {}  # state reached → (what waited, what it queued)
        self._void: set[tuple[int, int]] = set()  # (task, end) of withdrawn reservations: their finish never comes
        self._reservations = 0  # reservations made so far: each one's id (never the log's length, which
        # counts entries a replay leaves out, such as a rephraser's replies)
        self._starting = False  # does the allocation being made start its task?
        self._pending_units: dict[int, int] = {}
        # the agent-triggered tasks a follow-up may bring forward (asked at every follow-up), the
        # tasks each event triggers and the user's requests, by trigger (asked at every event)
        self._forwardable = [t for t in self.tasks if t.spec.trigger.earliest is not None]
        self._event_tasks: dict[str, list[int]] = {}
        for t in self.tasks:
            if t.spec.trigger.type == "event":
                self._event_tasks.setdefault(t.spec.trigger.event, []).append(t.index)
        self._user_tasks = [t for t in self.tasks if t.spec.trigger.type == "user"]
        # the calendar records, in the scenario's order (what ``read_calendars`` looks at, at every deferral)
        self._calendars = tuple(r.id for r in s.records if r.kind.startswith("calendar"))
        queued = self._schedule_records_and_events()  # (all queued at once: the order of pushing them in turn)
        for task in self.tasks:
            if task.spec.trigger.type != "event":
                queued.append((task.trigger, _TRIGGER, task.index))
            queued.append((task.spec.deadline, _CLOSE, task.index))
        queued.extend((day * MINUTES_PER_DAY + s.review_time, _REVIEW, day) for day in range(s.days))
        queued.append((s.end_minute - 1, _END, 0))
        self._queue.extend(queued)
        self.coins = dict(self.coins) if self.coins is not None else variant.coins(s, self.rng)
        # (logged: the scorer knows from the log which answers the oracle's requests get)
        self._record("run_start", persona=self.persona, rules=dict(self.policy.rules), face=self.face,
                     coins=dict(self.coins))

    def _schedule_records_and_events(self) -> list[tuple[int, int, int]]:
        """Show the records visible from the start, set the conditioned ones waiting, and return
        the queue items of the timed ones (minute, kind, payload), in order."""
        s, queued = self.scenario, []
        revealed = {r for ev in s.events for r in ev.reveals}
        for i, rec in enumerate(s.records):
            if rec.id in revealed:
                pass  # it appears with the event that reveals it (and only then)
            elif rec.when is not None:
                self._wait(rec.when, "record", i)
            elif rec.appears is not None:
                queued.append((rec.appears, _RECORD, i))
            else:
                self.store.show(rec.id)
            for v, version in enumerate(rec.versions, start=1):
                if version.when is not None:  # it waits for what the agent (or the world) does
                    self._wait(version.when, "version", i * 1000 + v)
                else:
                    queued.append((version.at, _RECORD, -(i * 1000 + v)))
        for i, ev in enumerate(s.events):
            if ev.when is not None:
                self._wait(ev.when, "event", i)
            else:
                queued.append((ev.at, _EVENT, i))
        return queued

    def _wait(self, cond, kind: str, index: int) -> None:
        self._waiting.setdefault((cond.task, cond.state), []).append((kind, index))

    def _record(self, entry_type: str, **data) -> None:
        data["t"] = self.now
        data["type"] = entry_type
        self.log.append(data)

    def _say(self, text: str) -> None:
        if self.inbox is not None:
            self.inbox.append(f"[{self.clock_text()}] {text}")

    def _review_once(self, text: str) -> None:
        """A review line, said once a minute however many reviews fall on it."""
        if self.reviewed_at != self.now:
            self.reviewed_at = self.now
            self._say(text)

    def clock_text(self, minute: int | None = None) -> str:
        """'D10 (Wed 11 Mar) 08:30': the scenario day, the weekday and date, the time."""
        return clock_text(self.scenario.start_date, self.now if minute is None else minute)

    # ------------------------------------------------------------------ the clock
    def advance(self) -> None:
        """Move the clock to the next decision point (or the end of the run)."""
        queue = self._queue
        # (the heap's head read directly, not through ``peek_minute``: this loop runs at every
        # decision point; it is looked up again after each entry, as handling one may rebuild it)
        while queue._heap and not self.done:
            minute = queue._heap[0][0]
            woke = False
            while queue._heap and queue._heap[0][0] == minute:
                at, kind, payload = queue.pop()
                self.now = at
                woke |= self._handle(kind, payload)
            if woke:
                return

    def next_minute(self) -> int | None:
        """When the next queued entry falls (a shared clock moves to the earliest of these)."""
        return None if self.done else self._queue.peek_minute()

    def advance_to(self, minute: int) -> bool:
        """Process everything queued up to ``minute`` and stand there; True if any of it is a
        decision point for this world's agent (used when several worlds share one clock)."""
        woke = False
        queue = self._queue
        while queue and not self.done and queue.peek_minute() <= minute:
            at, kind, payload = queue.pop()
            self.now = at
            woke |= self._handle(kind, payload)
        if not self.done:
            self.now = max(self.now, minute)
        return woke

    def _handle(self, kind: Q, payload: int) -> bool:
        # (the kinds asked in the order of how often they come: follow-ups and closes first)
        if kind is Q.FOLLOWUP:
            return self._on_followup(self.tasks[payload])
        if kind is Q.CLOSE:
            self._close(self.tasks[payload])
            return False
        if kind is Q.WORK_DONE:
            return self._on_work_done(self.tasks[payload])
        if kind is Q.REVIEW:
            if not self.schedule.available(self.now):
                return False
            self._review_once("Daily review: a moment to look over open matters.")
            return True
        if kind is Q.TRIGGER:
            return self._on_trigger(self.tasks[payload])
        if kind is Q.EVENT:
            return self._on_event(payload)
        if kind is Q.RECORD:
            return self._on_record(payload)
        if kind is Q.DECIDE:
            return self._on_decide(self.tasks[payload])
        if kind is Q.WAKE:
            self._say(f"Follow-up you scheduled: {self._wake_notes[payload]}".rstrip(": "))
            self._bring_forward()
            return True
        if kind is Q.END:
            return self._on_end()
        raise AssertionError(kind)

    def _on_record(self, payload: int) -> bool:
        s = self.scenario
        if payload >= 0:
            rec = s.records[payload]
            if self.store.show(rec.id):
                self._record("record", id=rec.id, version=self.store.version[rec.id])
            return False
        index, version = divmod(-payload, 1000)
        rec = s.records[index]
        if self._moot(rec.versions[version - 1].unless):
            return False
        self.store.advance(rec.id, version)
        if rec.id in self.store.visible:
            self._record("record", id=rec.id, version=version)
        return False

    def _moot(self, unless) -> bool:
        """Has what a timed change waits to undo already happened (the agent's action made it moot)?"""
        return unless is not None and (unless.task, unless.state) in self._reached

    def _on_event(self, index: int) -> bool:
        ev = self.scenario.events[index]
        if self._moot(ev.unless):
            self._record("event_moot", id=ev.id)
            return False
        for rid in ev.reveals:
            if self.store.show(rid):
                self._record("record", id=rid, version=self.store.version[rid])
        text = fill(ev.text, self.store.derived_args(f"event:{ev.id}"))  # a confirmation names what was done
        matter = self.raise_matter(headline(text), self._tasks_raised_by(ev), records=tuple(ev.reveals))
        if self.inbox is not None:  # (worded only where someone reads it)
            self._say(f"{ev.kind.replace('_', ' ')} [{matter.id}]: {text}")
        self._record("event", id=ev.id, kind=ev.kind, matter=matter.id)
        if ev.kind in USER_SPEAKS:
            self._up()
        change = ev.policy_change
        if change and self.persona in change.personas:
            self._change_policy(change.rules, "feedback")
        for index in self._event_tasks.get(ev.id, ()):  # (in task order, as a scan of every task)
            self.trigger_task(self.tasks[index])
        return True

    def _up(self) -> None:
        """The user has written: one who writes in their sleep hours is up from now on. That night
        ends now (``Schedule.woken``) and the requests waiting for them are answered now. Only what
        has come cuts a night: whether the user sleeps is always judged with the nights as known
        at the time (a judgement made earlier — a reply, a reservation's sleep time — stands)."""
        if not self.schedule.sleep.contains(self.now):
            return
        self.schedule = self.schedule.woken(self.now)
        self._record("user_up")  # (the timeline draws the night cut here)
        back = self.schedule.next_available(self.now)  # (now, unless a focus block holds them)
        if back < self.scenario.end_minute:
            for index in self._pending_request:
                self._queue.push(back, Q.DECIDE, index)

    def _tasks_raised_by(self, ev) -> list[int]:
        """The tasks an event raises: those it triggers, and the user's requests it voices (a
        ``user`` trigger at the minute the user speaks)."""
        raised = self._event_tasks.get(ev.id, [])
        if ev.kind not in USER_SPEAKS:
            return list(raised)
        return sorted([*raised, *(t.index for t in self._user_tasks if t.trigger == self.now)])

    def raise_matter(self, title: str, tasks: list[int], own: bool = False, records: tuple[str, ...] = ()) -> Matter:
        matter = Matter(f"m{len(self.matters) + 1}", title, self.now, list(tasks), own, records)
        self.matters[matter.id] = matter
        if own:
            self._record("matter", id=matter.id, title=title, tasks=[self.tasks[i].spec.id for i in tasks])
        return matter

    def matter_of(self, task: TaskState) -> Matter | None:
        """The (first) matter that concerns the task, if any."""
        return next((m for m in self.matters.values() if task.index in m.tasks), None)

    def _name(self, task: TaskState, otherwise: str) -> str:
        matter = self.matter_of(task)
        return f"{matter.id}" if matter is not None else otherwise

    def _change_policy(self, rules: dict[str, str], reason: str) -> None:
        changed = {c: r for c, r in rules.items() if self.policy.rules.get(c) != r}
        self.policy.change(rules)
        for category in changed:
            self.feedback.append(FeedbackEvent("revoked" if reason == "revocation" else "policy_change",
                                               self.now, category))
        self._record("policy_change", rules=dict(changed), reason=reason)
        self.dirty.update(t.index for t in self.tasks if t.spec.category in changed or t.spec.work.category in changed)

    def _on_trigger(self, task: TaskState) -> bool:
        return self.trigger_task(task) if not task.triggered else False

    def may_come_up(self, task: TaskState) -> bool:
        """Will the task come up as things stand: not yet triggered, and what it hangs on reached?"""
        return not task.triggered and not task.closed and all((c.task, c.state) in self._reached
                                                              for c in task.spec.requires)

    def trigger_task(self, task: TaskState) -> bool:
        task.triggered = True
        task.trigger = self.now
        if task.closed or not all((c.task, c.state) in self._reached for c in task.spec.requires):
            self._record("task_inactive", task=task.spec.id)
            return False
        task.active = True
        self.came_up.append(task.index)
        self.dirty.add(task.index)
        self._record("task_active", task=task.spec.id)
        if task.spec.trigger.type == "agent":  # the agent's own review point: say why it woke, not what for
            self._review_once("Review point: a moment to look over open matters and what has changed.")
        return True

    def knowable(self, task: TaskState) -> bool:
        """Could the agent see the need now? An agent-triggered task (a latent need) that would
        come up as things stand is knowable from its declared ``earliest``, else once every record
        of its evidence is visible: from then on a call that is its action brings it up
        (``TextTools._bring_up_need``), as if it had come up then — never before, when the agent
        could not know of it (DESIGN.md §4: a world that remembers the agent)."""
        trig = task.spec.trigger
        if trig.type != "agent" or not self.may_come_up(task):
            return False
        if trig.earliest is not None:
            return trig.earliest <= self.now
        evidence = task.spec.evidence
        return bool(evidence) and all(r in self.store.visible for r in evidence)

    def _bring_forward(self) -> None:
        """An agent-triggered task whose window [earliest, at) the agent's own follow-up falls in."""
        for task in self._forwardable:
            trig = task.spec.trigger
            if not task.triggered and trig.earliest <= self.now < trig.at:
                self.trigger_task(task)

    def wake_at(self, minute: int, note: str) -> None:
        """A follow-up the agent set for itself (text face), with its own note."""
        self._wake_notes.append(note)
        self._queue.push(minute, Q.WAKE, len(self._wake_notes) - 1)
        self._record("followup_set", at=minute, note=note)

    def _on_followup(self, task: TaskState) -> bool:
        if task.followup != self.now:
            return False
        task.followup = None
        if self.inbox is not None:  # (the agent asked to be woken: it is, even on a task closed since)
            self._say(f"Follow-up you scheduled on {self._name(task, 'a deferred matter')}.")
        if task.closed:  # nothing left to do on it
            return True
        self.dirty.add(task.index)
        self._record("followup", task=task.spec.id)
        self._bring_forward()
        return True

    def _reach(self, task: TaskState, state: str, since: int | None = None) -> None:
        """A task reached a state: release the records and events that waited for it, each its
        ``after`` minutes from ``since`` (default: now; ``begun``: the action's own start)."""
        since = self.now if since is None else since
        key = (task.spec.id, state)
        if key in self._reached:
            return
        self._reached.add(key)
        done = self.store.done_args.get(task.spec.id)
        waiting = self._waiting.pop(key, [])
        self._released[key] = (waiting, [])
        for kind, index in waiting:
            if kind == "record":
                rec = self.scenario.records[index]
                when, at, entry = rec.when, rec.appears or 0, index
            elif kind == "version":
                record, v = divmod(index, 1000)
                when = self.scenario.records[record].versions[v - 1].when
                at, entry = self.scenario.records[record].versions[v - 1].at, -index
            else:
                when, at, entry = self.scenario.events[index].when, self.scenario.events[index].at, index
            if not names_hold(when.names, done):  # about something the executed action did not include
                self._record("not_applicable", kind=kind, index=index, names=list(when.names))
                continue
            kind_q = Q.EVENT if kind == "event" else Q.RECORD
            self._queue.push(max(at, since + when.after), kind_q, entry)
            self._released[key][1].append((max(at, since + when.after), kind_q, entry))

    def _close(self, task: TaskState) -> None:
        if task.closed:
            return
        task.closed = True
        self.dirty.add(task.index)
        if task.active:
            if not self.reached_wanted(task):
                self._reach(task, "missed")
                if self.policy.wanted(task.spec, self.persona) >= Depth.SUGGEST:  # the user needed to see it, and did not
                    self._react(task, aligned=False, over=False, cause="missed")
        self._record("task_closed", task=task.spec.id)

    def reached_wanted(self, task: TaskState) -> bool:
        """Has the task reached the depth the user wants for it (as the user sees it now)?"""
        wanted = self.policy.wanted(task.spec, self.persona)
        if wanted == Depth.EXECUTE:
            return task.executed
        if wanted == Depth.SUGGEST:
            return task.presented
        return wanted == Depth.NOOP or task.started

    def _on_end(self) -> bool:
        # "Approved" is not "done": one last decision point if an approved action is unexecuted.
        if not self.grace and any(t.active and not t.closed and t.approval == "approve" and not t.executed
                                  for t in self.tasks):
            self.grace = True
            self._queue.push(self.now + 1, Q.END, 0)
            return True
        for task in self.tasks:
            self._close(task)
        self.done = True
        self._record("run_end", trust=round(self.trust.value, 6))
        return True

    # ------------------------------------------------------------------ the user
    def _react(self, task: TaskState, *, aligned: bool, over: bool, cause: str) -> None:
        before = self.trust.value
        self.trust.update(aligned, over_intervention=over)
        self._record("trust", task=task.spec.id, aligned=aligned, over=over, cause=cause,
                     before=round(before, 6), after=round(self.trust.value, 6))

    def _intervene(self, task: TaskState, depth: Depth, asks: str | None = None,
                   judged: tuple[bool, bool, tuple | None] | None = None) -> bool:
        """The user sees an intervention and reacts to it; returns whether it was aligned. A
        repeat (``is_repeat``) is not a new intervention: the user's trust does not move for it.
        ``judged``: (aligned, over, ``seen_signature`` where aligned) as the caller just worked
        them out for the same intervention, nothing changed since."""
        aligned, over = judged[:2] if judged is not None else self.policy.aligned(task.spec, depth)
        if aligned:
            signature = judged[2] if judged is not None else self.seen_signature(task, depth, asks)
            if signature in task.welcomed:
                return True
            task.welcomed.add(signature)
        self._react(task, aligned=aligned, over=over, cause=_DEPTH_NAMES[depth])
        return aligned

    def seen_signature(self, task: TaskState, depth: Depth, asks: str | None) -> tuple:
        """What the user sees in an intervention on the task: its depth, what it asks them to
        decide (``decided_tool``; None: nothing), and the work behind it — the units done and the
        records (and versions) read for it. Its wording is not part of it: rewording the same
        work is showing it again."""
        return depth, asks, task.units_done, frozenset(task.versions_read.items())

    def is_repeat(self, task: TaskState, depth: Depth, asks: str | None = None) -> bool:
        """Would the intervention be one the user has already welcomed on this task: aligned, and
        the same depth, question and work (``seen_signature``) as an aligned one they have seen?
        Then it earns no trust (the user has seen it: repetition is not service), and the
        scorer counts it as no new intervention; a misaligned one always counts."""
        return self.policy.aligned(task.spec, depth)[0] and self.seen_signature(task, depth, asks) in task.welcomed

    def request_decision(self, task: TaskState, requested: tuple[str, ...], what: str) -> Decision | None:
        if self.schedule.available(self.now):
            return self._decide(task, requested, what)
        task.approval = "pending"
        self._pending_request[task.index] = requested
        self._record("decision", **Decision(task.spec.id, requested, "defer", "user_unavailable", self.now,
                                            self.trust.value, self.trust.value).to_dict())
        later = self.schedule.next_available(self.now)
        if later < self.scenario.end_minute:
            self._queue.push(later, Q.DECIDE, task.index)
        return None

    def _on_decide(self, task: TaskState) -> bool:
        if not self.schedule.available(self.now):  # (one queued for a stated morning the user came up before:
            return False  # the request now waiting was queued for when they are back)
        requested = self._pending_request.pop(task.index, None)
        if requested is None:
            return False
        if task.closed:  # said, not silently dropped: the agent sees it at its next wake-up
            self._say(f"Your request under {self._name(task, 'an earlier matter')} lapsed: that matter closed "
                      f"before {self.scenario.user.name} could answer.")
            self._record("request_lapsed", task=task.spec.id)
            return False
        self._decide(task, requested, _describe(requested))
        return True

    def _decide(self, task: TaskState, requested: tuple[str, ...], what: str) -> Decision:
        spec = task.spec
        before = self.trust.value
        run = _asks_for_the_run(task, requested)  # the run is what is decided
        in_force = self.policy.rules[spec.work.category] if run else self.policy.rule(spec)
        # a stochastic answer is the task's coin: the same request under the same rule gets the
        # same answer, however often it is asked and whatever came before (asking until yes is no
        # way to a yes); the rules that draw nothing, low trust included, are decided afresh
        verdict, rule = decide(
            task_tool=decided_tool(task, requested), requested=requested, rule=in_force,
            declines=self.persona in spec.declines,
            trust=before, competed=task.competed, sleep_work=task.sleep_work, coin=self.coins[spec.id])
        decision = Decision(spec.id, requested, verdict, rule, self.now, before, self.trust.value)
        self.decisions.append(decision)
        self._record("decision", **decision.to_dict())
        self.policy.answer(spec.id, verdict)
        # a reply that decides nothing (not understood, or nothing to approve) leaves the answer standing
        task.approval = verdict if verdict != "nothing" else self.policy.answers.get(spec.id)
        if verdict == "approve":
            task.exec_refused = task.run_refused = False
            self._reach(task, "approved")
        self.feedback.append(FeedbackEvent(verdict, self.now, spec.category))
        if self.inbox is not None or self.rephrase is not None:  # (a rewording is logged: asked whenever there is one)
            self._say(self.reply_text(decision, what))
        self.dirty.add(task.index)
        return decision

    def reply_text(self, decision: Decision, what: str) -> str:
        """The user's words for a recorded decision; a rewording is logged with whether it was kept."""
        user = self.scenario.user
        template = {"approve": self.replies.approve, "decline": self.replies.decline,
                    "acknowledge": self.replies.acknowledge, "nothing": self.replies.nothing}[decision.verdict]
        if decision.rule == "unrecognised_action":
            template = self.replies.unrecognised
        elif decision.rule == "incomplete_request":
            template = self.replies.incomplete
        base = reply(template, what)
        text = base
        if self.rephrase is not None:
            style = f"{user.speaking_style} {self.scenario.personas[self.persona].style}".strip()
            text = reply(template, what, self.rephrase, style, decision.verdict)
            self._record("reply", text=text, reworded=text != base)
        return f"{user.name}: {text} [your request: {self.decision_status(decision)}]"

    def decision_status(self, decision: Decision) -> str:
        """A decision's judgement, said as every request's is (``REQUEST_STATUS``), however terse the
        user's words: the rule where it says more (a decline's rule, not understood, incomplete)."""
        judgement = decision.verdict
        if decision.rule in REQUEST_STATUS and (decision.verdict == "decline") == (decision.rule in _DECLINE_RULES):
            judgement = decision.rule
        if judgement == "unrecognised_action":  # what this matter asks for: its own action, nothing still to come
            return request_status(judgement, asks=f" (this matter's action: "
                                                  f"{decided_tool(self.by_id[decision.task], decision.actions)})")
        if judgement == "nothing":
            return request_status(judgement, why="no action of this matter needs an OK")
        return request_status(judgement)

    # ------------------------------------------------------------------ compute
    def resource_free(self, resource: str | None, start: int, end: int) -> bool:
        """Free over [start, end): not held by the user's own use, with a slot left for a job."""
        if resource is None:
            return True
        return self.schedule.resource_free(resource, start, end) and self.pools[resource].free(start, end)

    def remaining_minutes(self, task: TaskState) -> int:
        work = task.spec.work
        return work.minutes * max(1, work.units - task.units_done)

    def _free_check(self, resource: str | None) -> FreeCheck:
        """``resource_free`` for one resource, as the searches ask it (their inner loop): the
        user's use of it and its pool bound once (None: no resource, always free)."""
        if resource is None:
            return lambda start, end: True  # noqa: E731
        busy, pool = self.schedule.resource_busy[resource], self.pools[resource]
        return lambda start, end: not busy.overlaps(start, end) and pool.free(start, end)  # noqa: E731

    def free_window(self, task: TaskState) -> tuple[int, bool] | None:
        """Where ``allocate`` would run the task's remaining work: (start, in the user's sleep)."""
        work = task.spec.work
        free = self._free_check(work.resource)
        return self.schedule.next_free_window(self.now, free, self.remaining_minutes(task), task.spec.deadline,
                                              idle_fallback=work.resource is not None)

    def next_opportunity(self, task: TaskState, after: int | None = None) -> int | None:
        """The next feasible time to pick a postponed task up, from what the agent can see: at
        least an hour ahead (and not before ``after``), the user reachable and the compute free
        for the rest of the work, finishing before the deadline."""
        resource = task.spec.work.resource
        free = None if resource is None else self._free_check(resource)
        earliest = max(self.now + FOLLOWUP_DELAY, after or 0)
        return self.schedule.next_opportunity(earliest, free, self.remaining_minutes(task), task.spec.deadline)

    def _launch(self, task: TaskState, start: int, minutes: int, units: int, allocated: bool,
                queue_done: bool = True) -> None:
        """Run ``units`` of the task's work for ``minutes`` from ``start`` (later if its
        resource is full: jobs beyond capacity queue)."""
        resource = task.spec.work.resource
        if resource is not None:
            start = self.pools[resource].earliest(start, minutes)
            self.pools[resource].reserve(start, start + minutes, self.owner)
        end = start + minutes
        reservation = {}
        if allocated:  # the agent's reservation: it may withdraw or move it until it starts
            rid, self._reservations = self._reservations, self._reservations + 1
            self._reserved[task.index] = (start, end, rid, task.sleep_work, self._starting)
            reservation = {"reservation": rid}
        sleep = self.schedule.sleep.contains(start) and self.schedule.sleep.contains(end - 1)
        task.running, task.allocated = True, allocated
        self.dirty.add(task.index)
        task.sleep_work = task.sleep_work or sleep
        self._pending_units[task.index] = units
        if queue_done:  # (else the caller finishes it at once: it ended before now)
            self._queue.push(end, Q.WORK_DONE, task.index)
        self._record("work", task=task.spec.id, resource=resource, start=start, end=end, units=units,
                     allocated=allocated, sleep_time=sleep, **reservation)
        if resource is not None and self.schedule.resource_busy[resource].overlaps(start, end):
            self._intrude(task, resource, start, end, reservation)

    def _intrude(self, task: TaskState, resource: str, start: int, end: int, reservation: dict) -> None:
        """The agent's job runs over the user's own use: the user's work slows and they say so."""
        task.competed = True
        self.feedback.append(FeedbackEvent("complaint", self.now, task.spec.category))
        self._say(f"{self.scenario.user.name}: {self.resources[resource].complaint}")
        self._record("intrusion", task=task.spec.id, resource=resource, start=start, end=end, **reservation)
        self._react(task, aligned=False, over=True, cause="intrusion")

    def _on_work_done(self, task: TaskState) -> bool:
        if (task.index, self.now) in self._void:  # a withdrawn reservation's finish
            self._void.discard((task.index, self.now))
            return False
        self._reserved.pop(task.index, None)
        units = self._pending_units.pop(task.index, 0)
        if task.closed or not task.running:
            return False
        task.running = task.allocated = False
        task.units_done = min(task.spec.work.units, task.units_done + units)
        if task.units_done == task.spec.work.units:
            self._reach(task, "done")
        self.dirty.add(task.index)
        if self.inbox is not None:
            self._say(f"Work finished ({task.units_done}/{task.spec.work.units} units) on {self._name(task, 'a matter you started')}.")
        self._record("work_done", task=task.spec.id, units_done=task.units_done)
        return True

    # ------------------------------------------------------------------ agent actions (structured verbs)
    def act(self, verb: Verb, index: int) -> bool:
        """Apply one structured action. Returns False (and changes nothing) if it is not valid."""
        task = self.tasks[index]
        if not self.valid_verbs(task)[verb]:
            return False
        self.dirty.add(index)
        self._record("action", verb=_VERB_NAMES[verb], task=task.spec.id)
        if verb is Verb.START:
            self.read_evidence(task)
            self.start(task)
        elif verb is Verb.CONTINUE:
            self.read_evidence(task)
            self.work_unit(task)
        elif verb is Verb.DEFER:
            self.read_calendars()  # its time is the user's next free one: looked up in the calendars
            self.defer(task, self.next_opportunity(task))
        elif verb is Verb.ALLOCATE:
            self.read_evidence(task)
            slot = self.free_window(task)
            if slot is None:
                self._record("allocate_failed", task=task.spec.id)
            else:
                self.allocate(task, slot[0])
        elif verb is Verb.PRESENT:
            self.read_evidence(task)
            if self.asks_for_run(task):  # before a run the user decides: ask for it
                self.present(task, None, request=True, requested=(RUN_TOOL,))
            else:
                self.present(task, None, request=task.spec.action is not None and not task.executed)
        elif verb is Verb.EXECUTE:
            self.read_evidence(task)
            self.execute(task, dict(task.spec.action.args))
        return True

    def valid_verbs(self, t: TaskState) -> tuple[bool, ...]:
        """Which of (start, continue, defer, allocate, present, execute) can be applied to ``t``."""
        if not t.active or t.closed:
            return _NOTHING_VALID
        open_work = t.units_done < t.spec.work.units and not t.running and not (t.run_refused and self.needs_run_ok(t))
        return (not t.started, t.started and open_work, t.followup is None, open_work,
                not t.presented, t.spec.action is not None and not t.executed and not t.exec_refused)

    def read_evidence(self, task: TaskState) -> None:
        """Working on a task means looking at its records (those that exist now)."""
        for rid in task.spec.evidence:
            if rid in self.store.visible and rid not in task.read:
                self.read(rid, task)

    def read_calendars(self) -> None:
        """Timing a task means looking at the calendars (those that exist now, not yet read): what
        shows the user's and the compute's time, and so a clash over it."""
        visible, observed = self.store.visible, self.observed
        for rid in self._calendars:
            if rid in visible and rid not in observed:
                self.read(rid, None)

    def read(self, record_id: str, task: TaskState | None) -> None:
        self.observed.add(record_id)
        if task is not None:
            task.read.add(record_id)
            task.versions_read[record_id] = self.store.version.get(record_id, 0)
            self.dirty.add(task.index)
        self._record("read", record=record_id, task=task.spec.id if task else None,
                     version=self.store.version.get(record_id, 0))

    def start(self, task: TaskState) -> None:
        """Take the task up and run a unit of its work now; compute work starts with its run (a
        run refused for want of the user's OK starts nothing that follows it)."""
        if task.spec.work.resource is None:
            self.begin(task)
        else:
            self.take_up(task)
        self.work_unit(task)

    def begin(self, task: TaskState) -> None:
        """The agent has taken the task up and its work runs now: what waits for it starting
        (its results, the notices about it) is on its way."""
        task.started = True
        self.dirty.add(task.index)
        self._reach(task, "started")

    def take_up(self, task: TaskState) -> None:
        """The agent has taken up a task whose work needs compute, and nothing of it runs yet: it
        counts as started (prepared), but what follows its run waits for the run, which only a
        reservation makes (``allocate``); a note is not a run, and the run's results must not
        appear before it."""
        task.started = task.taken_up = True
        self.dirty.add(task.index)

    def work_unit(self, task: TaskState) -> None:
        if task.units_done < task.spec.work.units and not task.running and self.may_run(task):
            if task.spec.work.resource is not None:  # its run begins now: what follows the run is on its way
                self.begin(task)
            self._launch(task, self.now, task.spec.work.minutes, 1, allocated=False)

    def needs_run_ok(self, task: TaskState) -> bool:
        """Is the task's run a matter the user decides, not yet delegated nor approved?"""
        return not self.policy.run_authorised(task.spec)

    def may_run(self, task: TaskState) -> bool:
        """The gate on running a task's work on its resource: an unapproved run the user decides
        is refused, like an unauthorised execute (the user sees it as overstepping)."""
        if not self.needs_run_ok(task):
            return True
        task.run_refused = True
        self.dirty.add(task.index)
        self._record("run_refused", task=task.spec.id, resource=task.spec.work.resource)
        if self.inbox is not None:
            self._say(f"Refused: running that on {task.spec.work.resource} needs {self.scenario.user.name}'s OK first.")
        self._react(task, aligned=False, over=True, cause="run")
        return False

    def work_since(self, task: TaskState, start: int) -> None:
        """A unit of work the agent did from ``start``, before the task came up (an earlier note
        it now counts for): it ends when it would have ended, now at the latest."""
        if task.units_done >= task.spec.work.units or task.running or task.spec.work.resource is not None:
            return
        task.started = True
        self._reach(task, "started")
        finished = start + task.spec.work.minutes <= self.now
        self._launch(task, start, task.spec.work.minutes, 1, allocated=False, queue_done=not finished)
        if finished:
            self._on_work_done(task)

    def defer(self, task: TaskState, until: int | None, plan: str = "", made: int | None = None) -> None:
        """An explicit postponement, with a follow-up at ``until`` (None: no time given); ``made``:
        when the agent wrote it, if before now (a postponement kept until its task came up)."""
        task.deferred = True
        self.dirty.add(task.index)
        self._reach(task, "deferred")
        if until is not None:
            task.followup = until
            self._queue.push(until, Q.FOLLOWUP, task.index)
        self._record("defer", task=task.spec.id, until=until, plan=plan, **({"made": made} if made is not None else {}))

    def allocate(self, task: TaskState, start: int) -> bool:
        """Reserve the task's resource from ``start`` and run all its remaining work there;
        False if the run needs the user's OK first (refused)."""
        if not self.may_run(task):
            return False
        self._starting = (task.spec.id, "started") not in self._reached
        task.started = True
        units = task.spec.work.units - task.units_done
        self._launch(task, start, task.spec.work.minutes * units, units, allocated=True)
        # what follows the run (its results, its notices) waits for the run: timed from when it
        # begins, not from the call (a reservation moved later moves them with it)
        self._reach(task, "started", since=self._reserved[task.index][0])
        return True

    def reservation(self, task: TaskState) -> tuple[int, int] | None:
        """The agent's reservation for the task's run that has not started yet: (start, end)."""
        held = self._reserved.get(task.index)
        return held[:2] if held is not None and held[0] > self.now else None

    def withdraw(self, task: TaskState, moved: bool = False) -> bool:
        """Withdraw the task's reservation before it starts (False: none, or it has started). The
        scorer counts it as never made (``reservation_withdrawn``): no compute used, no postponement
        — unless it is ``moved`` (withdrawn to be reserved again at once): then the next reservation
        is the same one at its new time."""
        if self.reservation(task) is None:
            return False
        start, end, rid, task.sleep_work, starting = self._reserved.pop(task.index)
        if starting:  # it had started the task: what waited for that waits again
            key = (task.spec.id, "started")
            self._reached.discard(key)
            waiting, queued = self._released.pop(key)
            self._queue.remove(queued)
            self._waiting[key] = waiting
            task.started = task.taken_up  # a note that took it up before still did
        pool = self.pools[task.spec.work.resource]
        pool.reservations.remove(next(r for r in pool.reservations if r[:2] == (start, end) and r[2] == self.owner))
        self._pending_units.pop(task.index, None)
        self._void.add((task.index, end))
        task.running = task.allocated = False
        self.dirty.add(task.index)
        self._record("reservation_withdrawn", task=task.spec.id, reservation=rid, **({"moved": True} if moved else {}))
        return True

    def asks_for_run(self, task: TaskState) -> bool:
        """Would showing the task now be asking for its run (its work not done, the run needing
        the user's OK, no answer pending)?"""
        return (task.units_done < task.spec.work.units and not task.running and self.needs_run_ok(task)
                and task.approval not in ("pending", "decline"))

    def present(self, task: TaskState, text: str | None, request: bool, what: str | None = None,
                requested: tuple[str, ...] | None = None, sent: int | None = None,
                made: int | None = None) -> Decision | None:
        """Show the user the task's work (``text``; None: the structured face's composed work);
        with ``request``, ask approval for the listed actions (default: the task's own). A request
        for the task's run (``RUN_TOOL``) asks for that alone: it delivers none of the work.
        ``sent``: an earlier message this task claimed, which the user saw when it was sent;
        ``made``: an earlier request kept until this task came up, put to the user now but the
        agent's act when it made it (the log carries both: the scorer judges timing by them)."""
        report = task.executed  # a report of an action already taken is not a suggestion
        self.dirty.add(task.index)
        request = request and not report
        requested = requested or ((task.spec.action.tool,) if task.spec.action else ())
        run = request and _asks_for_the_run(task, requested)
        asks = decided_tool(task, requested) if request else None
        judged = None
        if not report:  # (``is_repeat``, and what ``_intervene`` asks of it: worked out once)
            aligned, over = self.policy.aligned(task.spec, Depth.SUGGEST)
            judged = aligned, over, self.seen_signature(task, Depth.SUGGEST, asks) if aligned else None
        repeat = judged is not None and judged[0] and judged[2] in task.welcomed
        self._record("present", task=task.spec.id, text=text, request=list(requested) if request else None,
                     report=report, **({"run": True} if run else {}), **({"sent": sent} if sent is not None else {}),
                     **({"made": made} if made is not None else {}), **({"repeat": True} if repeat else {}))
        if not report:
            self._intervene(task, Depth.SUGGEST, asks, judged)
            if not run:
                task.presented = True
                self._reach(task, "presented")
        if request:
            return self.request_decision(task, requested, what or _describe(requested))
        return None

    def execute(self, task: TaskState, args: dict, problem: str | None = None) -> str | None:
        """Apply the task's action (with ``args``). Returns why it was refused, or None.

        An unauthorised execute is refused, counts as attempted, and makes the user take the
        category's delegation back; one with missing or wrong arguments (``problem``) is refused,
        unlocks nothing and leaves an approval given in force (it holds until the action is done).
        """
        spec = task.spec
        self.dirty.add(task.index)
        authorised = self.policy.authorised(spec)
        repeat = self.is_repeat(task, Depth.EXECUTE)
        self._intervene(task, Depth.EXECUTE)
        reason = None if authorised else "unauthorised"
        reason = reason or problem or self.start_problem(task, args)
        begins = self.action_start(task, args) if reason is None else None
        self._record("execute", task=spec.id, tool=spec.action.tool, args=args, ok=reason is None, reason=reason,
                     **({"repeat": True} if repeat else {}), **({"begins": begins} if begins is not None else {}))
        if reason == "unauthorised":
            task.exec_refused = True
            if self.inbox is not None:
                self._say(f"Refused: {spec.action.tool} needs {self.scenario.user.name}'s approval first.")
            self._revoke(spec.action.tool)
            return reason
        if reason is not None:  # wrong arguments: nothing happens; an approval given still holds
            return reason
        task.executed = True
        self.store.done_args[spec.id] = dict(args)  # what the world now shows of it derives from these
        self.store.changes += 1
        self._reach(task, "executed")  # (done now: the submission, the booking, their confirmations)
        self._reach(task, "begun", since=begins)  # what follows the action's run, from its start
        return None

    def action_start(self, task: TaskState, args: dict) -> int | None:
        """When the task's action with ``args`` begins, where that is later than now (None: now):
        its tool's declared start parameters (``Tool.starts``)."""
        try:
            start = self.tools[task.spec.action.tool].start(args, self.scenario.start_date)
        except ValueError:
            return None
        return start if start is not None and start > self.now else None

    def start_problem(self, task: TaskState, args: dict) -> str | None:
        """Why the action cannot begin when ``args`` say (None: it can): a start that says no
        time, one in the past, or one after the deadline where the task's reference starts its
        action at once (work begun after it is due is late; a reference start of its own, and
        any window around it, is judged with the arguments)."""
        tool = self.tools[task.spec.action.tool]
        names = " and ".join(f"'{n}'" for n in tool.starts)
        try:
            start = tool.start(args, self.scenario.start_date)
        except ValueError as e:
            return f"{names}: {e}"
        if start is None:
            return None
        if start < self.now:
            return f"{names}: it would begin {self.clock_text(start)}, before now"
        if start >= task.spec.deadline and tool.start(task.spec.action.args, self.scenario.start_date) is None:
            return (f"{names}: it would begin {self.clock_text(start)}, after this matter is due "
                    f"({self.clock_text(task.spec.deadline)}); begin it sooner, or leave {names} out to begin now")
        return None

    def _revoke(self, tool: str) -> None:
        """Over-intervention: the user takes back delegation of every category acted on with this tool."""
        delegated = {t.category for t in self.scenario.tasks
                     if t.action is not None and t.action.tool == tool and self.policy.rules.get(t.category) == "execute"}
        if delegated:
            self._say(f"{self.scenario.user.name}: {self.replies.revoked}")
            self._change_policy(dict.fromkeys(sorted(delegated), "approve"), "revocation")


# Every judgement a request can get, and how it is said: the one table (the user's decisions, in
# "[your request: ...]", and the text face's results, "Request ..." or "not sent — ..."). Each path
# names a judgement; the words are the judgement's alone (fields fill in names and ids only), so the
# same kind of request gets the same answer in every scenario, whichever path judged it.
REQUEST_STATUS = {
    # the user's decisions
    "approve": "approved",
    "decline": "declined",
    "acknowledge": "not approved: they will do it themselves",
    "incomplete_request": "not approved: list every action it involves",
    # a decline says which rule decided it, so the agent knows whether asking again can help
    "persona_declines": "declined: their answer to this one is no",
    "low_trust": "declined: their trust in you is low after work at the wrong depth or missed; "
                 "work at the depth the policy wants restores it",
    "competing_work": "declined: it came while your work competed with theirs",
    "sleep_time_work": "declined: it came with work run in their sleep time",
    # decides nothing: nothing is put to the user by the text face, and a decision leaves the answer standing
    "nothing": "nothing here to approve: {why}",
    "unrecognised_action": "not understood: name the exact actions{asks}",
    "already_approved": "already approved{under}: carry it out (an approval holds until the action is done)",
    "elsewhere": "{tools} is the work of another open matter; one matter per request: ask for it on its own",
    "over": "{matter} is over for this action: {why}",
    "malformed": "malformed: expected 'actions', a non-empty list of {{\"tool\": ..., \"args\": {{...}}}}",
    # where it went
    "kept": "kept: it fits no open matter; it goes to {user} if a matter it fits comes up (you will be told)",
    "sent": "sent; {user} answered at once (the reply is below)",
    "queued": "queued: the user will decide when available",
}


def request_status(judgement: str, **fields: str) -> str:
    """How a request's judgement is said (``REQUEST_STATUS``)."""
    return REQUEST_STATUS[judgement].format(**fields)


def needs_no_ok(tools: list[str]) -> str:
    """Why a request listing only the agent's own steps has nothing to approve."""
    names = ", ".join(dict.fromkeys(tools))
    return f"{names} {'needs' if len(set(tools)) == 1 else 'need'} no OK now (your own step)"


_DECLINE_RULES = frozenset({"persona_declines", "low_trust", "competing_work", "sleep_time_work"})


def decided_tool(task: TaskState, requested: tuple[str, ...]) -> str | None:
    """What a request about the task is decided on: its run where it asks for that, else its
    action, else (where it names anything) its run, if the user decides that (None: nothing to
    approve)."""
    work = task.spec.work
    if _asks_for_the_run(task, requested):
        return RUN_TOOL
    if task.spec.action is not None:
        return task.spec.action.tool
    return RUN_TOOL if requested and work.category is not None and task.units_done < work.units else None


def _asks_for_the_run(task: TaskState, requested: tuple[str, ...]) -> bool:
    """Is a request for exactly the task's run, where that run is a matter the user decides?"""
    return requested == (RUN_TOOL,) and task.spec.work.category is not None


@functools.lru_cache(maxsize=4096)
def headline(text: str, limit: int = 100) -> str:
    """The start of a message, cut at a word, as a matter's title (a pure function of the two,
    cached: an event's text recurs from episode to episode)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[:limit].rsplit(" ", 1)[0] + " ..."


_REPLIES: dict[tuple[int, int], tuple] = {}


_SOURCES: dict[tuple, tuple] = {}


def _action_sources(s: Scenario) -> dict[str, str]:
    """``derive.action_sources``, cached on what it reads, in no order: the tasks (objects), and
    each event's id, condition and reveals and each record's id, condition and versions (objects:
    a seed's variant shares them with the file, and moves or reorders only what holds them). The
    objects are held by the entry, so their ids stay theirs; the result is only looked up in."""
    key = (frozenset(map(id, s.tasks)), frozenset([(ev.id, id(ev.when), id(ev.reveals)) for ev in s.events]),
           frozenset([(r.id, id(r.when), id(r.versions)) for r in s.records]))
    hit = _SOURCES.get(key)
    if hit is not None:
        return hit[1]
    if len(_SOURCES) >= 256:
        _SOURCES.clear()
    sources = action_sources(s)
    _SOURCES[key] = ((tuple(s.tasks), tuple(s.events), tuple(s.records)), sources)
    return sources


def _replies(scenario: Replies, persona: Replies | None) -> Replies:
    """The user's wording: a persona's overrides the scenario's, key by key. Built once per pair
    (a seed's variant shares both with the file; neither is changed after loading)."""
    key = (id(scenario), id(persona))
    hit = _REPLIES.get(key)
    if hit is not None and hit[0] is scenario and hit[1] is persona:
        return hit[2]
    if len(_REPLIES) >= 256:
        _REPLIES.clear()
    replies = scenario.model_copy(update=persona.model_dump(exclude_unset=True) if persona else {})
    _REPLIES[key] = (scenario, persona, replies)  # (held: their ids stay theirs)
    return replies


@functools.lru_cache(maxsize=1 << 12)
def clock_text(start: dt.date, minute: int) -> str:
    day = dt.date.fromordinal(start.toordinal() + minute // MINUTES_PER_DAY)
    stamp = format_at(minute).split()
    return f"{stamp[0]} ({day:%a} {day.day} {day:%b}) {stamp[1]}"


def _describe(requested: tuple[str, ...]) -> str:
    return ", ".join(name.replace("_", " ") for name in requested) or "this"
