"""Output escaping by construction: one place for every kind of text that leaves the package.

Data reaches people through terminals, spreadsheets, markdown tables and file paths. Each has its
own dangerous characters; rather than escaping the fields we thought of, every writer passes every
data-derived string through the function for its medium. HTML is not here: it comes from Jinja2
templates with autoescape on.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path

# C0 and C1 control characters except tab and newline, plus DEL. ESC (\x1b) starts terminal
# escape sequences; \r rewrites a line in place; both can forge what a person reads.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Unicode bidi overrides and isolates reorder what is displayed ("Trojan Source").
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
_SLUG_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def strip_control(text: object, keep_newlines: bool = True) -> str:
    """``text`` as a string with control characters and bidi overrides removed (for terminals)."""
    s = _BIDI.sub("", _CONTROL.sub("", str(text)))
    return s if keep_newlines else s.replace("\n", " ").replace("\t", " ")


def csv_cell(value: object) -> object:
    """A CSV cell that no spreadsheet evaluates: text starting like a formula gets a leading quote.

    Numbers pass unchanged, so numeric columns stay numeric (OWASP's CSV-injection advice).
    """
    if isinstance(value, (int, float)) or value is None:
        return value
    s = strip_control(value, keep_newlines=False)
    return "'" + s if s.startswith(_FORMULA_START) else s


def md_cell(value: object) -> str:
    """A markdown table cell: one line, pipes and markup characters escaped."""
    s = strip_control(value, keep_newlines=False)
    s = s.replace("\\", "\\\\")
    for ch in "|`*_[]<>#":
        s = s.replace(ch, "\\" + ch)
    return s


def slug(value: object, max_len: int = 80) -> str:
    """A file-name component made from data: ASCII letters, digits, ``.``, ``_`` and ``-`` only.

    Never empty, never ``.``/``..``, never hidden. When anything was replaced or cut, a short hash
    of the original is appended, so two different values never share a slug.
    """
    original = str(value)
    s = unicodedata.normalize("NFKD", original).encode("ascii", "ignore").decode()
    s = _SLUG_UNSAFE.sub("-", s).strip(".-") or "x"
    if s != original or len(s) > max_len:
        s = s[:max_len].rstrip(".-") + "-" + hashlib.sha256(original.encode()).hexdigest()[:8]
    return s


def inside(root: Path | str, *parts: str) -> Path:
    """``root/parts…`` resolved, refusing any result outside ``root`` (ValueError names both)."""
    base = Path(root).resolve()
    target = base.joinpath(*parts).resolve()
    if target != base and base not in target.parents:
        raise ValueError(f"path {target} would leave the folder {base}")
    return target
