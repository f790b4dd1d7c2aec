"""Which model folders may be unpickled: those trained on this machine, or any the user vouches for.

RLlib checkpoints are pickles (the module's class and constructor, its state), and unpickling runs
code from the file. ``proactivity-gym train`` records the digest of every policy folder it writes
in a local registry (``$XDG_CACHE_HOME/proactivity-gym/trusted-models.json``, default
``~/.cache/…``); a folder whose digest is there loads as it is, and any other — one downloaded,
shared or changed since — only with ``--trust-model-files``.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from proactive_env.spec.files import kind, read_regular, write_atomic


def registry_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "proactivity-gym" / "trusted-models.json"


def digest(folder: Path) -> str:
    """SHA-256 of every file the loader can read under ``folder``: the JSON of the sorted list of
    (relative POSIX path, SHA-256 of the file) pairs, an encoding no two different folders share.
    A symlink inside the folder is followed as the loader follows it, and refused (``ValueError``)
    if it leaves the folder or loops; anything but files and folders (a FIFO, a device) is
    refused too, so the digest covers exactly what is loaded."""
    root = Path(folder).resolve()
    entries = sorted(_files(root, root, "", ()))
    return hashlib.sha256(json.dumps(entries, separators=(",", ":")).encode()).hexdigest()


def _files(root: Path, real: Path, rel: str, seen: tuple[Path, ...]):
    """(relative path as the loader sees it, sha256) of each file under the folder ``real``
    (inside ``root``), reached by the path ``rel``; ``seen``: the real folders above it."""
    if real in seen:
        raise ValueError(f"{root / rel}: a symlink loop in the model folder {root}; expected a tree of files")
    for entry in sorted(os.scandir(real), key=lambda e: e.name):
        path, name = Path(entry.path), f"{rel}/{entry.name}" if rel else entry.name
        target = path.resolve()
        if target != root and root not in target.parents:
            raise ValueError(f"{root / name}: a symlink out of the model folder {root} (to {target}); expected "
                             "every file the loader reads to be inside it")
        mode = os.stat(target).st_mode
        if stat.S_ISDIR(mode):
            yield from _files(root, target, name, (*seen, real))
        elif stat.S_ISREG(mode):
            yield name, _sha256(target)
        else:
            raise ValueError(f"{root / name}: {kind(mode)} in the model folder {root}; expected only files and folders")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    h.update(read_regular(path))
    return h.hexdigest()


def _known() -> dict[str, str]:
    try:
        data = json.loads(read_regular(registry_path(), 64 * 2**20).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remember(folder: Path) -> None:
    """Record a folder this machine wrote as trusted (best effort: a read-only home is no error)."""
    known = _known()
    known[digest(folder)] = str(folder.resolve())
    path = registry_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(known, indent=1))
    except (OSError, ValueError):
        pass


def trusted(folder: Path) -> bool:
    return digest(folder) in _known()
