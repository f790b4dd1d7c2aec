"""Scoring: TC, TA, TR-D, TR-J and J for runs; judges; trajectories; the results table."""

from .judge import DIAGNOSTICS, Judge, RubricJudge
from .metrics import RunScorer, TaskScore, Weights, score_run, score_task, tr_j_estimate
from .results import METRICS, UNITS, aggregate, load_results, results_document, stratified_bootstrap
from .trajectory import load_trajectory, make_trajectory, rescore, write_json_atomic

__all__ = [
    "DIAGNOSTICS", "Judge", "RubricJudge", "RunScorer", "TaskScore", "Weights", "METRICS", "UNITS", "aggregate", "load_results", "results_document",
    "stratified_bootstrap",
    "load_trajectory", "make_trajectory", "rescore", "score_run", "score_task", "tr_j_estimate",
    "write_json_atomic",
]
