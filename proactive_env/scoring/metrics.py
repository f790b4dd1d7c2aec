"""The 3T metrics of one run (paper App. E, DESIGN.md §5).

* TC per active task = mean of its applicable components (Evidence, Outputs, Constraints,
  Semantics, Completion), 0–100; run TC = Σ v_t·TC_t / Σ v_t.
* TA per run = now ∧ later in the scenario's decision window.
* TR-D per run = share of active tasks whose chosen depth equals the expected depth.
* TR-J per task, 1–5: the documented deterministic estimator below; run TR-J = mean.
* J = λ_TC·TC/100 + λ_TA·TA + λ_TR·S_TR with S_TR = (TR-D + (TR-J − 1)/4) / 2.

``RunScorer`` accumulates tasks as they become final, so the env can report running scores and
pay rewards that telescope to the final J.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..sim import TAOutcome, TaskOutcome
from ..spec import Depth, Scenario, Task
from .judge import Judge, RubricJudge, judge_task

COMPONENTS = ("evidence", "outputs", "constraints", "semantics", "completion")


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


@dataclass(frozen=True)
class TaskScore:
    task: str
    weight: float
    components: dict[str, float]
    diagnostics: dict[str, float]
    tc: float  # 0–100
    depth_match: bool
    tr_j: float  # 1–5
    chosen: str
    expected: str


def _outputs(task: Task, o: TaskOutcome) -> float:
    if o.expected == Depth.NOOP:
        return 1.0 if o.chosen == Depth.NOOP else 0.0
    ceiling = Depth.EXECUTE if task.action is not None else Depth.SUGGEST
    required = min(max(Depth(o.chosen), task.delivery_depth), ceiling)
    items = [min(1.0, o.units_done / o.units) if o.units else (1.0 if o.chosen or o.evidence_read else 0.0)]
    if required == Depth.SUGGEST:
        items.append(1.0 if o.presented else 0.0)
    elif required == Depth.EXECUTE:
        items.append(o.action_match if o.executed else 0.0)
    return sum(items) / len(items)


def _constraints(task: Task, o: TaskOutcome) -> float | None:
    c = task.constraints
    total = len(c.must_include) + len(c.must_not_include)
    if not total:
        return None
    if o.expected == Depth.NOOP:
        return 1.0 if o.chosen == Depth.NOOP else 0.0
    if not o.artifact:
        return 0.0
    text = o.artifact.lower()
    met = sum(1 for f in c.must_include if any(n in text for n in f.needles()))
    met += sum(1 for claim in c.must_not_include if claim.text.lower() not in text)
    return met / total


def tr_j_estimate(trust: float, tc: float) -> float:
    """Deterministic TR-J estimator: the mean of the user's simulated trust at the task's last
    turn (1–5) and the task's capability mapped onto 1–5 (1 + 4·TC/100). Trust carries the
    depth (mis)alignment history the user saw; TC carries the competence the constructs rate."""
    return 0.5 * trust + 0.5 * (1.0 + 4.0 * tc / 100.0)


def score_task(task: Task, o: TaskOutcome, judges: list[Judge], tr_j: float | None = None) -> TaskScore:
    """One task's scores; ``tr_j`` replaces the TR-J estimator (e.g. an LLM judge's rating)."""
    diag = judge_task(judges, task, o)
    components: dict[str, float] = {}
    if o.evidence_total:
        components["evidence"] = o.evidence_read / o.evidence_total
    components["outputs"] = _outputs(task, o)
    constraints = _constraints(task, o)
    if constraints is not None:
        components["constraints"] = constraints
    components["semantics"] = (diag["correctness"] + diag["grounding"]) / 2
    components["completion"] = (diag["completeness"] + diag["artifact_quality"]) / 2
    tc = 100.0 * sum(components.values()) / len(components)
    return TaskScore(task=task.id, weight=task.weight, components=components, diagnostics=diag, tc=tc,
                     depth_match=o.chosen == o.expected, tr_j=tr_j_estimate(o.trust, tc) if tr_j is None else tr_j,
                     chosen=Depth(o.chosen).name, expected=Depth(o.expected).name)


@dataclass
class RunScorer:
    """Scores of one run, accumulated as tasks become final."""

    scenario: Scenario
    weights: Weights = field(default_factory=Weights)
    judges: list[Judge] = field(default_factory=lambda: [RubricJudge()])
    tasks: list[TaskScore] = field(default_factory=list)
    ta: TAOutcome | None = None

    def __post_init__(self) -> None:
        self._specs = {t.id: t for t in self.scenario.tasks}
        self._weight = self._weighted_tc = self._matches = self._tr_j = 0.0

    def add(self, outcome: TaskOutcome, tr_j: float | None = None) -> TaskScore | None:
        if not outcome.active:
            return None
        score = score_task(self._specs[outcome.task], outcome, self.judges, tr_j)
        self.tasks.append(score)
        self._weight += score.weight
        self._weighted_tc += score.weight * score.tc
        self._matches += score.depth_match
        self._tr_j += score.tr_j
        return score

    def summary(self) -> dict[str, float]:
        """TC, TA, TR_D, TR_J and J over what is final so far (the full run at its end)."""
        n = len(self.tasks)
        tc = self._weighted_tc / self._weight if self._weight else 0.0
        tr_d = self._matches / n if n else 0.0
        tr_j = self._tr_j / n if n else 1.0
        ta = 1.0 if self.ta is not None and self.ta.now and self.ta.later else 0.0
        s_tr = (tr_d + (tr_j - 1.0) / 4.0) / 2.0
        w = self.weights
        j = w.tc * tc / 100.0 + w.ta * ta + w.tr * s_tr if n or self.ta is not None else 0.0
        return {"TC": tc, "TA": ta, "TR_D": tr_d, "TR_J": tr_j, "J": j}

    def breakdown(self) -> dict:
        """Everything behind the summary: per-task components, diagnostics and depths, TA."""
        summary = self.summary()
        comps = {k: [t.components[k] for t in self.tasks if k in t.components] for k in COMPONENTS}
        return {
            **summary,
            "continuation": self.ta.continuation if self.ta else 0.0,
            "now": bool(self.ta and self.ta.now),
            "later": bool(self.ta and self.ta.later),
            "components": {k: (100.0 * sum(v) / len(v) if v else None) for k, v in comps.items()},
            "tasks": [
                {"task": t.task, "TC": t.tc, "TR_J": t.tr_j, "chosen": t.chosen, "expected": t.expected,
                 "depth_match": t.depth_match, "components": t.components, "diagnostics": t.diagnostics}
                for t in self.tasks
            ],
            "active_tasks": len(self.tasks),
            "weights": self.weights.as_dict(),
        }


def score_run(scenario: Scenario, outcomes: list[TaskOutcome], ta: TAOutcome,
              weights: Weights | None = None, judges: list[Judge] | None = None,
              tr_j: dict[str, float] | None = None) -> dict:
    """Full score breakdown of a finished run from its outcomes (used by re-scoring). ``ta`` may
    come from the world or from TA judges; ``tr_j`` maps task ids to judged TR-J ratings that
    replace the deterministic estimator."""
    scorer = RunScorer(scenario, weights or Weights(), judges or [RubricJudge()])
    for outcome in outcomes:
        scorer.add(outcome, (tr_j or {}).get(outcome.task))
    scorer.ta = ta
    return scorer.breakdown()
