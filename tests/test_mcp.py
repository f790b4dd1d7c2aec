"""`proactivity-gym mcp`: the text face over the Model Context Protocol, driven by the `mcp`
package's own client — over stdio for a whole Monitor episode (same observations and scores as
the same calls through gym.make), and over streamable HTTP for one call."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import gymnasium as gym
import pytest

mcp = pytest.importorskip("mcp")
import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

import proactive_env  # noqa: E402,F401
from proactive_env.baselines import TextOracleAgent  # noqa: E402
from proactive_env.baselines.llm import SYSTEM_PROMPT  # noqa: E402

HEADLINE = ("TC", "TA", "TR_D", "TR_J", "J")
SERVER = [sys.executable, "-m", "proactive_env.cli", "mcp", "--scenario", "monitor", "--persona", "planner", "--seed", "0"]


@pytest.fixture(scope="module")
def oracle_run():
    """The text oracle on Monitor (planner, seed 0) through gym.make: its calls, each
    observation, the final scores and the tool schemas."""
    env = gym.make("Proactivity-Monitor-Text-v0", persona="planner")
    obs, info = env.reset(seed=0)
    briefing, agent = obs, TextOracleAgent()
    agent.reset(env.unwrapped, 0)
    calls, observations, done = [], [], False
    while not done:
        call = json.loads(agent.act(obs, info))
        obs, _, terminated, truncated, info = env.step(json.dumps(call))
        calls.append(call)
        observations.append(obs)
        done = terminated or truncated
    tools = env.unwrapped.tools()
    env.close()
    return {"briefing": briefing, "calls": calls, "observations": observations, "scores": info["scores"],
            "tools": tools}


def _text(result) -> str:
    return "".join(block.text for block in result.content)


async def _play_over_stdio(out, run) -> dict:
    seen = {"errors": {}}
    params = StdioServerParameters(command=sys.executable, args=[*SERVER[1:], "--out", str(out)])
    with anyio.fail_after(240):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            seen["instructions"] = init.instructions
            seen["tools"] = (await session.list_tools()).tools
            for name in ("get_scores", "end_episode"):  # before any episode: tool errors
                result = await session.call_tool(name, {})
                seen["errors"][f"{name} first"] = (result.is_error, _text(result))
            seen["briefing"] = _text(await session.call_tool("start_episode", {}))
            seen["observations"] = []
            for call in run["calls"]:
                result = await session.call_tool(call["tool"], call["arguments"])
                seen["observations"].append((result.is_error, _text(result)))
            seen["scores"] = json.loads(_text(await session.call_tool("get_scores", {})))
            bad = {"after end": ("wait", {}), "bad persona": ("start_episode", {"persona": "boss"}),
                   "bad seed": ("start_episode", {"seed": -1})}
            for label, (name, arguments) in bad.items():
                result = await session.call_tool(name, arguments)
                seen["errors"][label] = (result.is_error, _text(result))
            await session.call_tool("start_episode", {"seed": 1})
            for label, (name, arguments) in {"unknown tool": ("no_such_tool", {}),
                                             "bad arguments": ("read_record", {"record_id": 7, "extra": [1]})}.items():
                result = await session.call_tool(name, arguments)
                seen["errors"][label] = (result.is_error, _text(result))
            seen["alive"] = json.loads(_text(await session.call_tool("get_scores", {})))
    return seen


def test_stdio_plays_a_whole_episode_as_gym_make(tmp_path, oracle_run):
    seen = anyio.run(_play_over_stdio, tmp_path, oracle_run)

    assert SYSTEM_PROMPT in seen["instructions"]
    by_name = {t.name: t for t in seen["tools"]}
    assert list(by_name)[-3:] == ["start_episode", "get_scores", "end_episode"]
    for schema in oracle_run["tools"]:
        f = schema["function"]
        assert by_name[f["name"]].description == f["description"]
        assert by_name[f["name"]].input_schema == f["parameters"]
    assert len(by_name) == len(oracle_run["tools"]) + 3

    assert seen["briefing"] == oracle_run["briefing"]
    mcp_obs = seen["observations"]
    assert len(mcp_obs) == len(oracle_run["observations"])
    for (is_error, text), expected in zip(mcp_obs[:-1], oracle_run["observations"][:-1]):
        assert text == expected
        assert is_error == expected.startswith("Error:")
    last_error, last = mcp_obs[-1]
    assert not last_error and last.startswith(oracle_run["observations"][-1]) and "The episode has ended" in last

    expected = oracle_run["scores"]
    assert seen["scores"]["ended"] is True
    for metric in HEADLINE:
        assert seen["scores"][metric] == pytest.approx(expected[metric], abs=1e-4), metric
    assert expected["TC"] > 50  # the oracle's calls: an episode with work in it, not an empty one

    path = tmp_path / "trajectories" / "mcp" / "monitor-planner-s0.json"
    assert seen["scores"]["trajectory"] == str(path)
    saved = json.loads(path.read_text())
    assert (saved["agent"], saved["scenario"], saved["persona"], saved["seed"], saved["face"]) == \
        ("mcp", "monitor", "planner", 0, "text")
    assert saved["actions"] == oracle_run["calls"]
    for metric in HEADLINE:
        assert saved["scores"][metric] == pytest.approx(expected[metric], abs=1e-9), metric

    errors = seen["errors"]
    for label, (is_error, text) in errors.items():
        assert is_error and text.startswith("Error:"), (label, text)
    assert "start_episode" in errors["get_scores first"][1]
    assert "has ended" in errors["after end"][1]
    assert "persona" in errors["bad persona"][1] and "seed" in errors["bad seed"][1]
    assert "no_such_tool" in errors["unknown tool"][1]
    assert seen["alive"]["ended"] is False  # the server played on after the bad calls


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, server: subprocess.Popen, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"the server exited: {server.stderr.read()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listening on port {port} after {seconds} s")


async def _one_call_over_http(url: str) -> tuple[str, str, bool]:
    with anyio.fail_after(60):
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            briefing = _text(await session.call_tool("start_episode", {"persona": "operator"}))
            result = await session.call_tool("list_records", {})
            return briefing, _text(result), result.is_error


def test_streamable_http_transport(tmp_path):
    port = _free_port()
    server = subprocess.Popen([*SERVER, "--transport", "http", "--port", str(port), "--out", str(tmp_path)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_port(port, server)
        briefing, records, is_error = anyio.run(_one_call_over_http, f"http://127.0.0.1:{port}/mcp")
    finally:
        server.terminate()
        server.wait(timeout=30)
    env = gym.make("Proactivity-Monitor-Text-v0", persona="operator")
    expected_briefing, _ = env.reset(seed=0)
    expected_records, *_ = env.step(json.dumps({"tool": "list_records", "arguments": {}}))
    env.close()
    assert briefing == expected_briefing
    assert records == expected_records and not is_error


async def _in_process(host, fail_once) -> dict:
    from mcp.client.client import Client

    from proactive_env.mcp_server import build_server

    seen = {}
    async with Client(build_server(host)) as client:
        seen["before"] = {t.name for t in (await client.list_tools()).tools}
        seen["start"] = await client.call_tool("start_episode", {"scenario": "experiments", "persona": "reviewer"})
        seen["after"] = {t.name for t in (await client.list_tools()).tools}
        fail_once()
        seen["fault"] = await client.call_tool("list_records", {})
        seen["next"] = await client.call_tool("list_records", {})
    return seen


def test_another_scenario_brings_its_tools_and_a_fault_is_a_tool_error(tmp_path, monkeypatch):
    from proactive_env.mcp_server import EpisodeHost, McpArgs

    host = EpisodeHost(McpArgs(scenario="monitor", persona="planner", out=tmp_path))

    def fail_once():
        step = host.env.step

        def broken(action):
            monkeypatch.setattr(host.env, "step", step)
            raise RuntimeError("simulated fault")

        monkeypatch.setattr(host.env, "step", broken)

    seen = anyio.run(_in_process, host, fail_once)
    experiments = gym.make("Proactivity-Experiments-Text-v0", persona="reviewer")
    expected = {t["function"]["name"] for t in experiments.unwrapped.tools()}
    briefing, _ = experiments.reset(seed=0)
    experiments.close()
    assert "check_stock" in seen["before"] and "check_stock" not in seen["after"]
    assert seen["after"] == expected | {"start_episode", "get_scores", "end_episode"}
    assert not seen["start"].is_error and _text(seen["start"]) == briefing
    # a fault of ours is named by its type; its text (which may quote anything) stays in the server's log
    assert seen["fault"].is_error and "RuntimeError" in _text(seen["fault"]) and "simulated" not in _text(seen["fault"])
    assert not seen["next"].is_error and _text(seen["next"]).strip()
    assert host.key.scenario == "experiments" and host.key.persona == "reviewer"


# ---------------------------------------------------------------------------------- the boundary
SECRET_LINE = "root:SECRET-CONTENT-0xdeadbeef:0:0"


@pytest.fixture()
def folders(tmp_path):
    """A scenario directory holding a copy of Monitor, a broken file and a symlink that leaves it;
    and, outside it, a file with content that must never reach a client."""
    from proactive_env.spec.loader import scenario_dir

    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir(), outside.mkdir()
    (allowed / "monitor.yaml").write_text((scenario_dir() / "monitor.yaml").read_text(encoding="utf-8"))
    (allowed / "broken.yaml").write_text(f"name: broken\ntitle: {SECRET_LINE}\nzzz: [{SECRET_LINE}\n")
    (outside / "secret.yaml").write_text(f"{SECRET_LINE}\n")
    (allowed / "link.yaml").symlink_to(outside / "secret.yaml")
    return allowed, outside


@pytest.mark.parametrize("scenario", ["/etc/passwd", "/etc/hostname", "../outside/secret.yaml", "link.yaml",
                                      "broken.yaml", "/dev/zero", "monitor.yaml\0.txt", 7, ["monitor"],
                                      "{outside}/secret.yaml", "{allowed}/../outside/secret.yaml", "."])
def test_a_client_opens_only_shipped_scenarios_and_files_under_the_named_folders(scenario, folders, tmp_path):
    from proactive_env.mcp_server import EpisodeError, EpisodeHost, McpArgs

    allowed, outside = folders
    if isinstance(scenario, str):
        scenario = scenario.format(allowed=allowed, outside=outside)
    host = EpisodeHost(McpArgs(scenario="monitor", out=tmp_path, scenario_dirs=(allowed,)))
    with pytest.raises(EpisodeError) as err:
        host.call("start_episode", {"scenario": scenario, "persona": "planner"})
    assert "SECRET" not in str(err.value) and "deadbeef" not in str(err.value)
    assert "expected" in str(err.value) or "not a valid scenario file" in str(err.value)
    assert len(str(err.value)) < 400


def test_a_file_under_a_named_folder_is_played_and_shipped_names_always_work(folders, tmp_path):
    from proactive_env.mcp_server import EpisodeHost, McpArgs

    allowed, _ = folders
    host = EpisodeHost(McpArgs(scenario="experiments", out=tmp_path, scenario_dirs=(allowed,)))
    for scenario in ("monitor.yaml", str(allowed / "monitor.yaml"), "monitor"):
        briefing = host.call("start_episode", {"scenario": scenario, "persona": "planner"})
        assert "Monitor" in briefing and host.key.scenario == "monitor"
    without = EpisodeHost(McpArgs(scenario="experiments", out=tmp_path))
    with pytest.raises(Exception, match="--scenario-dir"):
        without.call("start_episode", {"scenario": str(allowed / "monitor.yaml")})


@pytest.mark.parametrize("kwargs, expected", [
    ({"port": 99999}, "port"), ({"port": 0}, "port"), ({"port": -1}, "port"), ({"port": True}, "port"),
    ({"transport": "http", "host": "0.0.0.0"}, "--allow-remote"),
    ({"transport": "http", "host": "192.0.2.1"}, "--allow-remote"),
    ({"transport": "http", "host": "0.0.0.0", "allow_remote": True, "token_env": "NO_SUCH_TOKEN_VAR"}, "token"),
    ({"transport": "carrier-pigeon"}, "transport"),
    ({"scenario_dirs": ("/no/such/folder",)}, "--scenario-dir"),
])
def test_server_settings_outside_the_boundary_are_refused(kwargs, expected, tmp_path):
    from proactive_env.mcp_server import McpArgs

    with pytest.raises(ValueError, match=expected):
        McpArgs(out=tmp_path, **kwargs)


@pytest.mark.parametrize("argv", [["--port", "99999"], ["--port", "nan"], ["--transport", "http", "--host", "0.0.0.0"],
                                  ["--allow-remote"], ["--scenario-dir", "/no/such/folder"]])
def test_the_cli_refuses_them_in_one_line(argv, capsys):
    from proactive_env import cli

    try:
        code = cli.main(["mcp", *argv])
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


def test_the_server_says_what_clients_may_do(tmp_path, monkeypatch):
    from proactive_env.mcp_server import McpArgs, boundary_notes

    monkeypatch.setenv("TEST_MCP_TOKEN", "t" * 32)
    notes = " ".join(boundary_notes(McpArgs(out=tmp_path, transport="http", host="0.0.0.0", allow_remote=True,
                                            token_env="TEST_MCP_TOKEN", scenario_dirs=(tmp_path,))))
    assert "WARNING" in notes and "beyond loopback" in notes and "Bearer" in notes and str(tmp_path) in notes
    assert "t" * 32 not in notes


def test_every_http_request_must_carry_the_token(tmp_path):
    """A real server on loopback with a token: no header, a wrong one, two, or a Basic one get 401;
    the right one reaches MCP."""
    import httpx

    port, token = _free_port(), "s3cret-token-with/odd:chars@x"
    env = {**__import__("os").environ, "TEST_MCP_TOKEN": token}
    server = subprocess.Popen([*SERVER, "--transport", "http", "--port", str(port), "--out", str(tmp_path),
                               "--token-env", "TEST_MCP_TOKEN"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait_for_port(port, server)
        refused = [httpx.post(url, json=body, headers={**headers, **extra}, timeout=30).status_code for extra in (
            {}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Bearer {token}x"},
            {"Authorization": f"Basic {token}"}, {"Authorization": token})]
        accepted = httpx.post(url, json=body, headers={**headers, "Authorization": f"Bearer {token}"}, timeout=30)
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert refused == [401] * 5
    assert accepted.status_code == 200
    assert token not in err and "Bearer" in err
