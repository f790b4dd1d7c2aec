"""The structured face's work as text: what an agent that acts by verbs would have written.

The structured agent writes nothing itself, so its work is composed from what it did: the facts
whose source record it read for the task and the required codes it can quote (in proportion to
the work units done), and — where it acted without reading the record that refutes them — the
assumptions a careless assistant would make. The scorer composes it from the log, so both faces
are judged the same way.
"""

from __future__ import annotations

from ..spec import Task


def compose_artifact(task: Task, read: set[str], units_done: int) -> str:
    done = units_done / task.work.units if task.work.units else 1.0
    lines = [task.title]
    lines += [f.text for i, f in enumerate(task.facts) if f.source in read and i < done * len(task.facts)]
    must = task.constraints.must_include
    lines += [f.text for i, f in enumerate(must) if f.source in read and i < done * len(must)]
    lines += [f"Assumed: {c.text}" for c in task.constraints.must_not_include if c.refuted_by not in read]
    if units_done < task.work.units:
        lines.append(f"(work {units_done}/{task.work.units} done)")
    return "\n".join(lines)
