"""Why each point was lost: one run's scores taken apart, from the scorer itself.

The run's log is fed to the benchmark's own ``RunScorer`` entry by entry (what ``rescore`` does),
and at each task's close and each TA window's close the scorer's state is read, never
re-derived: the components, the depth the rule in force wanted, the work the judges read (for
the facts found and missed), each TA decision's now/later and what failed it. Times are on the
scenario's own clock (``D3 (Wed 4 Mar) 09:10``).

``explain(trajectory)`` gives an ``Explanation`` that ``show`` prints, the episode page draws and
the report aggregates across runs.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace

from ..scoring.judge import claim_made, facts_stated
from ..scoring.metrics import RunScorer, Weights
from ..replay import scenario_of
from ..spec import Depth, Scenario

_DAY = 24 * 60
CUT_OFF = "cut off: the agent's choices closed a branch the oracle opens"
CLOSED_BY_DRAW = "not counted: the user's drawn answer closed this branch"


def clock(scenario: Scenario, minute: float | None) -> str:
    """A scenario minute on its own calendar: ``D3 (Wed 4 Mar) 09:10``; the episode's end as such."""
    if minute is None:
        return "—"
    minute = int(minute)
    if minute >= scenario.end_minute:
        return "end of episode"
    day, rest = divmod(minute, _DAY)
    date = scenario.start_date + dt.timedelta(days=day)
    return f"D{day + 1} ({date:%a} {date.day} {date:%b}) {rest // 60:02d}:{rest % 60:02d}"


@dataclass(frozen=True)
class TaskRow:
    """One task: where its TC and its depth match went."""

    task: str
    title: str
    weight: float
    tc: float
    components: dict[str, float]  # 0–1 each, as the scorer computed them
    facts_found: list[str]
    facts_missed: list[str]
    claims_made: list[str]  # forbidden claims the work made
    evidence_missed: list[str]
    rule: str | None  # the persona's rule for the task's category when it closed
    wanted: str  # the depth that rule wanted (NOOP … EXECUTE), or cut_off
    used: str  # the deepest the agent went (NOOP: nothing the user saw)
    depth_match: bool | None
    broke: str | None  # the intervention that broke alignment, in words
    broke_kind: str | None  # the same without time and trust figures (for counting across runs)
    tr_j: float | None
    closed_at: str

    @property
    def lost(self) -> float:
        """TC points this task left on the table (0–100)."""
        return 100.0 - self.tc


@dataclass(frozen=True)
class DecisionRow:
    """One TA decision: the window, what was urgent and why, what competed, now/later and why not."""

    decision: str
    window: str
    urgent: str
    why: str
    competing: str
    shares: str
    counted: bool  # eligible: both tasks were active (else it is not in TA)
    now: bool
    later: bool
    continuation: float
    reason: str
    won: bool = False  # as TA counts it: now ∧ later, or now with nothing to postpone
    nothing_to_postpone: bool = False  # the competing task finished, or not come up, when the urgent work was handled

    @property
    def passed(self) -> bool:
        return self.counted and self.won


@dataclass(frozen=True)
class NeedlessRow:
    """A task postponed when that resolved no clash the agent could see: it costs one decision,
    however often it was postponed so (``more``: the times after the first)."""

    task: str
    at: str  # the first such postponement
    why: str
    more: int = 0


@dataclass(frozen=True)
class TrustStep:
    at: str
    before: float
    after: float
    task: str
    what: str


@dataclass
class Explanation:
    scenario: Scenario
    agent: str
    persona: str
    seed: int | None
    scores: dict
    tasks: list[TaskRow] = field(default_factory=list)
    decisions: list[DecisionRow] = field(default_factory=list)
    trust: list[TrustStep] = field(default_factory=list)
    privacy_cost: float = 0.0
    needless: list[NeedlessRow] = field(default_factory=list)
    ta_netting: str = ""  # how TA is netted: (won − needless) / counted decisions
    closed_by_draw: dict[str, str] = field(default_factory=dict)  # task → the task whose drawn decline closed its branch

    def lines(self) -> list[str]:
        """The tables as plain text lines (for ``show``)."""
        out = ["Why points were lost — tasks (TC components %, facts, depth wanted by the rule in force vs used):"]
        for r in self.tasks:
            comps = " ".join(f"{k[:5]} {100 * v:.0f}" for k, v in r.components.items())
            depth = ("cut off (TC only)" if r.depth_match is None else
                     f"wanted {r.wanted} ({r.rule or 'noop task'}), used {r.used}, "
                     f"{'match' if r.depth_match else 'MISMATCH'}")
            out.append(f"  {r.task:<26} TC {r.tc:5.1f}  [{comps}]  {depth}")
            if r.facts_missed:
                out.append(f"      facts missed: {'; '.join(r.facts_missed)}")
            if r.claims_made:
                out.append(f"      forbidden claims made: {'; '.join(r.claims_made)}")
            if r.evidence_missed:
                out.append(f"      evidence not read: {', '.join(r.evidence_missed)}")
            if r.broke:
                out.append(f"      alignment broken: {r.broke}")
        for task, gate in self.closed_by_draw.items():
            out.append(f"  {task:<26} {CLOSED_BY_DRAW} (the run's coin declines what is asked of {gate}: "
                       f"J counts only the branches the oracle opens)")
        if self.privacy_cost:
            out.append(f"  privacy: −{self.privacy_cost:g} TC points for records no active task needed")
        out.append("TA decisions (now: the urgent task served in the window; later: the competing one put after it):")
        for d in self.decisions:
            verdict = "WON: " if d.passed else "lost: "
            out.append(f"  {d.decision:<30} {d.window}: urgent {d.urgent}, competing {d.competing} "
                       f"(shares {d.shares}) — now {'✓' if d.now else '✗'} later {'✓' if d.later else '✗'} "
                       f"{verdict}{d.reason}")
        for n in self.needless:
            again = f"; postponed so {n.more} more time(s)" if n.more else ""
            out.append(f"  needless postponement: {n.task} at {n.at} — {n.why}{again} (costs one decision)")
        if self.ta_netting:
            out.append(f"  {self.ta_netting}")
        out.append("Trust over time:")
        for s in self.trust:
            out.append(f"  {s.at:<22} {s.before:.2f} → {s.after:.2f}  {s.task}: {s.what}")
        return out


def _depth_used(scorer: RunScorer, task_id: str) -> str:
    state = scorer.tasks[task_id]
    if state.executed_attempts:
        return Depth.EXECUTE.name
    if state.interventions or state.shown:
        return Depth.SUGGEST.name
    if state.started:
        return Depth.PREPARE.name
    return Depth.NOOP.name


def _task_row(scorer: RunScorer, scenario: Scenario, score, broke: dict, t: int) -> TaskRow:
    spec = next(s for s in scenario.tasks if s.id == score.task)
    state = scorer.tasks[score.task]
    work = scorer.work(score.task) if state.active else None
    artifact = work.artifact if work else ""
    facts = list(spec.constraints.must_include) or list(spec.facts)
    # as the judge credits them: in the agent's own words, the matter's title left out
    found = [f.text for f in facts_stated(spec, work, facts)] if work and work.own else []
    claims = [c.text for c in spec.constraints.must_not_include if work and claim_made(artifact, c.text)]
    read = scorer.evidence_read(spec.id) if state.active else set()
    return TaskRow(
        task=spec.id, title=spec.title, weight=spec.weight, tc=score.tc, components=dict(score.components),
        facts_found=found, facts_missed=[f.text for f in facts if f.text not in found], claims_made=claims,
        evidence_missed=[r for r in spec.evidence if r not in read] if state.active else [],
        rule=scorer.policy.rule(spec) if state.active and not spec.noop else None, wanted=score.wanted,
        used=_depth_used(scorer, spec.id), depth_match=score.depth_match,
        broke=broke.get(spec.id, (None, None))[0] or (None if state.active else CUT_OFF),
        broke_kind=broke.get(spec.id, (None, None))[1] or (None if state.active else CUT_OFF),
        tr_j=score.tr_j, closed_at=clock(scenario, t))


def _decision_reason(scorer: RunScorer, d) -> tuple[bool, bool, float, str]:
    now, later, cont = scorer.ta_label(d.spec.id)
    closed = [t for t in (d.spec.urgent, d.spec.competing) if scorer.closed_by_draw(t) is not None]
    if closed:
        return now, later, cont, (f"{CLOSED_BY_DRAW} — {closed[0]}'s branch (the run's coin declines what is "
                                  f"asked of {scorer.closed_by_draw(closed[0])})")
    if d not in scorer.counted_decisions:
        return now, later, cont, ("not counted: no clash for this persona (spec.contested) — the competing task's "
                                  "rule puts nothing of it to the user, or the urgent one needs none of their time "
                                  "and has a later chance")
    if not d.eligible:
        return now, later, cont, "both tasks were never active together (a 0 over TA's fixed denominator)"
    if now and not later and scorer.decision_won(d.spec.id):
        return now, later, cont, ("nothing to postpone: the competing task was finished, or had not come up, "
                                  "when the urgent work was first handled")
    why = []
    if d.intruded:
        why.append(f"an agent job ran on {d.spec.shares} while the user was using it in the window")
    if not now and not d.intruded:
        why.append("the urgent task was deferred before the window ended" if d.urgent_deferred
                   else "no substantive work on the urgent task inside the window")
    if not later and not d.intruded:
        if d.competed:
            at = ", ".join(clock(scorer.scenario, t) for t in d.reached[:3]) + (", …" if len(d.reached) > 3 else "")
            why.append("the competing task reached what the clash shares while it lasted (put to the user, "
                       f"or run on the resource: from {at})")
        elif d.continuation == 0.5:
            why.append("the competing task was deferred without a time")
        elif not d.later:
            why.append("the competing task was not deferred or scheduled to a feasible time after the clash")
    return now, later, cont, "; ".join(why) or "both served: urgent now, competing later"


def _needless_rows(scorer: RunScorer, scenario: Scenario) -> list[NeedlessRow]:
    """One row per task postponed needlessly (each costs one decision): its first such postponement."""
    first: dict[str, tuple[int, str]] = {}
    count: dict[str, int] = {}
    for task, t, why in scorer.needless_why:
        first.setdefault(task, (t, why))
        count[task] = count.get(task, 0) + 1
    return [NeedlessRow(_title(scenario, task), clock(scenario, t), why, count[task] - 1)
            for task, (t, why) in first.items()]


def _ta_netting(scorer: RunScorer, ta: float) -> str:
    """TA as the scorer nets it: (decisions won − tasks postponed needlessly) / counted decisions, floor 0."""
    counted = scorer.denominators()["decisions"]  # fixed at reset: the decisions between two counted tasks
    if not counted:
        return "TA: no counted decisions"
    won = sum(scorer.decision_won(d.spec.id) for d in scorer.counted_decisions)
    needless = len(scorer.needless_postponements)
    return (f"TA = max(0, {won} won − {needless} task(s) postponed needlessly) / {counted:g} counted decisions "
            f"= {ta:.3f}")


def _title(scenario: Scenario, task_id: str | None) -> str:
    spec = next((s for s in scenario.tasks if s.id == task_id), None)
    return f"{task_id} ({spec.title})" if spec else str(task_id)


def _trust_step(scenario: Scenario, e: dict) -> TrustStep | None:
    if e["type"] == "trust":
        cause = e.get("cause", "intervention")
        what = (f"{cause}, aligned" if e.get("aligned") else
                f"{cause} MISALIGNED ({'over' if e.get('over') else 'under'}-intervention)")
        return TrustStep(clock(scenario, e["t"]), e.get("before", 0.0), e.get("after", 0.0), str(e.get("task")), what)
    if e["type"] == "decision" and "trust_before" in e:
        what = f"user {e.get('verdict')}s {', '.join(e.get('actions', []))} (rule {e.get('rule')})"
        return TrustStep(clock(scenario, e["t"]), e["trust_before"], e["trust_after"], str(e.get("task")), what)
    return None


def explain(trajectory: dict, scenario: Scenario | None = None) -> Explanation:
    """Take one saved run apart with the benchmark's scorer (the rubric judges, as ``rescore``)."""
    scenario = scenario or scenario_of(trajectory)
    weights = Weights(**{k.lower(): v for k, v in trajectory.get("weights", {}).items()}) \
        if trajectory.get("weights") else None
    scorer = RunScorer(scenario, trajectory["persona"], weights)
    out = Explanation(scenario, str(trajectory.get("agent", "?")), trajectory["persona"], trajectory.get("seed"),
                      {})
    fed: list[dict] = []
    broke: dict[str, tuple[str, str]] = {}
    for e in trajectory.get("log", []):
        fed.append(e)
        before = len(scorer.scores)
        scorer.feed(fed)
        if e.get("type") == "trust" and not e.get("aligned") and e.get("task") not in broke:
            kind = f"{e.get('cause', 'intervention')} ({'over' if e.get('over') else 'under'}-intervention)"
            broke[e["task"]] = (f"{e.get('cause', 'intervention')} at {clock(scenario, e['t'])} "
                                f"({'over' if e.get('over') else 'under'}-intervention; trust "
                                f"{e.get('before', 0):.2f} → {e.get('after', 0):.2f})", kind)
        elif e.get("type") == "run_refused" and e.get("task") not in broke:
            broke[e["task"]] = (f"started its run without the user's OK at {clock(scenario, e['t'])}",
                                "started its run without the user's OK")
        for score in scorer.scores[before:]:
            out.tasks.append(_task_row(scorer, scenario, score, broke, e["t"]))
        step = _trust_step(scenario, e)
        if step is not None:
            out.trust.append(step)
    final = {score.task: score for score in scorer.scores}  # a row re-scored since its close says the final score
    out.tasks = [row if final[row.task].tc == row.tc and final[row.task].components == row.components
                 else replace(row, tc=final[row.task].tc, components=dict(final[row.task].components))
                 for row in out.tasks if row.task in final]
    for d in sorted((d for d in scorer.decisions if d.closed), key=lambda d: (d.spec.end, d.spec.start)):
        # judged as the run finally stands (a reservation moved or withdrawn later re-scores what
        # closed before): the labels J counts, never those of the moment the window closed
        now, later, cont, reason = _decision_reason(scorer, d)
        out.decisions.append(DecisionRow(
            d.spec.id, f"{clock(scenario, d.spec.start)} – {clock(scenario, d.spec.end)}",
            _title(scenario, d.spec.urgent), d.spec.rationale.strip(), _title(scenario, d.spec.competing),
            d.spec.shares, d.eligible, now, later, cont, reason,
            won=d.eligible and d in scorer.counted_decisions and scorer.decision_won(d.spec.id),
            nothing_to_postpone=scorer._nothing_to_postpone(d)))
    out.scores = scorer.breakdown() if scorer.ended else scorer.summary()
    out.privacy_cost = scorer.privacy
    out.needless = _needless_rows(scorer, scenario)
    out.closed_by_draw = {t: gate for t in scorer.tasks if (gate := scorer.closed_by_draw(t)) is not None}
    out.ta_netting = _ta_netting(scorer, out.scores["TA"])
    out.tasks.sort(key=lambda r: (-r.weight * r.lost, r.task))
    return out


__all__ = ["DecisionRow", "Explanation", "NeedlessRow", "TaskRow", "TrustStep", "clock", "explain"]
