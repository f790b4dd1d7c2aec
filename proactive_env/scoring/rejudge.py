"""Re-judging saved runs with several judges, and how well two judges agree (paper, Table 4).

A judge set gives one judge per metric: the ``rubric`` set is the deterministic default (the
rubric judge for TC, the world's own TA labels, the TR-J estimator); an ``openai:MODEL@BASE_URL``
set is the three LLM judges of one endpoint. Several judges are combined so:

* TC — each task's four diagnostics are the mean over the task judges (``judge_task``);
* TA — ``now`` and ``later`` each by strict majority of the TA judges (a tie gives no credit:
  as with silence, a claim of attention or deferral needs the support of most judges), and
  continuation quality is the mean;
* TR-J — each task's rating is the mean over the trust judges that rated it (none: the estimator).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from ..sim import TAOutcome, TaskOutcome
from ..spec import Scenario, load_scenario, shipped_names
from .judge import Judge, RubricJudge
from .metrics import Weights, score_run

AGREEMENT_METRICS = ("TC", "TA", "TR_J")


class TAJudge(Protocol):
    name: str
    rubric_version: str

    def judge_ta(self, scenario: Scenario, trajectory: dict) -> TAOutcome: ...


class TrustJudge(Protocol):
    name: str
    rubric_version: str

    def rate(self, scenario: Scenario, trajectory: dict) -> dict[str, float]: ...


class RecordedTA:
    """The TA labels the world recorded during the run (the deterministic TA judge)."""

    name = "rubric"
    rubric_version = "world-1"

    def judge_ta(self, scenario: Scenario, trajectory: dict) -> TAOutcome:
        return TAOutcome.from_dict(trajectory["ta"])


@dataclass
class EstimatedTrust:
    """The deterministic TR-J estimator, on the TC that ``task_judges`` give each task."""

    task_judges: list[Judge] = field(default_factory=lambda: [RubricJudge()])
    name: str = "rubric"
    rubric_version: str = "estimator-1"

    def rate(self, scenario: Scenario, trajectory: dict) -> dict[str, float]:
        outcomes = [TaskOutcome.from_dict(o) for o in trajectory["outcomes"]]
        breakdown = score_run(scenario, outcomes, TAOutcome.from_dict(trajectory["ta"]), judges=self.task_judges)
        return {t["task"]: t["TR_J"] for t in breakdown["tasks"]}


def combine_ta(outcomes: Sequence[TAOutcome]) -> TAOutcome:
    n = len(outcomes)
    return TAOutcome(now=sum(o.now for o in outcomes) > n / 2, later=sum(o.later for o in outcomes) > n / 2,
                     continuation=sum(o.continuation for o in outcomes) / n)


def combine_trust(ratings: Sequence[dict[str, float]]) -> dict[str, float]:
    tasks = {task for r in ratings for task in r}
    return {task: float(np.mean([r[task] for r in ratings if task in r])) for task in tasks}


def scenario_of(trajectory: dict) -> Scenario:
    """The shipped scenario a trajectory was recorded on, if this package ships the same version.
    Only a shipped scenario's name is followed: a trajectory is data and never names a file to open."""
    name = trajectory.get("scenario")
    if not isinstance(name, str) or name not in shipped_names():
        raise ValueError(f"trajectory of scenario {str(name)[:80]!r}: expected the name of a shipped scenario "
                         f"({', '.join(shipped_names())}); a trajectory never names a file to open")
    scenario = load_scenario(name)
    if scenario.version != trajectory["scenario_version"]:
        raise ValueError(f"trajectory was recorded on {trajectory['scenario']} v{trajectory['scenario_version']}, "
                         f"this package ships v{scenario.version}")
    return scenario


def rejudge(trajectory: dict, scenario: Scenario | None = None, task_judges: list[Judge] | None = None,
            ta_judges: Sequence[TAJudge] = (), trust_judges: Sequence[TrustJudge] = (),
            weights: Weights | None = None) -> dict:
    """The score breakdown of a saved run under the given judges, combined as the module says
    (defaults: rubric judge, recorded TA, TR-J estimator; weights as recorded)."""
    scenario = scenario or scenario_of(trajectory)
    w = weights or Weights(**{k.lower(): v for k, v in trajectory["weights"].items()})
    outcomes = [TaskOutcome.from_dict(o) for o in trajectory["outcomes"]]
    ta = combine_ta([j.judge_ta(scenario, trajectory) for j in ta_judges or [RecordedTA()]])
    tr_j = combine_trust([j.rate(scenario, trajectory) for j in trust_judges]) if trust_judges else None
    return score_run(scenario, outcomes, ta, w, task_judges or [RubricJudge()], tr_j)


# ---------------------------------------------------------------------------------- judge sets
@dataclass(frozen=True)
class JudgeSet:
    """One judge per metric; the task judge is made per scenario (LLM task judges read its records)."""

    name: str
    task: Callable[[Scenario], Judge]
    ta: TAJudge
    trust: TrustJudge


def rubric_set() -> JudgeSet:
    return JudgeSet("rubric", lambda scenario: RubricJudge(), RecordedTA(), EstimatedTrust())


def openai_set(base_url: str, model: str, **config) -> JudgeSet:
    from .llm_judge import LLMClient, LLMTAJudge, LLMTaskJudge, LLMTrustJudge, OpenAIJudgeConfig

    llm = LLMClient(OpenAIJudgeConfig(base_url=base_url, model=model, **config))
    return JudgeSet(llm.name, lambda scenario: LLMTaskJudge(llm, scenario), LLMTAJudge(llm), LLMTrustJudge(llm))


def parse_judge(spec: str, cache_dir: Path | None = None, **config) -> JudgeSet:
    """``rubric`` or ``openai:MODEL@BASE_URL``; ``config``: further ``OpenAIJudgeConfig`` fields."""
    if spec == "rubric":
        return rubric_set()
    model, _, base_url = spec.removeprefix("openai:").partition("@")
    if not spec.startswith("openai:") or not model or not base_url.startswith(("http://", "https://")):
        raise ValueError(f"--judge: expected 'rubric' or 'openai:MODEL@BASE_URL' (BASE_URL http(s)://…), got {spec!r}")
    return openai_set(base_url, model, **({"cache_dir": cache_dir} if cache_dir else {}), **config)


def rejudge_with(trajectory: dict, sets: Sequence[JudgeSet], scenario: Scenario | None = None) -> dict:
    """The breakdown of a saved run with the judge sets combined."""
    scenario = scenario or scenario_of(trajectory)
    return rejudge(trajectory, scenario, [s.task(scenario) for s in sets], [s.ta for s in sets],
                   [s.trust for s in sets])


# ---------------------------------------------------------------------------------- agreement
def _ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks, ties given their average rank."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    _, group, counts = np.unique(x, return_inverse=True, return_counts=True)
    return (np.bincount(group, weights=ranks) / counts)[group]


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    da, db = a - a.mean(), b - b.mean()
    denom = np.sqrt((da * da).sum() * (db * db).sum())
    return float((da * db).sum() / denom) if denom > 0 else float("nan")  # undefined for a constant series


def agreement(scores_a: Sequence[float], scores_b: Sequence[float]) -> dict[str, float]:
    """Pearson and Spearman correlation of two judges' scores on the same runs, and the mean
    difference b − a (the paper's Δ, second judge minus first). NaN where undefined."""
    a, b = np.asarray(scores_a, dtype=float), np.asarray(scores_b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"expected two score lists of the same length, got {len(a)} and {len(b)}")
    if len(a) < 2:
        return {"pearson": float("nan"), "spearman": float("nan"),
                "mean_delta": float((b - a).mean()) if len(a) else float("nan")}
    return {"pearson": _pearson(a, b), "spearman": _pearson(_ranks(a), _ranks(b)), "mean_delta": float((b - a).mean())}


def agreement_table(per_judge: dict[str, list[dict]]) -> list[dict]:
    """Rows (judge a, judge b, metric, n, pearson, spearman, mean_delta) for every pair of judges,
    from each judge's breakdowns of the same runs, in the same order."""
    names = list(per_judge)
    rows = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for metric in AGREEMENT_METRICS:
                xs = [s[metric] for s in per_judge[a]]
                ys = [s[metric] for s in per_judge[b]]
                rows.append({"a": a, "b": b, "metric": metric, "n": len(xs), **agreement(xs, ys)})
    return rows
