"""Fuzz cases by class, not by case (issue 22): each generator enumerates its class from the code
itself — every CLI command's options from the parser, every text-face tool from the scenarios'
schemas, every MCP server tool from the server — so a new option, tool or printing path is fuzzed
without anyone listing it. Used by ``tests/test_fuzz.py`` (a sample per class, fast) and by
``bench/fuzz_robustness.py`` (all of it, with the table).

Each case is run and judged by ``judge_cli`` / ``judge_text_call`` / ``judge_mcp`` /
``judge_secret`` into one of OUTCOMES.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import copy
import io
import json
import signal
import string
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

OUTCOMES = ("clear error", "handled", "traceback", "hang", "silently wrong", "data loss", "unsafe")
CONTROL = ("\x1b", "\x9b", "\r", "\x07", "\u202e")

# Malformed option values, by the option's type. Non-UTF-8 bytes reach Python's argv as surrogates.
NUMERIC_BAD = ("nan", "NaN", "inf", "-inf", "1e999", "-1", "-0.5", "99999999999999999999", "", " ", "0x10", "1,5")
TEXT_BAD = ("", " ", "../../../etc/passwd", "/dev/null", "/dev/zero", "/proc/self/mem", "\x1b[2J\x1b]0;owned\x07",
            "a\nb", b"\xff\xfe".decode("utf-8", "surrogateescape"), "x" * 5000, "=cmd|' /C calc'!A0", "-", "~")
NON_FINITE = {"nan", "NaN", "inf", "-inf", "1e999"}
# Cheap runs of each command, into which one option value is put (None: the command is not run).
BASE = {
    "validate": ["validate", "monitor"], "check": None, "schema": ["schema"],
    "run": ["run", "--agent", "noop"],
    "eval": ["eval", "--agents", "noop", "--scenarios", "monitor", "--personas", "operator", "--seeds", "1"],
    "rescore": None, "train": None, "dataset": None, "report": None, "show": None, "mcp": None,
    "play": ["play", "--session", "session.json"],
}
# Options whose value is only checked when the command is run for real (they start servers,
# training, or read folders): fuzzed only with the numeric class, which must fail at parsing.
PARSE_ONLY = {"check", "rescore", "train", "dataset", "report", "show", "mcp"}


@dataclass(frozen=True)
class CliCase:
    command: str
    option: str  # "--flag", or "" for the first positional
    value: str
    numeric: bool

    def argv(self) -> list[str]:
        base = BASE.get(self.command) or [self.command]
        if self.option:
            return [*base, f"{self.option}={self.value}"] if self.value.startswith("-") else [*base, self.option,
                                                                                              self.value]
        return [self.command, self.value, *base[2:]]

    def __str__(self) -> str:
        return f"{self.command} {self.option} {self.value[:30]!r}"


def _numeric(action: argparse.Action) -> bool:
    return getattr(action.type, "__name__", "") in ("int", "float") or action.type in (int, float)


def cli_cases(parser: argparse.ArgumentParser) -> Iterator[CliCase]:
    """Every option of every command that takes a value, with each malformed value of its type."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, p in sub.choices.items():
        for action in p._actions:
            if action.nargs == 0 or action.help == argparse.SUPPRESS or action.dest in ("help", "algo"):
                continue
            numeric = _numeric(action)
            option = action.option_strings[-1] if action.option_strings else ""
            if not option and command not in ("validate", "show", "check"):
                continue
            if command in PARSE_ONLY and not numeric:
                continue
            for value in NUMERIC_BAD if numeric else TEXT_BAD:
                yield CliCase(command, option, value, numeric)


@contextlib.contextmanager
def time_limit(seconds: int):
    def fire(*_):
        raise TimeoutError(f"over {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def judge_cli(case: CliCase, cwd: Path, seconds: int = 120) -> tuple[str, str]:
    """Run ``case`` in this process (cwd: ``cwd``, stdin empty) and judge it: the outcome, and
    what was seen."""
    import os
    import sys

    from proactive_env import cli

    if case.command in PARSE_ONLY:  # run for real it would serve, train or read folders: parse only
        return _judge_parse(case)
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.TextIOWrapper(io.BytesIO(), encoding="utf-8",
                                                                                   errors="backslashreplace")
    here, stdin = Path.cwd(), sys.stdin
    code: object = None
    try:
        os.chdir(cwd)
        sys.stdin = io.StringIO("")
        with time_limit(seconds), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(case.argv())
            except SystemExit as exit_:
                code = exit_.code
    except TimeoutError:
        return "hang", str(case)
    except BaseException as exc:  # noqa: BLE001 - whatever escapes main is a traceback
        return "traceback", f"{case}: {type(exc).__name__}: {str(exc)[:120]}"
    finally:
        os.chdir(here)
        sys.stdin = stdin
    out.seek(0), err.seek(0)
    printed, errors = out.buffer.getvalue().decode("utf-8", "replace"), err.buffer.getvalue().decode("utf-8", "replace")
    seen = f"{case} → {code}: {errors.strip()[-160:]}"
    if any(c in printed + errors for c in CONTROL):
        return "unsafe", seen
    if "Traceback" in errors:
        return "traceback", seen
    if code == 0:
        return ("silently wrong" if case.numeric and case.value in NON_FINITE else "handled"), seen
    return ("clear error" if len(errors.strip().splitlines()) == 1 else "traceback"), seen


def _judge_parse(case: CliCase) -> tuple[str, str]:
    from proactive_env import cli

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            cli.build_parser().parse_known_args(case.argv())
    except SystemExit as exit_:
        ok = exit_.code == 2 and len(err.getvalue().strip().splitlines()) == 1
        return ("clear error" if ok else "traceback"), f"{case}: {err.getvalue().strip()[-120:]}"
    except BaseException as exc:  # noqa: BLE001
        return "traceback", f"{case}: {type(exc).__name__}: {exc}"
    return ("silently wrong" if case.numeric and case.value in NON_FINITE else "handled"), str(case)


# ---------------------------------------------------------------------------------- text face
WRONG_TYPES = {"string": 7, "integer": "7", "number": "7.5", "boolean": "true", "array": {"a": 1},
               "object": ["a"]}


def text_cases(tools: list[dict]) -> Iterator[tuple[str, dict, str]]:
    """Every tool × each argument given a value of another JSON type, an unknown key beside the
    arguments, each key misspelt, and the call's own keys given twice ('name'/'args').
    Yields (label, call, the key the error must name)."""
    for tool in tools:
        fn = tool["function"]
        name, props = fn["name"], fn["parameters"].get("properties", {})
        good = {k: _example(v) for k, v in props.items()}
        for key, spec in props.items():
            kind = spec.get("type")
            if kind in WRONG_TYPES:
                wrong = {"tool": name, "arguments": {**good, key: WRONG_TYPES[kind]}}
                yield f"{name}.{key} as the wrong type", wrong, key
            typo = key[:-2] + key[-1] + key[-2] if len(key) > 2 else key + "x"
            if typo != key and typo not in props:
                misspelt = {"tool": name, "arguments": {**_without(good, key), typo: good[key]}}
                yield f"{name}.{key} misspelt", misspelt, typo
        yield f"{name} with an unknown key", {"tool": name, "arguments": {**good, "zz_unknown": 1}}, "zz_unknown"
        yield f"{name} with 'args' too", {"tool": name, "arguments": good, "args": {}}, "args"
        yield f"{name} with 'name' too", {"tool": name, "name": "wait", "arguments": good}, "name"


def _without(d: dict, key: str) -> dict:
    return {k: v for k, v in d.items() if k != key}


def _example(spec: dict):
    kind = spec.get("type")
    return {"string": spec.get("enum", ["x"])[0], "integer": 1, "number": 1.0, "boolean": True,
            "array": [], "object": {}}.get(kind, "x")


def judge_text_call(env, call: dict, key: str) -> tuple[str, str]:
    """A malformed call must be refused (``invalid_action``) with an error naming ``key``."""
    obs, _, _, _, info = env.step(json.dumps(call))
    first = obs.splitlines()[0] if obs else ""
    if any(c in obs for c in CONTROL):
        return "unsafe", first
    if not info.get("invalid_action"):
        return "silently wrong", f"{call} accepted"
    return ("clear error" if key in first else "silently wrong"), first[:160]


# ---------------------------------------------------------------------------------- MCP server
FOREIGN_PATHS = ("/etc/passwd", "/etc/shadow", "/proc/self/environ", "/dev/zero", "/dev/stdin", "../outside.yaml",
                 "{outside}", "{outside}/secret.yaml", "{allowed}/../outside/secret.yaml", "link.yaml", "fifo.yaml",
                 "broken.yaml", "~/.ssh/id_rsa", "file:///etc/passwd", "monitor.yaml\x00", "\x1b[2Jmonitor",
                 "a" * 5000, ".", "", "{allowed}")
MCP_BAD_VALUES = (None, 7, -1, 2**70, 1.5, float("nan"), True, "", "x" * 100_000, [], {}, ["monitor"], {"a": 1})
SECRET_CONTENT = "root:SECRET-CONTENT-0xfeedface"


def mcp_folders(root: Path) -> tuple[Path, Path]:
    """A scenario folder (a copy of Monitor, a broken file, a symlink out, a FIFO) and one outside."""
    import os

    from proactive_env.spec.loader import scenario_dir

    allowed, outside = root / "allowed", root / "outside"
    allowed.mkdir(parents=True, exist_ok=True), outside.mkdir(parents=True, exist_ok=True)
    (allowed / "monitor.yaml").write_text((scenario_dir() / "monitor.yaml").read_text(encoding="utf-8"))
    (allowed / "broken.yaml").write_text(f"name: broken\ntitle: {SECRET_CONTENT}\nx: [{SECRET_CONTENT}\n")
    (outside / "secret.yaml").write_text(f"{SECRET_CONTENT}\n")
    if not (allowed / "link.yaml").is_symlink():
        (allowed / "link.yaml").symlink_to(outside / "secret.yaml")
    if not (allowed / "fifo.yaml").exists():
        os.mkfifo(allowed / "fifo.yaml")
    return allowed, outside


def mcp_cases(host) -> Iterator[tuple[str, str, dict]]:
    """Every server tool and scenario tool × malformed arguments (each parameter given each bad
    value, an unknown key), and start_episode × every foreign path. Yields (label, tool, arguments)."""
    for tool in host.tools():
        fn = tool["function"]
        name, props = fn["name"], list(fn["parameters"].get("properties", {}))
        for key in props or ["zz_unknown"]:
            for value in MCP_BAD_VALUES:
                yield f"{name}.{key}={str(value)[:20]!r}", name, {key: value}
        yield f"{name} + unknown key", name, {"zz_unknown": 1}
    for path in FOREIGN_PATHS:
        yield f"start_episode scenario={path[:40]!r}", "start_episode", {"scenario": path}


def judge_mcp(host, tool: str, arguments: dict, folders: tuple[Path, Path], seconds: int = 60) -> tuple[str, str]:
    """A call must end as a tool result or a one-line EpisodeError that quotes no file content."""
    from proactive_env.mcp_server import EpisodeError

    allowed, outside = folders
    if isinstance(arguments.get("scenario"), str):
        arguments = {**arguments, "scenario": arguments["scenario"].format(allowed=allowed, outside=outside)}
    try:
        with time_limit(seconds):
            text = host.call(tool, arguments)
        outcome = "handled"
    except TimeoutError:
        return "hang", tool
    except EpisodeError as exc:
        text, outcome = str(exc), "clear error"
    except Exception as exc:  # noqa: BLE001
        return "traceback", f"{tool} {arguments!r:.80}: {type(exc).__name__}: {str(exc)[:100]}"
    if SECRET_CONTENT in text or "root:x:0:0" in text or any(c in text for c in CONTROL[:2]):
        return "unsafe", f"{tool}: {text[:120]!r}"
    if outcome == "handled" and tool == "start_episode" and "scenario" in arguments and arguments["scenario"] not in (
            None, "monitor.yaml", str(allowed / "monitor.yaml")):
        return "unsafe", f"{tool} {arguments!r:.80} was played"
    return outcome, text[:120]


# ---------------------------------------------------------------------------------- secrets
def secrets() -> list[str]:
    """A password with each special character in the middle, at the start and at the end."""
    out = []
    for c in string.punctuation + " ":
        out += [f"pa{c}ss{c}w0rd", f"{c}secret9", f"secret9{c}"]
    return out


def secret_forms(secret: str) -> list[str]:
    raw = secret.encode()
    found = {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret),
             base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode().rstrip("=")}
    for user in ("u", "us", "use"):
        found.add(base64.b64encode(f"{user}:{secret}".encode()).decode())
    return [f for f in found if len(f) >= 4]


def leaked(text: str, secret: str) -> list[str]:
    """Forms of ``secret`` in ``text``, base64 ones found by decoding every token."""
    out = [f for f in secret_forms(secret) if f in text]
    for token in "".join(c if c.isalnum() or c in "+/=-_" else " " for c in text).split():
        for alt in (None, b"-_"):
            try:
                decoded = base64.b64decode(token + "=" * (-len(token) % 4), altchars=alt)
            except ValueError:
                continue
            if raw_in(secret, decoded):
                out.append(token)
    return out


def raw_in(secret: str, data: bytes) -> bool:
    return secret.encode() in data


def secret_paths(secret: str, server) -> Iterator[tuple[str, str]]:
    """Every path by which a credential could be printed or stored, each given ``secret``: as a
    URL password (refused), as the API key a careless server echoes (error messages of the client,
    the judges and the CLI), as a URL query value (stored settings, the manifest's argv)."""
    import io as _io
    import os

    from openai_server import Reply

    from proactive_env import cli
    from proactive_env.baselines.llm import OpenAIAgent
    from proactive_env.scoring.client import ChatClient, Endpoint, redact, redact_settings
    from proactive_env.scoring.llm_judge import LLMClient, OpenAIJudgeConfig

    host = server.base_url.split("//")[1]
    userinfo = f"http://user:{urllib.parse.quote(secret, safe='') if '?' in secret or '#' in secret else secret}@{host}"
    try:
        Endpoint("m", userinfo)
        yield "URL password accepted", f"accepted: {userinfo}"
    except ValueError as exc:
        yield "URL password (Endpoint)", str(exc)
    stderr = _io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(_io.StringIO()):
        cli.main(["run", "--agent", "openai:m", "--base-url", userinfo, "--retries", "0"])
    yield "URL password (CLI)", stderr.getvalue()
    os.environ["FUZZ_CLASS_KEY"] = secret
    server.push(Reply(status=401, echo_auth=True))
    try:
        ChatClient(Endpoint("m", server.base_url, api_key_env="FUZZ_CLASS_KEY", retries=0, timeout=10)).chat(
            messages=[{"role": "user", "content": "hi"}])
    except Exception as exc:  # noqa: BLE001
        yield "echoed key (client error)", str(exc)
    server.push(Reply(status=401, echo_auth=True))
    judge = LLMClient(OpenAIJudgeConfig(base_url=server.base_url, model="m", api_key_env="FUZZ_CLASS_KEY", retries=0,
                                        cache_dir=None))
    try:
        judge.verdict("v", "s", "u", lambda a: a)
    except Exception as exc:  # noqa: BLE001
        yield "echoed key (judge error)", str(exc)
    stderr = _io.StringIO()
    server.push(Reply(status=401, echo_auth=True))
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(_io.StringIO()):
        cli.main(["run", "--agent", "openai:m", "--base-url", server.base_url, "--api-key-env", "FUZZ_CLASS_KEY",
                  "--retries", "0"])
    yield "echoed key (CLI)", stderr.getvalue()
    query = f"{server.base_url}?key={urllib.parse.quote(secret, safe='')}"
    agent = OpenAIAgent("m", base_url=query, api_key_env="FUZZ_CLASS_KEY")
    yield "query key (stored settings)", json.dumps([agent.settings(), redact_settings({"base_url": query})])
    yield "query key (manifest argv)", " ".join(redact(a) for a in ["eval", "--base-url", query, f"--base-url={query}"])
    yield "error line", cli.error_line(ValueError(f"cannot reach {userinfo}/v1 with key {secret}"))[0]
    del os.environ["FUZZ_CLASS_KEY"]


def judge_secret(path: str, text: str, secret: str) -> tuple[str, str]:
    if path == "URL password accepted":
        return "unsafe", text
    found = leaked(text, secret)
    if found:
        return "unsafe", f"{path}: {secret!r} as {found[0]!r}"
    if any(c in text for c in CONTROL[:2]):
        return "unsafe", f"{path}: control characters"
    refused = any(w in path for w in ("password", "error", "CLI"))
    return ("clear error" if refused and text.strip() else "handled"), path


# ---------------------------------------------------------------------------------- tampering, by class
DELETE = object()  # as a mutation: the field removed


def mutations(value):
    """Values of every JSON type, and a near value of the same type."""
    out = [None, True, -1, 1e308, "x", [], {"a": 1}]
    if isinstance(value, bool):
        out.append(not value)
    elif isinstance(value, (int, float)):
        out += [value + 1, -value]
    elif isinstance(value, str):
        out += [value + "x", ""]
    return [m for m in out if m != value or type(m) is not type(value)]


def field_paths(t: dict, rng, entries: int) -> list[tuple]:
    """Every top-level field, every field of a sample of log entries and actions, and the
    variant's and weights' fields."""
    paths = [(k,) for k in t]
    paths += [("variant", k) for k in t["variant"]] + [("weights", k) for k in t["weights"]]
    for i in sorted(rng.sample(range(len(t["log"])), min(entries, len(t["log"])))):
        paths += [("log", i)] + [("log", i, k) for k in t["log"][i]]
    for i in sorted(rng.sample(range(len(t["actions"])), min(entries // 2, len(t["actions"])))):
        paths.append(("actions", i))
        if isinstance(t["actions"][i], dict):
            paths += [("actions", i, k) for k in t["actions"][i]]
    return paths


def with_field(t: dict, path: tuple, value) -> dict:
    """A deep copy of ``t`` with the field at ``path`` set to ``value`` (or deleted)."""
    t = copy.deepcopy(t)
    node = t
    for part in path[:-1]:
        node = node[part]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return t
