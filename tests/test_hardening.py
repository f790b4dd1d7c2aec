"""Issue 22, by class: what leaves the package is escaped for its medium, credentials are never
printed or stored in any form, no input is silently dropped, and every command's failure is one
line. Each test reproduces a finding of the audit (it failed on the code before the fix)."""

from __future__ import annotations

import base64
import csv
import json
import math
import urllib.parse
from pathlib import Path

import pytest
import yaml
from openai_server import FakeOpenAI, Reply

from proactive_env import cli
from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.scoring.client import ChatClient, Endpoint, LLMEndpointError, check_url, redact
from proactive_env.spec import ScenarioError
from proactive_env.spec.loader import parse_scenario, scenario_dir
from proactive_env.spec.escape import strip_control

# Passwords and keys with every character that has broken a redaction before: quotes, slashes,
# '@' and ':' (userinfo separators), '%' and '+' (URL encodings), and a short one.
SECRETS = ('pa"ss/w@rd:1', "s3cr3t/with@at:colon", "k+e%y y&=?#", 'sk-"tail"-after-quote', "ab:@")
BAD_CHARS = "\x1b[31m\x1b]0;title\x07\r\x9b\u202e"


def forms(secret: str) -> list[str]:
    """Every printable form of ``secret`` a leak could take, longest first."""
    raw = secret.encode()
    found = {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret),
             base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()}
    for user in ("u", "us", "user"):  # a Basic header encodes user:password at each alignment
        found.add(base64.b64encode(f"{user}:{secret}".encode()).decode())
    return sorted(found, key=len, reverse=True)


def leaks(text: str, secret: str) -> list[str]:
    """The forms of ``secret`` found in ``text``, base64 ones decoded from any token."""
    out = [f for f in forms(secret) if f in text]
    for token in text.replace('"', " ").replace("'", " ").replace(",", " ").split():
        for alt in (None, b"-_"):
            try:
                decoded = base64.b64decode(token + "=" * (-len(token) % 4), altchars=alt)
            except ValueError:
                continue
            if secret.encode() in decoded:
                out.append(token)
    return out


# ---------------------------------------------------------------------------------- escaping
def test_terminal_output_is_stripped_of_control_characters(capsys):
    cli.print("agent", BAD_CHARS, "done")
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\x9b" not in out and "\u202e" not in out
    assert out.startswith("agent") and out.endswith("done\n")


def test_the_ansi_timeline_strips_what_the_world_logged():
    env = ProactivityTextEnv("monitor", render_mode="ansi")
    env.reset(seed=0)
    env.step(json.dumps({"tool": "write_note", "arguments": {"text": "hello" + BAD_CHARS + "\nforged line"}}))
    env.core.world._record("tool_error", error="x" + BAD_CHARS + "\nD9 00:00  agent execute everything")
    text = env.render()
    assert not any(c in text for c in "\x1b\r\x9b\u202e\x07")
    assert not any(line.startswith("D9") for line in text.splitlines())  # no forged line of its own


def test_the_results_table_prints_names_as_text_not_markup():
    import io

    rich = pytest.importorskip("rich.console")
    row = {"agent": "[link=http://evil]x[/link][bold red]" + BAD_CHARS, "runs": 1, "TC": 0.5, "TA": 0.5, "TR_D": 0.5,
           "TR_J": 3.0, "J": 0.5, "continuation": 0.5, "J_ci": None}
    console = rich.Console(file=io.StringIO(), force_terminal=True, width=300)
    console.print(cli.results_table("t", [row], ("agent",)))
    out = console.file.getvalue()
    assert "[link=http://evil]" in out and "\x1b]8;" not in out and "\x1b[2J" not in out and "\u202e" not in out


@pytest.fixture()
def evil_board():
    from proactive_env.report.collect import Run
    from proactive_env.report.leaderboard import Leaderboard
    from proactive_env.scoring.results import METRICS

    names = ['=HYPERLINK("http://evil")', "+1+1", "-2", "@SUM(A1)", "ok | 1.000 | forged\n| gpt-7 | 1.000",
             "a`b*c_d[e](f)<g>#h" + BAD_CHARS]
    runs = [Run(agent=a, scenario=sc, persona="operator", seed=s, scores={m: 0.5 for m in METRICS},
                path=Path("x.json"), folder=Path("."))
            for a in names for sc in ("monitor", "evil|scenario") for s in range(2)]
    return Leaderboard.of(runs), names


def test_leaderboard_markdown_cells_cannot_forge_rows(evil_board):
    from proactive_env.report.leaderboard import markdown

    board, names = evil_board
    md = markdown(board, ["folder|with\npipes"])
    tables = [line for line in md.splitlines() if line.startswith("|")]
    widths = {line.replace("\\|", "").count("|") for line in tables if "---" not in line}
    overall = md.split("## Overall")[1].split("##")[0]
    assert sum(line.startswith("| ") and "---" not in line for line in overall.splitlines()) == 1 + len(names)
    assert "gpt-7" not in [c.strip() for line in tables for c in line.split("|")]
    assert not any(c in md for c in "\x1b\r\u202e")
    assert len(widths) <= 4  # each table keeps its own column count (4 kinds of table)


def test_leaderboard_csv_cells_are_never_formulas(evil_board, tmp_path):
    from proactive_env.report.leaderboard import write_csv

    board, _ = evil_board
    write_csv(board, tmp_path / "l.csv")
    rows = list(csv.DictReader(open(tmp_path / "l.csv", encoding="utf-8")))
    assert rows and all(not str(v).startswith(("=", "+", "-", "@", "\t", "\r")) for r in rows for k, v in r.items()
                        if k not in ("value", "ci_low", "ci_high"))
    assert all(math.isfinite(float(r["value"])) for r in rows)  # numbers stay numbers


# ---------------------------------------------------------------------------------- credentials
@pytest.mark.parametrize("secret", SECRETS)
def test_redact_masks_every_form(secret):
    text = " | ".join([f"Authorization: Basic {base64.b64encode(f'user:{secret}'.encode()).decode()}",
                       f"Bearer {secret}", f"token={urllib.parse.quote(secret, safe='')}",
                       f"b64 {base64.urlsafe_b64encode(secret.encode()).decode()}",
                       f"url http://user:{secret}@example.com:8000/v1?key={urllib.parse.quote(secret)}"])
    assert leaks(redact(text, (secret,)), secret) == []


@pytest.mark.parametrize("secret", SECRETS)
def test_a_url_with_a_password_is_refused_without_printing_it(secret):
    url = f"http://user:{secret}@127.0.0.1:9/v1"
    for make in (lambda: check_url(url), lambda: Endpoint("m", url)):
        with pytest.raises(ValueError) as err:
            make()
        # refused as userinfo, or (a '?' or '#' in it) as no URL at all: either way without a trace of it
        assert leaks(str(err.value), secret) == [] and "expected" in str(err.value)


@pytest.mark.parametrize("secret", SECRETS[:3])
def test_the_cli_refuses_a_url_password_in_one_line(secret, capsys):
    code = cli.main(["run", "--agent", "openai:m", "--base-url", f"http://u:{secret}@127.0.0.1:9/v1"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and leaks(err, secret) == [] and "Traceback" not in err


@pytest.mark.parametrize("secret", SECRETS)
def test_a_server_that_echoes_the_key_gets_it_masked(secret, monkeypatch):
    monkeypatch.setenv("HARDENING_KEY", secret)
    with FakeOpenAI() as server:
        server.push(Reply(status=401, echo_auth=True))
        client = ChatClient(Endpoint("m", server.base_url, api_key_env="HARDENING_KEY", retries=0, timeout=10))
        with pytest.raises(LLMEndpointError) as err:
            client.chat(messages=[{"role": "user", "content": "hi"}])
        sent = {k.lower(): v for k, v in server.seen[-1].headers.items()}
        assert sent["authorization"] == f"Bearer {secret}"  # it really was sent, and echoed
    assert "you sent" in str(err.value) and leaks(str(err.value), secret) == []


def test_a_judges_failure_names_the_endpoint_without_its_secrets(monkeypatch, tmp_path):
    from proactive_env.scoring.llm_judge import JudgeError, LLMClient, OpenAIJudgeConfig

    secret = SECRETS[0]
    monkeypatch.setenv("HARDENING_KEY", secret)
    with FakeOpenAI() as server:  # answers that quote the key and are no verdict
        server.responder = lambda request: f"not json; your key is {secret}"
        client = LLMClient(OpenAIJudgeConfig(base_url=server.base_url, model="m", retries=1, backoff=0.0,
                                             cache_dir=None, api_key_env="HARDENING_KEY"))

        def check(answer):
            raise ValueError(f"no verdict in {answer}")

        with pytest.raises(JudgeError) as err:
            client.verdict("v", "system", "user", check)
        with pytest.raises(JudgeError) as refused:  # a 401 that echoes the header
            server.push(Reply(status=401, echo_auth=True))
            client.verdict("v2", "system", "user", check)
    for e in (err, refused):
        assert leaks(str(e.value), secret) == [] and server.base_url.split("//")[1].split("/")[0] in str(e.value)
    assert "no valid verdict" in str(err.value)


def test_settings_stored_with_a_run_hold_no_secret(monkeypatch):
    from proactive_env.baselines.llm import OpenAIAgent
    from proactive_env.scoring.client import redact_settings

    secret = SECRETS[1]
    monkeypatch.setenv("HARDENING_KEY", secret)
    agent = OpenAIAgent("m", base_url=f"http://127.0.0.1:9/v1?key={urllib.parse.quote(secret)}",
                        api_key_env="HARDENING_KEY")
    stored = json.dumps([agent.settings(), redact_settings({"base_url": agent.endpoint.base_url, "api_key": secret,
                                                             "note": f"key {secret}"})])
    assert leaks(stored, secret) == [] and "HARDENING_KEY" in stored


# ---------------------------------------------------------------------------------- nothing dropped
@pytest.mark.parametrize("call, names", [
    ({"tool": "write_note", "arguments": {"text": "x", "about": "m1"}, "args": {"text": "y"}}, ["args", "arguments"]),
    ({"tool": "write_note", "name": "message_user", "arguments": {"text": "x"}}, ["tool", "name"]),
    ({"tool": "write_note", "arguments": {"text": "x", "abuot": "m1"}}, ["abuot", "about"]),
    ({"tool": "list_matters", "arguments": {"verbose": True}}, ["verbose"]),
    ({"tool": "write_note", "arguments": {"text": "x"}, "about": "m1"}, ["about", "arguments"]),
])
def test_a_key_the_text_face_would_drop_is_an_error_naming_it(call, names):
    env = ProactivityTextEnv("monitor")
    env.reset(seed=0)
    obs, _, _, _, info = env.step(json.dumps(call))
    first = obs.splitlines()[0]
    assert info["invalid_action"] and first.startswith("Error:")
    assert all(repr(n) in first or n in first for n in names), first


def test_the_text_env_refuses_an_unknown_render_mode():
    with pytest.raises(ValueError, match="render_mode"):
        ProactivityTextEnv("monitor", render_mode="human")


def _monitor() -> dict:
    return yaml.safe_load((scenario_dir() / "monitor.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("edit, where", [
    (lambda d: d["user"].update(sleep={"start": "07:00", "end": "07:00"}), "user.sleep"),
    (lambda d: d.update(timezone="Mars/Olympus_Mons"), "timezone"),
    (lambda d: d.update(timezone="../../etc/passwd"), "timezone"),
    (lambda d: d["user"]["weekly"].append({"days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
                                           "start": "07:00", "end": "23:00", "label": "all day"}), "user"),
])
def test_the_validator_refuses_impossible_timelines(edit, where):
    data = _monitor()
    data["user"].setdefault("weekly", [])
    edit(data)
    with pytest.raises(ScenarioError) as err:
        parse_scenario(data, "monitor.yaml")
    assert where in str(err.value)


@pytest.mark.parametrize("argv", [
    ["run", "--agent", "oracle", "--rephraser", "m"],
    ["run", "--agent", "oracle", "--temperature", "0.5"],
    ["run", "--agent", "noop", "--base-url", "http://127.0.0.1:9/v1"],
    ["eval", "--agents", "noop", "--scenarios", "monitor", "--seeds", "1", "--max-tokens", "5"],
    ["run", "--agent", "openai:m", "--rephraser-base-url", "http://127.0.0.1:9/v1"],
    ["show", "x.json", "--transcript", "--formats", "svg"],
    ["rescore", ".", "--out", "r.json", "--timeout", "5"],
    ["rescore", ".", "--out", "r.json", "--judge", "rubric", "--cache", "c"],
    ["mcp", "--host", "0.0.0.0"],
])
def test_an_option_nothing_uses_is_refused(argv, capsys, tmp_path):
    assert cli.main([*argv, "--out", str(tmp_path)] if argv[0] == "eval" else argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--" in err and not (tmp_path / "results.json").exists()


@pytest.mark.parametrize("option", ["--temperature", "--timeout"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "1e999"])
def test_numeric_options_refuse_non_finite_values(option, value, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["run", "--agent", "openai:m", f"{option}={value}"])
    assert exit_.value.code == 2 and "finite" in capsys.readouterr().err


# ---------------------------------------------------------------------------------- one handler
def _one_line(capsys, argv: list[str], code: int = 2, stdin: str | None = None, monkeypatch=None) -> str:
    assert cli.main(argv) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_play_refuses_a_session_that_is_not_one(tmp_path, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    for content in ("[1, 2]", '{"scenario": "monitor", "persona": "operator", "seed": 0}', "not json", '"x"',
                    '{"scenario": "monitor", "persona": "operator", "seed": 0, "calls": [1]}',
                    '{"persona": "operator", "seed": 0, "calls": []}', '{"scenario": "monitor", "persona": "x", "seed": 0, "calls": []}',
                    '{"scenario": "monitor", "persona": "operator", "seed": -1, "calls": []}'):
        session = tmp_path / "s.json"
        session.write_text(content)
        err = _one_line(capsys, ["play", "--session", str(session)])
        assert "session file" in err and session.read_text() == content  # refused, not overwritten


def test_show_refuses_a_log_entry_that_is_not_an_object(tmp_path, capsys):
    trajectory = tmp_path / "t.json"
    assert cli.main(["run", "--agent", "noop", "--save", str(trajectory)]) == 0
    data = json.loads(trajectory.read_text())
    data["log"][2] = 5
    trajectory.write_text(json.dumps(data))
    capsys.readouterr()
    err = _one_line(capsys, ["show", str(trajectory), "--formats", "png"])
    assert "log[2]" in err


def test_a_run_recorded_before_the_coins_is_refused_saying_so(tmp_path, capsys):
    """A trajectory from before suite 0.10.0 has no coins in its variant: the refusal says that,
    and which suite it was recorded on, not only that the variant differs."""
    trajectory = tmp_path / "t.json"
    assert cli.main(["run", "--agent", "noop", "--seed", "1000", "--save", str(trajectory)]) == 0
    data = json.loads(trajectory.read_text())
    del data["variant"]["coins"]
    data["suite_version"] = "0.9.0"
    trajectory.write_text(json.dumps(data))
    capsys.readouterr()
    err = _one_line(capsys, ["show", str(trajectory), "--formats", "png"])
    assert "no 'coins'" in err and "before suite 0.10.0" in err and "(0.9.0)" in err, err


def test_bc_refuses_an_empty_file(tmp_path, capsys):
    pytest.importorskip("torch")
    empty = tmp_path / "bc.pt"
    empty.write_bytes(b"")
    err = _one_line(capsys, ["run", "--agent", f"bc:{empty}"])
    assert "not a BC policy" in err


def test_an_env_kwarg_the_env_does_not_take_is_named():
    pytest.importorskip("stable_baselines3")
    from proactive_env.baselines.training import make_single_env

    with pytest.raises(ValueError, match="zzz"):
        make_single_env("Proactivity-Monitor-Operator-v0", flat=False, kwargs={"zzz": 1})


def test_suite_exclude_may_be_a_list():
    import gymnasium as gym

    env = gym.make("Proactivity-Suite-v0", exclude=["monitor"])
    assert "monitor" not in env.unwrapped.names
    with pytest.raises(ValueError, match="exclude"):
        gym.make("Proactivity-Suite-v0", exclude=7)


def test_a_missing_extra_names_the_extra(capsys, monkeypatch):
    def missing(args):
        raise ModuleNotFoundError("No module named 'ray'", name="ray")

    monkeypatch.setattr(cli, "_validate", missing)
    parser = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda: _with_func(parser(), "validate", missing))
    err = _one_line(capsys, ["validate", "monitor"])
    assert "ray" in err and "pip install" in err and "[rllib]" in err


def _with_func(parser, command: str, func):
    sub = next(a for a in parser._actions if a.dest == "command")
    sub.choices[command].set_defaults(func=func)
    return parser


@pytest.mark.parametrize("error, code", [(KeyError("x"), 2), (TypeError("bad"), 2), (AttributeError("a"), 1),
                                         (RuntimeError("boom"), 1), (ZeroDivisionError(), 1)])
def test_every_exception_is_one_line_and_debug_shows_the_traceback(error, code, capsys, monkeypatch):
    def fails(args):
        raise error

    parser = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda: _with_func(parser(), "validate", fails))
    _one_line(capsys, ["validate", "monitor"], code=code)
    assert cli.main(["validate", "monitor", "--debug"]) == code
    assert "Traceback" in capsys.readouterr().err


def test_an_error_line_is_redacted_and_stripped(capsys, monkeypatch):
    secret = SECRETS[0]

    def fails(args):
        raise ValueError(f"bad endpoint http://u:{secret}@h/v1 said {BAD_CHARS}\nsecond line")

    parser = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda: _with_func(parser(), "validate", fails))
    err = _one_line(capsys, ["validate", "monitor"])
    assert leaks(err, secret) == [] and "\x1b" not in err and "second line" in err


def test_the_main_jobs_extra_holds_what_report_and_show_need():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    root = Path(__file__).resolve().parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    import re

    extra = re.search(r"setup\.sh\s+([\w,]+)", (root / "scripts" / "eval.sh").read_text()).group(1)
    names = {r.split(">")[0].split("=")[0].split("[")[0] for e in extra.split(",") for r in extras[e]}
    assert {"rich", "matplotlib", "jinja2"} <= names


# ---------------------------------------------------------------------------------- bounded traffic
def test_an_llm_agents_huge_answers_are_capped_in_window_and_transcript():
    from proactive_env.baselines.llm import MAX_CONTENT, OpenAIAgent
    from proactive_env.evaluate import play
    from openai_server import tool_call

    huge = "x" * 1_000_000
    with FakeOpenAI() as server:
        answers = iter([huge, Reply(content=huge, tool_calls=[tool_call("wait", {})])])
        server.responder = lambda request: next(answers, [tool_call("wait", {})])
        agent = OpenAIAgent("m", base_url=server.base_url, retries=0, timeout=10)
        trajectory = play(agent, "monitor", "operator", 0)
        biggest = max(len(json.dumps(r)) for r in server.requests)
    kept = [m.get("content") or "" for m in trajectory["transcript"] if m["role"] == "assistant"]
    assert max(map(len, kept)) <= MAX_CONTENT + 60 and "characters cut" in kept[0]
    assert biggest < 200_000  # the briefing, the window of capped turns; not the 1 MB answers


def test_run_uses_the_rephraser_it_is_given(tmp_path, capsys):
    from openai_server import tool_call

    with FakeOpenAI(lambda request: [tool_call("wait", {})] if request.get("tools") else "Sure.") as server:
        saved = tmp_path / "t.json"
        assert cli.main(["run", "--agent", "openai:m", "--base-url", server.base_url, "--rephraser", "r",
                         "--retries", "0", "--save", str(saved)]) == 0
    trajectory = json.loads(saved.read_text())
    assert trajectory["rephraser"]["model"] == "r"  # before: --rephraser was parsed and never used


def test_eval_prints_a_path_with_rich_markup_as_it_is(tmp_path, capsys, monkeypatch):
    """Paths and names reach the eval console as text: rich markup in them is not interpreted."""
    monkeypatch.chdir(tmp_path)
    out = "res[bold]x[/bold]"
    assert cli.main(["eval", "--agents", "noop", "--scenarios", "monitor", "--personas", "planner",
                     "--seeds", "1", "--out", out]) == 0
    printed = capsys.readouterr().out
    assert f"{out}/results.json" in printed.replace("\n", "")
