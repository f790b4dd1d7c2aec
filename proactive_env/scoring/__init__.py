"""Scoring: TC, TA, TR-D, TR-J and J for runs, from their event logs; judges; trajectories; results.

Re-scoring a saved run replays it in the env, a layer above: ``proactive_env.replay``."""

from .compose import compose_artifact
from .judge import DIAGNOSTICS, Judge, RubricJudge, TaskWork
from .metrics import RunScorer, TaskScore, Weights, score_log, tr_j_estimate
from .results import METRICS, UNITS, aggregate, load_results, results_document, stratified_bootstrap
from .trajectory import TrajectoryError, load_trajectory, make_trajectory, write_json_atomic

__all__ = [
    "DIAGNOSTICS", "METRICS", "UNITS", "Judge", "RubricJudge", "RunScorer", "TaskScore", "TaskWork", "Weights",
    "TrajectoryError", "aggregate", "compose_artifact", "load_results", "load_trajectory", "make_trajectory",
    "results_document", "score_log", "stratified_bootstrap", "tr_j_estimate", "write_json_atomic",
]
