"""Finding the runs in eval output folders."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ..scoring.results import METRICS
from ..scoring.trajectory import FORMAT


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


def _read(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None  # a damaged file (e.g. a run killed while writing); eval re-runs it
    if not isinstance(data, dict) or data.get("format") != FORMAT or not all(m in data.get("scores", {})
                                                                             for m in METRICS):
        return None
    return data


def collect(dirs: list[Path]) -> tuple[list[Run], list[Path]]:
    """Every finished run in the folders (and the files skipped as unreadable). An agent name that
    appears in several folders is labelled ``name [folder]`` in each, since its settings may
    differ; the same run twice in one label counts once."""
    folders = eval_folders(dirs)
    raw, skipped = [], []
    for folder in folders:
        for path in sorted((folder / "trajectories").rglob("*.json")):
            data = _read(path)
            if data is None:
                skipped.append(path)
            else:
                raw.append((folder, path, data))
    if not raw:
        raise ValueError(f"no finished runs under {', '.join(str(f) for f in folders)}")
    homes: dict[str, set[Path]] = defaultdict(set)
    for folder, _, data in raw:
        homes[data["agent"]].add(folder)
    names = _folder_names(folders)
    runs, seen = [], set()
    for folder, path, data in raw:
        label = data["agent"] if len(homes[data["agent"]]) == 1 else f"{data['agent']} [{names[folder]}]"
        key = (label, data["scenario"], data["persona"], data["seed"])
        if key in seen:
            continue
        seen.add(key)
        runs.append(Run(label, data["scenario"], data["persona"], int(data["seed"]),
                        {m: float(data["scores"][m]) for m in METRICS}, path, folder))
    return runs, skipped


def _folder_names(folders: list[Path]) -> dict[Path, str]:
    """Short distinct names: the last path part, or more of it where two folders share one."""
    for depth in range(1, 6):
        names = {f: "/".join(f.resolve().parts[-depth:]) for f in folders}
        if len(set(names.values())) == len(folders):
            return names
    return {f: str(f) for f in folders}
