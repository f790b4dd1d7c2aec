"""Fuzzing from outside, in the six areas of issue 11 and two of issue 22 (tampered result files:
every field of a trajectory mutated by type and value, scored by rescore, a resumed eval and
report; planted symlinks and non-regular files at every path the evaluator writes or reads),
and the table of what happened:

    area | tried | clear error | handled | traceback | hang | silently wrong | data loss

* clear error — refused with a one-line message (an exception of a documented kind with a message
  naming what was wrong, or a CLI exit ≠ 0 with one stderr line and no traceback);
* handled — accepted and dealt with correctly (e.g. an error observation, a retry that succeeded,
  a resume that reproduced the clean run);
* traceback — any other exception, or a CLI traceback; hang — over the time limit;
* silently wrong — accepted but wrong (checked where a right answer is known);
* data loss — a finished run or a user's file lost or changed.

    python bench/fuzz_robustness.py            # about 5–10 minutes on 2 cores
"""

from __future__ import annotations

import base64
import codecs
import collections
import copy
import contextlib
import json
import os
import pickle
import random
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from openai_server import FakeOpenAI, Reply, tool_call  # noqa: E402

import proactive_env  # noqa: E402,F401
from proactive_env.spec import ScenarioError, load_file  # noqa: E402
from proactive_env.spec.loader import scenario_dir  # noqa: E402

OUTCOMES = ("clear error", "handled", "traceback", "hang", "silently wrong", "data loss")
table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
notes: list[str] = []
TMP = Path(tempfile.mkdtemp(prefix="fuzz11-"))
PY = sys.executable


def record(area: str, outcome: str, case: str) -> None:
    table[area][outcome] += 1
    if outcome in ("traceback", "hang", "silently wrong", "data loss"):
        notes.append(f"{area}: {outcome}: {case}")


class Timeout(Exception):
    pass


@contextlib.contextmanager
def limit(seconds: int):
    def fire(*_):
        raise Timeout()
    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def one_line(exc: BaseException) -> bool:
    return "\n" not in str(exc) and len(str(exc)) > 10


def cli(*args, timeout=120, env=None):
    try:
        return subprocess.run([PY, "-m", "proactive_env.cli", *map(str, args)], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None


def classify_cli(proc, expect_ok: bool | None = None) -> str:
    if proc is None:
        return "hang"
    if "Traceback" in proc.stderr:
        return "traceback"
    if proc.returncode == 0:
        return "handled" if expect_ok in (None, True) else "silently wrong"
    return "clear error" if len(proc.stderr.strip().splitlines()) == 1 else "traceback"


# ------------------------------------------------------------------ 1. scenario YAML
def scenario_yaml(rng: random.Random) -> None:
    base_text = (scenario_dir() / "monitor.yaml").read_text()
    base = yaml.safe_load(base_text)
    cases: list[tuple[str, bytes]] = []

    def paths(node, prefix=()):
        if isinstance(node, dict):
            for k, v in node.items():
                yield prefix + (k,)
                yield from paths(v, prefix + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield prefix + (i,)
                yield from paths(v, prefix + (i,))

    all_paths = list(paths(base))
    weird = [None, [], {}, "", "x" * 200_000, 10**30, -1, 0, 1.5, float("nan"), float("inf"), True, "D99 99:99",
             [[[[]]]], {"a": {"b": {"c": 1}}}, "é\u202e", "2026-02-30"]
    for i in range(40):  # a random field replaced by a value of another type
        data = copy.deepcopy(base)
        path = rng.choice(all_paths)
        node = data
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = rng.choice(weird)
        cases.append((f"field {'.'.join(map(str, path))}", yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode()))
    raw = base_text.encode()
    for i in range(10):  # byte damage
        b = bytearray(raw)
        for _ in range(rng.randrange(1, 20)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        cases.append(("byte flips", bytes(b)))
    cases += [("truncated", raw[: len(raw) // 3]), ("empty", b""), ("binary", bytes(range(256)) * 10),
              ("utf-16", codecs.BOM_UTF16_LE + base_text.encode("utf-16-le")),
              ("utf-16 without BOM", base_text.encode("utf-16-le")), ("latin-1", base_text.replace("—", "é").encode("latin-1", "replace")),
              ("deep flow", b"x: " + b"[" * 20000 + b"]" * 20000), ("deep block", "".join(" " * i + f"k{i}:\n" for i in range(300)).encode()),
              ("alias bomb", ("a: &a [" + ",".join(['"x"'] * 9) + "]\n" + "".join(
                  f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(9))).encode()),
              ("alias bomb in record fields", base_text.replace("records:", "bomb: &b0 [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
                  f"bomb{i}: &b{i} [" + ",".join([f"*b{i - 1}"] * 10) + "]\n" for i in range(1, 8)) + "records:", 1).encode()),
              ("recursive alias", b"a: &a [*a]\n"), ("5000 digits", base_text.replace("days: ", "days: " + "9" * 5000 + " #", 1).encode()),
              ("duplicate key", base_text.replace("days: ", "days: 2\ndays: ", 1).encode()),
              ("python tag", b"name: !!python/object/apply:os.system ['touch /tmp/fuzz11-pwned']\n"),
              ("weight .inf", base_text.replace("weight: ", "weight: .inf #", 1).encode()),
              ("weight .nan", base_text.replace("weight: ", "weight: .nan #", 1).encode()),
              ("9 MB", b"# " + b"x" * (9 * 2**20)),
              ("NUL byte", raw[:500] + b"\x00" + raw[500:]), ("tabs", raw.replace(b"  ", b"\t", 5)),
              ("bad date", base_text.replace("start_date: ", "start_date: 2026-13-45 #", 1).encode())]
    for label, content in cases:
        path = TMP / "yaml" / "monitor.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(content)
        try:
            with limit(30):
                scenario = load_file(path)
            if label in ("weight .inf", "weight .nan", "duplicate key", "alias bomb in record fields"):
                record("scenario YAML", "silently wrong", label)
                continue
            with limit(60):  # accepted: it must also play
                env = gym.make("Proactivity-Monitor-v0").unwrapped.__class__(scenario=str(path), persona="operator")
                env.reset(seed=0)
                for _ in range(200):
                    *_, term, trunc, _ = env.step(0)
                    if term or trunc:
                        break
            record("scenario YAML", "handled", label)
        except ScenarioError as exc:
            record("scenario YAML", "clear error" if one_line(exc) else "traceback", label)
        except Timeout:
            record("scenario YAML", "hang", label)
        except Exception as exc:  # noqa: BLE001
            record("scenario YAML", "traceback", f"{label}: {type(exc).__name__}: {str(exc)[:100]}")
    for label, target in (("missing file", TMP / "nope.yaml"), ("a directory", TMP)):
        try:
            load_file(target)
            record("scenario YAML", "silently wrong", label)
        except ScenarioError as exc:
            record("scenario YAML", "clear error" if one_line(exc) else "traceback", label)
        except Exception as exc:  # noqa: BLE001
            record("scenario YAML", "traceback", f"{label}: {type(exc).__name__}")
    if Path("/tmp/fuzz11-pwned").exists():
        record("scenario YAML", "silently wrong", "python tag ran code")


# ------------------------------------------------------------------ 2. env API misuse
def env_api(rng: random.Random) -> None:
    from proactive_env import ProactivityEnv
    from proactive_env.envs import ProactivityTextEnv

    def attempt(label, fn, expect=None):
        """expect: a function of the result that says whether it is right (None: any result)."""
        try:
            with limit(30):
                result = fn()
            ok = expect is None or expect(result)
            record("env API misuse", "handled" if ok else "silently wrong", label)
        except Timeout:
            record("env API misuse", "hang", label)
        except (ValueError, TypeError, gym.error.Error) as exc:
            record("env API misuse", "clear error" if one_line(exc) else "traceback", f"{label}: {exc}")
        except Exception as exc:  # noqa: BLE001
            record("env API misuse", "traceback", f"{label}: {type(exc).__name__}: {str(exc)[:100]}")

    def fresh(face="structured", **kw):
        env = (ProactivityTextEnv if face == "text" else ProactivityEnv)(scenario="monitor", persona="operator", **kw)
        env.reset(seed=0)
        return env

    attempt("gym.make step before reset", lambda: gym.make("Proactivity-Monitor-v0").step(0))
    attempt("text step before reset", lambda: gym.make("Proactivity-Monitor-Text-v0").step('{"tool":"wait"}'))
    for seed in (-1, 2**70, 1.5, "7", None, np.int64(3)):
        attempt(f"reset seed={seed!r}", lambda seed=seed: ProactivityEnv("monitor").reset(seed=seed))
    for options in ({"x": 1}, "garbage", {"persona": "nobody"}):
        attempt(f"reset options={options!r}", lambda o=options: ProactivityEnv("monitor").reset(seed=0, options=o))
    for persona in ("nobody", 3, ""):
        attempt(f"persona={persona!r}", lambda p=persona: ProactivityEnv("monitor", persona=p))
    for weights in ({"tc": -1}, {"tc": float("nan")}, {"xx": 1}, {"tc": 0, "ta": 0, "tr": 0}, {"tc": "1"}, [1, 2]):
        attempt(f"weights={weights!r}", lambda w=weights: ProactivityEnv("monitor", weights=w))
    for mode in ("human", "rgb", 5):
        attempt(f"render_mode={mode!r}", lambda m=mode: ProactivityEnv("monitor", render_mode=m))
    for scenario in ("nope", "../../etc/passwd", "", "monitor.yaml", 5):
        attempt(f"scenario={scenario!r}", lambda s=scenario: ProactivityEnv(s))

    def after_done(face):
        env = fresh(face)
        a = 0 if face == "structured" else '{"tool": "wait", "arguments": {}}'
        for _ in range(5000):
            *_, term, trunc, info = env.step(a)
            if term or trunc:
                break
        obs, reward, term, trunc, info = env.step(a if face == "structured" else '{"tool": "message_user", "arguments": {"text": "hi"}}')
        return term and reward == 0.0
    attempt("structured step after the end", lambda: after_done("structured"))
    attempt("text tool call after the end", lambda: after_done("text"))

    def close_twice():
        env = fresh()
        env.close()
        env.close()
        return True
    attempt("close twice", close_twice)
    for action in (1.9, "1", -0.5, None, np.array([1, 2]), np.float64(2), 10**9, -1, [0], {"a": 1}, b"\x00", np.int8(3)):
        def one(action=action):
            env = fresh()
            *_, info = env.step(action)
            return info["invalid_action"] or isinstance(action, (int, np.integer))
        attempt(f"structured action {action!r}", one)
    tool_calls = [{"tool": "write_note", "arguments": {"text": [1]}}, {"tool": "read_record", "arguments": {"record_id": {}}},
                  {"tool": "defer_task", "arguments": {"what": 1, "plan": 2, "until": 3}},
                  {"tool": "request_approval", "arguments": {"message": "m", "actions": "all"}},
                  {"tool": "request_approval", "arguments": {"message": "m", "actions": [1, None, {"tool": []}]}},
                  {"tool": "allocate_resource", "arguments": {"what": "x", "resource": ["gpu"], "start": "D1 01:00"}},
                  {"tool": "schedule_followup", "arguments": {"at": "D1 25:99"}}, {"tool": "schedule_followup", "arguments": {"at": 5}},
                  '{"tool": "write_note", "arguments": {"text": ' + "[" * 50000 + "]" * 50000 + "}}",
                  '{"tool": "write_note", "arguments": {"text": 1' + "0" * 6000 + "}}",
                  json.dumps({"tool": "write_note", "arguments": {"text": "x" * 5_000_000}}),
                  {"name": "read_record", "arguments": "{\"record_id\": "}, 42, None, ["wait"], b"\xff\xfe",
                  {"tool": "place_order", "arguments": {"item": {"nested": [1, 2, {"x": None}]}, "quantity": "many"}}]
    for call in tool_calls:
        def one(call=call):
            env = fresh("text")
            obs, *_, info = env.step(call)
            return obs.startswith("Error: ") or not info["invalid_action"]
        attempt(f"text call {str(call)[:60]!r}", one)


# ------------------------------------------------------------------ 3. CLI misuse
def cli_misuse(rng: random.Random) -> None:
    out = TMP / "cli"
    afile = TMP / "a-file"
    afile.write_text("mine")
    bad_agent_dir = TMP / "bad-agent"
    bad_agent_dir.mkdir()
    (bad_agent_dir / "model.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    (bad_agent_dir / "agent.json").write_text("{}")
    cases = [
        (("eval", "--agents", "noop,noop", "--scenarios", "monitor", "--out", out), False),
        (("eval", "--agents", "", "--out", out), False), (("eval", "--agents", "bogus", "--out", out), False),
        (("eval", "--seeds", "0", "--agents", "noop", "--out", out), False),
        (("eval", "--seeds", "-3", "--agents", "noop", "--out", out), False),
        (("eval", "--seed", "-1", "--agents", "noop", "--out", out), False),
        (("eval", "--seeds", "x", "--out", out), False), (("eval", "--scenarios", "moniter", "--out", out), False),
        (("eval", "--personas", "boss", "--out", out), False), (("eval", "--concurrency", "0", "--out", out), False),
        (("eval", "--agents", "noop", "--scenarios", "monitor", "--seeds", "1", "--out", afile), False),
        (("eval", "--agents", "noop", "--scenarios", "monitor", "--seeds", "1", "--out", "/dev/null"), False),
        (("eval", "--agents", "noop", "--scenarios", "monitor", "--seeds", "1", "--out", "/proc/fuzz11"), False),
        (("eval", "--agents", "noop", "--scenarios", "monitor", "--seeds", "1", "--out", "/dev/null/x"), False),
        (("eval", "--agents", f"sb3:{bad_agent_dir / 'model.zip'}", "--scenarios", "monitor", "--out", out), False),
        (("eval", "--agents", "sb3:/nonexistent.zip", "--out", out), False),
        (("eval", "--agents", "openai:", "--out", out), False),
        (("eval", "--agents", "openai:m", "--timeout", "-1", "--out", out), False),
        (("eval", "--agents", "openai:m", "--retries", "-1", "--out", out), False),
        (("eval", "--agents", "openai:m", "--base-url", "not a url", "--retries", "0", "--timeout", "2", "--scenarios",
          "monitor", "--personas", "operator", "--seeds", "1", "--out", TMP / "cli-url"), False),
        (("eval", "--max-faults", "-1", "--out", out), False), (("eval", "--on-fault", "ignore", "--out", out), False),
        (("run", "--agent", "bogus"), False), (("run", "--seed", "-1"), False), (("run", "--scenario", "nope"), False),
        (("run", "--scenario", "/etc/passwd"), False), (("run", "--persona", "boss"), False),
        (("check", scenario_dir() / "monitor.yaml", "--seeds", "0"), False), (("check", "/nonexistent.yaml"), False),
        (("validate",), False), (("validate", "/nonexistent.yaml", scenario_dir() / "monitor.yaml"), False),
        (("rescore", TMP / "empty-dir", "--out", TMP / "r.json"), False),
        (("rescore", out, "--judge", "openai:x", "--out", TMP / "r.json"), False),
        (("train", "--algo", "nope"), False), (("bogus-command",), False), ((), False),
        (("eval", "--agents", "noop", "--scenarios", "monitor", "--seeds", "1", "--out", TMP / "cli-ok"), True),
        (("validate", scenario_dir() / "monitor.yaml"), True), (("schema",), True),
    ]
    (TMP / "empty-dir").mkdir(exist_ok=True)
    for args, expect_ok in cases:
        proc = cli(*args, timeout=180)
        outcome = classify_cli(proc, expect_ok)
        if not expect_ok and outcome == "handled":
            outcome = "silently wrong"
        if proc is not None and proc.returncode == 2 and proc.stderr.startswith("usage:"):
            outcome = "clear error"  # argparse's own usage + one error line
        record("CLI misuse", outcome, " ".join(map(str, args))[:120] + (f" → {proc.stderr.strip()[-200:]}" if proc else ""))
    record("CLI misuse", "data loss" if afile.read_text() != "mine" else "handled", "--out on a file keeps the file")


# ------------------------------------------------------------------ 4. kills and a full disk during eval
def snapshot(out: Path) -> dict:
    files = {p.relative_to(out).as_posix(): json.loads(p.read_text()) for p in (out / "trajectories").rglob("*.json")}
    for t in files.values():
        t.pop("config", None)
    rows = json.loads((out / "results.json").read_text())["rows"]
    return {"files": files, "rows": rows}


def kills(rng: random.Random) -> None:
    args = ["eval", "--agents", "oracle,random,noop", "--scenarios", "monitor,medications", "--seeds", "2"]
    clean = TMP / "clean"
    cli(*args, "--out", clean, timeout=600)
    reference = snapshot(clean)
    for i, sig in enumerate([signal.SIGKILL] * 6 + [signal.SIGTERM] * 4 + [signal.SIGINT] * 4):
        out = TMP / f"killed{i}"
        proc = subprocess.Popen([PY, "-m", "proactive_env.cli", *args, "--out", str(out)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(1.0, 6.0))
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        again = cli(*args, "--out", out, timeout=600)
        case = f"{signal.Signals(sig).name} after a random delay"
        if again is None:
            record("kills and full disk", "hang", case)
        elif again.returncode != 0 or "Traceback" in err:
            record("kills and full disk", "traceback", case + f": {err[-200:]} {again.stderr[-200:]}")
        else:
            record("kills and full disk", "handled" if snapshot(out) == reference else "data loss", case)
    # A full disk at a random write, then the same command with room again.
    code = ("import errno, random, sys\nimport proactive_env.evaluate as e\nfrom proactive_env.cli import main\n"
            "real, n, at = e.write_json_atomic, [0], int(sys.argv[1])\n"
            "def full(path, data, **kw):\n    n[0] += 1\n    if n[0] >= at:\n        raise OSError(errno.ENOSPC, 'No space left on device')\n"
            "    return real(path, data, **kw)\ne.write_json_atomic = full\nsys.exit(main(sys.argv[2:]))\n")
    for i in range(4):
        out = TMP / f"full{i}"
        proc = subprocess.run([PY, "-c", code, str(rng.randrange(2, 20)), *args, "--out", str(out)], capture_output=True,
                              text=True, timeout=600)
        again = cli(*args, "--out", out, timeout=600)
        one = len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr and proc.returncode != 0
        if not one:
            record("kills and full disk", "traceback", f"full disk: {proc.stderr[-300:]}")
        else:
            record("kills and full disk", "handled" if again.returncode == 0 and snapshot(out) == reference else "data loss",
                   "full disk, then resumed")


# ------------------------------------------------------------------ 5. a misbehaving endpoint
def endpoint(rng: random.Random) -> None:
    from proactive_env.baselines import make_agent
    from proactive_env.evaluate import evaluate, plan
    from proactive_env.scoring.client import LLMEndpointError

    behaviours = {
        "500 always": lambda r: Reply(status=500), "503 then fine": None, "429 Retry-After 1 then fine": None,
        "429 Retry-After 3600": lambda r: Reply(status=429, headers={"Retry-After": "3600"}),
        "429 Retry-After garbage then fine": None, "401": lambda r: Reply(status=401), "404 model": lambda r: Reply(status=404),
        "malformed body": lambda r: Reply(raw="{not json"), "empty body": lambda r: Reply(raw=""),
        "no choices": lambda r: Reply(raw=json.dumps({"id": "x", "object": "chat.completion", "choices": []})),
        "null message": lambda r: Reply(raw=json.dumps({"choices": [{"index": 0, "message": None, "finish_reason": "stop"}]})),
        "content only": lambda r: "I will wait.", "empty content": lambda r: Reply(content=""),
        "garbage tool args": lambda r: [tool_call("write_note", "{not json")],
        "type-confused args": lambda r: [tool_call("read_record", {"record_id": [1, {"x": None}]})],
        "unknown tool": lambda r: [tool_call("rm_rf", {"path": "/"})],
        "huge args": lambda r: [tool_call("write_note", {"text": "x" * 3_000_000})],
        "deep args": lambda r: [tool_call("write_note", "[" * 100000)],
        "many tool calls": lambda r: [tool_call("wait", {})] * 50,
        "huge content": lambda r: Reply(content="y" * 2_000_000),
        "slow beyond timeout": lambda r: Reply(delay=5),
        "trickle": lambda r: Reply(content="slow", trickle=0.2),
        "nan in usage": lambda r: Reply(raw=json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "x"},
                                                                      "finish_reason": "stop"}], "usage": {"prompt_tokens": "NaN"}})),
        "html error page": lambda r: Reply(status=502, raw="<html>bad gateway</html>"),
    }
    for name, responder in behaviours.items():
        with FakeOpenAI(responder) as server:
            if name == "503 then fine":
                server.push(Reply(status=503))
                server.responder = lambda r: [tool_call("wait", {})]
            elif name == "429 Retry-After 1 then fine":
                server.push(Reply(status=429, headers={"Retry-After": "1"}))
                server.responder = lambda r: [tool_call("wait", {})]
            elif name == "429 Retry-After garbage then fine":
                server.push(Reply(status=429, headers={"Retry-After": "soon"}))
                server.responder = lambda r: [tool_call("wait", {})]
            options = {"base_url": server.base_url, "retries": 1, "timeout": 2.0, "backoff": 0.1}
            out = TMP / "endpoint" / name.replace(" ", "_")
            try:
                with limit(300):
                    records = evaluate(plan(["openai:test-model"], ["monitor"], ["operator"], range(1)), out,
                                       lambda spec: make_agent(spec, **options))
                ok = len(records) == 1 and (out / "results.json").exists()
                record("misbehaving endpoint", "handled" if ok else "silently wrong", name)
            except LLMEndpointError as exc:
                record("misbehaving endpoint", "clear error" if one_line(exc) else "traceback", name)
            except Timeout:
                record("misbehaving endpoint", "hang", name)
            except Exception as exc:  # noqa: BLE001
                record("misbehaving endpoint", "traceback", f"{name}: {type(exc).__name__}: {str(exc)[:150]}")


# ------------------------------------------------------------------ 6. security probes
def security(rng: random.Random) -> None:
    from proactive_env.baselines import make_agent
    from proactive_env.evaluate import evaluate, plan
    from proactive_env.scoring import write_json_atomic

    marker = TMP / "pwned"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    def probe(name, fn):
        marker.unlink(missing_ok=True)
        try:
            with limit(120):
                safe = fn()
            outcome = "handled" if safe and not marker.exists() else "silently wrong"
        except (ValueError, ScenarioError) as exc:
            outcome = "clear error" if one_line(exc) and not marker.exists() else "silently wrong"
        except Exception as exc:  # noqa: BLE001
            outcome = "traceback"
            name += f": {type(exc).__name__}: {str(exc)[:100]}"
        record("security probes", outcome, name)

    try:
        from sb3_contrib import MaskablePPO

        clean = TMP / "sb3" / "clean" / "model.zip"
        MaskablePPO("MultiInputPolicy", gym.make("Proactivity-Monitor-v0"), n_steps=64, batch_size=64, device="cpu").save(clean)
        (clean.parent / "agent.json").write_text(json.dumps({"algo": "maskable-ppo", "observation": "dict"}))

        def evil(entry: str | None, member: str = "data") -> Path:
            path = TMP / "sb3" / f"{entry}-{member}" / "model.zip"
            path.parent.mkdir(parents=True, exist_ok=True)
            (path.parent / "agent.json").write_text((clean.parent / "agent.json").read_text())
            with zipfile.ZipFile(clean) as zin, zipfile.ZipFile(path, "w") as zout:
                for item in zin.namelist():
                    raw = zin.read(item)
                    if item == member == "data":
                        data = json.loads(raw)
                        data[entry] = {":type:": "x", ":serialized:": base64.b64encode(pickle.dumps(Payload())).decode()}
                        raw = json.dumps(data).encode()
                    elif item == member:
                        raw = pickle.dumps(Payload())
                    zout.writestr(item, raw)
            return path

        for entry in ("lr_schedule", "policy_class", "observation_space", "an_unknown_entry"):
            probe(f"sb3 pickle in data[{entry}]", lambda e=entry: make_agent(f"sb3:{evil(e)}") is not None)
        probe("sb3 pickle as policy.pth", lambda: make_agent(f"sb3:{evil(None, 'policy.pth')}") is not None)
    except ImportError:
        pass

    with FakeOpenAI(lambda r: Reply(status=401, raw=json.dumps({"error": {"message": f"bad key {r.get('model')} "
                                                                           "sk-live-SECRET1234 for jo:hunter2"}}))) as server:
        os.environ["FUZZ11_KEY"] = "sk-live-SECRET1234"
        for label, url in (("userinfo", server.base_url.replace("http://", "http://jo:hunter2@")),
                           ("query key", server.base_url + "?key=sk-live-SECRET1234")):
            out = TMP / "creds" / label.replace(" ", "_")
            proc = cli("eval", "--agents", "openai:test-model", "--scenarios", "monitor", "--personas", "operator",
                       "--seeds", "1", "--base-url", url, "--api-key-env", "FUZZ11_KEY", "--retries", "0", "--out", out,
                       env={**os.environ})
            stored = "".join(p.read_text() for p in out.rglob("*.json")) if out.exists() else ""
            leaked = any(s in proc.stderr + proc.stdout + stored for s in ("hunter2", "SECRET1234"))
            record("security probes", "silently wrong" if leaked else ("clear error" if proc.returncode else "handled"),
                   f"credentials in --base-url ({label})")

    def planted_symlink():
        outside = TMP / "outside.txt"
        outside.write_text("untouched")
        folder = TMP / "planted"
        folder.mkdir(exist_ok=True)
        for name in ("results.json.tmp", ".results.json.tmp"):
            (folder / name).unlink(missing_ok=True)
            (folder / name).symlink_to(outside)
        write_json_atomic(folder / "results.json", [1])
        return outside.read_text() == "untouched"
    probe("symlink planted at the temporary name", planted_symlink)

    def rescore_path():
        out = TMP / "rescore-probe"
        keys = plan(["noop"], ["monitor"], ["operator"], range(1))
        evaluate(keys, out, make_agent)
        t = json.loads(keys[0].path(out).read_text())
        t["scenario"] = "/etc/passwd"
        keys[0].path(out).write_text(json.dumps(t))
        proc = cli("rescore", out, "--out", TMP / "rescored.json")
        return proc.returncode != 0 and "Traceback" not in proc.stderr and "passwd" not in proc.stdout
    probe("rescore of a trajectory naming a file", rescore_path)

    def traversal():
        out = TMP / "traversal"
        evaluate(plan(["noop"], ["monitor"], ["operator"], range(1)), out, lambda spec: make_agent("noop"))
        return all(out in p.resolve().parents for p in out.rglob("*"))
    probe("agent names cannot escape --out", traversal)

    def yaml_tag():
        bad = TMP / "tag.yaml"
        bad.write_text(f"name: !!python/object/apply:os.system ['touch {marker}']\n")
        load_file(bad)
        return False
    probe("YAML python tag", yaml_tag)


# ------------------------------------------------------------------ 7. tampered result files (issue 22)
def _mutations(value) -> list:
    out = [None, True, -1, 1e308, "x", [], {"a": 1}]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        out += [value + 1, -value]
    elif isinstance(value, str):
        out += [value + "x", ""]
    return [m for m in out if m != value or type(m) is not type(value)]


def _field_paths(t: dict, rng: random.Random) -> list[tuple]:
    """Every top-level field, and every field of sampled log entries, actions, variant, weights."""
    paths = [(k,) for k in t] + [("variant", k) for k in t["variant"]] + [("weights", k) for k in t["weights"]]
    for i in rng.sample(range(len(t["log"])), min(10, len(t["log"]))):
        paths += [("log", i)] + [("log", i, k) for k in t["log"][i]]
    for i in rng.sample(range(len(t["actions"])), min(5, len(t["actions"]))):
        paths.append(("actions", i))
    return paths


def _tampered(t: dict, path: tuple, value) -> dict:
    t = copy.deepcopy(t)
    node = t
    for part in path[:-1]:
        node = node[part]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return t


_DELETE = object()
_HEADLINE = ("TC", "TA", "TR_D", "TR_J", "J")


def tampered_results(rng: random.Random) -> None:
    """Every field of a trajectory mutated by type and value (and deleted), scored by ``rescore``
    (replayed, and with the log trusted), by a resumed ``eval`` and by ``report``'s collection:
    refused in one line or scored exactly as the untampered run; never a traceback, never
    another score."""
    from proactive_env.baselines import make_agent
    from proactive_env.evaluate import evaluate, plan
    from proactive_env.report.collect import collect
    from proactive_env.scoring import rescore
    from proactive_env.scoring.metrics import Weights

    area = "tampered results"
    for agent, face in (("random", "structured"), ("text-oracle", "text")):
        out = TMP / f"tamper-{agent}"
        keys = plan([agent], ["monitor"], ["planner"], range(2))
        evaluate(keys, out, make_agent)
        path = keys[0].path(out)
        live = json.loads(path.read_text())
        truth = {m: live["scores"][m] for m in _HEADLINE}
        results = (out / "results.json").read_bytes()
        for field in _field_paths(live, rng):
            node = live
            for part in field:
                node = node[part]
            for value in [*_mutations(node), _DELETE]:
                tampered = _tampered(live, field, value)
                case = f"{face}: {'.'.join(map(str, field))} = {str(value)[:30]!r}"
                for trust_log in (False, True):
                    try:
                        with limit(60):
                            scores = rescore(tampered, weights=Weights(), trust_log=trust_log)
                        same = {m: scores[m] for m in _HEADLINE} == truth
                        record(area, "handled" if same or trust_log else "silently wrong", f"rescore {case}")
                    except Timeout:
                        record(area, "hang", f"rescore {case}")
                    except ValueError as exc:
                        record(area, "clear error" if one_line(exc) else "traceback", f"rescore {case}")
                    except Exception as exc:  # noqa: BLE001
                        record(area, "traceback", f"rescore {case} (trust_log={trust_log}): {type(exc).__name__}")
        for field in rng.sample(_field_paths(live, rng), 12):  # the folder readers: eval's resume and report
            value = rng.choice([*_mutations(live[field[0]] if len(field) == 1 else 0), _DELETE])
            path.write_text(json.dumps(_tampered(live, field, value)))
            case = f"{face}: {'.'.join(map(str, field))} = {str(value)[:30]!r}"
            try:
                with limit(120):
                    (out / "results.json").unlink()
                    evaluate(keys, out, make_agent)
                    runs, _ = collect([out], on_skip=lambda p, why: None)
                ok = (out / "results.json").read_bytes() == results and all(
                    {m: r.scores[m] for m in _HEADLINE} == truth for r in runs if r.seed == 0)
                record(area, "handled" if ok else "silently wrong", f"eval resume + report, {case}")
            except Timeout:
                record(area, "hang", f"eval resume + report, {case}")
            except Exception as exc:  # noqa: BLE001
                record(area, "traceback", f"eval resume + report, {case}: {type(exc).__name__}: {str(exc)[:80]}")
            path.write_text(json.dumps(live))


# ------------------------------------------------------------------ 8. planted symlinks and non-regular files
def _plant(kind: str, path: Path, outside: Path):
    """Put a ``kind`` at ``path``: a symlink out of the folder, a FIFO, a directory or a socket."""
    import shutil
    import socket

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "symlink":
        path.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:  # bound at a short path (AF_UNIX paths are short), then moved into place
        short = Path(tempfile.mkdtemp(prefix="s", dir="/tmp")) / "s"
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(short))
        os.replace(short, path)
        return sock
    return None


def planted_files(rng: random.Random) -> None:
    """At every path the evaluator writes or reads, a symlink out of the folder, a FIFO, a
    directory and a socket: the evaluation refuses in one line or goes on, and nothing outside
    the folder changes; the readers (validate, rescore, show) refuse non-regular files."""
    import shutil

    from proactive_env.baselines import make_agent
    from proactive_env.evaluate import evaluate, plan

    area = "planted files"
    keys = plan(["noop"], ["monitor"], ["operator"], range(2))
    clean = TMP / "planted-clean"
    evaluate(keys, clean, make_agent)
    where = ("trajectories", "errored", "trajectories/noop", "errored/noop", "manifest.json", "results.json", ".lock",
             f"trajectories/noop/{keys[0].file}")
    for place in where:
        for kind in ("symlink", "fifo", "directory", "socket"):
            out, outside = TMP / f"planted-{place.replace('/', '_')}-{kind}", TMP / f"outside-{place.replace('/', '_')}-{kind}"
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(clean, out)
            outside.mkdir(exist_ok=True)
            (outside / "precious").write_text("keep")
            target = outside if place.count("/") < 2 and "." not in place else outside / "precious"
            sock = _plant(kind, out / place, target)
            case = f"{kind} at {place}"
            try:
                with limit(60):
                    evaluate(keys, out, make_agent)
                outcome = "handled"
            except Timeout:
                outcome = "hang"
            except ValueError as exc:
                outcome = "clear error" if one_line(exc) else "traceback"
            except Exception as exc:  # noqa: BLE001
                outcome, case = "traceback", f"{case}: {type(exc).__name__}: {str(exc)[:80]}"
            if (outside / "precious").read_text() != "keep" or len(list(outside.iterdir())) != 1:
                outcome = "data loss"
            record(area, outcome, case)
            if sock:
                sock.close()
    for kind in ("fifo", "directory", "socket"):
        for command in (("validate", "{p}.yaml"), ("rescore", "{p}", "--out", str(TMP / "r.json")), ("show", "{p}.json")):
            path = TMP / f"reader-{command[0]}-{kind}"
            target = Path(command[1].format(p=path))
            sock = _plant(kind, target if command[0] != "rescore" else target / "trajectories" / "x" / "t.json", TMP)
            record(area, classify_cli(cli(*[c.format(p=path) for c in command], timeout=60), expect_ok=False),
                   f"{command[0]} on a {kind}")
            if sock:
                sock.close()


def main() -> None:
    rng = random.Random(11)
    for area in (scenario_yaml, env_api, cli_misuse, endpoint, security, kills, tampered_results, planted_files):
        t = time.perf_counter()
        area(rng)
        print(f"{area.__name__}: {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    print(f"| area | tried | {' | '.join(OUTCOMES)} |")
    print("|---|" + "---|" * (len(OUTCOMES) + 1))
    total = collections.Counter()
    for area, counts in table.items():
        total.update(counts)
        print(f"| {area} | {sum(counts.values())} | " + " | ".join(str(counts[o]) for o in OUTCOMES) + " |")
    print(f"| all | {sum(total.values())} | " + " | ".join(str(total[o]) for o in OUTCOMES) + " |")
    for note in notes:
        print("-", note)


if __name__ == "__main__":
    main()
