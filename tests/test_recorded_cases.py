"""Recorded cases (``tests/data/blind*.json``, played by ``runs.played_case``) name the matters
their calls concern by identity — the event that raised it, or the task the agent took it up for —
never by a face-given id ("m7"), which moves whenever the face opens more or fewer matters of the
agent's own before (suite 0.8.0 broke blind round 20's case so). ``tests/case_matters.py``
converts a freshly recorded case on the code it was played on."""

from __future__ import annotations

import re

import pytest

from runs import CASES_DIR, load_case, replayed_calls

CASES = sorted(path.stem for path in CASES_DIR.glob("blind*.json"))
FACE_ID = re.compile(r"\s*m\d+\s*")


def _face_ids(value) -> list[str]:
    """The face-given matter ids among a call's argument values, at any depth."""
    if isinstance(value, dict):
        return [i for v in value.values() for i in _face_ids(v)]
    if isinstance(value, list):
        return [i for v in value for i in _face_ids(v)]
    return [value] if isinstance(value, str) and FACE_ID.fullmatch(value) else []


@pytest.mark.parametrize("name", CASES)
def test_a_recorded_case_names_each_matter_by_identity_and_it_is_open_at_its_call(name):
    """No argument of a recorded call holds a face-given matter id; each ``matter_of`` reference
    resolves, at its call, to a matter the live face has (``runs.matter_id`` raises otherwise), and
    a call that files under a matter is said to go under exactly that one."""
    case = load_case(name)
    bare = [(i, ids) for i, call in enumerate(case["actions"]) if (ids := _face_ids(call["arguments"]))]
    assert not bare, f"{name}: face-given matter ids (convert with tests/case_matters.py): {bare[:5]}"
    named = [i for i, call in enumerate(case["actions"]) if "matter_of" in str(call["arguments"])]
    assert named, name
    env, calls, said = replayed_calls(name)
    for i in named:
        if i >= len(calls) or calls[i] is None:
            continue
        about = re.search(r'"about": "(m\d+)"', calls[i])
        under = re.match(r"(?:Noted|Delivered|Deferred|Done: \w+) under (m\d+)", said[i])
        assert about is not None and about.group(1) in env.world.matters, (name, i)
        assert under is None or under.group(1) == about.group(1), (name, i, said[i][:120])
