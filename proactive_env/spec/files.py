"""Reading and writing files without hanging on, or destroying, anything that is not a plain file.

Every file the package reads from a user-named or folder-found path (scenarios, trajectories,
manifests, results) goes through ``read_regular``, and every file it writes through
``write_atomic``: one check each, not one per call site.

* ``read_regular`` opens without blocking (a FIFO would otherwise wait forever for a writer) and
  reads only a regular file, at most ``max_bytes`` of it.
* ``write_atomic`` writes into a new temporary file beside the target and renames it over the
  target, and only where the target is a new path, a regular file or a symlink (the link itself
  is replaced, never followed): a device (``/dev/full``), a FIFO, a socket or a directory is
  refused before anything is written, instead of being replaced by a JSON file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


class FileKindError(ValueError):
    """A path that is not a regular file where one is read or written; ``str()`` names it."""


def kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words (``"a regular file"`` for one)."""
    return next((words for test, words in _KINDS if test(mode)), "a regular file" if stat.S_ISREG(mode)
                else "not a regular file")


def read_regular(path: str | Path, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (a symlink to one is followed). Raises
    ``FileKindError`` for anything else (never blocking on a FIFO), ``OSError`` if it cannot be
    read, and ``FileKindError`` if it holds more than ``max_bytes``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise FileKindError(f"{path}: expected a regular file, got {kind(mode)}")
        chunks, total = [], 0
        while block := os.read(fd, 1 << 20):
            chunks.append(block)
            total += len(block)
            if max_bytes is not None and total > max_bytes:
                raise FileKindError(f"{path}: expected at most {max_bytes} bytes, the file holds more")
        return b"".join(chunks)
    finally:
        os.close(fd)


def check_target(path: str | Path) -> None:
    """Refuse to write over anything but a new path, a regular file or a symlink."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        raise FileKindError(f"{path}: expected a regular file or a new path to write to, got {kind(mode)}; "
                            "nothing was written")


def write_atomic(path: str | Path, data: bytes | str, durable: bool = True) -> None:
    """Write ``data`` so that a reader never sees half a file: into a temporary file of a unique
    name beside ``path`` (created exclusively, so a planted symlink is never followed), then
    renamed over ``path``. ``durable``: fsync before the rename (the file survives a power cut).
    A target that is not a regular file or a new path raises ``FileKindError`` and nothing is
    written; on any failure (a full disk) the temporary file is removed and ``path`` is as it was."""
    path = Path(path)
    check_target(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
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
