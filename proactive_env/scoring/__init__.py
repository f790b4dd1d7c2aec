"""Scoring: TC, TA, TR-D, TR-J and J for runs, from their event logs; judges; trajectories; results."""

from .compose import compose_artifact
from .judge import DIAGNOSTICS, Judge, RubricJudge, TaskWork
from .metrics import RunScorer, TaskScore, Weights, score_log, tr_j_estimate
from .results import aggregate, bootstrap_ci
from .trajectory import load_trajectory, make_trajectory, rescore, scenario_of, write_json_atomic

__all__ = [
    "DIAGNOSTICS", "Judge", "RubricJudge", "RunScorer", "TaskScore", "TaskWork", "Weights", "aggregate",
    "bootstrap_ci", "compose_artifact", "load_trajectory", "make_trajectory", "rescore", "scenario_of",
    "score_log", "tr_j_estimate", "write_json_atomic",
]
