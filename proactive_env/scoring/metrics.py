"""The 3T metrics of one run, computed from its event log and its scenario alone (DESIGN.md §5).

``RunScorer`` reads the world's log entry by entry (live, for rewards, or from a saved
trajectory, for ``rescore``: the same code, the same numbers). It replays the user's policy
(``sim.PolicyState``) to judge each intervention at its own time.

* **TC** per task = 100 × mean of the applicable components — Evidence (the task's evidence
  records read for it: each read credits one task), Outputs (its work done by the deadline and
  delivered at the depth the user needs: the user must see what they need to see; a correct
  suggestion is not penalised for not executing; delivery after ``needed_by`` counts half; an
  execute with wrong arguments delivers nothing), Constraints (required codes stated in the
  agent's own words, forbidden claims not made, on meaning), Semantics and Completion (from the
  judges). Work the user needed to see but never saw leaves nothing to judge. Run TC = Σ v_t·TC_t /
  Σ v_t over the run's *counted* tasks (fixed at reset: every task but a conditional one whose branch
  the oracle, serving this persona, would not open; a counted branch the agent cut off, or whose
  trigger never fired, scores 0), less ``PRIVACY_COST`` points per record read that no task active
  in the run needed (at most ``PRIVACY_CAP``; TC's floor is 0): reading everything is not free.
* **TA** per run = (decisions won − tasks postponed needlessly) / counted decisions (those between two
  counted tasks that are clashes for this persona and the run's rules, ``spec.contested``: a fixed
  denominator), floor 0. A decision judges only what its clash is about: the competing side competes
  only with what reaches what the clash shares in the window — the user (a message, a request, an
  action put to them) where it reaches the clash through them, else its run on the resource; its
  private work never competes. What the world does on the agent's behalf is judged at the time the
  agent did it (``_agents_time``): a message a task claimed counts when it was sent, a request kept
  until its task came up (the world put it to the user then) when it was made. A decision whose
  competing side this persona's play never puts to the user (private work, a delegated silent
  action), or whose urgent side needs no user time and has a later chance, is no decision for that
  persona. A decision is won when both its tasks were active and
  now ∧ later. now: substantive work on the
  urgent task by τ⁺ (inside [τ⁻, τ⁺), or before it once the task has come up: sooner is never
  worse; finished when the window opens, nothing clashes with it there) and no deferral of it
  before τ⁺. later: "later" is a decision about
  a clash the agent could see — the competing task deferred to a feasible time at or after the
  clash's end (τ⁺, or the urgent run's reported finish on the shared resource; where the resource is
  consumed then — a quota short until it refills, ``Resource.consumed`` — what the urgent run took
  is back only at the refill), its work fitting before its deadline and its resource free of the
  user's use, or its run allocated there, by a postponement *made* while the agent could see the
  clash: the competing task open (inside the window: both tasks active) and the agent having read a
  record that shows the clash (``shown_by``) and seen the urgent demand (the urgent task come up,
  or a record of its own read) — one test inside the window as before it (foresight); tasks that
  arrive together are no clash seen, the urgent task's trigger is not what the agent sees, and a postponement in force
  when the window opens counts (an earlier, blanket one, with nothing of the clash seen, does not);
  an allocation only where running it then would overlap the user's use or the decision's shared
  compute; and nothing of it in the window that competes (above). Where the competing task was
  finished, or not yet come up, when the urgent work was first handled, nothing needed
  postponing: `later` holds of itself (no failure). Any agent job over the user's own use of the shared resource inside the window fails the
  decision. A postponement that resolves no such clash (deferring, or allocating to a later time,
  work that competes with nothing: not the competing side of a clash in view, and whose run then
  would overlap none of the user's use of its compute — decoy pairs are built to tempt it; or
  deferring a decision's urgent task, inside its window as before it — the wrong pick, which must
  cost more than not choosing) is needless: each task postponed needlessly counts once as a decision lost. Continuation: 1 feasible timed
  plan, 0.5 a deferral without a time.
* **TR-D** per run = share of counted tasks whose every intervention was aligned when made and whose
  wanted depth was reached (``sim.policy``); NOOP tasks: nothing the user saw; cut off: not aligned.
* **TR-J** per task the user saw, 1–5, from what the user saw (``tr_j_estimate``); never from TC. Run
  TR-J = the mean over the counted tasks (a fixed denominator), where a task the user never saw rates
  1 if they were meant to see it (the stated rule wants SUGGEST or deeper) and 5 if not (nothing
  unwanted was shown).
* **J** = λ_TC·TC/100 + λ_TA·TA + λ_TR·S_TR with S_TR = (TR-D + (TR-J − 1)/4) / 2 — with the
  fixed denominators, a sum of one share per counted task, one per counted decision and the privacy
  cost (``RunScorer.contributions()``): the env pays each when it is final (DESIGN.md §6).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..sim import PolicyState, declines_sleep_time_work
from ..sim.schedule import Schedule
from ..spec import Depth, Scenario, Task, contested, reachable_states, through_user
from .compose import compose_artifact
from .judge import Judge, RubricJudge, TaskWork, claim_made, facts_stated, judge_task, strip_copies, substantive

COMPONENTS = ("evidence", "outputs", "constraints", "semantics", "completion")
_DEPTH_NAMES = {depth: depth.name for depth in Depth}  # (an enum's ``name`` is a descriptor call)
PRIVACY_COST, PRIVACY_CAP = 0.5, 10.0  # TC points per needless read, and at most
CLEAR_LENGTH = 2000  # characters: longer messages are hard to take in


@dataclass(frozen=True)
class Weights:
    """λ for J; normalised to sum to 1 (each must be positive)."""

    tc: float = 1 / 3
    ta: float = 1 / 3
    tr: float = 1 / 3

    def __post_init__(self) -> None:
        values = (self.tc, self.ta, self.tr)
        if any(not math.isfinite(v) or v <= 0 for v in values):
            raise ValueError(f"expected positive finite weights λ_TC, λ_TA, λ_TR, got {values}")
        total = sum(values)
        object.__setattr__(self, "tc", self.tc / total)
        object.__setattr__(self, "ta", self.ta / total)
        object.__setattr__(self, "tr", self.tr / total)

    def as_dict(self) -> dict[str, float]:
        return {"TC": self.tc, "TA": self.ta, "TR": self.tr}


@dataclass
class _Task:
    """What the log has said about one task so far."""

    spec: Task
    active: bool = False
    active_since: int | None = None
    cut_off: bool = False
    closed: bool = False
    started: bool = False
    units_done: int = 0
    reads: set[str] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)  # notes, messages, execute calls, in order
    shown: list[str] = field(default_factory=list)  # what the user saw
    delivered_at: int | None = None
    requested: bool = False
    executed: bool = False
    executed_attempts: int = 0
    failed_attempts: int = 0
    interventions: list[bool] = field(default_factory=list)  # aligned?
    clear: list[bool] = field(default_factory=list)
    trust_after: float | None = None
    observed_when_written: tuple[str, ...] = ()  # the records the agent had read when it last wrote for it
    observed_at_delivery: tuple[str, ...] = ()  # (work composed from its reads, the structured face)
    at_delivery: tuple[frozenset, int] | None = None  # (reads, units done) when the user first got it
    deferred_before: set[int] = field(default_factory=set)
    versions_at_start: dict[str, int] = field(default_factory=dict)  # its evidence's versions when it activated


@dataclass(frozen=True)
class TaskScore:
    task: str
    weight: float
    components: dict[str, float]
    diagnostics: dict[str, float]
    tc: float  # 0–100
    depth_match: bool | None  # None: cut off (scored for TC only)
    tr_j: float | None  # 1–5; None: the user never saw it
    wanted: str


def _agents_time(e: dict) -> int:
    """When the agent did what a ``present`` entry records: what the world does on the agent's
    behalf is judged at the time the agent did it. An earlier message a task claimed was seen
    when it was sent (``sent``); an earlier request kept until its task came up, which the world
    put to the user then, was the agent's request when it made it (``made``): it never competes
    in a clash that opened after it was made, nor is it work on the urgent side inside one (as a
    postponement kept until its task came up was made when written, ``_defer``)."""
    return e.get("sent", e.get("made", e["t"]))


def _at_once(t: int) -> int:
    return t


@dataclass
class _Decision:
    spec: object
    now: bool = False
    urgent_deferred: bool = False
    vague: bool = False  # the competing task deferred without a time while the clash was in view
    intruded: bool = False
    opened: bool = False
    closed: bool = False
    eligible: bool = False
    competing_open: bool | None = None  # was the competing task open when the urgent work was first handled?
    # the urgent task's work on the resource the clash shares all done, as the world reported it (its
    # last ``work_done``), inside the window: its hold is over then (None: nothing ended it before the window); ``clash_end`` says when what it took is free again
    hold_end: int | None = None
    # when the competing side reached what the clash shares, as [from, to) minutes (put to the user,
    # run on the resource), and the times it was explicitly put to (feasible, before its deadline,
    # while the clash was in view): both are judged against ``clash_end`` when the window closes
    reaches: list[tuple[int, int]] = field(default_factory=list)
    put_to: list[int] = field(default_factory=list)
    # when what the urgent side held of the shared resource until a minute is free again: at once for
    # a resource shared in time (and the user's time), at the refill where it is consumed (a quota's
    # remainder that serves one job: ``Resource.consumed``)
    free_again: Callable[[int], int] = _at_once

    @property
    def clash_end(self) -> int:
        """When the clash was over, as the agent could see it: what the urgent side held of what is
        shared (until its run there ended, ``hold_end``, else until the window's end) free again —
        then for a resource shared in time, at the refill where it is consumed (a quota)."""
        return self.free_again(self.spec.end if self.hold_end is None else self.hold_end)

    @property
    def competed(self) -> bool:
        """The competing side reached what the clash shares while the clash lasted."""
        end = self.clash_end
        return any(a < end and b > self.spec.start for a, b in self.reaches)

    @property
    def reached(self) -> list[int]:
        """The minutes from which the competing side reached what the clash shares while it
        lasted (what ``competed`` found; ``show --why`` names them)."""
        end = self.clash_end
        return sorted({max(a, self.spec.start) for a, b in self.reaches if a < end and b > self.spec.start})

    @property
    def later(self) -> bool:
        """The competing side was explicitly put to a time at or after the clash's end."""
        end = self.clash_end
        return any(at >= end for at in self.put_to)

    @property
    def continuation(self) -> float:
        return 1.0 if self.later else 0.5 if self.vague else 0.0


def _as_reserved(log: list[dict]) -> list[dict]:
    """The log as the agent's reservations finally stand. One withdrawn before it started counts as
    never made (no compute used, no postponement, no intrusion): its entries are left out. One
    moved (withdrawn ``moved`` to be reserved again at once) is the same reservation at its new
    time: the last of its moves stands where, and when, the first was made — what was put after a
    clash while the clash was in view stays put after it when moved later still."""
    moves: dict[int, int] = {}  # the id withdrawn to be moved -> the id it was made again as
    gone: set[int] = set()
    pending = None
    for e in log:
        if e["type"] == "reservation_withdrawn":
            gone.add(e["reservation"])
            pending = e["reservation"] if e.get("moved") else None
        elif pending is not None and e["type"] == "work" and e.get("reservation") is not None:
            moves[pending], pending = e["reservation"], None
    made = {e["reservation"]: e for e in log if e["type"] == "work" and e.get("reservation") is not None}
    again = set(moves.values())

    def final(rid: int) -> int | None:  # where a chain of moves ends (None: withdrawn for good)
        while rid in moves:
            rid = moves[rid]
        return None if rid in gone else rid

    out = []
    for e in log:
        rid = e.get("reservation")
        if e["type"] == "reservation_withdrawn" or (e["type"] == "work" and rid in again):
            continue
        if e["type"] == "work" and rid is not None:
            last = final(rid)
            if last is not None:
                out.append(e if last == rid else {**made[last], "t": e["t"]})
        elif rid is None or rid not in gone:  # (what else a reservation brought, an intrusion: while it stands)
            out.append(e)
    return out


class RunScorer:
    """Scores of one run, accumulated from its log as tasks and TA windows close."""

    def __init__(self, scenario: Scenario, persona: str, weights: Weights | None = None,
                 judges: list[Judge] | None = None, tr_j: dict[str, float] | None = None,
                 ta: dict[str, dict] | None = None):
        self.scenario, self.persona = scenario, persona
        self.weights = weights or Weights()
        self.judges = judges or [RubricJudge()]
        self._rubric_only = all(type(j) is RubricJudge for j in self.judges)
        self._rubric_versions = tuple(j.rubric_version for j in self.judges)  # (part of each cached verdict's key)
        self._tr_j_override, self._ta_override = tr_j or {}, ta or {}
        self.schedule = Schedule.of(scenario)
        self.policy = PolicyState(dict(scenario.personas[persona].rules))
        self.tasks = {t.id: _Task(t) for t in scenario.tasks}
        resources = {r.id: r for r in scenario.resources}
        self.decisions = [_Decision(d) if d.shares not in resources else _Decision(d, free_again=resources[d.shares].free_again)
                          for d in scenario.ta_decisions]
        # decisions whose competing side reaches the clash only through the user: what is put to them
        # in the window competes (``_attend``); their private work never does
        self._through_user = {d.spec.id for d in self.decisions if through_user(scenario, d.spec)}
        # each task's TA decisions, in the scenario's order, with whether it is their urgent task:
        # what an entry about the task may change (an entry about no decision's task looks at none)
        self._roles: dict[str, list[tuple[_Decision, bool]]] = {}
        for d in self.decisions:
            for tid in dict.fromkeys((d.spec.urgent, d.spec.competing)):
                self._roles.setdefault(tid, []).append((d, tid == d.spec.urgent))
        self._next_window_end = -math.inf  # when the next TA window closes (_close_windows sets it)
        self._next_window_start = -math.inf  # when the next TA window opens (_open_windows sets it)
        self.scores: list[TaskScore] = []
        # what ``settled`` has summed of ``scores`` so far (a scored task's parts are final): how many,
        # the running sums of their TC, TR-D and TR-J parts, and each one's share of J
        self._summed = 0
        self._sums = (0.0, 0.0, 0.0)
        self._task_shares: dict[str, float] = {}
        self.needless_postponements: dict[str, list[int]] = {}  # task → when it was postponed needlessly
        self.needless_why: list[tuple[str, int, str]] = []  # (task, when, why it resolved no clash), in order
        self.observed: set[str] = set()
        self._observed_sorted: tuple[str, ...] = ()  # sorted(observed), kept as it grows
        self.first_read: dict[str, int] = {}  # when each record was first read (what the agent had seen by then)
        self.version: dict[str, int] = {}  # each record's current version, as the log says
        self.read_version: dict[str, int] = {}  # the latest version of each record the agent read
        self.needless_reads: set[str] = set()
        self.brought: set[str] = set()  # records a message or notification the agent was shown brought
        self._reveals = {ev.id: set(ev.reveals) for ev in scenario.events}
        self._schedule_records = {r.id for r in scenario.records if r.kind.startswith("calendar")}
        self._starts = {tool.name: tool for tool in scenario.tools if tool.starts}
        self.privacy = 0.0
        self.ended = False
        self.composed = True  # the structured face: the agent's work is composed from what it read
        self._seen = 0
        self._moving = False  # a reservation withdrawn to be moved: the next one made is it (``_as_reserved``)
        # the tasks whose coin declines what the oracle may ask of them (its request may be sleep-time
        # work), as the run's start says (``World.coins``): the branches only their yes opens are not counted
        self.declined: frozenset[str] = frozenset()
        # what the denominators' cache keys read of the scenario, which a scorer never changes: the
        # ids of its tasks, its policy-change events, and what else ``contested`` reads (``_contested``)
        self._task_ids = frozenset(map(id, scenario.tasks))
        self._changes = tuple(ev for ev in scenario.events if ev.policy_change is not None)
        self._contested_key = (tuple(map(id, scenario.ta_decisions)), self._task_ids,
                               tuple((id(ev.policy_change), ev.at, id(ev.when)) for ev in self._changes),
                               id(scenario.user), id(scenario.resources), scenario.days, scenario.start_date)
        self._fix_denominators(dict(scenario.personas[persona].rules))

    @functools.cached_property
    def records_text(self) -> frozenset[str]:
        """Every version of every record, as a set: copying is measured against what a look-up
        shows at any time, and keyed on the set, not the order the variant put the records in.
        (Built when first asked: a structured run that writes nothing never needs it; cached per
        set of record contents, keyed as ``_source_texts`` keys one record: a seed's variant shares
        them with the file.)"""
        records = self.scenario.records
        key = frozenset((r.id, r.title, r.text, id(r.fields), id(r.versions)) for r in records)  # (as _source_texts)
        return _RECORDS_TEXT.get(key, tuple((r.fields, r.versions) for r in records),
                                 lambda: frozenset(v for r in records for v in _source_texts(r)))

    # ------------------------------------------------------------------ reading the log
    def feed(self, log: list[dict]) -> bool:
        """Read the entries not yet seen; True if any task or TA window closed."""
        closed, readers = False, _READERS
        for i in range(self._seen, len(log)):
            e = log[i]
            kind = e["type"]
            if kind == "reservation_withdrawn":
                if e.get("moved"):  # the reservation made again next is this one re-timed (``_as_made``)
                    self._moving = True
                else:
                    closed |= self._as_made(log[:i + 1])
                continue
            if self._moving and kind == "work":
                self._moving = False
                closed |= self._as_made(log[:i + 1])
                continue
            t = e["t"]  # (each entry read inline: this loop runs for every entry of every step)
            if t >= self._next_window_start and kind != "run_end":
                self._open_windows(t)
            if t >= self._next_window_end and kind != "run_end" and self._close_windows(t):
                closed = True
            read = readers.get(kind)
            if read is not None and read(self, e, t):  # (most of the log: only the clock matters of them)
                closed = True
        self._seen = len(log)
        return closed

    def _as_made(self, log: list[dict]) -> bool:
        """Re-score the run so far as the agent's reservations finally stand (``_as_reserved``),
        and pay what that changes as the change of a final share."""
        fresh = RunScorer(self.scenario, self.persona, self.weights, self.judges, self._tr_j_override, self._ta_override)
        fresh.feed(_as_reserved(log))
        self.__dict__.update(fresh.__dict__)
        return True

    # One reader per kind of log entry the scorer reads (``_READERS``); each returns whether
    # something closed (a task, a TA window, a needless postponement decided when made).
    def _task_of(self, e: dict) -> _Task | None:
        return self.tasks.get(e.get("task"))  # (None for an entry about no task: no task's id is None)

    def _on_run_start(self, e: dict, t: int) -> bool:
        self.policy = PolicyState(dict(e["rules"]))
        declined = frozenset(task for task, coin in e.get("coins", {}).items()
                             if task in self.tasks and declines_sleep_time_work(coin))
        if declined != self.declined:
            self.declined = declined
            del self.counted  # (fixed again below, with the branches the draws close left out)
        refixed = e["rules"] != self._stated_rules or not hasattr(self, "counted")
        if refixed:
            self._fix_denominators(dict(e["rules"]))
        self.composed = e.get("face", "structured") == "structured"
        return refixed  # (the summary so far reads the denominators fixed now)

    def _on_policy_change(self, e: dict, t: int) -> bool:
        self.policy.change(e["rules"])
        return False

    def _on_decision(self, e: dict, t: int) -> bool:
        self.policy.answer(e["task"], e["verdict"])
        return False

    def _on_record(self, e: dict, t: int) -> bool:
        self.version[e["id"]] = e.get("version", 0)
        return False

    def _on_event(self, e: dict, t: int) -> bool:
        self.brought |= self._reveals.get(e["id"], set())
        return False

    def _on_task_active(self, e: dict, t: int) -> bool:
        task = self._task_of(e)
        task.active, task.active_since = True, t
        task.versions_at_start = {r: self.version.get(r, 0) for r in task.spec.evidence}
        for d, _ in self._roles.get(task.spec.id, ()):
            if t < d.spec.end:
                d.eligible = d.eligible or self._both_active(d)
        return False

    def _on_task_inactive(self, e: dict, t: int) -> bool:
        task = self._task_of(e)
        task.cut_off = task.spec.id in self._counted_set
        return False

    def _on_read(self, e: dict, t: int) -> bool:
        record = e["record"]
        self._read(record, self._task_of(e), t)
        self.read_version[record] = max(self.read_version.get(record, -1), e.get("version", 0))
        return False

    def _on_work(self, e: dict, t: int) -> bool:
        task = self._task_of(e)
        task.started = True
        lost = len(self.needless_postponements)
        self._work(task, e)
        return len(self.needless_postponements) > lost

    def _on_work_done(self, e: dict, t: int) -> bool:
        task = self._task_of(e)
        task.units_done = e["units_done"]
        if task.units_done >= task.spec.work.units:  # its hold on its resource is over, as the agent is told
            for d, urgent in self._roles.get(task.spec.id, ()):
                if urgent and d.hold_end is None and t < d.spec.end and task.spec.work.resource == d.spec.shares:
                    d.hold_end = max(t, d.spec.start)
        return False

    def _on_note(self, e: dict, t: int) -> bool:
        task = self._task_of(e)
        if task is not None:
            task.started = True
            self._wrote(task, e["text"])
        return False

    def _on_present(self, e: dict, t: int) -> bool:
        task = self._task_of(e)
        if task is not None:
            self._present(task, e)
        return False

    def _on_run_refused(self, e: dict, t: int) -> bool:
        task = self._task_of(e)
        if task is not None:  # a run the user decides, started without their OK
            task.interventions.append(False)
        return False

    def _on_execute(self, e: dict, t: int) -> bool:
        task = self._task_of(e)
        if task is not None:
            self._execute(task, e)  # one refused for its arguments leaves the approval in force
        return False

    def _on_defer(self, e: dict, t: int) -> bool:
        task = self._task_of(e)
        if task is None:
            return False
        lost = len(self.needless_postponements)
        self._defer(task, e)
        return len(self.needless_postponements) > lost  # a needless postponement is decided when made

    def _on_intrusion(self, e: dict, t: int) -> bool:
        for d in self.decisions:
            if d.spec.shares == e["resource"] and e["start"] < d.spec.end and e["end"] > d.spec.start:
                d.intruded = True
        return False

    def _on_trust(self, e: dict, t: int) -> bool:
        task = self._task_of(e)
        if task is not None:
            task.trust_after = e["after"]
        return False

    def _on_task_closed(self, e: dict, t: int) -> bool:
        task = self._task_of(e)
        if task.active or task.cut_off or task.spec.id in self.counted:
            self._score(task, t)
            return True
        return False

    def _on_run_end(self, e: dict, t: int) -> bool:
        self._close_windows(math.inf)
        for task_id in self.counted:  # a branch that never came up (its trigger never fired) is cut off too
            self._score(self.tasks[task_id], t)
        self.privacy = min(PRIVACY_CAP, PRIVACY_COST * len(self._needless()))
        self.ended = True
        return True

    def _either_active(self, d: _Decision) -> bool:
        return self.tasks[d.spec.urgent].active or self.tasks[d.spec.competing].active

    def _both_active(self, d: _Decision) -> bool:
        return self.tasks[d.spec.urgent].active and self.tasks[d.spec.competing].active

    def _oracle_reaches(self, spec: Task, declined: frozenset[str] = frozenset()) -> bool:
        """Would the oracle, serving this persona, open this conditional task's branch — every task
        it requires counted (opened in turn) and brought to the state required, where the user
        declines what is asked of the tasks ``declined``? (The oracle never competes with the
        user, but its request may be sleep-time work: whether it is depends on the run's timing,
        so a coin that declines sleep-time work closes the branch whether or not it was.)"""
        return all(self._oracle_reaches(self.tasks[c.task].spec, declined)
                   and c.state in reachable_states(self.scenario, self.tasks[c.task].spec, self.persona,
                                                   declined=c.task in declined)
                   for c in spec.requires)

    def closed_by_draw(self, task_id: str) -> str | None:
        """The task whose drawn decline closed this task's branch — a branch the oracle opens where
        the user says yes, left out of the counted tasks (None: no draw closed it). (read-only)"""
        return self._closed_by_draw.get(task_id)

    def _closed_by_draws(self) -> dict[str, str]:
        """``closed_by_draw`` of every task: one that counts where no coin declines, and does not
        count here, with the declined task its branch needs a yes from (the first found, through
        its conditions in order and the tasks they require)."""
        if not self.declined:
            return {}

        def gate(spec: Task) -> str | None:
            if spec.id in self._counted_set or not self._oracle_reaches(spec):
                return None
            for c in spec.requires:
                required = self.tasks[c.task].spec
                if c.task in self.declined and c.state not in reachable_states(self.scenario, required, self.persona,
                                                                               declined=True):
                    return c.task
                earlier = gate(required)
                if earlier is not None:
                    return earlier
            return None

        return {spec.id: g for spec in self.scenario.tasks if (g := gate(spec)) is not None}

    def _read(self, record: str, task: _Task | None, t: int) -> None:
        if record not in self.observed:
            self.observed.add(record)
            self._observed_sorted = tuple(sorted(self.observed))
            self.first_read[record] = t
        if task is not None:
            task.reads.add(record)

    def _evidence_read(self, task: _Task) -> set[str]:
        """The task's records the agent has read: for it, or at any time at a version no older than
        the one the record had when the task came up (what it knew still holds)."""
        return {r for r in task.spec.evidence
                if r in task.reads or self.read_version.get(r, -1) >= task.versions_at_start.get(r, 0)}

    def _needless(self) -> set[str]:
        """Records read that nothing needed: not the evidence of a task that came up, not what a
        message or notification the agent was shown brought, not the user's calendar (what every
        timing decision is judged against), not a record that shows a decision's clash once one of
        its tasks has come up (``shown_by``: what the timing is decided from)."""
        needed = {r for t in self.tasks.values() if t.active for r in t.spec.evidence}
        needed |= self.brought | (self._schedule_records if self.decisions else set())
        needed |= {r for d in self.decisions if self._either_active(d) for r in d.spec.shown_by}
        return {r for r in self.observed if r not in needed}

    def _wrote(self, task: _Task, text: str) -> None:
        """The agent wrote for the task: its facts are grounded in what it had read by now."""
        task.texts.append(text)
        task.observed_when_written = self._observed_sorted

    # ------------------------------------------------------------------ interventions
    def _present(self, task: _Task, e: dict) -> None:
        """What the user was shown, judged at the agent's time (``_agents_time``)."""
        at = _agents_time(e)
        if e.get("run"):  # asking for the task's run: an intervention, and none of its work delivered
            if not e.get("repeat"):
                task.interventions.append(self.policy.aligned(task.spec, Depth.SUGGEST)[0])
            self._attend(task, at)
            return
        text = e.get("text")
        if text is not None:
            self._wrote(task, text)
        if e.get("report"):
            task.shown.append(text or "")
            return
        task.shown.append(text or "")
        if not e.get("repeat"):  # a repeat (the world's mark: aligned, nothing new) is no new intervention
            task.interventions.append(self.policy.aligned(task.spec, Depth.SUGGEST)[0])
            task.clear.append(text is None or self._clear(text))
        task.requested |= bool(e.get("request"))
        if task.delivered_at is None:
            self._deliver(task, at)
        self._attend(task, at)

    def _deliver(self, task: _Task, t: int) -> None:
        task.delivered_at = t
        task.observed_at_delivery = self._observed_sorted
        task.at_delivery = (frozenset(self._evidence_read(task)), task.units_done)

    def _execute(self, task: _Task, e: dict) -> None:
        if not e.get("repeat"):
            task.interventions.append(self.policy.aligned(task.spec, Depth.EXECUTE)[0])
        task.executed_attempts += 1
        self._wrote(task, f"{e['tool']}({_ARGS_JSON(e.get('args', {}))})")
        if e["ok"]:
            task.executed = True
            if task.delivered_at is None:
                self._deliver(task, e["t"])
            self._scheduled(task, e)
        else:
            task.failed_attempts += e.get("reason") != "unauthorised"
        self._attend(task, e["t"])

    def _clear(self, text: str) -> bool:
        own = strip_copies(text, self.records_text)
        return len(text) <= CLEAR_LENGTH and len(own.split()) >= 0.5 * max(1, len(text.split()))

    # ------------------------------------------------------------------ temporal allocation
    def _attend(self, task: _Task, t: int) -> None:
        """Substantive work on a task at minute ``t``, in TA terms: for the urgent task, handling
        it; for the competing one, what reaches the user in the window (a message, a request, an
        action put to them) competes where the competing side reaches the clash through the user
        (``spec.through_user``: the user's time, or a resource the user works on when told). Its
        private work never competes; in a clash over a resource it runs on, only its run there
        does (``_work``, ``_scheduled``): telling the user about it does not."""
        for d, urgent in self._roles.get(task.spec.id, ()):
            if urgent and t < d.spec.end:  # served by the window's end: before it opened too
                self._handled(d, inside=d.spec.start <= t)
            elif not urgent and d.spec.start <= t < d.spec.end and d.spec.id in self._through_user:
                d.reaches.append((t, t + 1))

    def _handled(self, d: _Decision, inside: bool) -> None:
        """The urgent task got substantive work by the window's end (work done before it opens —
        a task brought forward, an early answer — serves it too: sooner is never worse); work
        inside the window notes whether the competing one was open then (finished or not yet
        come up, nothing needed postponing). Work before the window says nothing of that: the
        competing task may still come up inside it and need putting after the clash — unless the
        urgent task is finished when the window opens (``_open_windows``: nothing clashes then)."""
        d.now = True
        if inside and d.competing_open is None:
            c = self.tasks[d.spec.competing]
            d.competing_open = c.active and not c.closed and not self._finished(c)

    def _finished(self, task: _Task) -> bool:
        """All its work done and the user given what they want of it, in the agent's own words
        (pasted records finish nothing) or as the action itself."""
        wanted = self.policy.wanted(task.spec, self.persona)
        if task.units_done < task.spec.work.units or not self._met(task, wanted):
            return False
        return task.executed or bool(self._work_of(task, wanted).own)

    def _clash(self, d: _Decision, t: int) -> bool:
        """At minute ``t``, could the agent see the decision's clash? One test, inside the window as
        before it (foresight): the competing task open (inside the window: both tasks come up) and
        the agent having read what makes the clash — a record that shows it (``shown_by``) and the
        urgent demand (the urgent task come up, or a record of its own read; not the calendar: that
        shows the user's time, not the demand). Tasks arriving together are not a clash seen: the
        urgent task's trigger is not what the agent sees, the record that shows the clash is. (A
        postponement made after the urgent hold ended, inside the window, is still in view: it can
        only be later than ``clash_end``, and the structured face's follow-ups come back hourly.)"""
        if t >= d.spec.end:
            return False
        known = self._both_active(d) if t >= d.spec.start else self._open(self.tasks[d.spec.competing])
        return known and self._demand_seen(d, t)

    def _open(self, task: _Task) -> bool:
        return task.active and not task.closed and not self._finished(task)

    def _read_by(self, records: Iterable[str], t: int) -> bool:
        """Had the agent read any of ``records`` by minute ``t`` (first read at or before it)?"""
        first = self.first_read
        return any(r in first and first[r] <= t for r in records)

    def _demand_seen(self, d: _Decision, t: int) -> bool:
        """By minute ``t``, had the agent read a record that shows the decision's clash and seen the
        urgent demand (the urgent task come up, or a record of its own read)?"""
        if not self._read_by(d.spec.shown_by, t):
            return False
        urgent = self.tasks[d.spec.urgent]
        came_up = urgent.active_since is not None and urgent.active_since <= t
        schedule = self._schedule_records
        return came_up or self._read_by([r for r in urgent.spec.evidence if r not in schedule], t)

    def _overlaps_use(self, task: _Task, start: int) -> bool:
        """Would the task's remaining work, run from ``start``, overlap the user's use of its resource?"""
        resource = task.spec.work.resource
        return resource is not None and not self.schedule.resource_free(resource, start, start + self._remaining(task))

    def _remaining(self, task: _Task) -> int:
        work = task.spec.work
        return work.minutes * max(1, work.units - task.units_done)

    def _postponed(self, task: _Task, t: int, allocation: bool) -> None:
        """A postponement of the task made at ``t``: needless unless it resolves a clash the agent
        could see (``_clash``: it is the competing side of a decision whose clash was in view — for an
        allocation, one its run then would take part in), or running it then would overlap the
        user's own use of its resource (deferred or allocated alike)."""
        tid = task.spec.id
        for d, urgent in self._roles.get(tid, ()):
            if not urgent and self._clash(d, t) and (not allocation or self._run_clashes(d, task, t)):
                return
        if self._overlaps_use(task, t):  # run now, it would take the compute from the user
            return
        self.needless_postponements.setdefault(tid, []).append(t)
        self.needless_why.append((tid, t, self._why_needless(task, t, allocation)))

    def _why_needless(self, task: _Task, t: int, allocation: bool) -> str:
        """In words, why a postponement made at ``t`` resolved no clash the agent could see."""
        tid = task.spec.id
        why = []
        for d, _ in self._roles.get(tid, ()):  # (the decisions it is a side of, in the scenario's order)
            if t >= d.spec.end:
                why.append(f"{d.spec.id}'s window had closed")
            elif tid == d.spec.urgent:
                when = "inside" if t >= d.spec.start else "before"
                why.append(f"{when} {d.spec.id}'s window, whose urgent side it is (the work whose chance the window is)")
            elif t >= d.spec.start and not self._both_active(d):
                why.append(f"inside {d.spec.id}'s window, but {d.spec.urgent} had not come up")
            elif not self._open(task):
                why.append(f"it was already finished (its result delivered): nothing of it was left to put after "
                           f"{d.spec.id}'s clash")
            elif not self._read_by(d.spec.shown_by, t):
                when = "inside" if t >= d.spec.start else "before"
                why.append(f"{when} {d.spec.id}'s window, but no record that shows its clash "
                           f"({', '.join(d.spec.shown_by)}) had been read")
            elif t < d.spec.start and not self._demand_seen(d, t):
                why.append(f"before {d.spec.id}'s window, and {d.spec.urgent} had not come up nor any record "
                           f"of its own been read")
            elif allocation:
                why.append(f"running it then would overlap neither the user's use nor {d.spec.id}'s urgent work")
        if not why:
            why.append("it competes with nothing: it is in no timing decision, and running it then would overlap "
                       "none of the user's use")
        decoys = [p.id for p in self.scenario.decoys if tid in p.tasks and p.start <= t < p.end]
        if decoys:
            why.append(f"decoy pair {', '.join(decoys)}: both fit now")
        return "; ".join(why)

    def _run_clashes(self, d: _Decision, task: _Task, t: int) -> bool:
        """An allocation resolves the clash only where running the work from ``t`` would overlap
        the user's own use of its resource, or the urgent task's work on that resource in the window."""
        urgent = self.tasks[d.spec.urgent].spec.work
        shared = urgent.resource is not None and urgent.resource == task.spec.work.resource
        return shared or self._overlaps_use(task, t)

    def _work(self, task: _Task, e: dict) -> None:
        start, end = e["start"], e["end"]
        if e.get("allocated") and start > e["t"]:
            self._postponed(task, e["t"], allocation=True)
        for d, urgent in self._roles.get(task.spec.id, ()):
            if e["t"] >= d.spec.end:
                continue
            if urgent:
                if start < d.spec.end:
                    self._handled(d, inside=d.spec.start <= start)
            else:
                # only a run on what the clash shares competes: private work (a note's unit on
                # no compute) takes neither the user's time nor the resource
                if e.get("resource") == d.spec.shares:
                    d.reaches.append((start, end))
                if (e.get("allocated") and end < task.spec.deadline
                        and self._clash(d, e["t"]) and self._run_clashes(d, task, e["t"])):
                    d.put_to.append(start)

    def _scheduled(self, task: _Task, e: dict) -> None:
        """An executed action whose tool declares when it begins (``Tool.starts``), read like an
        allocation's start for the competing side of a clash over a resource: begun after the
        window, by a call made while the clash was in view, it is put later (as ``defer_task`` puts
        it); begun inside the window, its run takes the resource. (An action that begins at its own
        later time is no needless postponement: its time is the matter's, not a deferral.)"""
        start = self._action_start(e)
        if start is None:
            return
        for d in self.decisions:
            if e["t"] >= d.spec.end or task.spec.id != d.spec.competing or d.spec.shares == "user_time":
                continue
            d.reaches.append((start, start + 1))
            if self._clash(d, e["t"]):  # (queued in time: the world took it)
                d.put_to.append(start)

    def _action_start(self, e: dict) -> int | None:
        """When an executed action begins, from its tool's declared start parameters (omitted: now);
        None where its tool declares none or the value is no time."""
        tool = self._starts.get(e.get("tool"))
        if tool is None:
            return None
        try:
            start = tool.start(e.get("args") or {}, self.scenario.start_date)
        except ValueError:
            return None
        return e["t"] if start is None else start

    def _defer(self, task: _Task, e: dict) -> None:
        t, until = e["t"], e.get("until")
        made = e.get("made", t)  # a postponement kept until its task came up was made when written
        for d, urgent in self._roles.get(task.spec.id, ()):
            if t >= d.spec.end:
                continue
            if urgent:
                d.urgent_deferred = True
            elif self._clash(d, made):
                if until is None:
                    d.vague = True
                elif self._feasible(task, until):
                    d.put_to.append(until)
        # deferring a decision's urgent task loses that decision and is needless besides, inside its
        # window as before it: the wrong pick of a clash must cost more than not choosing at all, or
        # a rule that ignores judgement (the nearer deadline first) gains where it is right, free
        self._postponed(task, made, allocation=False)

    def _feasible(self, task: _Task, start: int) -> bool:
        work = task.spec.work
        duration = work.minutes * max(1, work.units - task.units_done)
        end = start + duration
        return end < task.spec.deadline and (work.resource is None or
                                              self.schedule.resource_free(work.resource, start, end))

    def _open_windows(self, t: float) -> None:
        """Open the TA windows that have started by ``t`` (asked before the entry at ``t`` is read):
        an urgent task finished before its window was handled ahead of it — a need acted on once
        knowable (issue #20) leaves nothing of it to do in the window, so nothing clashes with it
        there and nothing needs postponing."""
        for d in self.decisions:
            if not d.opened and t >= d.spec.start:
                d.opened = True
                if d.competing_open is None and t < d.spec.end and self._finished(self.tasks[d.spec.urgent]):
                    d.now, d.competing_open = True, False  # (work on it before the window already made it "now")
        self._next_window_start = min((d.spec.start for d in self.decisions if not d.opened), default=math.inf)

    def _close_windows(self, t: float) -> bool:
        """Close the TA windows that have ended by ``t``; note when the next one ends (``feed``
        asks at every entry, so nothing is looked at before then)."""
        closed = False
        for d in self.decisions:
            if not d.closed and t >= d.spec.end:
                d.closed = closed = True
                d.eligible = d.eligible or self._both_active(d)
        self._next_window_end = min((d.spec.end for d in self.decisions if not d.closed), default=math.inf)
        return closed

    def _ta_label(self, d: _Decision) -> tuple[bool, bool, float]:
        override = self._ta_override.get(d.spec.id)
        if override is not None:
            return bool(override["now"]), bool(override["later"]), float(override["continuation"])
        now = d.now and not d.urgent_deferred and not d.intruded
        # ``d.later``, ``d.competed`` and ``d.continuation``, with the clash's end worked out once
        end, start = d.clash_end, d.spec.start
        put_later = any(at >= end for at in d.put_to)
        continuation = 1.0 if put_later else 0.5 if d.vague else 0.0
        later = put_later and not any(a < end and b > start for a, b in d.reaches) and not d.intruded
        return now, later, continuation if later or continuation == 0.5 else 0.0

    # ------------------------------------------------------------------ a task's score
    def _score(self, task: _Task, t: int) -> None:
        spec = task.spec
        if task.closed:
            return
        task.closed = True
        if not task.active:  # cut off: the oracle would have opened it
            self.scores.append(TaskScore(spec.id, spec.weight, dict.fromkeys(("outputs",), 0.0),
                                         dict.fromkeys(("correctness", "grounding", "completeness", "artifact_quality"), 0.0),
                                         0.0, None, None, "cut_off"))
            return
        wanted = self.policy.wanted(spec, self.persona)
        met = self._met(task, wanted)
        aligned = all(task.interventions) and met
        work = self._work_of(task, wanted, judged=True)
        diag, constraints = self._judged(spec, work)
        components: dict[str, float] = {}
        if spec.evidence:
            components["evidence"] = len(self._evidence_read(task)) / len(spec.evidence)
        components["outputs"] = self._outputs(task, wanted, work)
        if constraints is not None:
            components["constraints"] = constraints
        components["semantics"] = (diag["correctness"] + diag["grounding"]) / 2
        components["completion"] = (diag["completeness"] + diag["artifact_quality"]) / 2
        tc = 100.0 * sum(components.values()) / len(components)
        seen = bool(task.interventions) or bool(task.shown)
        tr_j = self._tr_j_override.get(spec.id, tr_j_estimate(task)) if seen else None
        self.scores.append(TaskScore(spec.id, spec.weight, components, diag, tc, aligned, tr_j, _DEPTH_NAMES[wanted]))

    def _judged(self, spec: Task, work: TaskWork) -> tuple[dict[str, float], float | None]:
        """The judges' diagnostics and the constraints score of a task's work. With the default
        rubric judge alone both are a function of (task, work), so they are cached: a structured
        agent's composed work repeats across episodes (scoring at a task's close is the hot path)."""
        if not self._rubric_only:
            return judge_task(self.judges, spec, work), self._constraints(spec, work)
        key = (id(spec), work, self._rubric_versions)
        diagnostics, constraints = _JUDGED.get(key, (spec,), lambda: (judge_task(self.judges, spec, work),
                                                                     self._constraints(spec, work)))
        return dict(diagnostics), constraints

    def _met(self, task: _Task, wanted: Depth) -> bool:
        if wanted == Depth.NOOP:
            return not task.interventions
        if wanted == Depth.PREPARE:
            return task.started
        if wanted == Depth.SUGGEST:
            return task.delivered_at is not None and not task.executed
        if task.executed_attempts:  # the depth attempted counts, even if the call failed
            return True
        # asked, and the user had not answered by the deadline
        return self.policy.rule(task.spec) == "approve" and task.spec.id not in self.policy.answers and task.requested

    def _work_of(self, task: _Task, wanted: Depth, judged: bool = False) -> TaskWork:
        """What the user received for the task (all of the agent's work on it where the user got
        what they needed; only what they were shown otherwise), as a judge reads it. ``judged``:
        for the scorer's judges; where the rubric judge is the only one, ``observed`` holds only
        what it reads of it (``RubricJudge.observed_it_reads``: works that differ only in what
        else the agent had read share one cached verdict)."""
        spec = task.spec
        delivered = wanted <= Depth.PREPARE or task.delivered_at is not None
        texts = [t for t in (task.texts if delivered else task.shown) if t]
        composed = ""
        if self.composed and delivered and task.started:
            reads, units = task.at_delivery or (self._evidence_read(task), task.units_done)
            composed = _composed(spec, frozenset(reads), units)  # the scenario's words: never a copy
        written = "\n".join(texts)
        own = "\n".join(p for p in (composed, strip_copies(written, self.records_text) if written else "") if p)
        artifact = "\n".join(p for p in (composed, written) if p)
        # grounded in what the agent had read by the time it wrote (not frozen at a delivery the game
        # made itself, e.g. a kept request released when its matter came up)
        observed = (task.observed_when_written if task.texts else
                    task.observed_at_delivery if task.delivered_at is not None else self._observed_sorted)
        if judged and self._rubric_only:
            observed = RubricJudge.observed_it_reads(spec, observed)
        return TaskWork(task=spec.id, artifact=artifact, own_words=own, observed=observed,
                        units_done=task.units_done, units=spec.work.units, noop=spec.noop,
                        intervened=bool(task.interventions),
                        evidence_read=len(self._evidence_read(task)), evidence_total=len(spec.evidence))

    def _outputs(self, task: _Task, wanted: Depth, work: TaskWork) -> float:
        spec = task.spec
        if spec.noop:
            return 0.0 if task.interventions else 1.0
        done = min(1.0, task.units_done / spec.work.units)
        if not self.composed and not _substantive(spec, work):
            done = 0.0  # text face: notes that copy the records, or say nothing, are not the work done
        items = [done]
        if wanted >= Depth.SUGGEST:
            delivered = task.executed or (task.delivered_at is not None and _substantive(spec, work))
            late = task.delivered_at is not None and spec.needed_by is not None and task.delivered_at > spec.needed_by
            items.append((0.5 if late else 1.0) if delivered else 0.0)
        return sum(items) / len(items)

    def _constraints(self, spec: Task, work: TaskWork) -> float | None:
        c = spec.constraints
        total = len(c.must_include) + len(c.must_not_include)
        if not total:
            return None
        if spec.noop:
            return 0.0 if work.intervened else 1.0
        if not _substantive(spec, work):
            return 0.0
        met = len(facts_stated(spec, work, c.must_include))
        met += sum(1 for claim in c.must_not_include if not claim_made(work.artifact, claim.text))
        return met / total

    def work(self, task_id: str) -> TaskWork:
        """What the run left for a task so far, as the judges read it."""
        task = self.tasks[task_id]
        return self._work_of(task, self.policy.wanted(task.spec, self.persona))

    def evidence_read(self, task_id: str) -> set[str]:
        """The task's evidence records the agent has read so far, as Evidence counts them (read-only)."""
        return self._evidence_read(self.tasks[task_id])

    def ta_label(self, decision_id: str) -> tuple[bool, bool, float]:
        """A TA decision's (now, later, continuation) as the summary counts it (read-only)."""
        return self._ta_label(next(d for d in self.decisions if d.spec.id == decision_id))

    # ------------------------------------------------------------------ J's fixed denominators
    def _fix_denominators(self, rules: dict[str, str]) -> None:
        """What J is a sum over, fixed at reset (DESIGN.md §6), so that each task and each TA
        decision owns a share of J that no other outcome changes: the *counted* tasks (every task
        but a conditional one whose branch the oracle, serving this persona, would not open — so a
        branch the agent cut off, or whose trigger never fired, counts, at 0), their weights, the TA
        decisions between two counted tasks that are clashes for this persona and the run's rules
        (``spec.contested``: a competing side that reaches the clash only through the user, and
        whose wanted play puts nothing to them — private work, a delegated silent action — makes
        none), and the counted tasks the user is meant to see (the depth the stated rules want is
        SUGGEST or deeper: one never seen rates TR-J 1, others 5)."""
        if not hasattr(self, "counted"):  # (the rules drawn at run start change who is meant to see, and which clashes are)
            counted_ids = self._counted_ids()
            self.counted = tuple(t.id for t in self.scenario.tasks if t.id in counted_ids)
            self._counted_set = frozenset(self.counted)
            self.counted_weight = sum(self.tasks[t].spec.weight for t in self.counted)
            self._closed_by_draw = self._closed_by_draws()
        s, counted, drawn = self.scenario, self._counted_set, tuple(sorted(rules.items()))
        self.counted_decisions = tuple(self.decisions[i] for i in self._contested(rules, drawn))
        self._stated_rules = dict(rules)
        # cached per (persona, rules, counted tasks): a variant draws among few rule sets
        key = (self.persona, drawn, self._task_ids, counted)
        self.meant_to_see = _MEANT_TO_SEE.get(key, tuple(s.tasks), lambda: self._meant_to_see(rules))

    def _contested(self, rules: dict[str, str], drawn: tuple) -> tuple[int, ...]:
        """Which TA decisions (their indices) are between two counted tasks and clashes for this
        persona and rules (``spec.contested``), cached on what that reads: the decisions, the
        tasks, the policy changes with their times and conditions, the user and the resources
        (objects a seed's variant shares with the file: it moves no policy change), the days."""
        s, counted = self.scenario, self._counted_set
        changes = self._changes
        key = (self.persona, drawn, counted, *self._contested_key)
        return _CONTESTED.get(key, (*s.ta_decisions, *s.tasks, *changes, s.user, s.resources), lambda: tuple(
            i for i, d in enumerate(s.ta_decisions)
            if d.urgent in counted and d.competing in counted and contested(s, d, self.persona, rules)))

    def _meant_to_see(self, rules: dict[str, str]) -> frozenset[str]:
        stated = PolicyState(dict(rules))
        return frozenset(t for t in self.counted if stated.wanted(self.tasks[t].spec, self.persona) >= Depth.SUGGEST)

    def _counted_ids(self) -> frozenset[str]:
        """The counted task ids, cached per (persona, task set, rules the persona may hold): a
        seed's variant shares the file's task, persona and policy-change objects (held by the
        cache, so their ids stay theirs) and only reorders or drops tasks."""
        s = self.scenario
        changes = tuple(ev.policy_change for ev in self._changes)
        key = (self.persona, self._task_ids, id(s.personas), id(s.variants), tuple(map(id, changes)),
               self.declined)
        return _COUNTED.get(key, (*s.tasks, s.personas, s.variants, *changes), lambda: frozenset(
            t.id for t in s.tasks if not t.requires or self._oracle_reaches(t, self.declined)))

    def denominators(self) -> dict[str, float]:
        return {"tasks": len(self.counted), "weight": self.counted_weight,
                "decisions": len(self.counted_decisions), "meant_to_see": len(self.meant_to_see)}

    def _task_parts(self, s: TaskScore) -> tuple[float, float, float]:
        """A scored task's numerators of TC (v_t·TC_t), TR-D (aligned or not) and TR-J (points
        above 1) over the fixed denominators; 0 for a task that is not counted (a branch the agent
        opened that the oracle would not have)."""
        if s.task not in self._counted_set:
            return 0.0, 0.0, 0.0
        if s.tr_j is not None:
            tr_j = s.tr_j
        else:  # never seen: the worst rating where the user needed to see it, the best where not
            tr_j = 1.0 if s.task in self.meant_to_see else 5.0
        return s.weight * s.tc, float(bool(s.depth_match)), tr_j - 1.0

    def _decision_part(self, d: _Decision) -> float:
        """A closed TA decision's numerator of TA: 1 if it was eligible and now ∧ later."""
        if not (d.closed and d.eligible):
            return 0.0
        now, later, _ = self._ta_label(d)
        return float(now and (later or self._nothing_to_postpone(d)))

    def decision_won(self, decision_id: str) -> bool:
        """Did the closed decision count as won (now ∧ later, or now with nothing to postpone)? (read-only)"""
        return bool(self._decision_part(next(d for d in self.decisions if d.spec.id == decision_id)))

    def _nothing_to_postpone(self, d: _Decision) -> bool:
        """The competing task was finished, or had not come up, when the urgent work was first
        handled, and no job ran over the user's use: nothing needed postponing (no failure)."""
        return d.competing_open is False and not d.intruded and d.spec.id not in self._ta_override

    def contributions(self) -> dict[str, float]:
        """Each final outcome's share of J so far: ``task:<id>`` (its weighted TC, TR-D and TR-J
        terms) once the task has closed, ``decision:<id>`` once its window has closed, and
        ``privacy`` (−λ_TC × the needless-read cost, as TC's floor at 0 lets it) at the run's end.
        Each share is final when it appears; they sum to ``summary()["J"]``."""
        return self.settled()[1]

    def settled(self) -> tuple[dict[str, float], dict[str, float]]:
        """``(summary(), contributions())`` from one pass over what has closed (the env asks for
        both whenever something closes)."""
        w, n, weight = self.weights, len(self.counted), self.counted_weight
        tc_raw, tr_d, tr_j = self._sums
        for s in self.scores[self._summed:]:  # (a scored task's parts and share are final: each worked out once,
            tc, d_part, j_part = self._task_parts(s)  # and summed in the order the tasks were scored)
            tc_raw, tr_d, tr_j = tc_raw + tc, tr_d + d_part, tr_j + j_part
            self._task_shares[f"task:{s.task}"] = w.tc * tc / weight / 100.0 + w.tr * (d_part + j_part / 4.0) / n / 2.0
        self._summed, self._sums = len(self.scores), (tc_raw, tr_d, tr_j)
        shares = dict(self._task_shares)
        n_decisions = len(self.counted_decisions)
        won = 0.0
        for d in self.counted_decisions:
            if d.closed:
                part = self._decision_part(d)
                won += part
                shares[f"decision:{d.spec.id}"] = w.ta * part / n_decisions
        lost = len(self.needless_postponements)
        for task_id in self.needless_postponements:  # each costs a decision, when it is made
            shares[f"needless:{task_id}"] = -w.ta / n_decisions if n_decisions else 0.0
        if self.ended:  # TA's floor at 0, as the summary has it
            shares["needless_floor"] = w.ta * max(0.0, lost - won) / n_decisions if n_decisions else 0.0
            shares["privacy"] = -w.tc * min(self.privacy, tc_raw / weight) / 100.0
        return self._summary_of(tc_raw, tr_d, tr_j, won, n, n_decisions), shares

    def _summary_of(self, tc: float, tr_d: float, tr_j: float, won: float, n: int, decisions: int) -> dict[str, float]:
        tc = max(0.0, tc / self.counted_weight - self.privacy)
        tr_d, tr_j = tr_d / n, 1.0 + tr_j / n
        ta = max(0.0, won - len(self.needless_postponements)) / decisions if decisions else 0.0
        s_tr = (tr_d + (tr_j - 1.0) / 4.0) / 2.0
        w = self.weights
        j = w.tc * tc / 100.0 + w.ta * ta + w.tr * s_tr
        return {"TC": tc, "TA": ta, "TR_D": tr_d, "TR_J": tr_j, "J": j}

    def potential(self) -> float:
        """Credit in prospect, for potential-based reward shaping (0 once everything has closed):
        each open counted task's TR-D share where its interventions so far were all aligned with
        the rule then in force and it has reached the depth the rule in force wants; each open TA
        window's share where what was done inside it so far is now ∧ later."""
        w, phi = self.weights, 0.0
        per_task = w.tr / 2.0 / len(self.counted) if self.counted else 0.0
        for task_id in self.counted:
            task = self.tasks[task_id]
            if task.active and not task.closed and all(task.interventions) and \
                    self._met(task, self.policy.wanted(task.spec, self.persona)):
                phi += per_task
        for d in self.counted_decisions:
            if not d.closed and self._both_active(d):
                now, later, _ = self._ta_label(d)
                phi += w.ta * (now and later) / len(self.counted_decisions)
        return phi

    # ------------------------------------------------------------------ results
    def summary(self) -> dict[str, float]:
        """TC, TA, TR_D, TR_J and J over what has closed so far (the full run at its end), each a
        sum of per-task or per-decision parts over fixed denominators (``_fix_denominators``): a
        running score grows from 0 as outcomes become final.

        TC = Σ v_t·TC_t / Σ v_t over the counted tasks, less the privacy cost (floor 0); TR-D =
        the share of counted tasks depth-aligned; TR-J = 1 + Σ (TR-J_t − 1) / n over the n counted
        tasks (never seen: 1 where the user was meant to see it, else 5); TA = (decisions won −
        tasks postponed needlessly) / counted decisions, floor 0."""
        return self.settled()[0]

    def decoys_failed(self) -> list[str]:
        """The scenario's decoy pairs in which a task was postponed needlessly inside the pair's window."""
        return [p.id for p in self.scenario.decoys
                if any(p.start <= when < p.end for t in p.tasks for when in self.needless_postponements.get(t, ()))]

    def breakdown(self) -> dict:
        """Everything behind the summary: per-task components and depths, per-decision TA, and
        each one's share of J."""
        summary, shares = self.settled()
        comps = {k: [s.components[k] for s in self.scores if k in s.components] for k in COMPONENTS}
        decisions = []
        for d in self.counted_decisions:
            if d.closed:
                now, later, cont = self._ta_label(d) if d.eligible else (False, False, 0.0)
                decisions.append({"id": d.spec.id, "now": now, "later": later, "continuation": cont,
                                  "eligible": d.eligible, "nothing_to_postpone": self._nothing_to_postpone(d),
                                  "J_share": shares[f"decision:{d.spec.id}"]})
        return {
            **summary,
            "continuation": sum(d["continuation"] for d in decisions) / len(decisions) if decisions else 0.0,
            "now": sum(d["now"] for d in decisions) / len(decisions) if decisions else 0.0,
            "later": sum(d["later"] for d in decisions) / len(decisions) if decisions else 0.0,
            "ta_decisions": decisions,
            "needless_postponements": sorted(self.needless_postponements),
            "decoys_failed": self.decoys_failed(),
            "components": {k: (100.0 * sum(v) / len(v) if v else None) for k, v in comps.items()},
            "privacy_cost": self.privacy,
            "tasks": [{"task": s.task, "TC": s.tc, "TR_J": s.tr_j, "wanted": s.wanted, "depth_match": s.depth_match,
                       "components": s.components, "diagnostics": s.diagnostics,
                       "counted": s.task in self._counted_set, "J_share": shares[f"task:{s.task}"]}
                      for s in self.scores],
            "active_tasks": sum(1 for s in self.scores if s.depth_match is not None),
            "denominators": self.denominators(),
            "weights": self.weights.as_dict(),
        }


# ``json.dumps(args, sort_keys=True, ensure_ascii=False)``, with its encoder made once (an executed call's text)
_ARGS_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode

# The kinds of log entry the scorer reads, each with its reader; every other kind (an action, a
# follow-up, a lapsed request, a matter filed, ...) it reads only for its time.
# (tests/test_env_fast_path.py checks that each is a kind the world records.)
_READERS = {kind: getattr(RunScorer, f"_on_{kind}") for kind in (
    "run_start", "policy_change", "decision", "record", "event", "task_active", "task_inactive", "read", "work",
    "work_done", "note", "present", "run_refused", "execute", "defer", "intrusion", "trust", "task_closed",
    "run_end")}


class _HeldCache:
    """A bounded cache whose keys hold ``id()``s: each entry keeps the objects whose ids its key
    uses, so while it lives no other object can take those ids and a key names the very objects
    (a seed's variant shares the file's task, record and persona objects, so hits repeat)."""

    def __init__(self, size: int):
        self.size, self.entries = size, {}

    def get(self, key: tuple, held: tuple, compute):
        hit = self.entries.get(key)
        if hit is None:
            if len(self.entries) >= self.size:  # full: the oldest entry goes (dicts keep insertion order),
                del self.entries[next(iter(self.entries))]  # not all of them: the rest stay warm
            hit = self.entries[key] = (held, compute())
        return hit[1]


_COUNTED = _HeldCache(4096)  # (persona, ids of tasks, personas, variants, changes) -> the counted task ids
_CONTESTED = _HeldCache(4096)  # (persona, rules, counted ids, what ``contested`` reads) -> the counted decisions
_MEANT_TO_SEE = _HeldCache(4096)  # (persona, rules, ids of tasks, counted ids) -> the counted tasks the user is meant to see
_JUDGED = _HeldCache(8192)  # (id(task), work, rubric versions) -> (diagnostics, constraints)
_SOURCE_TEXTS = _HeldCache(4096)  # per record content: a seed's variant shares it with the file
_RECORDS_TEXT = _HeldCache(1024)  # a scenario's records' contents -> every text they ever show (``records_text``)
_SUBSTANTIVE = _HeldCache(8192)  # (id(task), work) -> substantive?
_COMPOSED = _HeldCache(8192)  # (id(task), evidence read, units done) -> the structured face's composed work


def _composed(spec: Task, reads: frozenset[str], units: int) -> str:
    """``compose_artifact``, cached per (task, evidence read, units done): a pure function of the
    three, and a task's few evidence records make few combinations (asked at every task's close)."""
    return _COMPOSED.get((id(spec), reads, units), (spec,), lambda: compose_artifact(spec, set(reads), units))


def _substantive(spec: Task, work: TaskWork) -> bool:
    """``judge.substantive``, cached per (task, work): a pure function of the two, and the work a
    structured agent's play composes repeats across episodes (it is asked at every task's close)."""
    return _SUBSTANTIVE.get((id(spec), work), (spec,), lambda: substantive(spec, work))


def _source_texts(record) -> tuple[str, ...]:
    """Everything a record ever says, one text per version (its fields as a look-up shows them):
    the texts that copying is measured against. Cached: a variant's record is the file's or a
    shallow copy with another ``appears`` (same ``fields`` and ``versions`` objects)."""
    key = (record.id, record.title, record.text, id(record.fields), id(record.versions))
    return _SOURCE_TEXTS.get(key, (record.fields, record.versions), lambda: tuple(_compose_source_texts(record)))


def _compose_source_texts(record) -> list[str]:
    texts = [f"{record.title}\n{record.text}\n{json.dumps(record.fields, default=str, ensure_ascii=False)}"]
    for v in record.versions:
        texts.append(f"{v.title or record.title}\n{v.text}\n"
                     f"{json.dumps({**record.fields, **v.fields}, default=str, ensure_ascii=False)}")
    return texts


def tr_j_estimate(task: _Task) -> float:
    """The deterministic TR-J estimator, from what the user saw of the task (never its TC): the
    mean of the five constructs — reliability and faith: the user's trust after the task's last
    turn; understandability: the share of what was shown that was clear (the agent's own words,
    not too long); technical competence: the share of its execute attempts that did not fail on
    their arguments; personal attachment: the share of its interventions that were aligned."""
    trust = task.trust_after if task.trust_after is not None else 4.43
    understand = 1 + 4 * (sum(task.clear) / len(task.clear) if task.clear else 1.0)
    attempts = task.executed_attempts
    competence = 1 + 4 * (1 - task.failed_attempts / attempts if attempts else 1.0)
    attachment = 1 + 4 * (sum(task.interventions) / len(task.interventions) if task.interventions else 1.0)
    return (2 * trust + understand + competence + attachment) / 5


def score_log(scenario: Scenario, persona: str, log: list[dict], weights: Weights | None = None,
              judges: list[Judge] | None = None, tr_j: dict[str, float] | None = None,
              ta: dict[str, dict] | None = None) -> dict:
    """The full breakdown of a finished run from its log (used by re-scoring)."""
    scorer = RunScorer(scenario, persona, weights, judges, tr_j, ta)
    scorer.feed(log)
    return scorer.breakdown()


__all__ = ["COMPONENTS", "RunScorer", "TaskScore", "Weights", "score_log", "tr_j_estimate"]
