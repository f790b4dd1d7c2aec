"""Trajectory files: everything a run leaves, so it can be re-scored without re-running.

A trajectory is one JSON document: what was run (scenario and its version, the seed's variant of
it, persona, seed, face, agent), what happened (the agent's actions and the world's event log
with every approval decision), and the scores computed at the time. The scores are a function of
the log and the scenario alone, so ``rescore`` reproduces them exactly.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ..spec import SUITE_VERSION, Scenario, load_scenario, shipped_names, variant
from .judge import Judge
from .metrics import Weights, score_log

FORMAT = "proactivity-gym/trajectory-2"


def write_json_atomic(path: str | Path, data, durable: bool = True, indent: int | None = 1) -> None:
    """Write JSON so that a reader never sees half a file: into a temporary file of a unique name
    beside it (created exclusively, so a planted symlink is never followed), then renamed over
    ``path`` (a symlink at ``path`` is replaced, not followed). ``durable``: fsync before the
    rename, so that the file survives a power cut too. ``indent=None``: compact (4x faster to
    write: the C encoder). On any failure (a full disk) the temporary file is removed and
    ``path`` is as it was."""
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
                    variant: dict, actions: list, log: list[dict], scores: dict, face: str = "structured") -> dict:
    return {
        "format": FORMAT,
        "scenario": scenario.name,
        "scenario_version": scenario.version,
        "suite_version": SUITE_VERSION,
        "persona": persona,
        "seed": seed,
        "face": face,
        "variant": variant,
        "agent": agent,
        "weights": weights.as_dict(),
        "actions": actions,
        "log": log,
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


def scenario_of(trajectory: dict, base: Scenario | None = None) -> Scenario:
    """The exact scenario a run played: ``base`` (default: the shipped file of that name, which
    must be the version recorded) with the run's variant applied."""
    if base is None:  # only a shipped scenario's name is followed: a trajectory never names a file to open
        name = trajectory.get("scenario")
        if not isinstance(name, str) or name not in shipped_names():
            raise ValueError(f"trajectory of scenario {str(name)[:80]!r}: expected the name of a shipped scenario "
                             f"({', '.join(shipped_names())}); a trajectory never names a file to open")
        base = load_scenario(name)
    if base.version != trajectory["scenario_version"]:
        raise ValueError(f"trajectory was recorded on {trajectory['scenario']} v{trajectory['scenario_version']}, "
                         f"this package ships v{base.version}")
    return variant.apply(base, trajectory["variant"])


def rescore(trajectory: dict, judges: list[Judge] | None = None, weights: Weights | None = None,
            base: Scenario | None = None) -> dict:
    """Scores of a saved run recomputed from its log and scenario alone (e.g. with other judges)."""
    w = weights or Weights(**{k.lower(): v for k, v in trajectory["weights"].items()})
    return score_log(scenario_of(trajectory, base), trajectory["persona"], trajectory["log"], w, judges)
