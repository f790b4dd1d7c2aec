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


# ------------------------------------------------------------------ declared shapes, paraphrased (round 18)
def _paraphrase(value, key=""):
    """The value as a careful agent might write it in its declared form: other case, amounts as
    strings with their currency, a list of strings as one comma list."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        sign = "£" if key.endswith("_gbp") else "$" if key.endswith("_usd") else ""
        return f"{sign}{value:,.2f}" if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return value.lower() if value != value.lower() else value.upper()
    if isinstance(value, dict):
        return {k: _paraphrase(v, k) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return ", ".join(_paraphrase(v) for v in value)
    return [_paraphrase(v, key) for v in value]


def _stated(entry: dict) -> str:
    """An object entry written as one string stating its values ("Ana Ruiz, ana.ruiz@…, 416-…")."""
    def values(v):
        if isinstance(v, dict):
            return [x for y in v.values() for x in values(y)]
        return [] if isinstance(v, bool) else [str(v)]
    return ", ".join(values(entry))


FREE = "anything at all (with a parenthesis) & more — not what the reference says; 3 × 5 oz"


def _typed(schema: dict, value, path: str) -> None:
    assert "type" in schema, f"{path}: no declared type"
    if isinstance(value, dict):
        assert schema["type"] == "object" and "properties" in schema, f"{path}: an object without declared keys"
        for k, v in value.items():
            assert k in schema["properties"], f"{path}.{k}: not declared"
            _typed(schema["properties"][k], v, f"{path}.{k}")
    elif isinstance(value, list) and any(isinstance(v, dict) for v in value):
        assert schema["type"] == "array" and "items" in schema, f"{path}: an array of objects without declared entries"
        for j, v in enumerate(value):
            _typed(schema["items"], v, f"{path}[{j}]")


@pytest.mark.parametrize("name", shipped_names())
def test_every_compared_argument_is_declared_with_its_type_and_a_paraphrase_of_it_is_accepted(name):
    """Suite sweep (issue #20.3, round 18): for every task with a consequential action, every key
    its reference compares is a declared property with a type in the face's tool schema (an array
    of objects declares its entries' keys); the reference paraphrased in its declared form is
    accepted, objects in an array written as strings that state them are accepted, and free text
    is accepted whatever it says."""
    s = load_scenario(name)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tool_schemas(s)}
    for task in s.tasks:
        if task.action is None:
            continue
        action, params = task.action, _tool(s, task.action.tool).params
        props = schemas[action.tool]["properties"]
        for key, value in action.args.items():
            if key not in action.free_text:
                _typed(props[key], value, f"{task.id}.{key}")
        free = {k: FREE for k in action.free_text}
        given = {**{k: _paraphrase(v, k) for k, v in action.args.items()}, **free}
        assert args_problem(action.args, given, action.free_text, params) is None, (task.id, given)
        as_strings = {k: ([_stated(e) for e in v] if isinstance(v, list) and v and all(isinstance(e, dict) for e in v)
                          else v) for k, v in action.args.items()}
        assert args_problem(action.args, {**as_strings, **free}, action.free_text, params) is None, (task.id, as_strings)


def test_referees_written_as_strings_are_the_referees():
    """Round 18 (job_applications / reviewer / 1004): share_references refused referees written as
    strings, though the schema said only "Referees: name, email, phone (and relationship)"."""
    s = load_scenario("job_applications")
    task = next(t for t in s.tasks if t.id == "t09_references")
    params = _tool(s, "share_references").params
    given = {"to": "priya.nair@haldenstudio.com", "job": "Content Designer, Halden Studio", "references": [
        "Ana Ruiz (former manager, Pinecrest Media), ana.ruiz@pinecrestmedia.ca, 416-555-0148",
        "Jon Park (Brightline Outdoor), jon.park@brightlineoutdoor.com, 647-555-0192"]}
    assert args_problem(task.action.args, given, task.action.free_text, params) is None
    one_wrong = {**given, "references": [given["references"][0], "Tom Becker, tom.becker@example.com, 416-555-0100"]}
    assert args_problem(task.action.args, one_wrong, task.action.free_text, params) is not None
    schema = next(t for t in tool_schemas(s) if t["function"]["name"] == "share_references")["function"]
    assert set(schema["parameters"]["properties"]["references"]["items"]["properties"]) >= {"name", "email", "phone"}


def test_a_named_item_with_its_code_in_parentheses_is_that_item():
    """Round 18 (meal_planning / planner / 1005): cancel_order_item refused an `item` with a
    parenthesis; a name of several words inside a description of it names it, '&' is 'and',
    '4oz' is '4 oz'; a negated or another item is still refused."""
    s = load_scenario("meal_planning")
    task = next(t for t in s.tasks if t.id == "t08_substitution_check")
    params = _tool(s, "cancel_order_item").params
    for item in ("Pine nuts 4 oz (GW-2290)", "Pine nuts 4oz (GW-2290), the substitute for the sunflower seeds"):
        given = {"order_id": "GW-5521907", "sku": "GW-2290", "item": item, "reason": "Tomás: tree-nut allergy (pine nuts)"}
        assert args_problem(task.action.args, given, task.action.free_text, params) is None, item
    for item in ("not Pine nuts 4 oz", "Raw sunflower seeds 8 oz"):
        given = {"order_id": "GW-5521907", "sku": "GW-2290", "item": item}
        assert args_problem(task.action.args, given, task.action.free_text, params) is not None, item


def test_a_destination_with_its_states_postal_code_is_that_destination():
    """Round 17 (conference_trip / reviewer / 1001): "Providence, RI" was refused for "Providence,
    Rhode Island" in submit_registration's details.destination."""
    s = load_scenario("conference_trip")
    task = next(t for t in s.tasks if t.id == "t04_travel_registration")
    params = _tool(s, "submit_registration").params
    given = {**task.action.args, "details": {**task.action.args["details"], "destination": "Providence, RI"}}
    assert args_problem(task.action.args, given, task.action.free_text, params) is None
    wrong = {**given, "details": {**given["details"], "destination": "Providence, NC"}}
    assert args_problem(task.action.args, wrong, task.action.free_text, params) is not None
