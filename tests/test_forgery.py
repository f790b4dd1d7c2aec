"""Results that cannot be forged, nothing destroyed, trust that follows what is loaded (issue 22).

By class: every score in results.json, in ``report`` and in ``rescore`` is recomputed by
replaying the recorded actions from the seed on the recorded scenario text; a file the
evaluator did not write is named and left out; any tampering of any field of a trajectory
either leaves the scores as they were or is refused with one line naming the field; every path
the evaluator reads or writes refuses a planted symlink or a non-regular file; resumes give a
byte-identical results.json.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fuzz_classes import DELETE, field_paths, mutations, with_field
from runs import CASES, runs

from proactive_env.baselines import make_agent
from proactive_env.evaluate import EvalError, evaluate, play, plan
from proactive_env.replay import rescore
from proactive_env.scoring import load_trajectory, write_json_atomic
from proactive_env.scoring.metrics import Weights
from proactive_env.scoring.trajectory import TrajectoryError
from proactive_env.spec import PERSONAS, shipped_names
from proactive_env.spec.loader import scenario_dir

METRICS = ("TC", "TA", "TR_D", "TR_J", "J", "continuation")
KEYS = plan(["oracle", "random"], ["monitor"], ["operator", "planner"], range(2))


def cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "proactive_env.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def one_line_error(proc) -> str:
    """The command failed with one clear line (no traceback)."""
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return proc.stderr


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("eval")
    evaluate(KEYS, out, make_agent)
    return out


@pytest.fixture
def folder(finished, tmp_path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(finished, out)
    return out


def trajectory_path(out: Path, agent: str = "random", persona: str = "operator", seed: int = 0) -> Path:
    return out / "trajectories" / agent / f"monitor-{persona}-s{seed}.json"


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def results(out: Path) -> bytes:
    return (out / "results.json").read_bytes()


# ---------------------------------------------------------------------------------- forged scores
def test_resume_rescores_instead_of_reading_stored_scores(folder):
    before = results(folder)
    edit(trajectory_path(folder), lambda t: t["scores"].update(TC=100.0, TA=1.0, TR_D=1.0, TR_J=5.0, J=1.0))
    (folder / "results.json").unlink()
    evaluate(KEYS, folder, make_agent)
    assert results(folder) == before


def test_report_rescores_instead_of_reading_stored_scores(folder):
    from proactive_env.report.collect import collect

    edit(trajectory_path(folder), lambda t: t["scores"].update(J=1.0, TC=100.0))
    runs_found, skipped = collect([folder])
    run = next(r for r in runs_found if r.agent == "random" and r.persona == "operator" and r.seed == 0)
    live = load_trajectory(trajectory_path(folder))
    assert run.scores["J"] < 1.0 and run.scores["J"] == pytest.approx(rescore(live)["J"]) and not skipped


def test_foreign_file_is_named_and_left_out_of_results_and_report(folder, capsys):
    from proactive_env.report.collect import collect

    (folder / "trajectories" / "gpt-7").mkdir()
    forged = folder / "trajectories" / "gpt-7" / "monitor-operator-s0.json"
    shutil.copy(trajectory_path(folder, "oracle"), forged)
    edit(forged, lambda t: (t.update(agent="gpt-7"), t["config"].update(label="gpt-7")))
    evaluate(KEYS, folder, make_agent)
    rows = json.loads(results(folder))["rows"]
    assert {r["agent"] for r in rows} == {"oracle", "random"}
    assert str(forged) in capsys.readouterr().err
    skipped_names = []
    runs_found, skipped = collect([folder], on_skip=lambda path, why: skipped_names.append((path, why)))
    assert forged in skipped and {r.agent for r in runs_found} == {"oracle", "random"}
    assert "gpt-7" in skipped_names[0][1]


def test_a_log_its_actions_do_not_reproduce_is_refused(folder, tmp_path):
    """random's actions with the oracle's log (the audit: TC 62.1 → 87.8)."""
    oracle = load_trajectory(trajectory_path(folder, "oracle"))
    edit(trajectory_path(folder), lambda t: t.update(log=oracle["log"]))
    proc = cli("rescore", str(folder), "--out", str(tmp_path / "r.json"))
    err = one_line_error(proc)
    assert "refused" in err and "monitor-operator-s0.json" in err and "log[" in err
    rows = json.loads((tmp_path / "r.json").read_text())["rows"]  # the others are still rescored
    assert sum(r["runs"] for r in rows) == len(KEYS) - 1
    trusted = cli("rescore", str(folder), "--out", str(tmp_path / "t.json"), "--trust-log")
    assert trusted.returncode == 0 and "--trust-log" in trusted.stderr and "not replayed" in trusted.stdout


@pytest.mark.parametrize("agent", ["random", "oracle", "text-random", "text-oracle"])
def test_rescore_equals_live_and_any_changed_action_is_refused_on_every_case(agent):
    """Over every scenario × persona: the replay reproduces the live scores exactly, and a run
    with one action changed (where it changes the log) is refused."""
    text = agent.startswith("text")  # the text face: every scenario, one persona each in turn (not cached)
    cases = [(s, PERSONAS[i % len(PERSONAS)]) for i, s in enumerate(shipped_names())] if text else CASES
    for scenario, persona in cases:
        live = play(make_agent(agent), scenario, persona, 0) if text else runs(agent, scenario, persona)[0]
        stored = json.loads(json.dumps(live))
        assert {m: rescore(stored)[m] for m in METRICS} == {m: live["scores"][m] for m in METRICS}, scenario
        changed = copy.deepcopy(stored)
        i = len(changed["actions"]) // 2
        changed["actions"][i] = {"tool": "wait", "arguments": {}} if agent.startswith("text") else 0
        if changed["actions"][i] != stored["actions"][i]:
            with pytest.raises(TrajectoryError, match=r"actions\[|log\["):
                rescore(changed)


# ---------------------------------------------------------------------------------- scenario text
def test_rescore_and_show_use_the_scenario_text_the_run_was_played_on(tmp_path):
    """A run on a file of the shipped name and version but other content is scored on that content."""
    import yaml

    text = (scenario_dir() / "monitor.yaml").read_text()
    data = yaml.safe_load(text)
    for i, task in enumerate(data["tasks"]):  # the same name and version, other task weights
        task["weight"] = 9.0 if i % 2 else 0.5
    changed = tmp_path / "monitor.yaml"
    changed.write_text(yaml.safe_dump(data, sort_keys=False))
    live = json.loads(json.dumps(play(make_agent("random"), str(changed), "operator", 0)))
    assert live["scenario"] == "monitor" and "scenario_content" in live
    assert {m: rescore(live)[m] for m in METRICS} == {m: live["scores"][m] for m in METRICS}
    stripped = {k: v for k, v in live.items() if k != "scenario_content"}
    with pytest.raises(TrajectoryError, match="scenario_sha256: .*shipped monitor.yaml"):
        rescore(stripped)
    swapped = {**live, "scenario_content": text}
    with pytest.raises(TrajectoryError, match="scenario_content: its SHA-256"):
        rescore(swapped)
    from proactive_env.replay import scenario_of

    weights = {t["id"]: t["weight"] for t in data["tasks"]}
    assert all(t.weight == weights[t.id] for t in scenario_of(live).tasks)  # what `show` draws


# ---------------------------------------------------------------------------------- tampering, by class


@pytest.mark.parametrize("agent, entries", [("random", 8), ("text-oracle", 3)])
def test_any_tampered_field_is_refused_or_changes_no_score(agent, entries):
    """Each field mutated by type and by value (and deleted): the replay refuses it with one
    located line, or the scores are exactly the live ones. With --trust-log: refused or scored,
    never a traceback."""
    import random

    live = json.loads(json.dumps(play(make_agent(agent), "monitor", "planner", 1)))
    truth = {m: live["scores"][m] for m in METRICS}
    rng = random.Random(0)
    checked = 0
    for path in field_paths(live, rng, entries):
        node = live
        for part in path:
            node = node[part]
        for value in [*mutations(node), DELETE]:
            tampered = with_field(live, path, value)
            for trust_log in (False, True) if path[0] in ("log", "actions", "variant", "persona") else (False,):
                try:
                    scores = rescore(tampered, weights=Weights(), trust_log=trust_log)  # J as eval and report
                except TrajectoryError as exc:
                    assert "\n" not in str(exc) and str(exc), (path, value)
                    continue
                except Exception as exc:  # noqa: BLE001 - the class under test: nothing else escapes
                    pytest.fail(f"{path} = {value!r} (trust_log={trust_log}): {type(exc).__name__}: {exc}")
                if not trust_log:
                    assert {m: scores[m] for m in METRICS} == truth, (path, value)
            checked += 1
    assert checked > 150


def test_tampered_trajectories_in_rescore_cli_are_one_line_each(folder, tmp_path):
    """The audit's tracebacks (rejudge.py:93, variant.py:54, metrics.py:130,154) from the CLI:
    each tampered file is named on one line, the others are rescored."""
    tampers = [lambda t: t.update(persona="nobody"), lambda t: t.update(variant={"offsets": 1}),
               lambda t: t["log"].insert(3, ["not", "an", "entry"]), lambda t: t["log"][3].pop("type"),
               lambda t: t.update(weights={"zz": 1})]
    paths = [trajectory_path(folder, agent, persona, seed) for agent in ("random", "oracle")
             for persona in ("operator", "planner") for seed in (0, 1)]
    for path, tamper in zip(paths, tampers):
        edit(path, tamper)
    for extra in ((), ("--trust-log",)):
        proc = cli("rescore", str(folder), "--out", str(tmp_path / "r.json"), *extra)
        err = one_line_error(proc)
        refused = [line for line in err.splitlines() if line.startswith("refused ")]
        assert sorted(line.split(":")[0].removeprefix("refused ") for line in refused) == sorted(
            str(p) for p in paths[:len(tampers)]), err
        assert sum(r["runs"] for r in json.loads((tmp_path / "r.json").read_text())["rows"]) == len(KEYS) - len(tampers)


# ---------------------------------------------------------------------------------- manifest
@pytest.mark.parametrize("tamper", [
    lambda m: m.update(configurations=[]), lambda m: m.update(commands={}), lambda m: m.pop("commands"),
    lambda m: m["configurations"].update(random=[1]), lambda m: m["configurations"]["random"].update(scenarios=[]),
    lambda m: m["configurations"]["random"].pop("agent"), lambda m: m["configurations"]["random"].update(scenarios={"monitor": 1}),
])
def test_tampered_manifest_is_one_line_and_changes_nothing(folder, tamper):
    edit(folder / "manifest.json", tamper)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    with pytest.raises(EvalError, match="manifest.json: .*expected"):
        evaluate(KEYS, folder, make_agent)
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and p.name != ".lock"} == \
        {p: b for p, b in before.items() if p.name != ".lock"}


# ---------------------------------------------------------------------------------- symlinks, non-regular files
EVALUATOR_FOLDERS = ("trajectories", "errored", "trajectories/random", "errored/random")
EVALUATOR_PATHS = (*EVALUATOR_FOLDERS, "manifest.json", "results.json", ".lock")


@pytest.mark.parametrize("where", EVALUATOR_PATHS)
def test_planted_symlink_where_the_evaluator_writes_is_refused(folder, tmp_path, where):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("keep me")
    target = folder / where
    if where in EVALUATOR_FOLDERS:
        if target.is_dir():
            shutil.copytree(target, outside / "copy")
            shutil.rmtree(target)
        else:
            (outside / "copy").mkdir()
            target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(outside / "copy")
    else:
        if target.exists():
            target.unlink()
        target.symlink_to(outside / "precious")
    snapshot = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    with pytest.raises(EvalError, match="symlink"):
        evaluate(KEYS, folder, make_agent)
    assert {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()} == snapshot


def test_planted_symlink_trajectory_is_not_followed(folder, tmp_path):
    real = trajectory_path(folder, "oracle")
    planted = trajectory_path(folder)
    planted.unlink()
    planted.symlink_to(real)
    evaluate(KEYS, folder, make_agent)
    assert not planted.is_symlink() and load_trajectory(planted)["agent"] == "random"


def _non_regular(kind: str, path: Path):
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        return sock
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # a /dev/null of our own, in tmp
    return None


KINDS = ("fifo", "directory", "socket", "device")


@pytest.mark.parametrize("kind", KINDS)
def test_atomic_write_refuses_what_is_not_a_regular_file(tmp_path, kind):
    target = tmp_path / "target"
    keep = _non_regular(kind, target)
    mode = os.lstat(target).st_mode
    with pytest.raises(ValueError, match="expected a regular file or a new path"):
        write_json_atomic(target, {"a": 1})
    assert os.lstat(target).st_mode == mode and not [p for p in tmp_path.iterdir() if p != target]
    if keep:
        keep.close()


def _returns_within(fn, seconds: float = 10.0):
    """Call ``fn`` in a thread; fail if it blocks (a FIFO opened for reading waits for a writer)."""
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.update(result=_capture(fn)), daemon=True)
    thread.start()
    thread.join(seconds)
    return thread.is_alive(), outcome.get("result")


def _capture(fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001
        return exc


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("reader", ["trajectory", "scenario", "manifest"])
def test_readers_refuse_non_regular_files_without_hanging(tmp_path, kind, reader):
    from proactive_env.evaluate import Manifest
    from proactive_env.spec import load_file

    name = {"trajectory": "t.json", "scenario": "monitor.yaml", "manifest": "manifest.json"}[reader]
    target = tmp_path / name
    keep = _non_regular(kind, target)
    fn = {"trajectory": lambda: load_trajectory(target), "scenario": lambda: load_file(target),
          "manifest": lambda: Manifest(tmp_path)}[reader]
    hung, result = _returns_within(fn)
    if hung:  # unblock the reader before failing
        os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK))
    assert not hung, f"{reader} blocked on a {kind}"
    assert isinstance(result, ValueError) and "\n" not in str(result), result
    if keep:
        keep.close()


def test_validate_refuses_a_fifo_in_one_line(tmp_path):
    os.mkfifo(tmp_path / "s.yaml")
    proc = cli("validate", str(tmp_path / "s.yaml"), timeout=60)
    assert "FIFO" in one_line_error(proc)


def test_run_save_refuses_a_device(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    dev = tmp_path / "full"
    os.mknod(dev, stat.S_IFCHR | 0o600, os.makedev(1, 7))  # a /dev/full of our own, in tmp
    proc = cli("run", "--agent", "noop", "--save", str(dev))
    assert "character device" in one_line_error(proc) and stat.S_ISCHR(os.lstat(dev).st_mode)


# ---------------------------------------------------------------------------------- trusted model folders
def test_model_folder_digest_is_unambiguous_and_follows_links(tmp_path):
    from baselines.trusted import digest

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "a").write_bytes(b"X")
    (a / "b").write_bytes(b"Y")
    (b / "a").write_bytes(b"X\0b\0Y")
    assert digest(a) != digest(b)
    (a / "sub").mkdir()
    (a / "sub" / "w").write_bytes(b"1")
    (a / "linked").symlink_to(a / "sub")  # the loader reads linked/w: so does the digest
    before = digest(a)
    (a / "sub" / "w").write_bytes(b"2")
    assert digest(a) != before


@pytest.mark.parametrize("planted", ["dir-out", "file-out", "fifo", "loop"])
def test_model_folder_refuses_links_out_and_non_regular_files(tmp_path, planted):
    from baselines.trusted import digest

    model, outside = tmp_path / "model", tmp_path / "outside"
    model.mkdir(), outside.mkdir()
    (model / "module.pt").write_bytes(b"weights")
    (outside / "state.pkl").write_bytes(b"pickle")
    if planted == "dir-out":
        (model / "learner").symlink_to(outside)
    elif planted == "file-out":
        (model / "state.pkl").symlink_to(outside / "state.pkl")
    elif planted == "fifo":
        os.mkfifo(model / "pipe")
    else:
        (model / "again").symlink_to(model)
    hung, result = _returns_within(lambda: digest(model))
    assert not hung and isinstance(result, ValueError), result


# ---------------------------------------------------------------------------------- deterministic resumes
def test_resume_in_any_order_gives_byte_identical_results(tmp_path):
    keys = plan(["random"], ["monitor"], ["operator"], range(4))
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    evaluate(keys, whole, make_agent, concurrency=2)
    evaluate(keys[1:], resumed, make_agent)  # the first run is played last, on resume
    evaluate(keys, resumed, make_agent, concurrency=2)
    assert results(whole) == results(resumed)
