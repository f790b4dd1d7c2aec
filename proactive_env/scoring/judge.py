"""Judges fill in the four diagnostic scores of TC's Semantics and Completion components.

A judge sees a task's specification and what the run left for it (``TaskOutcome``) and returns
``correctness``, ``grounding``, ``completeness`` and ``artifact_quality``, each in [0, 1]. The
deterministic ``RubricJudge`` is the default; LLM judges implement the same protocol. Several
judges are averaged by ``judge_task``.
"""

from __future__ import annotations

from typing import Protocol

from ..sim import TaskOutcome
from ..spec import Depth, Task

DIAGNOSTICS = ("correctness", "grounding", "completeness", "artifact_quality")


class Judge(Protocol):
    name: str
    rubric_version: str

    def judge(self, task: Task, outcome: TaskOutcome) -> dict[str, float]: ...


def _mentions(text: str, needles: list[str]) -> bool:
    return any(n in text for n in needles)


class RubricJudge:
    """Checks the task's reference facts against the work and against what the agent observed.

    * correctness — share of reference facts the work states, and of forbidden claims it avoids;
    * grounding — share of the facts it states whose source record the agent had actually seen
      when producing the work (a fact stated without its source is a guess);
    * completeness — share of reference facts the work covers;
    * artifact_quality — share of the task's work units done, if any work was delivered.

    For a task whose right behaviour is NOOP, all four measure whether the abstention is
    supported: the share of the task's evidence the agent read, if it abstained; 0 if it acted.
    """

    name = "rubric"
    rubric_version = "rubric-1"

    def judge(self, task: Task, outcome: TaskOutcome) -> dict[str, float]:
        if outcome.expected == Depth.NOOP:
            supported = 0.0
            if outcome.chosen == Depth.NOOP:
                supported = outcome.evidence_read / outcome.evidence_total if outcome.evidence_total else 1.0
            return dict.fromkeys(DIAGNOSTICS, supported)
        if not outcome.artifact:
            return dict.fromkeys(DIAGNOSTICS, 0.0)
        text = outcome.artifact.lower()
        observed = set(outcome.observed)
        stated = [f for f in task.facts if _mentions(text, f.needles())]
        forbidden = task.constraints.must_not_include
        avoided = sum(1 for c in forbidden if c.text.lower() not in text)
        checks = len(task.facts) + len(forbidden)
        correctness = (len(stated) + avoided) / checks if checks else 1.0
        grounding = (sum(1 for f in stated if f.source in observed) / len(stated)) if stated else (
            0.0 if task.facts else 1.0)
        completeness = len(stated) / len(task.facts) if task.facts else 1.0
        quality = min(1.0, outcome.units_done / outcome.units) if outcome.units else 1.0
        return {"correctness": correctness, "grounding": grounding,
                "completeness": completeness, "artifact_quality": quality}


def judge_task(judges: list[Judge], task: Task, outcome: TaskOutcome) -> dict[str, float]:
    """Mean of the judges' diagnostics."""
    verdicts = [j.judge(task, outcome) for j in judges]
    return {k: sum(v[k] for v in verdicts) / len(verdicts) for k in DIAGNOSTICS}
