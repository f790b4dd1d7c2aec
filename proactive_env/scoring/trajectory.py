"""Trajectory files: everything a run leaves, so it can be re-scored without re-running.

A trajectory is one JSON document: what was run (scenario and its version, persona, seed,
agent), what happened (the agent's actions, the world's event log with every approval decision),
the per-task outcomes and the TA outcome, and the scores computed at the time.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ..sim import TAOutcome, TaskOutcome
from ..spec import SUITE_VERSION, Scenario
from .judge import Judge
from .metrics import Weights, score_run

FORMAT = "proactivity-gym/trajectory-1"


def write_json_atomic(path: str | Path, data, durable: bool = True, indent: int | None = 1) -> None:
    """Write JSON so that a reader never sees half a file: into a temporary file of a unique name
    beside it (created exclusively, so a planted symlink is never followed), then renamed over
    ``path`` (a symlink at ``path`` is replaced, not followed). ``durable``: fsync before the
    rename, so that the file survives a power cut too. ``indent=None``: compact (4x faster to
    write: the C encoder). On any failure (a full disk) the temporary
    file is removed and ``path`` is as it was."""
    path = Path(path)
    text = json.dumps(data, indent=indent, sort_keys=False)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def make_trajectory(*, scenario: Scenario, persona: str, seed: int | None, agent: str, weights: Weights,
                    actions: list, log: list[dict], outcomes: list[TaskOutcome], ta: TAOutcome,
                    scores: dict) -> dict:
    return {
        "format": FORMAT,
        "scenario": scenario.name,
        "scenario_version": scenario.version,
        "suite_version": SUITE_VERSION,
        "persona": persona,
        "seed": seed,
        "agent": agent,
        "weights": weights.as_dict(),
        "actions": actions,
        "log": log,
        "outcomes": [o.to_dict() for o in outcomes],
        "ta": ta.to_dict(),
        "scores": scores,
    }


def load_trajectory(path: str | Path) -> dict:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path.name}: expected a trajectory JSON file: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path.name}: format: expected {FORMAT!r}")
    return data


def rescore(trajectory: dict, judges: list[Judge] | None = None, weights: Weights | None = None,
            scenario: Scenario | None = None) -> dict:
    """Scores of a saved run recomputed from its outcomes (e.g. with other judges)."""
    from .rejudge import scenario_of  # the one place that turns a trajectory's scenario name into a scenario

    scenario = scenario or scenario_of(trajectory)
    w = weights or Weights(**{k.lower(): v for k, v in trajectory["weights"].items()})
    outcomes = [TaskOutcome.from_dict(o) for o in trajectory["outcomes"]]
    return score_run(scenario, outcomes, TAOutcome.from_dict(trajectory["ta"]), w, judges)
