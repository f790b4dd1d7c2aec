"""Scenario files: the shipped ones validate; every malformed one gets a one-line error that
names the file, the path inside it and what was expected."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from proactive_env.spec import ScenarioError, json_schema, load_file, load_scenario, shipped_names


def write(tmp_path, data, name="broken.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False) if not isinstance(data, str) else data)
    return path


def error_of(tmp_path, data) -> str:
    with pytest.raises(ScenarioError) as info:
        load_file(write(tmp_path, data))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("broken.yaml: ")
    return message


@pytest.mark.parametrize("name", shipped_names())
def test_shipped_scenarios_validate(name):
    scenario = load_scenario(name)
    assert 10 <= len(scenario.tasks) <= 19


def test_bad_yaml(tmp_path):
    message = error_of(tmp_path, "name: monitor\ntasks: [unclosed\n")
    assert "line " in message and "expected valid YAML" in message


def test_top_level_not_a_mapping(tmp_path):
    assert "expected a mapping" in error_of(tmp_path, "- just\n- a list\n")


def test_missing_field(tmp_path, monitor_data):
    del monitor_data["tasks"][0]["deadline"]
    assert "tasks[t01_setup].deadline: required field is missing" in error_of(tmp_path, monitor_data)


def test_unknown_field(tmp_path, monitor_data):
    monitor_data["tasks"][1]["dedline"] = "D2 09:00"
    assert "tasks[t02_port_check].dedline: unknown field" in error_of(tmp_path, monitor_data)


def test_dangling_reference(tmp_path, monitor_data):
    monitor_data["tasks"][0]["evidence"].append("no_such_record")
    message = error_of(tmp_path, monitor_data)
    assert "tasks[t01_setup].evidence[" in message and "records" in message and "'no_such_record'" in message


def test_malformed_time(tmp_path, monitor_data):
    monitor_data["tasks"][2]["deadline"] = "tomorrow"
    message = error_of(tmp_path, monitor_data)
    assert "tasks[t03_sale_alert].deadline" in message and "expected a time like 'D2 09:30'" in message


def test_out_of_range_time(tmp_path, monitor_data):
    monitor_data["tasks"][0]["deadline"] = "D40 09:00"
    message = error_of(tmp_path, monitor_data)
    assert "tasks[t01_setup].deadline" in message and "inside the scenario" in message


def test_persona_without_a_rule_for_a_category(tmp_path, monitor_data):
    category = monitor_data["tasks"][0]["category"]
    del monitor_data["personas"]["planner"]["rules"][category]
    assert f"personas.planner.rules: expected a rule for every category; {category!r} has none" in error_of(
        tmp_path, monitor_data)


def test_task_of_an_unknown_category(tmp_path, monitor_data):
    monitor_data["tasks"][1]["category"] = "astrology"
    assert "tasks[t02_port_check].category: expected the id of one of the scenario's categories" in error_of(tmp_path, monitor_data)


def test_execute_rule_needs_an_action(tmp_path, monitor_data):
    task = next(t for t in monitor_data["tasks"] if t.get("action") is None and not t.get("noop"))
    monitor_data["personas"]["operator"]["rules"][task["category"]] = "execute"
    assert "expected an action" in error_of(tmp_path, monitor_data)


def test_weekly_block_must_end_after_it_starts(tmp_path, monitor_data):
    monitor_data["user"]["weekly"] = [{"days": ["mon"], "start": "18:00", "end": "09:00"}]
    assert "user.weekly[0].end: expected end after start" in error_of(tmp_path, monitor_data)


def test_record_versions_in_time_order(tmp_path, monitor_data):
    record = next(r for r in monitor_data["records"] if r.get("versions"))
    record["versions"].append({"at": "D1 00:00", "text": "an earlier version"})
    assert "expected versions in time order" in error_of(tmp_path, monitor_data)


def test_condition_on_an_unknown_task(tmp_path, monitor_data):
    record = next(r for r in monitor_data["records"] if r.get("when"))
    record["when"]["task"] = "t99_nothing"
    assert "expected the id of one of the scenario's tasks, got 't99_nothing'" in error_of(tmp_path, monitor_data)


def test_ta_window_opens_with_the_urgent_task(tmp_path, monitor_data):
    monitor_data["ta_decisions"][0]["start"] = "D1 00:00"
    assert "ta_decisions[ta1_purchase_before_warranty].start: expected the window to open when the urgent task" in error_of(tmp_path, monitor_data)


def test_contended_resource_needs_the_users_words(tmp_path):
    data = yaml.safe_load((Path(__file__).parent.parent / "scenarios" / "experiments.yaml").read_text())
    data["resources"][0]["complaint"] = ""
    assert "resources[gpu_server].complaint: expected the user's words" in error_of(tmp_path, data)


def _experiments():
    return yaml.safe_load((Path(__file__).parent.parent / "scenarios" / "experiments.yaml").read_text())


def test_a_run_that_is_a_matter_needs_every_persona_to_approve_or_delegate_it(tmp_path):
    data = _experiments()
    i = next(i for i, t in enumerate(data["tasks"]) if t["work"].get("category"))
    data["personas"]["reviewer"]["rules"]["launch"] = "suggest"
    assert (f"tasks[{data['tasks'][i]['id']}].work.category: expected every persona to approve or delegate the run; reviewer may suggest it"
            in error_of(tmp_path, data))


def test_a_run_that_is_a_matter_is_on_a_resource_of_a_task_without_an_action(tmp_path):
    data = _experiments()
    i = next(i for i, t in enumerate(data["tasks"]) if t.get("action") and t["work"].get("resource") is None)
    data["tasks"][i]["work"]["category"] = "launch"
    assert f"tasks[{data['tasks'][i]['id']}].work.category: expected work on a resource" in error_of(tmp_path, data)


def test_unreachable_condition(tmp_path, monitor_data):
    target = next(t for t in monitor_data["tasks"] if t.get("action") is None)
    later = monitor_data["tasks"][-1]
    later["requires"] = [{"task": target["id"], "state": "executed"}]
    assert "expected a reachable condition" in error_of(tmp_path, monitor_data)


def test_ta_decision_needs_two_tasks(tmp_path, monitor_data):
    monitor_data["ta_decisions"][0]["competing"] = monitor_data["ta_decisions"][0]["urgent"]
    assert "ta_decisions[ta1_purchase_before_warranty].competing: expected two different tasks" in error_of(tmp_path, monitor_data)


def test_too_few_tasks(tmp_path, monitor_data):
    monitor_data["tasks"] = monitor_data["tasks"][:3]
    assert error_of(tmp_path, monitor_data)  # some one-line error, whichever check trips first


def test_duplicate_ids(tmp_path, monitor_data):
    monitor_data["records"].append(dict(monitor_data["records"][0]))
    assert "expected a unique id" in error_of(tmp_path, monitor_data)


def test_cli_validate_reports_without_traceback(tmp_path, monitor_data):
    del monitor_data["personas"]["operator"]["rules"][monitor_data["tasks"][0]["category"]]
    path = write(tmp_path, monitor_data)
    proc = subprocess.run([sys.executable, "-m", "proactive_env.cli", "validate", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "broken.yaml: personas.operator.rules" in lines[0]


def test_cli_missing_file_is_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "proactive_env.cli", "validate", str(tmp_path / "none.yaml")],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "none.yaml" in proc.stderr


def test_json_schema_exports():
    schema = json.loads(json_schema())
    assert schema["title"] == "Scenario"
    assert "tasks" in schema["properties"]


def test_keywords_must_match_their_own_text(tmp_path, monitor_data):
    fact = next(f for t in monitor_data["tasks"] for f in t.get("facts", []) if f.get("keywords"))
    fact["keywords"] = ["nowhere in the text"]
    assert "expected at least one keyword to occur in the fact's own text" in error_of(tmp_path, monitor_data)


def test_unquoted_time_is_explained(tmp_path, monitor_data):
    monitor_data["tasks"][0]["deadline"] = 720  # what YAML makes of an unquoted 12:00
    message = error_of(tmp_path, monitor_data)
    assert "tasks[t01_setup].deadline" in message and "put it in quotes" in message


def test_fact_source_must_be_evidence(tmp_path, monitor_data):
    task = next(t for t in monitor_data["tasks"] if t.get("facts"))
    task["evidence"].remove(task["facts"][0]["source"])
    assert "among the task's evidence records" in error_of(tmp_path, monitor_data)


def test_name_must_match_the_file(tmp_path, monitor_data):
    path = write(tmp_path, monitor_data, name="renamed.yaml")
    with pytest.raises(ScenarioError, match=r"renamed.yaml: name: expected the file's name, 'renamed'"):
        load_file(path)


# ---------------------------------------------------------------------- authoring feedback
def _all_problems(tmp_path, data) -> list[str]:
    from proactive_env.spec import ScenarioError, load_file

    path = tmp_path / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    with pytest.raises(ScenarioError) as info:
        load_file(path)
    return info.value.lines()


def test_every_problem_at_once_by_task_id_and_line(tmp_path, monitor_data):
    del monitor_data["tasks"][0]["deadline"]
    monitor_data["tasks"][3]["dedline"] = "D2 09:00"
    monitor_data["ta_window"] = {"start": "D1 09:00"}
    lines = _all_problems(tmp_path, monitor_data)
    ids = [t["id"] for t in monitor_data["tasks"]]
    assert len(lines) == 3
    assert any(f"tasks[{ids[0]}].deadline: required field is missing (line " in line for line in lines)
    assert any(f"tasks[{ids[3]}].dedline: unknown field" in line for line in lines)
    assert any("ta_window: field removed in suite 0.2.0; use ta_decisions" in line for line in lines)


def test_an_unquoted_time_is_an_error_with_its_fix(tmp_path, monitor_data):
    path = tmp_path / "monitor.yaml"
    text = yaml.safe_dump(monitor_data, sort_keys=False, allow_unicode=True)
    text = re.sub(r"^review_time: .*$", "review_time: 7:00", text, flags=re.M)
    path.write_text(text)
    from proactive_env.spec import ScenarioError, load_file

    with pytest.raises(ScenarioError) as info:
        load_file(path)
    (line,) = info.value.lines()
    assert 'review_time: times must be quoted strings: YAML reads the unquoted 7:00 as the number 420; ' \
           'write review_time: "07:00"' in line


def test_validate_prints_every_problem(tmp_path, monitor_data, capsys):
    from proactive_env import cli

    del monitor_data["tasks"][0]["deadline"]
    del monitor_data["tasks"][1]["deadline"]
    path = tmp_path / "monitor.yaml"
    path.write_text(yaml.safe_dump(monitor_data, sort_keys=False, allow_unicode=True))
    assert cli.main(["validate", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len([line for line in err if "required field is missing" in line]) == 2
