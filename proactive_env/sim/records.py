"""The record store: records appear (at a time, with an event, or once a condition holds) and
change (versions); a look-up always returns the version current now. A record that confirms an
action the agent executed reads as that action was done: its placeholders are filled from the
executed arguments (``spec/derive.py``)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..spec.derive import fill, fill_fields
from ..spec.models import Record


@dataclass(frozen=True, slots=True)
class View:
    """One record as it reads now."""

    id: str
    kind: str
    title: str
    text: str
    fields: dict

    def render(self) -> str:
        fields = f"\nfields: {json.dumps(self.fields, default=str, ensure_ascii=False)}" if self.fields else ""
        return f"{self.title} ({self.kind})\n{self.text}{fields}"


class RecordStore:
    __slots__ = ("records", "version", "visible", "changes", "sources", "done_args")

    def __init__(self, records: list[Record], sources: dict[str, str] | None = None) -> None:
        self.records = {r.id: r for r in records}
        self.version: dict[str, int] = {}  # record id → current version (0 = the base text)
        self.visible: set[str] = set()
        self.changes = 0  # how many times a record appeared or changed (a cheap "anything new?")
        self.sources = sources or {}  # "record:<id>[:<version>]" → the task whose executed action it confirms
        self.done_args: dict[str, dict] = {}  # task id → the arguments its action was executed with

    def show(self, record_id: str) -> bool:
        """Make a record visible; True if it was not."""
        if record_id in self.visible:
            return False
        self.visible.add(record_id)
        self.version.setdefault(record_id, 0)
        self.changes += 1
        return True

    def advance(self, record_id: str, version: int) -> None:
        self.version[record_id] = max(self.version.get(record_id, 0), version)
        self.changes += 1

    def view(self, record_id: str) -> View:
        r = self.records[record_id]
        v = self.version.get(record_id, 0)
        if v == 0:
            args = self.derived_args(f"record:{r.id}")
            return View(r.id, r.kind, fill(r.title, args), fill(r.text, args), fill_fields(dict(r.fields), args))
        ver = r.versions[v - 1]
        args = self.derived_args(f"record:{r.id}:{v}")
        return View(r.id, r.kind, fill(ver.title or r.title, args), fill(ver.text, args),
                    fill_fields({**r.fields, **ver.fields}, args))

    def derived_args(self, key: str) -> dict | None:
        """The executed arguments a record (version) derives from, if an executed action stands behind it."""
        task = self.sources.get(key)
        return self.done_args.get(task) if task is not None else None
