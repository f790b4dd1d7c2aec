"""A record's own title names its entity (issue #20.3): wherever a reference argument is an
entity a record's title names — the name itself, or the name and a qualifier after a comma
("The Weybosset Hotel, Providence") — that title's name is accepted, with or without a leading
article and in any case; another entity's name is still refused. Swept over every reference
argument of every scenario (titles do not depend on the seed)."""

import copy
import re

import pytest

from proactive_env.sim.tools import args_problem
from proactive_env.spec import load_scenario, shipped_names
from proactive_env.spec.derive import record_names


def _string_leaves(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _string_leaves(v, (*path, k))
    elif isinstance(value, list):
        for j, v in enumerate(value):
            yield from _string_leaves(v, (*path, j))
    elif isinstance(value, str):
        yield path, value


def _with(args: dict, path: tuple, value) -> dict:
    out = copy.deepcopy(args)
    node = out
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return out


def _title_names(s) -> set[str]:
    """Each record title's names as the author wrote them: the parts between dashes or after a
    colon (the test's own reading of a title, independent of the matcher)."""
    titles = [t for r in s.records for t in (r.title, *(v.title for v in r.versions)) if t]
    return {part.strip() for t in titles for part in re.split(r"\s+[—–-]\s+|:\s", t) if part.strip()}


def _bare(text: str) -> str:
    return re.sub(r"^(the|a|an)\s+", "", text.strip(), flags=re.IGNORECASE).lower()


def _named_arguments(s):
    """(task, action, path, reference value, title name) where the reference value is the name
    or the name and a qualifier after a comma."""
    names = _title_names(s)
    for task in s.tasks:
        action = task.action
        if action is None:
            continue
        for path, value in _string_leaves(action.args):
            if path[0] in action.free_text:
                continue
            for name in names:
                if len(_bare(name)) > 2 and _bare(name) in (_bare(value), _bare(value.split(",")[0])):
                    yield task, action, path, value, name


@pytest.mark.parametrize("name", shipped_names())
def test_a_records_own_title_names_its_entity_in_every_reference_argument(name):
    s = load_scenario(name)
    params = {t.name: t.params for t in s.tools}
    known = record_names(s)
    for task, action, path, value, title in _named_arguments(s):
        for given in (title, _bare(title), "the " + _bare(title), title.upper(), value.lower()):
            problem = args_problem(action.args, _with(action.args, path, given), action.free_text,
                                   params[action.tool], known)
            assert problem is None, (task.id, path, value, given, problem)
        others = sorted(n for n in _title_names(s) if _bare(n) != _bare(title) and _bare(n) not in _bare(value)
                        and _bare(value) not in _bare(n) and len(n.split()) >= 2)
        if others:
            assert args_problem(action.args, _with(action.args, path, others[0]), action.free_text,
                                params[action.tool], known) is not None, (task.id, path, others[0])


def test_the_weybosset_hotel_and_castle_street_pharmacy_are_what_their_records_call_them():
    """Issue #20 (conference_trip / reviewer / 1001): book_hotel refused "The Weybosset Hotel" —
    the record's own title ("The Weybosset Hotel — reservation WH-58812") — for the reference
    "The Weybosset Hotel, Providence". The same class in medications: "Castle Street Pharmacy"
    for "Castle Street Pharmacy, Knaresborough". Without the records' names the matcher refuses
    (a qualifier is not dropped in general: "Content Designer" is not "Content Designer,
    Accessibility")."""
    found = {(t.id, v) for n in ("conference_trip", "medications") for t, _, _, v, _ in _named_arguments(load_scenario(n))}
    assert {("t06_hotel_hold", "The Weybosset Hotel, Providence"),
            ("t07_repeat_prescription", "Castle Street Pharmacy, Knaresborough")} <= found
    s = load_scenario("conference_trip")
    task = next(t for t in s.tasks if t.id == "t06_hotel_hold")
    params = next(t for t in s.tools if t.name == "book_hotel").params
    given = {**task.action.args, "hotel": "The Weybosset Hotel"}
    assert args_problem(task.action.args, given, task.action.free_text, params) is not None
    assert args_problem(task.action.args, given, task.action.free_text, params, record_names(s)) is None
    assert args_problem(task.action.args, {**given, "hotel": "Weybosset hotel"}, task.action.free_text, params,
                        record_names(s)) is None
    assert args_problem(task.action.args, {**given, "hotel": "The Omni Providence"}, task.action.free_text, params,
                        record_names(s)) is not None
    jobs = load_scenario("job_applications")
    role = next(t for t in jobs.tasks if t.id == "t06_northwind_apply")
    tool = next(t for t in jobs.tools if t.name == role.action.tool).params
    assert args_problem(role.action.args, {**role.action.args, "role": "Content Designer"}, role.action.free_text,
                        tool, record_names(jobs)) is not None


def _without(value, name):
    """``value`` less every list entry that names ``name`` (anywhere inside the arguments)."""
    from proactive_env.spec.derive import names_hold

    if isinstance(value, dict):
        return {k: _without(v, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_without(v, name) for v in value if not names_hold([name], {"x": v})]
    return value


@pytest.mark.parametrize("name", shipped_names())
def test_an_action_that_leaves_out_what_the_world_will_speak_of_is_carried_out(name):
    """What the world's later texts about an action name (``When.names``) is said before its
    deadline (the validator's ``_names_on_record``), and the action is judged on its declared
    arguments alone: the reference passes, and so does the reference without any one such item —
    the world then says nothing of that item, and the branch it would have opened counts 0
    (tests/test_fair_confirmations.py: leaving it out gains nothing)."""
    import numpy as np

    from proactive_env.sim import TextTools, World
    from proactive_env.spec.derive import conditioned_names

    s = load_scenario(name)
    tools = TextTools(World(s, "operator", np.random.default_rng(0), face="text"))
    for task in s.tasks:
        names = conditioned_names(s, task.id)
        if not names:
            continue
        state = tools.world.by_id[task.id]  # the one judgement execution and attribution make
        assert tools.args_problem(state, task.action.args) is None, task.id
        for item in names:
            fewer = _without(task.action.args, item)
            assert tools.args_problem(state, fewer) is None, (task.id, item)
    if name == "meal_planning":
        assert conditioned_names(s, "t05_finalise_order") == ("sunflower seeds", "avocados")


def test_the_validator_reports_a_name_nothing_on_record_says():
    from proactive_env.spec.validate import semantic_errors

    s = load_scenario("meal_planning")
    index = next(i for i, ev in enumerate(s.events) if ev.id == "e05_substitution")
    events = list(s.events)
    events[index] = events[index].model_copy(update={"when": events[index].when.model_copy(
        update={"names": ["sunflower seeds", "dragon fruit"]})})
    problems = semantic_errors(s.model_copy(update={"events": events}))
    assert any(path == f"events[{index}].when.names" and "'dragon fruit'" in why for path, why in problems), problems
