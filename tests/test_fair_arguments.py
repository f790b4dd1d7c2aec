"""Declared arguments (issue #20.3): every argument the scorer compares is declared by the tool's
schema (nested keys too), only declared keys are demanded, and a refused action leaves the
approval in force (tests/test_fair_text_face.py::test_a_refused_action_leaves_the_approval_in_force)."""

import pytest

from proactive_env.sim.tools import args_problem, tool_schemas
from proactive_env.spec import load_scenario, shipped_names
from proactive_env.spec.validate import semantic_errors


def _tool(scenario, name):
    return next(t for t in scenario.tools if t.name == name)


@pytest.mark.parametrize("name", shipped_names())
def test_every_key_of_every_reference_action_is_in_the_tool_schema_the_agent_sees(name):
    s = load_scenario(name)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tool_schemas(s)}

    def declared(args: dict, props: dict, path: str) -> None:
        for key, value in args.items():
            assert key in props, f"{path}.{key}"
            if isinstance(value, dict):
                declared(value, props[key].get("properties", {}), f"{path}.{key}")

    for task in s.tasks:
        if task.action is not None:
            declared(task.action.args, schemas[task.action.tool]["properties"], task.id)


def test_submit_registration_demands_only_what_its_schema_declares():
    """Issue #20: submit_registration declared `details` as an untyped object and `amount_usd`
    optional, yet args_problem demanded every key of the hidden reference (rate, depart, return,
    amount_usd: 0). The keys are declared now; a key the schema does not declare is never demanded,
    and an optional top-level one is compared only if given."""
    s = load_scenario("conference_trip")
    params = _tool(s, "submit_registration").params
    assert {"rate", "depart", "return"} <= set(params["details"].properties) and params["amount_usd"].required
    task = next(t for t in s.tasks if t.id == "t02_registration")
    given = {k: v for k, v in task.action.args.items() if k != "payment"}  # optional, left out
    hidden = {**task.action.args, "details": {**task.action.args["details"], "hidden_field": "x"}}
    assert args_problem(hidden, given, [], params) is None
    wrong = {**given, "details": {k: v for k, v in given["details"].items() if k != "rate"}}
    assert args_problem(task.action.args, wrong, [], params) == (
        "arguments that do not match the matter: details (details.rate missing)")
    assert args_problem(task.action.args, {**given, "payment": "Mastercard"}, [], params) == (
        "arguments that do not match the matter: payment")


def test_the_validator_reports_a_reference_key_the_tool_does_not_declare():
    s = load_scenario("conference_trip")
    tasks = [t.model_copy(update={"action": t.action.model_copy(update={"args": {
        **t.action.args, "details": {**t.action.args["details"], "hidden_field": "x"}}})})
             if t.id == "t02_registration" else t for t in s.tasks]
    index = next(i for i, t in enumerate(tasks) if t.id == "t02_registration")
    problems = semantic_errors(s.model_copy(update={"tasks": tasks}))
    assert any(p == f"tasks[{index}].action.args.details.hidden_field" for p, _ in problems), problems


def test_every_value_an_action_demands_is_on_record_before_its_deadline():
    """Issue #20.3: no hidden reference value. The validator (``_reference_values_on_record``)
    checks every shipped scenario as it loads; here, that it catches one: a registration fee of 0
    that nothing says is free, then the same once a record says "no fee"."""
    import copy

    import yaml

    from proactive_env.spec import ScenarioError, parse_scenario
    from proactive_env.spec.loader import scenario_dir

    data = yaml.safe_load((scenario_dir() / "conference_trip.yaml").read_text())
    policy = next(r for r in data["records"] if r["id"] == "travel_policy")
    hidden = copy.deepcopy(data)
    next(r for r in hidden["records"] if r["id"] == "travel_policy")["text"] = policy["text"].replace(" (no fee)", "")
    with pytest.raises(ScenarioError, match=r"t04_travel_registration\].action.args.amount_usd.*says 0"):
        parse_scenario(hidden)
    priced = copy.deepcopy(data)
    task = next(t for t in priced["tasks"] if t["id"] == "t06_hotel_hold")
    task["action"]["args"]["rate_usd"] = 231  # a rate no record quotes
    with pytest.raises(ScenarioError, match=r"rate_usd.*says 231"):
        parse_scenario(priced)
    parse_scenario(data)
