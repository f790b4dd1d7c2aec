"""Timing adversaries: cheap rules for *when* to work, each a parametrised family on top of the
policy-follower (who gets depth and content right and never postpones anything).

Each reads only the structured observation — the task slots' ``urgency`` (how soon the user needs
the result), ``work_size``, ``resource_busy_now``, ``needs_resource`` and state, the action mask — and decides,
per open task, to hold it (``defer`` it, once per follow-up), to ``allocate`` its run, or to leave
it to the policy-follower. On the text face the same decisions are played as tool calls
(``TextScriptedAgent``); ``postpone-to`` families give every postponement one fixed clock time.
CI holds every family, over the whole suite, to TA ≤ 25 % and J ≤ the policy-follower's + 0.05
(tests/test_timing_adversaries.py): a benchmark where sorting by deadline, holding the less
urgent, allocating compute or postponing to a fixed time pays is not measuring judgement.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from proactive_env.sim import TaskState, Verb
from proactive_env.spec import format_at
from proactive_env.spec.timeline import MINUTES_PER_DAY

from proactive_env.envs.structured import CLOCK_FEATURES

from .scripted import F, PolicyFollowerAgent, first_valid, open_slots, task_rows
from .text_scripted import TextScriptedAgent


USER_ASLEEP = CLOCK_FEATURES.index("user_asleep")


def _untouched(row: np.ndarray) -> bool:
    """Nothing done on the task yet: no work launched or finished, nothing shown."""
    return not (row[F["work_done"]] or row[F["work_running"]] or row[F["allocated"]] or row[F["presented"]])


class TimingRule(PolicyFollowerAgent):
    """The policy-follower with a timing rule: ``hold(obs, slot)`` says which open tasks to keep
    back (deferred, once per follow-up; nothing else done on them), ``allocate(obs, slot)`` which
    to run through ``allocate`` instead of starting them."""

    name = "timing-rule"

    def __init__(self, name: str = "", hold: Callable | None = None, allocate: Callable | None = None):
        self.name = name or type(self).name
        self._hold, self._allocate = hold, allocate
        self._tried: set[tuple[int, float]] = set()  # (slot, clock) where a deferral was taken

    def reset(self, *args, **kwargs):
        self._tried = set()
        for rule in (self._hold, self._allocate):
            getattr(rule, "reset", lambda: None)()  # a rule that remembers what it saw starts afresh
        return super().reset(*args, **kwargs)

    def hold(self, obs: dict[str, np.ndarray], slot: int) -> bool:
        return bool(self._hold and self._hold(obs, slot))

    def allocate(self, obs: dict[str, np.ndarray], slot: int) -> bool:
        return bool(self._allocate and self._allocate(obs, slot))

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        tasks, mask = task_rows(obs), obs["action_mask"]
        held = [s for s in open_slots(obs) if self.hold(obs, s)]
        now = float(obs["clock"][0])
        for slot in held:
            # once per follow-up; a deferral that set none (no feasible time) is not retried until
            # the clock moves: the task stays held, and the rule does not spin on it
            if not tasks[slot, F["followup_pending"]] and (slot, now) not in self._tried:
                a = first_valid(mask, slot, ("defer",))
                if a:
                    self._tried.add((slot, now))
                    return a
        for slot in open_slots(obs):
            if slot not in held and not tasks[slot, F["work_running"]] and self.allocate(obs, slot):
                a = first_valid(mask, slot, ("allocate",))
                if a:
                    return a
        if not held:
            return super().act(obs, info)
        rows = obs["tasks"].reshape(tasks.shape).copy()
        rows[held, F["active"]] = 0.0  # the follower does not see what the rule holds back
        return super().act({**obs, "tasks": rows.ravel()}, info)


# ---------------------------------------------------------------------------- the rules
def urgency(obs: dict[str, np.ndarray], slot: int) -> float:
    return float(task_rows(obs)[slot, F["urgency"]])


def below(threshold: float) -> Callable:
    """Defer-until-urgent: keep an untouched task back while its urgency is under the threshold."""
    return lambda obs, slot: _untouched(task_rows(obs)[slot]) and urgency(obs, slot) < threshold


def outranked(gap: float) -> Callable:
    """Hold-while-more-urgent: keep an untouched task back while another open one is more
    urgent by at least ``gap``."""
    def rule(obs, slot):
        if not _untouched(task_rows(obs)[slot]):
            return False
        mine = urgency(obs, slot)
        return any(urgency(obs, s) >= mine + gap for s in open_slots(obs) if s != slot)
    return rule


def bigger_waiting(gap: float) -> Callable:
    """Bigger-job-first: keep an untouched task back while another open one has more work by at
    least ``gap`` (of the observation's ``work_size`` scale)."""
    def rule(obs, slot):
        tasks = task_rows(obs)
        if not _untouched(tasks[slot]):
            return False
        mine = tasks[slot, F["work_size"]]
        return any(tasks[s, F["work_size"]] >= mine + gap for s in open_slots(obs) if s != slot)
    return rule


def compute_waiting(obs: dict[str, np.ndarray], slot: int) -> bool:
    """Compute-first: keep an untouched task that needs no resource back while an untouched one
    that does is open (the compute is the scarce thing, so run it first)."""
    tasks = task_rows(obs)
    if not _untouched(tasks[slot]) or tasks[slot, F["needs_resource"]]:
        return False
    return any(tasks[s, F["needs_resource"]] and _untouched(tasks[s]) for s in open_slots(obs) if s != slot)


def not_most_urgent(obs: dict[str, np.ndarray], slot: int) -> bool:
    """Defer-all-but-most-urgent: every open untouched task but the single most urgent one."""
    slots = open_slots(obs)
    if not _untouched(task_rows(obs)[slot]) or len(slots) < 2:
        return False
    return slot != max(slots, key=lambda s: (urgency(obs, s), -s))


def started_once(obs: dict[str, np.ndarray], slot: int) -> bool:
    """Start-everything-then-defer: once a task's work has run, postpone the rest of it (and its
    delivery) once."""
    row = task_rows(obs)[slot]
    return bool(row[F["work_done"]] and not row[F["deferred"]] and not row[F["presented"]])


def needs_compute(obs: dict[str, np.ndarray], slot: int) -> bool:
    """Allocate-all-compute: every task whose work needs a resource."""
    return bool(task_rows(obs)[slot, F["needs_resource"]])


def compute_busy(obs: dict[str, np.ndarray], slot: int) -> bool:
    """Allocate-when-busy: a task whose resource the user is using now."""
    row = task_rows(obs)[slot]
    return bool(row[F["needs_resource"]] and row[F["resource_busy_now"]])


class arrived_with_more_urgent:
    """Due-soonest-of-arrivals: of tasks that come up at the same decision point, work on the most
    urgent and keep each other untouched one back while one that came up with it, more urgent by
    more than ``gap``, is still open ("work on what is due soonest, postpone the rest")."""

    def __init__(self, gap: float):
        self.gap = gap
        self.reset()

    def reset(self) -> None:
        self.came_up: dict[int, float] = {}  # slot -> the clock when the rule first saw it open
        self._last = -1.0

    def __call__(self, obs: dict[str, np.ndarray], slot: int) -> bool:
        now = float(obs["clock"][0])
        if now < self._last:  # a new episode without a reset
            self.reset()
        self._last = now
        slots = open_slots(obs)
        for s in slots:
            self.came_up.setdefault(s, now)
        if not _untouched(task_rows(obs)[slot]):
            return False
        mine = urgency(obs, slot)
        return any(self.together(self.came_up[s], self.came_up[slot]) and urgency(obs, s) > mine + self.gap
                   for s in slots if s != slot)

    @staticmethod
    def together(other: float, mine: float) -> bool:
        return other == mine


class arrived_after_more_urgent(arrived_with_more_urgent):
    """Newcomer-waits: keep an untouched task back while one that was open before it came up, more
    urgent by more than ``gap``, is still open (a busy agenda makes arrivals wait)."""

    @staticmethod
    def together(other: float, mine: float) -> bool:
        return other < mine


def awake_and_outranked(gap: float) -> Callable:
    """Hold-until-asleep: keep an untouched task back while the user is awake and another open one
    is more urgent by at least ``gap``; the user's sleep is when it gets done."""
    held = outranked(gap)
    return lambda obs, slot: not obs["clock"][USER_ASLEEP] and held(obs, slot)


def either(*rules: Callable) -> Callable:
    return lambda obs, slot: any(r(obs, slot) for r in rules)


# name → (hold rule, allocate rule)
FAMILIES: dict[str, tuple[Callable | None, Callable | None]] = {
    **{f"defer-until-urgent-{t}": (below(t), None) for t in (0.5, 0.64, 0.8, 0.9)},
    **{f"hold-while-more-urgent-{g}": (outranked(g), None) for g in (0.05, 0.15, 0.3)},
    **{f"hold-while-more-urgent-{g}+allocate-when-busy": (outranked(g), compute_busy) for g in (0.05, 0.15, 0.3)},
    **{f"bigger-job-first-{g}": (bigger_waiting(g), None) for g in (0.01, 0.1)},
    **{f"bigger-job-first-{g}+allocate-when-busy": (bigger_waiting(g), compute_busy) for g in (0.01, 0.1)},
    "compute-first": (compute_waiting, None),
    "compute-first+allocate-when-busy": (compute_waiting, compute_busy),
    "defer-all-but-most-urgent": (not_most_urgent, None),
    "allocate-all-compute": (None, needs_compute),
    "allocate-when-busy": (None, compute_busy),
    "start-everything-then-defer": (started_once, None),
    "defer-until-urgent-0.64+allocate-when-busy": (below(0.64), compute_busy),
    "defer-all-but-most-urgent+allocate-all-compute": (not_most_urgent, needs_compute),
    "start-everything-then-defer+allocate-when-busy": (started_once, compute_busy),
}
# Families added untuned (suite 0.8.0): written down and measured once, never adjusted to the suite.
# (Their rules are built per agent: due-soonest-of-arrivals remembers when each task came up.)
NEW_FAMILIES: dict[str, Callable[[], tuple[Callable | None, Callable | None]]] = {
    **{f"due-soonest-of-arrivals-{g}": (lambda g=g: (arrived_with_more_urgent(g), None)) for g in (0.0, 0.1)},
    **{f"due-soonest-of-arrivals-{g}+allocate-when-busy": (lambda g=g: (arrived_with_more_urgent(g), compute_busy))
       for g in (0.0, 0.1)},
    **{f"hold-until-asleep-{g}": (lambda g=g: (awake_and_outranked(g), None)) for g in (0.1, 0.3)},
    "hold-until-asleep-0.1+allocate-when-busy": lambda: (awake_and_outranked(0.1), compute_busy),
    # written after the scorer's change, measured once
    **{f"newcomer-waits-{g}": (lambda g=g: (arrived_after_more_urgent(g), None)) for g in (0.0, 0.2)},
    "newcomer-waits-0.0+allocate-all-compute": lambda: (arrived_after_more_urgent(0.0), needs_compute),
}


def structured(name: str) -> Callable[[], TimingRule]:
    if name in NEW_FAMILIES:
        return lambda: TimingRule(name, *NEW_FAMILIES[name]())
    hold, allocate = FAMILIES[name]
    return lambda: TimingRule(name, hold, allocate)


class TextTimingRule(TextScriptedAgent):
    """A timing rule's decisions on the text face; with ``at`` (a daily time, minutes), every
    postponement goes to the next such clock time at least an hour ahead (postpone-to-fixed-time)."""

    def __init__(self, inner: TimingRule, at: int | str | None = None):
        super().__init__(inner)
        self.at = at
        where = "" if at is None else "@sleep" if at == SLEEP else f"@{format_at(at)[-5:]}"
        self.name = f"text-{inner.name}{where}"

    def _calls(self, verb: Verb, t: TaskState) -> list[dict]:
        if verb is not Verb.DEFER or self.at is None:
            return super()._calls(verb, t)
        w = self.world
        if self.at == SLEEP:  # the start of the user's next sleep (the briefing gives their sleep hours)
            until = w.schedule.sleep.next_start(w.now + 59)
        else:
            until = (w.now + 60) // MINUTES_PER_DAY * MINUTES_PER_DAY + self.at
            until += MINUTES_PER_DAY if until < w.now + 60 else 0
        until = int(min(until, w.scenario.end_minute - 1))
        return [{"tool": "defer_task", "arguments": {"what": t.spec.title, "until": format_at(until),
                                                      "about": t.spec.id, "plan": f"Pick up '{t.spec.title}' then."}}]


SLEEP = "sleep"  # postpone-to the user's next sleep
POSTPONE_TIMES = {"09:00": 9 * 60, "14:00": 14 * 60, "20:00": 20 * 60, SLEEP: SLEEP}
TEXT_FAMILIES = ("defer-until-urgent-0.64", "hold-while-more-urgent-0.15", "hold-while-more-urgent-0.15+allocate-when-busy",
                 "bigger-job-first-0.01", "compute-first",
                 "defer-all-but-most-urgent", "allocate-all-compute", "allocate-when-busy", "start-everything-then-defer")


def text(name: str, at: str | None = None) -> Callable[[], TextTimingRule]:
    return lambda: TextTimingRule(structured(name)(), POSTPONE_TIMES[at] if at else None)


TIMING_ADVERSARIES: dict[str, Callable[[], Any]] = {
    **{name: structured(name) for name in (*FAMILIES, *NEW_FAMILIES)},
    **{f"text-{name}": text(name) for name in TEXT_FAMILIES},
    **{f"text-{name}@{at}": text(name, at) for name in ("defer-until-urgent-0.64", "hold-while-more-urgent-0.15",
                                                          "defer-all-but-most-urgent", "start-everything-then-defer")
       for at in POSTPONE_TIMES if at != SLEEP},
    # untuned (suite 0.8.0): the three-feature rule, and postponing to the next sleep
    **{f"text-{name}": text(name) for name in ("due-soonest-of-arrivals-0.0+allocate-when-busy", "due-soonest-of-arrivals-0.1",
                                               "hold-until-asleep-0.1")},
    **{f"text-{name}@{SLEEP}": text(name, SLEEP) for name in ("due-soonest-of-arrivals-0.0+allocate-when-busy",
                                                              "hold-until-asleep-0.1", "hold-while-more-urgent-0.3")},
}
STRUCTURED_NAMES = (*FAMILIES, *NEW_FAMILIES)
TEXT_NAMES = tuple(n for n in TIMING_ADVERSARIES if n.startswith("text-"))
