"""The command line describes itself and answers every misuse in one line."""

import dataclasses
import json
import subprocess
import sys

import pytest

from proactive_env import cli
from proactive_env.baselines import SCRIPTED


def run(*args):
    return subprocess.run([sys.executable, "-m", "proactive_env.cli", *args], capture_output=True, text=True,
                          timeout=300)


def help_of(capsys, *args) -> str:
    with pytest.raises(SystemExit) as stop:
        cli.main([*args, "--help"])
    assert stop.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_version(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out.startswith("proactivity-gym 0.1.0 (scenario suite ")


def test_eval_help_lists_agents_and_defaults(capsys):
    text = help_of(capsys, "eval")
    assert all(name in text for name in SCRIPTED) and "sb3:PATH" in text and "openai:MODEL" in text
    for default in ("(default: 3)", "(default: results)", "(default: 1024)", "(default: OPENAI_API_KEY)",
                    "(default: 0.0)"):
        assert default in text


def test_run_help_shows_choices(capsys):
    text = help_of(capsys, "run")
    assert "{reviewer,planner,operator}" in text and "(default: oracle)" in text and "Proactivity-Monitor-v0" in text


@pytest.mark.parametrize("algo", sorted(cli.TRAINERS))
def test_train_help_has_every_dataclass_field(capsys, algo):
    pytest.importorskip("stable_baselines3")
    pytest.importorskip({"rllib-ppo": "ray", "bc": "minari"}.get(algo, "stable_baselines3"))
    text = help_of(capsys, "train", "--algo", algo)
    args = cli._trainer(algo).Args
    for field in dataclasses.fields(args):
        flag = f"--{field.name.replace('_', '-')}"
        assert flag in text, flag
    from proactive_env.baselines.training import CommonArgs

    if issubclass(args, CommonArgs):
        assert "--no-progress-bar" in text and "(default: 200000)" in text


def test_train_help_without_algo_lists_the_algorithms_and_common_options(capsys):
    pytest.importorskip("stable_baselines3")
    text = help_of(capsys, "train")
    assert "{" + ",".join(sorted(cli.TRAINERS)) + "}" in text and "--timesteps" in text and "train --algo ALGO --help" in text


def test_dataclass_booleans_are_flags():
    pytest.importorskip("stable_baselines3")
    from proactive_env.baselines import train_ppo
    from proactive_env.baselines.training import parse_args

    assert parse_args(train_ppo.Args, ["--no-progress-bar"]).progress_bar is False
    assert parse_args(train_ppo.Args, ["--progress-bar"]).progress_bar is True
    assert parse_args(train_ppo.Args, ["--gamma", "0.9"]).gamma == 0.9


@pytest.mark.parametrize("argv, words", [
    (["run", "--agent", "bogus"], ["bogus", "oracle"]),
    (["run", "--scenario", "atlantis"], ["atlantis", "Proactivity-Monitor-v0"]),
    (["run", "--scenario", "Proactivity-Suite-v0"], ["several scenarios"]),
    (["run", "--scenario", "Proactivity-Monitor-Planner-v0", "--persona", "operator"], ["contradicts"]),
    (["run", "--persona", "boss"], ["boss"]),
    (["eval", "--seeds", "0"], ["--seeds", "≥ 1"]),
    (["eval", "--agents", "nobody"], ["nobody"]),
    (["eval", "--scenarios", "atlantis"], ["atlantis"]),
    (["eval", "--concurrency", "x"], ["--concurrency", "'x'"]),
    (["train"], ["--algo"]),
    (["train", "--algo", "a3c"], ["a3c"]),
    (["train", "--algo", "ppo", "--timesteps", "many"], ["--timesteps", "many"]),
    (["train", "--algo", "dqn", "--env", "Nope-v0"], ["--env", "Nope"]),
    (["train", "--algo", "dqn", "--env-kwargs", "{bad"], ["--env-kwargs", "JSON object"]),
    (["train", "--algo", "dqn", "--eval-scenarios", "atlantis"], ["atlantis"]),
    (["train", "--algo", "dqn", "--timesteps", "0"], ["--timesteps"]),
    (["rescore", "/nonexistent", "--out", "x.json"], ["no trajectories"]),
    (["show", "/nonexistent.json"], ["nonexistent.json"]),
    (["report", "/nonexistent"], ["/nonexistent"]),
    (["run", "--agent", "sb3:/missing.zip"], ["/missing.zip"]),
    (["validate", "atlantis"], ["atlantis"]),
    (["frobnicate"], ["frobnicate"]),
    (["play"], ["--session", "--tools"]),
])
def test_misuse_is_one_line(argv, words):
    proc = run(*argv)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("proactivity-gym") and "Traceback" not in proc.stderr, proc.stderr
    assert all(w in lines[0] for w in words), lines[0]


@pytest.mark.parametrize("scenario", ["Proactivity-Monitor-Planner-v0", "proactive_env:Proactivity-Monitor-v0"])
def test_run_accepts_gym_ids(scenario, tmp_path):
    saved = tmp_path / "run.json"
    proc = run("run", "--scenario", scenario, "--persona", "planner", "--agent", "noop", "--save", str(saved))
    assert proc.returncode == 0, proc.stderr
    trajectory = json.loads(saved.read_text())
    assert trajectory["scenario"] == "monitor" and trajectory["persona"] == "planner"


def test_eval_accepts_gym_ids(tmp_path):
    proc = run("eval", "--agents", "noop", "--scenarios", "Proactivity-Monitor-Reviewer-v0", "--seeds", "1",
               "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert [(r["scenario"], r["persona"]) for r in rows] == [("monitor", "reviewer")]


def test_validate_accepts_names_and_ids():
    proc = run("validate", "monitor", "Proactivity-Experiments-v0")
    assert proc.returncode == 0 and proc.stdout.count("ok: ") == 2, proc.stderr


def test_play_tools_needs_no_session(capsys):
    assert cli.main(["play", "--tools", "--scenario", "pottery_studio"]) == 0
    names = {t["function"]["name"] for t in json.loads(capsys.readouterr().out)}
    assert {"request_approval", "message_user"} <= names


def test_play_takes_the_episode_from_its_session_and_needs_a_scenario_for_a_new_one(tmp_path, capsys, monkeypatch):
    """Round 24's players ran `play --tools` without --scenario and got Monitor's tools: a new
    session (or --tools without one) needs --scenario; an existing session knows its own scenario,
    persona and seed, and --tools with it lists that scenario's tools."""
    import io

    session = tmp_path / "s.json"
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert cli.main(["play", "--tools"]) == 2
    assert "--scenario" in capsys.readouterr().err
    assert cli.main(["play", "--session", str(session)]) == 2 and not session.exists()
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO('{"tool": "list_matters", "arguments": {}}\n'))
    assert cli.main(["play", "--session", str(session), "--scenario", "meal_planning", "--persona", "planner",
                     "--seed", "3"]) == 0
    capsys.readouterr()
    assert cli.main(["play", "--tools", "--session", str(session)]) == 0
    names = {t["function"]["name"] for t in json.loads(capsys.readouterr().out)}
    assert "place_grocery_order" in names and "place_order" not in names
    monkeypatch.setattr("sys.stdin", io.StringIO('{"tool": "list_records", "arguments": {}}\n'))
    assert cli.main(["play", "--session", str(session)]) == 0
    assert json.loads(session.read_text())["seed"] == 3 and len(json.loads(session.read_text())["calls"]) == 2
    assert cli.main(["play", "--session", str(session), "--seed", "4"]) == 2
    assert "seed=3" in capsys.readouterr().err


def test_play_reads_a_call_spread_over_several_lines_as_one(tmp_path, capsys, monkeypatch):
    """Round 24: a pretty-printed call became six malformed ones. JSON values are read one after
    another whatever their layout; a line that is no JSON is still one call answered by an error."""
    import io

    session = tmp_path / "s.json"
    text = '{\n  "tool": "list_matters",\n  "arguments": {}\n}\n{"tool": "wait", "arguments": {}}\nnot json\n'
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert cli.main(["play", "--session", str(session), "--scenario", "monitor"]) == 0
    calls = json.loads(session.read_text())["calls"]
    assert calls == ['{"tool": "list_matters", "arguments": {}}', '{"tool": "wait", "arguments": {}}', "not json"]
    out = capsys.readouterr().out
    assert out.count("Error: expected one tool call as JSON") == 1
