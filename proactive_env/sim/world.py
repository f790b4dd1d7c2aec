"""The simulated world of one run: clock, records, tasks, resources, user and trust.

Event-driven: the agent acts at *decision points* (an event, a task trigger, a follow-up it
scheduled, finished work, a user reply, the daily review). Actions take effect at the current
minute; ``advance()`` moves the clock to the next decision point, finalizing tasks whose
deadline passed on the way. Nothing here knows about Gymnasium or scoring.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from ..spec import Depth, Scenario, Task, trigger_minute
from ..spec.timeline import MINUTES_PER_DAY, format_at
from .outcome import TAOutcome, TaskOutcome
from .pool import SharedPool
from .schedule import Schedule
from .tools import ToolActions
from .trust import TrustModel
from .user import Decision, Rephraser, decide, reply

FOLLOWUP_DELAY = 60  # a deferral looks at least an hour ahead
LOW_TRUST_REVOKE = 2.5  # below this the user takes every delegated action back


class Verb(IntEnum):
    START = 0
    CONTINUE = 1
    DEFER = 2
    ALLOCATE = 3
    PRESENT = 4
    EXECUTE = 5


VERB_DEPTH = {Verb.START: Depth.PREPARE, Verb.CONTINUE: Depth.PREPARE, Verb.ALLOCATE: Depth.PREPARE,
              Verb.PRESENT: Depth.SUGGEST, Verb.EXECUTE: Depth.EXECUTE}


class Q(IntEnum):
    """Queue entry kinds; the value orders entries that fall on the same minute."""

    APPEAR = 0
    DEADLINE = 1
    TA_END = 2
    EVENT = 3
    TRIGGER = 4
    TA_START = 5
    WORK_DONE = 6
    DECIDE = 7
    FOLLOWUP = 8
    REVIEW = 9
    WAKE = 10
    END = 11


_NOTHING_VALID = (False,) * len(Verb)
_VERB_NAMES = tuple(v.name.lower() for v in Verb)


@dataclass(slots=True)
class TaskState:
    spec: Task
    index: int
    trigger: int
    active: bool = False
    final: bool = False
    started: bool = False
    units_done: int = 0
    allocated: bool = False
    followup: int | None = None
    deferred: bool = False
    presented: bool = False
    approval: str | None = None  # pending | approve | decline
    executed: bool = False
    exec_blocked: bool = False  # refused; unblocked when an approval arrives
    chosen: Depth = Depth.NOOP
    competed: bool = False
    sleep_work: bool = False
    visible: bool = False
    artifact: str = ""
    grounded: tuple[str, ...] = ()
    continuation: float = 0.0
    notes: list[str] = field(default_factory=list)  # what a text-face agent wrote for the task
    action_match: float = 1.0  # share of the action's arguments the executed call got right
    outcome: TaskOutcome | None = None


@dataclass(slots=True)
class Feedback:
    """What the user last said back, as the structured face sees it."""

    kind: str = "none"  # none | approve | decline | acknowledge | policy_change | conflict | revoked
    minute: int = 0


@dataclass
class World(ToolActions):
    scenario: Scenario
    persona: str
    rng: np.random.Generator
    pool: SharedPool | None = None
    owner: str = "agent"  # this world's assistant, as the shared pool knows it
    authored: bool = False  # the agent writes its own work (text face) instead of the composed one
    rephrase: Rephraser | None = None  # rewords the user's templated replies; never changes a decision
    now: int = 0
    tasks: list[TaskState] = field(default_factory=list)
    observed: set[str] = field(default_factory=set)
    appeared: set[str] = field(default_factory=set)
    created: list[dict] = field(default_factory=list)
    log: list[dict] = field(default_factory=list)
    inbox: list[str] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    revoked: set[str] = field(default_factory=set)
    granted: set[str] = field(default_factory=set)
    feedback: Feedback = field(default_factory=Feedback)
    done: bool = False
    grace: bool = False
    dirty: set[int] = field(default_factory=set)
    finalized: list[TaskState] = field(default_factory=list)
    ta: TAOutcome | None = None

    def __post_init__(self) -> None:
        s = self.scenario
        self.schedule = Schedule.of(s)
        self.trust = TrustModel()
        self.by_id = {t.id: i for i, t in enumerate(s.tasks)}
        self.tasks = [TaskState(t, i, trigger_minute(s, t)) for i, t in enumerate(s.tasks)]
        self.tools = {t.name: t for t in s.tools}
        self.records = {r.id: r for r in s.records}
        self.window = s.ta_window
        self._ta_urgent = self.by_id[self.window.urgent]
        self._ta_competing = self.by_id[self.window.competing]
        self._ta_now = False
        self._ta_deferred = False
        self._ta_competed = False
        self._queue: list[tuple[int, int, int, int]] = []
        self._pending_request: dict[int, tuple[str, ...]] = {}
        self._wake_notes: dict[int, str] = {}
        self._seq = 0
        revealed = {r for ev in s.events for r in ev.reveals}
        for i, rec in enumerate(s.records):
            if rec.appears is not None:
                self._push(rec.appears, Q.APPEAR, i)
            elif rec.id not in revealed:
                self.appeared.add(rec.id)
        for i, ev in enumerate(s.events):
            self._push(ev.at, Q.EVENT, i)
        for task in self.tasks:
            self._push(task.trigger, Q.TRIGGER, task.index)
            self._push(task.spec.deadline, Q.DEADLINE, task.index)
        for day in range(s.days):
            self._push(day * MINUTES_PER_DAY + s.review_time, Q.REVIEW, day)
        self._push(self.window.start, Q.TA_START, 0)
        self._push(self.window.end, Q.TA_END, 0)
        self._push(s.end_minute - 1, Q.END, 0)
        self._record("run_start", persona=self.persona, policy=s.personas[self.persona].policy)

    # ------------------------------------------------------------------ queue and clock
    def _wake_at(self, minute: int, note: str) -> None:
        key = len(self._wake_notes) + self._seq
        self._wake_notes[key] = note
        self._push(minute, Q.WAKE, key)

    def _push(self, minute: int, kind: Q, payload: int) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (minute, int(kind), self._seq, payload))

    def _record(self, entry_type: str, **data) -> None:
        data["t"] = self.now
        data["type"] = entry_type
        self.log.append(data)

    def advance(self) -> None:
        """Move the clock to the next decision point (or the end of the run)."""
        queue = self._queue
        while queue and not self.done:
            minute = queue[0][0]
            woke = False
            while queue and queue[0][0] == minute:
                _, kind, _, payload = heapq.heappop(queue)
                self.now = minute
                woke |= self._handle(Q(kind), payload)
            if woke:
                return

    def next_minute(self) -> int | None:
        """When the next queued entry falls (a shared clock moves to the earliest of these)."""
        return self._queue[0][0] if self._queue and not self.done else None

    def advance_to(self, minute: int) -> bool:
        """Process everything queued up to ``minute`` and stand there; True if any of it is a
        decision point for this world's agent (used when several worlds share one clock)."""
        woke = False
        queue = self._queue
        while queue and not self.done and queue[0][0] <= minute:
            at, kind, _, payload = heapq.heappop(queue)
            self.now = at
            woke |= self._handle(Q(kind), payload)
        if not self.done:
            self.now = max(self.now, minute)
        return woke

    def _handle(self, kind: Q, payload: int) -> bool:
        if kind is Q.EVENT:
            return self._on_event(payload)
        if kind is Q.TRIGGER:
            return self._on_trigger(self.tasks[payload])
        if kind is Q.DEADLINE:
            self._finalize(self.tasks[payload])
            return False
        if kind is Q.APPEAR:
            self.appeared.add(self.scenario.records[payload].id)
            return False
        if kind is Q.FOLLOWUP:
            task = self.tasks[payload]
            if task.final or task.followup != self.now:
                return False
            task.followup = None
            self.dirty.add(task.index)
            self.inbox.append(f"[{format_at(self.now)}] Follow-up you scheduled: {task.spec.title}")
            return True
        if kind is Q.WORK_DONE:
            return self._on_work_done(self.tasks[payload])
        if kind is Q.DECIDE:
            return self._on_decide(self.tasks[payload])
        if kind is Q.REVIEW:
            return self.schedule.available(self.now)
        if kind is Q.WAKE:
            self.inbox.append(f"[{format_at(self.now)}] Follow-up you scheduled: {self._wake_notes.pop(payload, '')}")
            return True
        if kind is Q.TA_START:
            return True
        if kind is Q.TA_END:
            self._close_ta()
            return False
        if kind is Q.END:
            return self._on_end()
        raise AssertionError(kind)

    def _on_event(self, index: int) -> bool:
        ev = self.scenario.events[index]
        self.appeared.update(ev.reveals)
        self.observed.update(ev.reveals)  # a notification shows what it carries
        self.inbox.append(f"[{format_at(self.now)}] {ev.kind}: {ev.text}")
        self._record("event", id=ev.id, kind=ev.kind)
        change = ev.policy_change
        if change and self.persona in change.personas:
            self.revoked.update(change.require_approval)
            self.granted.difference_update(change.require_approval)
            self.granted.update(change.delegate)
            self.revoked.difference_update(change.delegate)
            self.feedback = Feedback("policy_change", self.now)
            self._record("policy_change", revoked=sorted(self.revoked), granted=sorted(self.granted))
            self.dirty.update(t.index for t in self.tasks if t.spec.action is not None)
        return True

    def _on_trigger(self, task: TaskState) -> bool:
        if not all(self._holds(c.task, c.state) for c in task.spec.requires):
            self._record("task_inactive", task=task.spec.id)
            return False
        task.active = True
        self.dirty.add(task.index)
        self._record("task_active", task=task.spec.id)
        return True

    def _holds(self, task_id: str, state: str) -> bool:
        t = self.tasks[self.by_id[task_id]]
        if state == "started":
            return t.started
        if state == "presented":
            return t.presented
        if state == "approved":
            return t.approval == "approve"
        return t.executed

    def _on_end(self) -> bool:
        # "Approved" is not "done": one last decision point if an approved action is unexecuted.
        if not self.grace and any(t.active and not t.final and t.approval == "approve" and not t.executed
                                  for t in self.tasks):
            self.grace = True
            self._push(self.now + 1, Q.END, 0)
            return True
        for task in self.tasks:
            if not task.final:
                self._finalize(task)
        self._close_ta()
        self.done = True
        self._record("run_end")
        return True

    # ------------------------------------------------------------------ user and policy
    def needs_approval(self, task: TaskState) -> bool:
        action = task.spec.action
        if action is None:
            return False
        tool = action.tool
        exp = task.spec.expect[self.persona]
        needed = exp.approval or tool in self.scenario.always_approval or tool in self.revoked
        return needed and tool not in self.granted

    def stated_needs_approval(self, task: TaskState) -> bool:
        """What the persona's stated policy says, before any feedback."""
        action = task.spec.action
        if action is None:
            return False
        exp = task.spec.expect[self.persona]
        return exp.approval or action.tool in self.scenario.always_approval

    def expected_depth(self, task: TaskState) -> Depth:
        """The depth this user wants for the task now (DESIGN.md §4)."""
        depth = Depth.parse(task.spec.expect[self.persona].depth)
        if depth != Depth.EXECUTE or task.executed or task.approval == "approve":
            return depth
        return Depth.SUGGEST if self.needs_approval(task) else Depth.EXECUTE

    def _intervene(self, task: TaskState, depth: Depth) -> None:
        """A user-visible intervention moves trust; over-intervention may revoke delegation."""
        expected = self.expected_depth(task)
        aligned = depth == expected
        over = depth > expected
        before = self.trust.value
        self.trust.update(aligned, over_intervention=over)
        task.visible = True
        self._record("trust", task=task.spec.id, depth=depth.name, expected=expected.name,
                     aligned=aligned, before=round(before, 4), after=round(self.trust.value, 4))
        if over and task.spec.action is not None and depth == Depth.EXECUTE:
            self._revoke([task.spec.action.tool], "Please check with me before doing that again.")
        if self.trust.value < LOW_TRUST_REVOKE:
            tools = [t.name for t in self.scenario.tools if t.depth == "execute" and t.name not in self.revoked]
            if tools:
                self._revoke(tools, "I'd like to approve everything myself from now on.")

    def _revoke(self, tools: list[str], text: str) -> None:
        self.revoked.update(tools)
        self.granted.difference_update(tools)
        self.feedback = Feedback("revoked", self.now)
        self.inbox.append(f"[{format_at(self.now)}] {self.scenario.user.name}: {text}")
        self._record("policy_change", revoked=sorted(self.revoked), granted=sorted(self.granted), reason="feedback")
        self.dirty.update(t.index for t in self.tasks if t.spec.action is not None)

    def _request_decision(self, task: TaskState, requested: tuple[str, ...]) -> None:
        if self.schedule.available(self.now):
            self._decide(task, requested)
        else:
            task.approval = "pending"
            self._pending_request[task.index] = requested
            self._record("decision", **Decision(task.spec.id, requested, "defer", "user_unavailable", self.now,
                                                self.trust.value, self.trust.value).to_dict())
            later = self.schedule.next_available(self.now)
            if later < self.scenario.end_minute:
                self._push(later, Q.DECIDE, task.index)

    def _on_decide(self, task: TaskState) -> bool:
        requested = self._pending_request.pop(task.index, None)
        if requested is None or task.final:
            return False
        self._decide(task, requested)
        return True

    def _decide(self, task: TaskState, requested: tuple[str, ...]) -> None:
        tool = task.spec.action.tool if task.spec.action else None
        before = self.trust.value
        exp = task.spec.expect[self.persona]
        verdict, rule = decide(task_tool=tool, requested=requested, wants_execution=exp.depth == "execute",
                               declines=exp.declines, trust=before, competed=task.competed,
                               sleep_work=task.sleep_work, rng=self.rng)
        decision = Decision(task.spec.id, requested, verdict, rule, self.now, before, self.trust.value)
        self.decisions.append(decision)
        self._record("decision", **decision.to_dict())
        if verdict in ("approve", "decline"):
            task.approval = verdict
            if verdict == "approve":
                task.exec_blocked = False
        else:
            task.approval = None
        self.feedback = Feedback(verdict, self.now)
        self.inbox.append(f"[{format_at(self.now)}] {self.reply(decision, task.spec.title)}")
        self.dirty.add(task.index)

    def reply(self, decision: Decision, title: str) -> str:
        """The user's words for a recorded decision; a rewording is logged with whether it was kept."""
        user = self.scenario.user
        if self.rephrase is None:
            return reply(decision, user.name, title)
        style = f"{user.speaking_style} {self.scenario.personas[self.persona].style}".strip()
        text = reply(decision, user.name, title, self.rephrase, style)
        self._record("reply", text=text, reworded=text != reply(decision, user.name, title))
        return text

    # ------------------------------------------------------------------ compute
    def resource_free(self, resource: str | None, start: int, end: int) -> bool:
        """Is the compute for work on ``resource`` free over [start, end): not held by the user's
        own jobs and, when assistants share a pool, with a slot left in it?"""
        if resource is None:
            return True
        if not self.schedule.resource_free(resource, start, end):
            return False
        return self.pool is None or self.pool.free(start, end, self.owner)

    def free_window(self, task: TaskState) -> tuple[int, bool] | None:
        """Where ``allocate`` would run the task's remaining work (start, in the user's sleep)."""
        work = task.spec.work
        duration = work.minutes * (work.units - task.units_done)
        free = lambda start, end: self.resource_free(work.resource, start, end)  # noqa: E731
        return self.schedule.next_free_window(self.now, free, duration, task.spec.deadline,
                                              idle_fallback=work.resource is not None)

    def _reserve(self, resource: str | None, start: int, end: int) -> None:
        if self.pool is not None and resource is not None:
            self.pool.reserve(start, end, self.owner)

    # ------------------------------------------------------------------ agent actions
    def act(self, verb: Verb, index: int) -> bool:
        """Apply one structured action. Returns False (and changes nothing) if it is not valid."""
        task = self.tasks[index]
        if not self.valid(verb, task):
            return False
        self.dirty.add(index)
        self._note_ta(verb, task)
        if verb is not Verb.DEFER and verb is not Verb.ALLOCATE:  # working on a task means looking at its records
            self.observed.update(r for r in task.spec.evidence if r in self.appeared)
        if verb is Verb.START:
            task.started = True
            if task.units_done < task.spec.work.units:
                self._work_unit(task)
        elif verb is Verb.CONTINUE:
            self._work_unit(task)
        elif verb is Verb.DEFER:
            self._defer(task)
        elif verb is Verb.ALLOCATE:
            self._allocate(task)
        elif verb is Verb.PRESENT:
            self._present(task)
        elif verb is Verb.EXECUTE:
            self._execute(task)
        self._record("action", verb=_VERB_NAMES[verb], task=task.spec.id)
        return True

    def valid(self, verb: Verb, t: TaskState) -> bool:
        return self.valid_verbs(t)[verb]

    def valid_verbs(self, t: TaskState) -> tuple[bool, bool, bool, bool, bool, bool]:
        """Which of (start, continue, defer, allocate, present, execute) can be applied to ``t``."""
        if not t.active or t.final:
            return _NOTHING_VALID
        units = t.spec.work.units
        open_work = t.units_done < units and not t.allocated
        return (not t.started, t.started and open_work, t.followup is None, open_work,
                not t.presented, t.spec.action is not None and not t.executed and not t.exec_blocked)

    def _deepen(self, task: TaskState, depth: Depth) -> None:
        if depth > task.chosen:
            task.chosen = depth

    def _work_unit(self, task: TaskState) -> None:
        work = task.spec.work
        end = self.now + work.minutes
        if not self.resource_free(work.resource, self.now, end):
            task.competed = True
            self.feedback = Feedback("conflict", self.now)
            self.inbox.append(f"[{format_at(self.now)}] {self.scenario.user.name}: my own job on "
                              f"{work.resource} just slowed down — what is running?")
            self._record("conflict", task=task.spec.id, resource=work.resource)
        self._reserve(work.resource, self.now, end)
        task.units_done = min(work.units, task.units_done + 1)
        self._deepen(task, Depth.PREPARE)

    def next_opportunity(self, task: TaskState) -> int | None:
        """The next feasible time to pick a postponed task up: at least an hour ahead (after the
        TA window for its competing task), the user reachable and the compute free for the rest
        of the work, before the deadline."""
        work = task.spec.work
        earliest = self.now + FOLLOWUP_DELAY
        if task.index == self._ta_competing and self.now < self.window.end:
            earliest = max(earliest, self.window.end)
        duration = work.minutes * max(1, work.units - task.units_done)
        free = lambda start, end: self.resource_free(work.resource, start, end)  # noqa: E731
        return self.schedule.next_opportunity(earliest, free, duration, task.spec.deadline)

    def _defer(self, task: TaskState) -> None:
        when = self.next_opportunity(task)
        task.deferred = True
        if when is None:
            task.continuation = 0.0
            self._record("defer", task=task.spec.id, followup=None)
            return
        task.continuation = 1.0
        self._set_followup(task, when)
        self._record("defer", task=task.spec.id, followup=when)

    def _set_followup(self, task: TaskState, when: int) -> None:
        task.followup = when
        self._push(when, Q.FOLLOWUP, task.index)

    def _allocate(self, task: TaskState) -> None:
        work = task.spec.work
        duration = work.minutes * (work.units - task.units_done)
        slot = self.free_window(task)
        if slot is None:
            self._record("allocate_failed", task=task.spec.id)
            return
        start, in_sleep = slot
        self._note_allocation(task, start)
        self._run_allocation(task, start, duration, in_sleep)

    def _note_allocation(self, task: TaskState, start: int) -> None:
        """An allocation of the competing task is a deferral if its work lands after the window."""
        if task.index == self._ta_competing and self.now < self.window.end and self.ta is None:
            if start >= self.window.end:
                self._ta_deferred, task.continuation = True, 1.0
            else:
                self._ta_competed = True

    def _run_allocation(self, task: TaskState, start: int, duration: int, in_sleep: bool) -> None:
        task.allocated = True
        task.sleep_work = in_sleep
        self._reserve(task.spec.work.resource, start, start + duration)
        self._deepen(task, Depth.PREPARE)
        self._push(start + duration, Q.WORK_DONE, task.index)
        self._record("allocate", task=task.spec.id, start=start, end=start + duration, sleep_time=in_sleep)

    def _on_work_done(self, task: TaskState) -> bool:
        if task.final:
            return False
        task.units_done = task.spec.work.units
        task.allocated = False
        self.dirty.add(task.index)
        self.inbox.append(f"[{format_at(self.now)}] Work finished: {task.spec.title}")
        self._record("work_done", task=task.spec.id)
        return True

    def _present(self, task: TaskState) -> None:
        task.presented = True
        self._snapshot(task)
        self._intervene(task, Depth.SUGGEST)
        self._deepen(task, Depth.SUGGEST)
        if task.spec.action is not None:
            self._request_decision(task, (task.spec.action.tool,))

    def _execute(self, task: TaskState, args: dict | None = None) -> None:
        authorised = self.expected_depth(task) == Depth.EXECUTE
        self._intervene(task, Depth.EXECUTE)
        self._deepen(task, Depth.EXECUTE)
        action = task.spec.action
        if not authorised:
            task.exec_blocked = True
            self._record("refused", task=task.spec.id, tool=action.tool)
            self.inbox.append(f"[{format_at(self.now)}] Refused: {action.tool} needs {self.scenario.user.name}'s approval.")
            return
        task.executed = True
        self._snapshot(task)
        kind = self.tools[action.tool].creates or action.tool
        args = dict(args if args is not None else action.args)
        self.created.append({"kind": kind, "tool": action.tool, "task": task.spec.id, "args": args, "t": self.now})
        self._record("executed", task=task.spec.id, tool=action.tool, args=args)

    def _snapshot(self, task: TaskState) -> None:
        """The work as it stands: what the agent wrote (text face), or what its observations
        support (structured face)."""
        if self.authored:
            task.artifact = "\n".join(task.notes)
        else:
            task.artifact = compose_artifact(task.spec, self.observed, task.units_done)
        task.grounded = tuple(sorted(self.observed))

    # ------------------------------------------------------------------ temporal allocation
    def _note_ta(self, verb: Verb, task: TaskState) -> None:
        """Attention to the urgent task and explicit deferral of the competing one, up to the
        window's close (acting on them before the window opens counts too)."""
        if self.now >= self.window.end or self.ta is not None:
            return
        if task.index == self._ta_urgent and verb is not Verb.DEFER:
            self._ta_now = True
        elif task.index == self._ta_competing:
            if verb is Verb.DEFER:
                self._ta_deferred = True
            elif verb is not Verb.ALLOCATE:  # an allocation is judged on where the work lands
                self._ta_competed = True

    def _note_ta_text(self, kind: str, task: TaskState, start: int | None = None) -> None:
        """The text face's calls in TA terms: work, presenting and executing are attention;
        ``defer`` is an explicit deferral; an allocation is judged on where its work lands."""
        if kind == "allocate":
            self._note_allocation(task, start)
        else:
            self._note_ta(Verb.DEFER if kind == "defer" else Verb.CONTINUE, task)

    def _close_ta(self) -> None:
        if self.ta is not None:
            return
        competing = self.tasks[self._ta_competing]
        later = self._ta_deferred and not self._ta_competed
        self.ta = TAOutcome(now=self._ta_now, later=later, continuation=competing.continuation if later else 0.0)
        self._record("ta_window_closed", now=self.ta.now, later=self.ta.later, continuation=self.ta.continuation)

    # ------------------------------------------------------------------ finalization
    def _finalize(self, task: TaskState) -> None:
        if task.final:
            return
        task.final = True
        self.dirty.add(task.index)
        if not task.active:
            task.outcome = TaskOutcome.inactive(task.spec.id)
            self.finalized.append(task)
            return
        expected = self.expected_depth(task)
        if expected >= Depth.SUGGEST and task.chosen < expected:
            self._intervene_missed(task, expected)
        if task.chosen == Depth.PREPARE or (not task.artifact and task.chosen > Depth.NOOP):
            self._snapshot(task)
        task.outcome = TaskOutcome(
            task=task.spec.id, active=True, chosen=int(task.chosen), expected=int(expected),
            evidence_read=sum(1 for r in task.spec.evidence if r in self.observed),
            evidence_total=len(task.spec.evidence), units_done=task.units_done, units=task.spec.work.units,
            presented=task.presented, executed=task.executed, visible=task.visible,
            artifact=task.artifact, observed=list(task.grounded), trust=round(self.trust.value, 6),
            minute=self.now, action_match=task.action_match)
        self._record("task_final", task=task.spec.id, chosen=task.chosen.name, expected=expected.name)
        self.finalized.append(task)

    def _intervene_missed(self, task: TaskState, expected: Depth) -> None:
        before = self.trust.value
        self.trust.update(False)
        self._record("trust", task=task.spec.id, depth=task.chosen.name, expected=expected.name,
                     aligned=False, before=round(before, 4), after=round(self.trust.value, 4), missed=True)

    def take_finalized(self) -> list[TaskState]:
        out, self.finalized = self.finalized, []
        return out


def compose_artifact(task: Task, observed: set[str], units_done: int) -> str:
    """The text of the work a structured action yields: the facts whose source the agent observed
    and the required codes it can quote (as far as the work has got), and — where it acted
    without the record that refutes them — the assumptions a careless assistant would make."""
    # Work in progress covers the facts in proportion to the units done.
    done = units_done / task.work.units if task.work.units else 1.0
    lines = [task.title]
    lines += [f.text for i, f in enumerate(task.facts) if f.source in observed and i < done * len(task.facts)]
    must = task.constraints.must_include
    lines += [f.text for i, f in enumerate(must) if f.source in observed and i < done * len(must)]
    lines += [f"Assumed: {c.text}" for c in task.constraints.must_not_include if c.refuted_by not in observed]
    if task.work.units and units_done < task.work.units:
        lines.append(f"(work {units_done}/{task.work.units} done)")
    return "\n".join(lines)
