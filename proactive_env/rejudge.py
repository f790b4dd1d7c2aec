"""Re-judging saved runs with several judges, and how well two judges agree (paper, Table 4).

A judge set gives one judge per metric: the ``rubric`` set is the deterministic default (the
rubric judge for TC, the scorer's own TA rules, the TR-J estimator); an
``openai:MODEL@BASE_URL`` set is the three LLM judges of one endpoint. Several judges are
combined so:

* TC — each task's four diagnostics are the mean over the task judges (``judge_task``);
* TA — per decision, ``now`` and ``later`` each by strict majority of the TA judges (a tie gives
  no credit: as with silence, a claim of attention or deferral needs the support of most
  judges), and continuation quality is the mean;
* TR-J — each task's rating is the mean over the trust judges that rated it (none: the estimator).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from .replay import replay, scenario_of
from .scoring.judge import Judge, RubricJudge
from .scoring.metrics import Weights, score_log
from .scoring.trajectory import score_checked, weights_of
from .spec import Scenario

AGREEMENT_METRICS = ("TC", "TA", "TR_J")


class TAJudge(Protocol):
    name: str
    rubric_version: str

    def judge_ta(self, scenario: Scenario, trajectory: dict) -> dict[str, dict]: ...


class TrustJudge(Protocol):
    name: str
    rubric_version: str

    def rate(self, scenario: Scenario, trajectory: dict) -> dict[str, float]: ...


class RubricTA:
    """The scorer's own TA rules on the run's log (the deterministic TA judge)."""

    name = "rubric"
    rubric_version = "rules-2"

    def judge_ta(self, scenario: Scenario, trajectory: dict) -> dict[str, dict]:
        breakdown = score_log(scenario, trajectory["persona"], trajectory["log"])
        return {d["id"]: {k: d[k] for k in ("now", "later", "continuation")} for d in breakdown["ta_decisions"]}


@dataclass
class EstimatedTrust:
    """The deterministic TR-J estimator (it reads what the user saw, not the task judges' TC)."""

    task_judges: list[Judge] = field(default_factory=lambda: [RubricJudge()])
    name: str = "rubric"
    rubric_version: str = "estimator-2"

    def rate(self, scenario: Scenario, trajectory: dict) -> dict[str, float]:
        breakdown = score_log(scenario, trajectory["persona"], trajectory["log"], judges=self.task_judges)
        return {t["task"]: t["TR_J"] for t in breakdown["tasks"] if t["TR_J"] is not None}


def combine_ta(labels: Sequence[dict[str, dict]]) -> dict[str, dict]:
    n = len(labels)
    decisions = sorted({d for judge in labels for d in judge})
    out = {}
    for d in decisions:
        votes = [judge[d] for judge in labels if d in judge]
        out[d] = {"now": sum(v["now"] for v in votes) > n / 2, "later": sum(v["later"] for v in votes) > n / 2,
                  "continuation": sum(v["continuation"] for v in votes) / len(votes)}
    return out


def combine_trust(ratings: Sequence[dict[str, float]]) -> dict[str, float]:
    tasks = {task for r in ratings for task in r}
    return {task: float(np.mean([r[task] for r in ratings if task in r])) for task in tasks}


def played_scenario(trajectory: dict, base: Scenario | None = None, trust_log: bool = False) -> Scenario:
    """The scenario a saved run played, once its actions are replayed and reproduce its log
    (``trust_log``: the log is taken as recorded)."""
    return scenario_of(trajectory, base) if trust_log else replay(trajectory, base)


def rejudge(trajectory: dict, base: Scenario | None = None, task_judges: list[Judge] | None = None,
            ta_judges: Sequence[TAJudge] = (), trust_judges: Sequence[TrustJudge] = (),
            weights: Weights | None = None, trust_log: bool = False, scenario: Scenario | None = None) -> dict:
    """The score breakdown of a saved run under the given judges, combined as the module says
    (defaults: rubric judge, the scorer's TA rules, TR-J estimator; weights as recorded). The
    run's actions are replayed first and must reproduce its log (``trust_log``: skipped);
    ``scenario``: the already checked ``played_scenario``. ``base``: the scenario file's model
    (default: the one the trajectory records by hash); the run's variant is applied to it."""
    scenario = scenario or played_scenario(trajectory, base, trust_log)
    w = weights or weights_of(trajectory)
    if trust_log:  # an unchecked log: one the scorer cannot read is a located error before any judge sees it
        score_checked(scenario, trajectory, w)
    ta = combine_ta([j.judge_ta(scenario, trajectory) for j in ta_judges]) if ta_judges else None
    tr_j = combine_trust([j.rate(scenario, trajectory) for j in trust_judges]) if trust_judges else None
    return score_checked(scenario, trajectory, w, task_judges or [RubricJudge()], tr_j=tr_j, ta=ta)


# ---------------------------------------------------------------------------------- judge sets
@dataclass(frozen=True)
class JudgeSet:
    """One judge per metric; the task judge is made per scenario (LLM task judges read its records)."""

    name: str
    task: Callable[[Scenario], Judge]
    ta: TAJudge
    trust: TrustJudge


def rubric_set() -> JudgeSet:
    return JudgeSet("rubric", lambda scenario: RubricJudge(), RubricTA(), EstimatedTrust())


def openai_set(base_url: str, model: str, **config) -> JudgeSet:
    from .scoring.llm_judge import LLMClient, LLMTAJudge, LLMTaskJudge, LLMTrustJudge, OpenAIJudgeConfig

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


def rejudge_with(trajectory: dict, sets: Sequence[JudgeSet], base: Scenario | None = None,
                 trust_log: bool = False, scenario: Scenario | None = None, weights: Weights | None = None) -> dict:
    """The breakdown of a saved run with the judge sets combined (see ``rejudge``)."""
    scenario = scenario or played_scenario(trajectory, base, trust_log)
    return rejudge(trajectory, base, [s.task(scenario) for s in sets], [s.ta for s in sets],
                   [s.trust for s in sets], weights, trust_log=trust_log, scenario=scenario)


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
