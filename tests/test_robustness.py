"""Nothing a model, a scenario file or a command line can send crashes an evaluation, corrupts a
result or runs code (issue 11): one test per finding, named after it."""

import codecs
import json
import os
import subprocess
import sys
import threading
import time

import gymnasium as gym
import numpy as np
import pytest
import yaml
from openai_server import FakeOpenAI, Reply, tool_call

import proactive_env.evaluate as evaluate_module
from proactive_env.baselines import make_agent
from proactive_env.cli import main
from proactive_env.evaluate import evaluate, plan
from proactive_env.scoring import load_trajectory, write_json_atomic
from proactive_env.scoring.client import ChatClient, Endpoint, LLMEndpointError
from proactive_env.spec import ScenarioError, load_file
from proactive_env.spec.loader import scenario_dir

WAIT = '{"tool": "wait", "arguments": {}}'


def cli(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "proactive_env.cli", *args], capture_output=True, text=True,
                          timeout=kwargs.get("timeout", 120))


def one_line_error(proc) -> bool:
    return "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def text_env(persona="operator"):
    env = gym.make("Proactivity-Monitor-Text-v0", persona=persona)
    env.reset(seed=0)
    return env


def call(name, **arguments):
    return json.dumps({"tool": name, "arguments": arguments})


# ------------------------------------------------------------------ one odd tool call
@pytest.mark.parametrize("tool, args", [("write_note", {"text": ["a", "b"]}), ("message_user", {"text": {"x": 1}}),
                                        ("request_approval", {"message": 5, "actions": [{"tool": "place_order"}]})])
def test_non_string_text_in_write_note_is_an_error_observation(tool, args):
    env = text_env()
    obs, _, terminated, _, info = env.step(json.dumps({"tool": tool, "arguments": args}))
    assert obs.startswith(f"Error: {tool}.") and "expected a string" in obs
    assert info["invalid_action"] and not terminated and info["faults"] == 0


def test_list_record_id_in_read_record_is_an_error_observation():
    obs, *_, info = text_env().step(call("read_record", record_id=["r1", "r2"]))
    assert obs.startswith("Error: read_record.record_id: expected a string, got array") and info["invalid_action"]


def test_number_in_defer_task_is_an_error_observation():
    obs, *_, info = text_env().step(call("defer_task", what="the monitor", plan="later", until=1440))
    assert obs.startswith("Error: defer_task.until: expected a string, got integer") and info["invalid_action"]


@pytest.mark.parametrize("action", ['{"tool": "write_note", "arguments": {"text": ' + "[" * 5000 + "]" * 5000 + "}}",
                                    '{"tool": "write_note", "arguments": {"text": ' + "7" * 5000 + "}}",
                                    '{"tool": "write_note", "arguments": {"text": 1e999}}',
                                    '{"tool": "write_note", "arguments": {"text": NaN}}',
                                    json.dumps({"name": "write_note", "arguments": "[" * 100_00})])
def test_deeply_nested_or_huge_number_json_is_an_error_observation(action):
    obs, *_, info = text_env().step(action)
    assert obs.startswith("Error: ") and info["invalid_action"]


def test_a_fault_inside_a_tool_is_an_error_observation_and_a_counted_fault(monkeypatch):
    env = text_env()

    def broken(self, args):
        raise KeyError("a bug in the world")

    monkeypatch.setattr(type(env.unwrapped.toolbox), "_tool_list_records", broken)
    obs, _, terminated, _, info = env.step(call("list_records"))
    assert obs.startswith("Error: list_records could not be carried out") and not terminated
    assert info["faults"] == 1
    trajectory = env.unwrapped.trajectory("test")
    assert trajectory["faults"][0]["tool"] == "list_records" and "KeyError" in trajectory["faults"][0]["error"]


def test_one_odd_tool_call_does_not_end_the_evaluation(tmp_path):
    """An LLM that always sends the same type-confused call: the eval finishes, results are written."""
    with FakeOpenAI(lambda request: [tool_call("write_note", {"text": [1, 2]})]) as server:
        proc = cli("eval", "--agents", "openai:test-model", "--scenarios", "monitor", "--personas", "operator",
                   "--seeds", "1", "--base-url", server.base_url, "--retries", "0", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert rows[0]["runs"] == 1


def test_a_run_over_its_fault_budget_is_marked_errored_and_the_evaluation_goes_on(tmp_path, monkeypatch):
    from proactive_env.sim import TextTools

    def broken(self, args):
        raise RuntimeError("a bug in the world")

    monkeypatch.setattr(TextTools, "_tool_list_records", broken)

    class ListsRecords:
        name, face = "lister", "text"

        def reset(self, env, seed):
            self.n = 0

        def act(self, obs, info):
            self.n += 1
            return call("list_records") if self.n <= 3 else WAIT

    keys = plan(["lister"], ["monitor"], ["operator", "planner"], range(1))
    records = evaluate(keys, tmp_path, lambda spec: ListsRecords(), faults=evaluate_module.FaultBudget(max_faults=2))
    assert records == []
    errored = sorted(p.name for p in (tmp_path / "errored" / "lister").glob("*.json"))
    assert errored == ["monitor-operator-s0.json", "monitor-planner-s0.json"]
    assert "3 faults, over the budget of 2" in load_trajectory(tmp_path / "errored" / "lister" / errored[0])["error"]
    kept = evaluate(keys, tmp_path / "kept", lambda spec: ListsRecords(), faults=evaluate_module.FaultBudget(max_faults=3))
    assert len(kept) == 2


# ------------------------------------------------------------------ code in model files
def test_sb3_model_zip_cannot_run_code(tmp_path):
    pytest.importorskip("sb3_contrib")
    import base64
    import pickle
    import zipfile

    from sb3_contrib import MaskablePPO

    env = gym.make("Proactivity-Monitor-v0")
    clean = tmp_path / "clean" / "model.zip"
    MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=64, device="cpu").save(clean)
    (clean.parent / "agent.json").write_text(json.dumps({"algo": "maskable-ppo", "observation": "dict"}))
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    for entry in ("lr_schedule", "an_unknown_entry"):
        evil = tmp_path / entry / "model.zip"
        evil.parent.mkdir()
        (evil.parent / "agent.json").write_text((clean.parent / "agent.json").read_text())
        with zipfile.ZipFile(clean) as zin, zipfile.ZipFile(evil, "w") as zout:
            for name in zin.namelist():
                raw = zin.read(name)
                if name == "data":
                    data = json.loads(raw)
                    data[entry] = {":type:": "x", ":serialized:": base64.b64encode(pickle.dumps(Payload())).decode()}
                    raw = json.dumps(data).encode()
                zout.writestr(name, raw)
        try:
            make_agent(f"sb3:{evil}")
        except ValueError as exc:
            assert entry == "an_unknown_entry" and "--trust-model-files" in str(exc)
        assert not marker.exists()
    # The safely loaded model plays exactly like the model loaded the trusting way.
    safe, trusted = make_agent(f"sb3:{clean}"), make_agent(f"sb3:{clean}", trust_model_files=True)
    obs, info = env.reset(seed=0)
    for _ in range(20):
        a = safe.act(obs, info)
        assert a == trusted.act(obs, info)
        obs, _, terminated, truncated, info = env.step(a)


# ------------------------------------------------------------------ credentials
def test_credentials_in_base_url_are_never_stored_or_printed(tmp_path):
    with FakeOpenAI(lambda request: [tool_call("wait", {})]) as server:
        # A password in the URL is refused (issue 22: it belongs in --api-key-env's variable).
        refused = cli("eval", "--agents", "openai:test-model", "--scenarios", "monitor", "--personas", "operator",
                      "--seeds", "1", "--base-url", server.base_url.replace("http://", "http://jo:hunter2@"),
                      "--retries", "0", "--out", str(tmp_path / "refused"))
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        url = server.base_url
        proc = cli("eval", "--agents", "openai:test-model", "--scenarios", "monitor", "--personas", "operator",
                   "--seeds", "1", "--base-url", url, "--retries", "0", "--out", str(tmp_path / "ok"))
        assert proc.returncode == 0, proc.stderr
        url += "?key=sk-secret99"  # a query the server answers with a 404 that quotes it
        failed = cli("eval", "--agents", "openai:test-model", "--scenarios", "monitor", "--personas", "operator",
                     "--seeds", "1", "--base-url", url, "--retries", "0", "--out", str(tmp_path / "failed"))
    assert failed.returncode == 1 and "failed" in failed.stderr
    written = "".join(p.read_text() for p in (tmp_path / "ok").rglob("*.json"))
    for secret in ("hunter2", "sk-secret99", "jo:"):
        assert secret not in written and secret not in failed.stderr + failed.stdout + proc.stdout + proc.stderr
        assert secret not in refused.stderr + refused.stdout


# ------------------------------------------------------------------ scenario files
def write(tmp_path, name, text, encoding="utf-8"):
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def monitor_text(name):
    return (scenario_dir() / "monitor.yaml").read_text().replace("name: monitor", f"name: {name}", 1)


def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path):
    lines = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(8):
        prev, cur = chr(97 + i), chr(98 + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    path = write(tmp_path, "bomb", "\n".join(lines) + "\n")
    assert path.stat().st_size < 1024
    t = time.perf_counter()
    with pytest.raises(ScenarioError, match="once aliases are expanded") as err:
        load_file(path)
    assert time.perf_counter() - t < 5 and "\n" not in str(err.value) and str(err.value).startswith("bomb.yaml: ")


def test_non_utf8_and_utf16_files_give_one_located_line_or_load(tmp_path):
    utf16 = write(tmp_path, "wide", codecs.BOM_UTF16_LE + monitor_text("wide").encode("utf-16-le"))
    assert load_file(utf16).name == "wide"
    latin = write(tmp_path, "latin", monitor_text("latin").replace("Monitor", "Moniteur é").encode("latin-1", "replace"))
    with pytest.raises(ScenarioError, match=r"latin.yaml: line \d+: expected UTF-8 text"):
        load_file(latin)


def test_deep_nesting_is_one_located_line(tmp_path):
    for name, text in (("flow", "x: " + "[" * 5000 + "]" * 5000 + "\n"),
                       ("block", "".join(" " * i + f"k{i}:\n" for i in range(100)))):
        with pytest.raises(ScenarioError, match=f"{name}.yaml: .*(nesting|deep)") as err:
            load_file(write(tmp_path, name, text))
        assert "\n" not in str(err.value)


def test_a_5000_digit_integer_is_one_located_line(tmp_path):
    text = monitor_text("digits").replace("days: ", "days: " + "9" * 5000 + " #", 1)
    with pytest.raises(ScenarioError, match=r"digits.yaml: days \(line \d+\): expected an integer of at most"):
        load_file(write(tmp_path, "digits", text))


@pytest.mark.parametrize("kind", ["user", "agent"])
def test_a_user_or_agent_trigger_without_at_is_one_located_line(tmp_path, monitor_data, kind):
    monitor_data["name"] = "untimed"
    task = next(t for t in monitor_data["tasks"] if t["trigger"]["type"] in ("user", "agent"))
    task["trigger"] = {"type": kind}
    index = monitor_data["tasks"].index(task)
    with pytest.raises(ScenarioError, match=rf"untimed.yaml: tasks\[{task['id']}\]\.") as err:  # by id
        load_file(write(tmp_path, "untimed", yaml.safe_dump(monitor_data, sort_keys=False)))
    assert "\n" not in str(err.value)
    from proactive_env.spec.models import Scenario
    from proactive_env.spec.validate import semantic_errors

    problems = semantic_errors(Scenario.model_validate(monitor_data))
    assert any(path == f"tasks[{index}].trigger.at" for path, _ in problems)


def test_validate_reports_every_file(tmp_path):
    bad = [write(tmp_path, "bad1", "x: " + "[" * 5000 + "]" * 5000), write(tmp_path, "bad2", b"\xff\xfe\x00bad"),
           write(tmp_path, "bad3", "name: a\nname: b\n")]
    good = write(tmp_path, "good", monitor_text("good"))
    proc = cli("validate", *map(str, bad), str(good))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 3 and all(f"bad{i}.yaml" in proc.stderr for i in (1, 2, 3))
    assert "ok: good.yaml" in proc.stdout


def test_duplicate_yaml_keys_are_refused(tmp_path):
    text = monitor_text("dup").replace("days: ", "days: 3\ndays: ", 1)
    with pytest.raises(ScenarioError, match=r"dup.yaml: days \(line \d+\): duplicate key 'days'"):
        load_file(write(tmp_path, "dup", text))


def test_an_infinite_weight_is_refused(tmp_path):
    text = monitor_text("infinite").replace("weight: ", "weight: .inf #", 1)
    with pytest.raises(ScenarioError, match=r"infinite.yaml: tasks\[0\].weight \(line \d+\): expected a finite number"):
        load_file(write(tmp_path, "infinite", text))


def test_the_c_yaml_loader_is_used():
    from proactive_env.spec import loader

    assert yaml.__with_libyaml__ and loader._Loader is yaml.CSafeLoader


# ------------------------------------------------------------------ silently wrong or lost results
def test_duplicate_agents_are_refused(tmp_path):
    proc = cli("eval", "--agents", "noop,noop", "--scenarios", "monitor", "--seeds", "1", "--out", str(tmp_path))
    assert proc.returncode == 2 and one_line_error(proc) and "noop" in proc.stderr
    assert not (tmp_path / "results.json").exists()


def test_zero_seeds_is_refused_and_keeps_results(tmp_path):
    assert cli("eval", "--agents", "noop", "--scenarios", "monitor", "--seeds", "1", "--out", str(tmp_path)).returncode == 0
    before = (tmp_path / "results.json").read_text()
    proc = cli("eval", "--agents", "noop", "--scenarios", "monitor", "--seeds", "0", "--out", str(tmp_path))
    assert proc.returncode == 2 and one_line_error(proc) and "seeds" in proc.stderr
    assert (tmp_path / "results.json").read_text() == before


def test_a_second_configuration_into_the_same_out_keeps_the_first_rows(tmp_path):
    evaluate(plan(["noop"], ["monitor"], ["operator"], range(1)), tmp_path, make_agent)
    evaluate(plan(["random"], ["monitor"], ["operator"], range(1)), tmp_path, make_agent)
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert sorted(r["agent"] for r in rows) == ["noop", "random"]


def test_resume_refuses_trajectories_of_another_configuration(tmp_path, monkeypatch):
    keys = plan(["noop"], ["monitor"], ["operator"], range(2))
    evaluate(keys[:1], tmp_path, make_agent)
    monkeypatch.setattr(evaluate_module, "SUITE_VERSION", "9.9.9")
    with pytest.raises(evaluate_module.EvalError, match=r"another configuration \(suite_version '.*' → '9.9.9'\); use --add"):
        evaluate(keys, tmp_path, make_agent)
    records = evaluate(keys, tmp_path, make_agent, add=True)
    assert len(records) == 2 and all(r["agent"].startswith("noop@") for r in records)
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert sorted((r["agent"].split("@")[0], r["runs"]) for r in rows) == [("noop", 1), ("noop", 2)]


def test_resume_refuses_another_temperature_or_endpoint(tmp_path):
    with FakeOpenAI(lambda request: [tool_call("wait", {})]) as server:
        def command(*extra):
            return ("eval", "--agents", "openai:test-model", "--scenarios", "monitor", "--personas", "operator",
                    "--seeds", "1", "--base-url", server.base_url, "--retries", "0", "--out", str(tmp_path), *extra)

        assert cli(*command()).returncode == 0
        proc = cli(*command("--temperature", "0.7"))
        assert proc.returncode == 2 and one_line_error(proc) and "temperature 0.0 → 0.7" in proc.stderr
        assert cli(*command("--temperature", "0.7", "--add")).returncode == 0
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert len(rows) == 2


def test_an_unknown_trajectory_format_is_never_deleted(tmp_path):
    keys = plan(["noop"], ["monitor"], ["operator"], range(1))
    evaluate(keys, tmp_path, make_agent)
    path = keys[0].path(tmp_path)
    path.write_text(json.dumps({"format": "proactivity-gym/trajectory-99", "precious": True}))
    evaluate(keys, tmp_path, make_agent)
    kept = [p for p in path.parent.iterdir() if p.name != path.name]
    assert any(json.loads(p.read_text()).get("precious") for p in kept)
    load_trajectory(path)


def test_suite_exclude_of_an_unknown_scenario_is_refused():
    with pytest.raises(ValueError, match="moniter"):
        gym.make("Proactivity-Suite-v0", exclude="moniter")


@pytest.mark.parametrize("kind", ["float", "string", "numpy float", "negative float", "list"])
def test_non_integer_actions_are_invalid_not_coerced(kind):
    env = gym.make("Proactivity-Monitor-Operator-v0")
    env.reset(seed=0)
    valid = int(np.flatnonzero(env.unwrapped.action_masks())[-1])  # an action the mask allows now
    action = {"float": valid + 0.9, "string": str(valid), "numpy float": np.float32(valid), "negative float": -0.5,
              "list": [valid]}[kind]
    *_, info = env.step(action)
    assert info["invalid_action"] and env.unwrapped._actions[-1] == 0


def test_an_action_longer_than_max_action_is_refused():
    from proactive_env.envs.text import MAX_ACTION

    env = text_env()
    obs, *_, info = env.step(call("write_note", text="x" * 5_000_000))
    assert obs.startswith("Error: ") and str(MAX_ACTION) in obs and info["invalid_action"]
    trajectory = env.unwrapped.trajectory("test")
    assert len(json.dumps(trajectory)) < 1_000_000


def test_tool_calls_after_the_episode_ended_are_refused():
    env = text_env().unwrapped
    terminated = False
    while not terminated:
        _, _, terminated, _, _ = env.step(WAIT)
    log = len(env.world.log)
    obs, reward, terminated, _, info = env.step(call("message_user", text="one more thing"))
    assert obs.startswith("Error: the run has ended") and terminated and reward == 0.0 and info["invalid_action"]
    assert len(env.world.log) == log


# ------------------------------------------------------------------ output folder
def test_two_evals_on_one_out_do_not_crash_each_other(tmp_path):
    path = tmp_path / "same.json"
    errors = []

    def writer(i):
        try:
            for j in range(50):
                write_json_atomic(path, {"writer": i, "j": j, "pad": "x" * 20_000})
        except Exception as exc:  # noqa: BLE001 — what the test looks for
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and json.loads(path.read_text())["j"] == 49
    # Two evaluations on one folder: the second is refused while the first holds it.
    first = subprocess.Popen([sys.executable, "-c", "import fcntl,sys,time; f=open(sys.argv[1],'a+'); "
                              "fcntl.flock(f, fcntl.LOCK_EX); f.write('4242'); f.flush(); print('locked', flush=True); "
                              "time.sleep(30)", str(tmp_path / ".lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline().strip() == "locked"
        proc = cli("eval", "--agents", "noop", "--scenarios", "monitor", "--seeds", "1", "--out", str(tmp_path))
    finally:
        first.kill()
        first.wait()
    assert proc.returncode == 2 and one_line_error(proc) and "another evaluation is writing" in proc.stderr


def test_a_symlink_planted_at_the_temporary_name_is_not_followed(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text("untouched")
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json.tmp").symlink_to(outside)
    write_json_atomic(out / "results.json", [1, 2])
    assert outside.read_text() == "untouched" and json.loads((out / "results.json").read_text()) == [1, 2]


@pytest.mark.parametrize("where", ["file", "/dev/null", "/dev/null/x", "/proc/proactivity-out"])
def test_out_on_a_file_or_an_unwritable_place_is_one_line(tmp_path, where):
    out = tmp_path / "a-file" if where == "file" else where
    if where == "file":
        out.write_text("mine")
    proc = cli("eval", "--agents", "noop", "--scenarios", "monitor", "--seeds", "1", "--out", str(out))
    assert proc.returncode != 0 and one_line_error(proc) and "--out" in proc.stderr
    if where == "file":
        assert out.read_text() == "mine"


def test_a_full_disk_gives_one_line_and_keeps_finished_runs(tmp_path, monkeypatch, capsys):
    real, writes = evaluate_module.write_json_atomic, []

    def filling(path, data, **kwargs):
        writes.append(path)
        if len(writes) > 3:
            raise OSError(28, "No space left on device")
        return real(path, data, **kwargs)

    monkeypatch.setattr(evaluate_module, "write_json_atomic", filling)
    argv = ["eval", "--agents", "noop", "--scenarios", "monitor", "--seeds", "3", "--out", str(tmp_path)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "No space left on device" in err and "finished runs are kept" in err and len(err.strip().splitlines()) == 1
    kept = list((tmp_path / "trajectories").rglob("*.json"))
    assert 1 <= len(kept) < 9 and all(load_trajectory(p) for p in kept)
    monkeypatch.setattr(evaluate_module, "write_json_atomic", real)
    assert main(argv) == 0 and len(list((tmp_path / "trajectories").rglob("*.json"))) == 9


def test_run_with_an_unknown_agent_is_one_line():
    proc = cli("run", "--agent", "bogus")
    assert proc.returncode == 2 and one_line_error(proc) and "bogus" in proc.stderr


def test_negative_seeds_are_refused(tmp_path):
    proc = cli("eval", "--agents", "noop", "--scenarios", "monitor", "--seed", "-5", "--seeds", "1", "--out", str(tmp_path))
    assert proc.returncode == 2 and one_line_error(proc) and "seed" in proc.stderr
    proc = cli("run", "--agent", "noop", "--seed", "-1")
    assert proc.returncode == 2 and one_line_error(proc)


def test_check_with_zero_seeds_is_one_line():
    proc = cli("check", str(scenario_dir() / "monitor.yaml"), "--seeds", "0")
    assert proc.returncode == 2 and one_line_error(proc) and "--seeds" in proc.stderr


def test_an_agent_json_without_algo_is_one_line(tmp_path):
    (tmp_path / "model.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    (tmp_path / "agent.json").write_text(json.dumps({"observation": "dict"}))
    proc = cli("eval", "--agents", f"sb3:{tmp_path / 'model.zip'}", "--scenarios", "monitor", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and one_line_error(proc) and "algo" in proc.stderr


def test_rescore_never_opens_a_yaml_path_a_trajectory_names(tmp_path):
    keys = plan(["noop"], ["monitor"], ["operator"], range(1))
    evaluate(keys, tmp_path, make_agent)
    planted = tmp_path / "planted.yaml"
    planted.write_text(monitor_text("planted"))
    trajectory = load_trajectory(keys[0].path(tmp_path))
    trajectory["scenario"] = str(planted)
    keys[0].path(tmp_path).write_text(json.dumps(trajectory))
    opened = []
    real_open = open

    def spy(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    import builtins

    builtins.open, saved = spy, builtins.open
    try:
        status = main(["rescore", str(tmp_path), "--out", str(tmp_path / "rescored.json")])
    finally:
        builtins.open = saved
    assert status == 1 and str(planted) not in opened


# ------------------------------------------------------------------ endpoint
def test_retry_after_is_honoured(openai_server):
    openai_server.push(Reply(status=429, headers={"Retry-After": "1"}), "fine")
    client = ChatClient(Endpoint("test-model", openai_server.base_url, retries=1, backoff=0.0, timeout=5))
    t = time.perf_counter()
    assert client.chat(messages=[{"role": "user", "content": "hi"}]).content == "fine"
    assert time.perf_counter() - t >= 0.95 and client.usage.retries == 1


def test_timeout_bounds_the_whole_request_not_each_read(openai_server):
    openai_server.push(Reply(content="a slow answer", trickle=0.05))
    client = ChatClient(Endpoint("test-model", openai_server.base_url, retries=0, timeout=1.0))
    t = time.perf_counter()
    with pytest.raises(LLMEndpointError, match="timed out"):
        client.chat(messages=[{"role": "user", "content": "hi"}])
    assert time.perf_counter() - t < 3


def test_retries_are_jittered(monkeypatch, openai_server):
    import tenacity

    waits = []
    monkeypatch.setattr(time, "sleep", lambda s: waits.append(s))
    for _ in range(6):
        openai_server.push(Reply(status=503), Reply(status=503), "ok")
        client = ChatClient(Endpoint("test-model", openai_server.base_url, retries=2, backoff=1.0, timeout=5))
        assert client.chat(messages=[{"role": "user", "content": "hi"}]).content == "ok"
    assert tenacity is not None and len(waits) == 12 and len(set(waits)) == 12
    assert all(0 <= w <= 2.0 for w in waits)


# ------------------------------------------------------------------ cost
def test_results_are_aggregated_once_not_after_every_run(tmp_path, monkeypatch):
    calls = []
    real = evaluate_module.aggregate
    monkeypatch.setattr(evaluate_module, "aggregate", lambda *a, **k: calls.append(1) or real(*a, **k))
    evaluate(plan(["noop", "random"], ["monitor"], ["operator", "planner"], range(3)), tmp_path, make_agent)
    assert len(calls) == 1
