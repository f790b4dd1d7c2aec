"""Winnable from what was seen (issue #20.2 and #20.3), over every pair and seeds 0, 1000, 1001,
on the variant the seed draws (records moved in time, distractors dropped): every value an action's
reference demands is said by a record, version or event the agent can have seen before the task's
deadline, or among the values the tool's schema enumerates — never only by the author's task description — and every
record that shows a TA decision's demand is on record, unconditionally, before its window opens."""

import json

import pytest
from gymnasium.utils import seeding

from proactive_env.sim.tools import tool_schemas
from proactive_env.spec import PERSONAS, load_scenario, shipped_names, variant
from proactive_env.spec.validate import _said, compared_values, reachable_states, semantic_errors, visible_by

SEEDS = (0, 1000, 1001)


def _variants(name):
    base = load_scenario(name)
    for persona in PERSONAS:
        for seed in SEEDS:
            rng, _ = seeding.np_random(seed)
            yield persona, seed, variant.apply(base, variant.draw(base, persona, rng))


def _enums(schema) -> list:
    """The values a tool schema the agent sees enumerates (anywhere inside it)."""
    if isinstance(schema, dict):
        return [*schema.get("enum", []), *(v for x in schema.values() for v in _enums(x))]
    if isinstance(schema, list):
        return [v for x in schema for v in _enums(x)]
    return []


def _arises(s, task, persona) -> bool:
    """Can the task come up for this persona (every state it requires reachable)?"""
    ids = {t.id: t for t in s.tasks}
    return all(c.state in reachable_states(s, ids[c.task], persona) for c in task.requires)


@pytest.mark.parametrize("name", shipped_names())
def test_every_reference_value_is_on_record_before_the_deadline_in_every_variant(name):
    """Every value compared where given, optional arguments included (on main only required ones
    were checked: experiments t06's ``begin`` 2026-04-16T01:30, the second half of Wednesday
    night, was said by no record, whose sheet gave "01:30–08:30" under Wed 15 Apr alone)."""
    for persona, seed, s in _variants(name):
        schemas = {t["function"]["name"]: json.dumps(_enums(t), ensure_ascii=False) for t in tool_schemas(s)}
        for task in s.tasks:
            if task.action is None or not _arises(s, task, persona):
                continue
            seen = visible_by(s, task.deadline, task.id, persona) + "\n" + schemas[task.action.tool]
            for where, leaf in compared_values(s, task):
                assert _said(seen, leaf), (persona, seed, task.id, where, leaf)


@pytest.mark.parametrize("name", shipped_names())
def test_every_ta_decisions_demand_is_on_record_before_its_window_opens_in_every_variant(name):
    for persona, seed, s in _variants(name):
        records = {r.id: r for r in s.records}
        for d in s.ta_decisions:
            for rid in d.shown_by:
                record = records.get(rid)
                assert record is not None, (persona, seed, d.id, rid, "dropped")
                assert record.when is None and (record.appears or 0) <= d.start, (persona, seed, d.id, rid)


def test_the_task_description_is_no_record_and_the_validator_says_so():
    """The author's description of a task is never shown to the agent: a reference value only it
    says is reported (conference_trip's registration rate "ALD member early-bird" was said by the
    description alone; the schema now lists the rates as an enum)."""
    s = load_scenario("conference_trip")
    rate = next(t for t in s.tools if t.name == "submit_registration").params["details"].properties["rate"]
    assert "ALD member early-bird" in rate.enum
    bare = rate.model_copy(update={"enum": None})
    tools = [t.model_copy(update={"params": {**t.params, "details": t.params["details"].model_copy(update={
        "properties": {**t.params["details"].properties, "rate": bare}})}}) if t.name == "submit_registration" else t
        for t in s.tools]
    problems = semantic_errors(s.model_copy(update={"tools": tools}))
    index = next(i for i, t in enumerate(s.tasks) if t.id == "t02_registration")
    assert any(path == f"tasks[{index}].action.args.details.rate" for path, _ in problems), problems


def test_a_value_said_only_after_the_tasks_own_action_is_not_on_record_for_it():
    """A confirmation that appears once the action is done cannot tell the agent how to do it:
    conference_trip's hotel reservation WH-58812 is said only by the record the booking brings."""
    s = load_scenario("conference_trip")
    task = next(t for t in s.tasks if t.id == "t06_hotel_hold")
    assert not _said(visible_by(s, s.end_minute, task.id), "WH-58812")
    assert _said(visible_by(s, s.end_minute), "WH-58812")
