"""Look-ups by field (issue #20 item 5, blind round 19): a look-up tool's argument named like a
record field is matched on that field, by value, among the records the tool reads — never a
free-text guess over every record (``check_kiln`` with a date returned the photo-shoot calendar
and the clay invoice)."""

from __future__ import annotations

import json
import re

import pytest
from gymnasium.utils import seeding

from noninterference import drawn
from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.sim import TextTools, World
from proactive_env.spec import shipped_names
from proactive_env.spec.meaning import mentions, same_value


def _everything_visible(name: str):
    s, choice = drawn(name, "planner", 0)
    rng, _ = seeding.np_random(0)
    world = World(s, "planner", rng, rules=dict(choice["rules"]), face="text")
    for record in s.records:
        world.store.show(record.id)
    return world, TextTools(world)


def _returned(result: str, known=None) -> list[str]:
    """The ids of the records a look-up returned (each starts a line, "<id>: <title> (<kind>)")."""
    ids = re.findall(r"^([a-z][a-z0-9_]*): .* \([a-z_]+\)$", result, re.M)
    return [i for i in ids if known is None or i in known]


def _look_ups(s):
    return [t for t in s.tools if t.touches == "read" and t.depth == "prepare" and t.name != "read_record"]


@pytest.mark.parametrize("name", shipped_names())
def test_every_look_up_matches_each_of_its_fields_by_value(name):
    """Class sweep: for every look-up tool and each declared argument that names a record field,
    called with the value each readable record holds there, the result holds that record, and
    every record returned holds the value in that field (or, listed by the tool and without that
    field, states it); nothing the tool does not read is ever returned."""
    world, tools = _everything_visible(name)
    checked = 0
    for tool in _look_ups(world.scenario):
        readable = set(tool.reads) or set(world.store.visible)
        for key in tool.params:
            field = tools._field_args(tool, {key: "x"}).get(key)
            if field is None:
                continue
            for rid in sorted(readable):
                held = world.store.view(rid).fields.get(field)
                for value in ([held] if not isinstance(held, list) else held[:1]):
                    if value is None or isinstance(value, (dict, bool)):
                        continue
                    got = _returned(tools.call(tool.name, {key: value}))
                    assert rid in got, f"{tool.name}({key}={value!r}) missed {rid}: {got}"
                    for other in got:
                        view = world.store.view(other)
                        assert other in readable, f"{tool.name} returned {other}, which it does not read"
                        there = view.fields.get(field)
                        values = there if isinstance(there, list) else [there]
                        assert (there is not None and any(same_value(v, value) or str(v).lower() == str(value).lower()
                                                          for v in values)) or (
                            there is None and other in tool.reads and mentions(view.text + view.title, str(value))), (
                            f"{tool.name}({key}={value!r}) returned {other}, whose {field} is {there!r}")
                    checked += 1
    free = [t for t in _look_ups(world.scenario) if t.reads]
    for tool in free:  # free words, or nothing, stay among what it reads
        for args in ({}, {k: "this week" for k in tool.params}):
            got = _returned(tools.call(tool.name, args))
            assert set(got) <= set(tool.reads), f"{tool.name}({args}) returned {got}, beyond {tool.reads}"
    assert checked or free


def test_every_listed_record_of_a_look_up_exists():
    """What a look-up reads is declared by id; an unknown id is the scenario's error (the validator)."""
    from proactive_env.spec import load_scenario
    from proactive_env.spec.validate import semantic_errors

    s = load_scenario("pottery_studio")
    kiln = next(t for t in s.tools if t.name == "check_kiln")
    broken = s.model_copy(update={"tools": [kiln.model_copy(update={"reads": ["no_such_record"]}) if t is kiln else t
                                            for t in s.tools]})
    assert any("reads" in path and "no_such_record" in why for path, why in semantic_errors(broken))


def test_round19_check_kiln_by_date_reads_the_kiln_not_the_photo_shoot_or_the_clay_invoice():
    """Round 19 (pottery_studio / reviewer / 1008): check_kiln {"date": "2026-05-12"} returned the
    photo-shoot calendar and the clay invoice (the free-text words they shared with '12 may')."""
    env = ProactivityTextEnv("pottery_studio", "reviewer")
    env.reset(seed=1008)
    result = env.step(json.dumps({"tool": "check_kiln", "arguments": {"date": "2026-05-12"}}))[0]
    got = _returned(result.split("\nNow:")[0])
    assert "kiln_calendar" in got and not {"cal_photo_shoot", "clay_invoice"} & set(got), got
    later = env.step(json.dumps({"tool": "check_kiln", "arguments": {"date": "2026-05-18"}}))[0]
    assert "cal_photo_shoot" not in later  # the shoot is on the 18th, but it is not the kiln's
