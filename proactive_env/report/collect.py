"""Finding the runs in eval output folders, each re-scored from its trajectory (never its stored scores)."""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..scoring.results import METRICS


@dataclass(frozen=True)
class Run:
    agent: str  # the label in the report (the agent's name, with its folder where names collide)
    scenario: str
    persona: str
    seed: int
    scores: dict
    path: Path
    folder: Path

    def record(self) -> dict:
        return {"agent": self.agent, "scenario": self.scenario, "persona": self.persona, "seed": self.seed,
                "scores": self.scores}


def eval_folders(dirs: list[Path]) -> list[Path]:
    """Each DIR that holds ``trajectories/``, or the eval folders below it."""
    found = []
    for d in dirs:
        if not d.is_dir():
            raise ValueError(f"{d}: no such folder")
        if (d / "trajectories").is_dir():
            found.append(d)
        else:
            below = sorted(p.parent for p in d.rglob("trajectories") if p.is_dir())
            if not below:
                raise ValueError(f"{d}: expected an eval output folder (with trajectories/) or folders holding them")
            found += below
    return list(dict.fromkeys(found))


def _warn(path: Path, why: str) -> None:
    print(f"report: skipped {path}: {why}", file=sys.stderr)


def collect(dirs: list[Path], on_skip: Callable[[Path, str], None] = _warn) -> tuple[list[Run], list[Path]]:
    """Every finished run in the folders (and the files skipped). The scores are never read from
    the files: each run is re-scored by replaying its actions (``evaluate.verified_run``), and a
    file that is no trajectory the evaluator wrote there, or whose actions do not reproduce its
    log, is skipped and named (``on_skip(path, why)``; default: a line on stderr). An agent name
    that appears in several folders is labelled ``name [folder]`` in each, since its settings
    may differ; the same run twice in one label counts once."""
    from ..evaluate import EvalError, Manifest, verified_run  # the evaluator's own checks of its folder

    folders = eval_folders(dirs)
    raw, skipped = [], []
    for folder in folders:
        manifest = Manifest.read(folder) if os.path.lexists(folder / "manifest.json") else None
        if os.path.lexists(folder / "manifest.json") and manifest is None:
            on_skip(folder / "manifest.json", "not the evaluator's manifest; the folder's runs are skipped")
            skipped.append(folder / "manifest.json")
            continue
        configurations = manifest.configurations if manifest else None
        for path in sorted((folder / "trajectories").glob("*/*.json")):
            try:
                record, _ = verified_run(path, configurations)
            except (ValueError, EvalError) as exc:
                on_skip(path, str(exc).removeprefix(f"{path.name}: "))
                skipped.append(path)
            else:
                raw.append((folder, path, record))
    if not raw:
        raise ValueError(f"no finished runs under {', '.join(str(f) for f in folders)}")
    homes: dict[str, set[Path]] = defaultdict(set)
    for folder, _, record in raw:
        homes[record["agent"]].add(folder)
    names = _folder_names(folders)
    runs, seen = [], set()
    for folder, path, record in raw:
        label = record["agent"] if len(homes[record["agent"]]) == 1 else f"{record['agent']} [{names[folder]}]"
        key = (label, record["scenario"], record["persona"], record["seed"])
        if key in seen:
            continue
        seen.add(key)
        runs.append(Run(label, record["scenario"], record["persona"], int(record["seed"]),
                        {m: float(record["scores"][m]) for m in METRICS}, path, folder))
    return runs, skipped


def _folder_names(folders: list[Path]) -> dict[Path, str]:
    """Short distinct names: the last path part, or more of it where two folders share one."""
    for depth in range(1, 6):
        names = {f: "/".join(f.resolve().parts[-depth:]) for f in folders}
        if len(set(names.values())) == len(folders):
            return names
    return {f: str(f) for f in folders}
