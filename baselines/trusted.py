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
from pathlib import Path


def registry_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "proactivity-gym" / "trusted-models.json"


def digest(folder: Path) -> str:
    """SHA-256 over every file under ``folder`` (relative path and contents, in sorted order)."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0")
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        h.update(b"\0")
    return h.hexdigest()


def _known() -> dict[str, str]:
    try:
        data = json.loads(registry_path().read_text(encoding="utf-8"))
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
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known, indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def trusted(folder: Path) -> bool:
    return digest(folder) in _known()
