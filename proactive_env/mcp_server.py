"""The text face served over the Model Context Protocol, so that agent harnesses (Claude Code,
Codex, OpenClaw, any MCP client) play the same episodes as ``openai:`` agents and baselines.

Each tool of the scenario's text face becomes an MCP tool with the same name, description and
JSON schema; a call is one step of ``ProactivityTextEnv`` (the JSON tool call
``{"tool": name, "arguments": {...}}``) and its result is the observation the env returns. Three
tools of the server's own sit beside them: ``start_episode`` (returns the briefing),
``get_scores`` and ``end_episode`` (plays ``wait`` until the run ends). A finished episode is
saved as ``eval`` saves a run: ``OUT/trajectories/<agent>/<scenario>-<persona>-s<seed>.json``.

One episode at a time per server: every client of an HTTP server plays the same episode.
Needs the ``mcp`` extra (``pip install 'proactivity-gym[mcp]'``).

The boundary: a client picks scenarios only by shipped name or as files under the directories
named at server start (``scenario_dirs``); what a refused or broken file holds is never sent back.
Over HTTP the server listens on loopback unless ``allow_remote`` is set, and then only with a
bearer token (read from the environment variable ``token_env``) that every request must carry;
a token set on loopback is checked as well.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import sys
import traceback
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server

from .baselines.llm import SYSTEM_PROMPT
from .evaluate import RunKey, make_env
from .scoring import write_json_atomic
from .scoring.client import redact
from .spec import PERSONAS, ScenarioError, shipped_names
from .spec.escape import inside, strip_control

MAX_PORT = 65535
MIN_TOKEN = 16
HEADLINE = ("TC", "TA", "TR_D", "TR_J", "J", "continuation")
SERVER_TOOLS = ("start_episode", "get_scores", "end_episode")
PLAYING_HERE = """\
Playing through this server (Proactivity-Gym's text face over MCP):
- Call start_episode first: it returns the briefing (who the user is, their policy for you, the \
shared compute). Calling it again restarts; an unfinished episode is then discarded.
- Every other tool but get_scores and end_episode is one turn of the episode: its result is what \
is new since your last call, ending with the current time. wait moves the clock on.
- get_scores shows the scores so far (a task counts once it is final); end_episode plays wait \
until the run ends. When the run ends its trajectory is saved and the final scores are returned.
"""
INSTRUCTIONS = SYSTEM_PROMPT + "\n" + PLAYING_HERE


@dataclass
class McpArgs:
    """What ``proactivity-gym mcp`` serves, and where it saves finished episodes."""

    scenario: str = "monitor"  # a shipped name or a scenario file
    persona: str = "operator"
    seed: int = 0
    out: Path = Path("results/mcp")
    agent: str = "mcp"  # the folder under OUT/trajectories/, e.g. one per harness
    transport: str = "stdio"  # or "http" (streamable HTTP)
    host: str = "127.0.0.1"
    port: int = 8000
    scenario_dirs: tuple[Path, ...] = field(default_factory=tuple)  # where start_episode may load files from
    allow_remote: bool = False  # listen beyond loopback (needs a token)
    token_env: str = "PROACTIVITY_GYM_MCP_TOKEN"  # the environment variable holding the bearer token

    def __post_init__(self) -> None:
        if self.transport not in ("stdio", "http"):
            raise ValueError(f"transport: expected stdio or http, got {self.transport!r}")
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 1 <= self.port <= MAX_PORT:
            raise ValueError(f"port: expected an integer from 1 to {MAX_PORT}, got {self.port!r}")
        self.scenario_dirs = tuple(Path(d) for d in self.scenario_dirs)
        for folder in self.scenario_dirs:
            if not folder.is_dir():
                raise ValueError(f"--scenario-dir: expected a directory, got {folder}")
        if self.transport == "http" and not is_loopback(self.host):
            if not self.allow_remote:
                raise ValueError(f"--host {self.host}: listening beyond loopback lets other machines play and write "
                                 "here; expected --allow-remote (with a bearer token) to do so")
            if len(self.token() or "") < MIN_TOKEN:
                raise ValueError(f"--allow-remote: expected a bearer token of at least {MIN_TOKEN} characters in "
                                 f"${self.token_env}")

    def token(self) -> str | None:
        """The bearer token every HTTP request must carry, or None (loopback without one)."""
        return os.environ.get(self.token_env) or None


class EpisodeError(Exception):
    """A call the episode cannot take now; its text goes back to the agent as a tool error."""


def _shown(value: Any) -> str:
    """A client's value as an error quotes it: one line, at most 80 characters."""
    text = strip_control(repr(value), keep_newlines=False)
    return text if len(text) <= 80 else text[:80] + "…"


def _log(text: str, one_line: bool = True) -> None:
    """A line of the server's log (stderr): redacted, without control characters."""
    print(strip_control(redact(text), keep_newlines=not one_line), file=sys.stderr, flush=True)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _meta_tools() -> list[dict]:
    start = {"scenario": {"type": "string", "description": "a shipped scenario name, or a scenario file under "
                          "a directory the server was started with (--scenario-dir); default: the server's"},
             "persona": {"type": "string", "enum": list(PERSONAS), "description": "default: the server's"},
             "seed": {"type": "integer", "minimum": 0, "description": "the episode's seed (default: the server's)"}}
    return [
        _schema("start_episode", "Start (or restart) an episode and return its briefing. Optional scenario, "
                "persona and seed override the server's command line. An unfinished episode is discarded.", start),
        _schema("get_scores", "The episode's scores so far as JSON (TC 0-100, TA, TR_D, J and continuation "
                "0-1, TR_J 1-5; a task counts once it is final), the simulated time and whether the run has ended."),
        _schema("end_episode", "End the episode now: play wait until the run ends, save its trajectory and "
                "return the final scores."),
    ]


def _schema(name: str, description: str, properties: dict | None = None) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties or {}, "required": []}}}


class EpisodeHost:
    """One text-face episode at a time, driven by tool calls; knows nothing of MCP."""

    def __init__(self, args: McpArgs):
        self.args = args
        self.env = make_env(args.scenario, args.persona, "text")
        self.made = (args.scenario, args.persona)
        self.key: RunKey | None = None
        self.ended = True
        self.saved: Path | None = None
        self.info: dict = {}
        self._return = 0.0
        self.meta = _meta_tools()
        meta_names = {t["function"]["name"] for t in self.meta}
        clash = meta_names & {t["function"]["name"] for t in self.env.unwrapped.tools()}
        if clash:
            raise ValueError(f"{args.scenario}: tool names {sorted(clash)} clash with the server's own tools")

    def tools(self) -> list[dict]:
        """The episode's tools (the scenario's, then the server's), OpenAI function format."""
        return [*self.env.unwrapped.tools(), *self.meta]

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        if name == "start_episode":
            return self.start(**arguments)
        if arguments and name in ("get_scores", "end_episode"):
            raise EpisodeError(f"{name} takes no arguments, got {sorted(arguments)}")
        if name == "get_scores":
            return self.scores()
        if name == "end_episode":
            return self.end()
        return self.step(name, arguments)

    def start(self, scenario: str | None = None, persona: str | None = None, seed: int | None = None,
              **unknown) -> str:
        if unknown:
            raise EpisodeError(f"start_episode: unknown arguments {sorted(unknown)}; expected scenario, persona, seed")
        a = self.args
        # Left out (or null): the server's. Anything else given is checked, never replaced silently.
        scenario = a.scenario if scenario is None else scenario
        persona = a.persona if persona is None else persona
        seed = a.seed if seed is None else seed
        if persona not in PERSONAS:
            raise EpisodeError(f"start_episode: persona: expected one of {', '.join(PERSONAS)}, got {persona!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise EpisodeError(f"start_episode: seed: expected an integer >= 0, got {seed!r}")
        if (scenario, persona) != self.made:
            env = self._env_for(scenario, persona)
            self.env.close()
            self.env, self.made = env, (scenario, persona)
        obs, self.info = self.env.reset(seed=seed)
        core = self.env.unwrapped
        self.key = RunKey(self.args.agent, core.core.base.name, core.persona, seed)
        self.ended, self.saved, self._return = False, None, 0.0
        return obs

    def _env_for(self, scenario: Any, persona: str):
        """The text env of a scenario the client may pick: the server's own, a shipped name, or a
        regular file under a ``scenario_dirs`` directory. Errors name the scenario and where it was
        refused, never what the file holds (the server's stderr has the full message)."""
        if scenario == self.args.scenario:
            path = scenario
        else:
            path = str(self.resolve(scenario))
        try:
            return make_env(path, persona, "text")
        except Exception as exc:  # a broken file: the agent may try another
            _log(f"start_episode: {exc}")
            where = f" at {exc.path}" if isinstance(exc, ScenarioError) and exc.path else ""
            raise EpisodeError(f"start_episode: scenario {_shown(scenario)}: not a valid scenario file{where}; "
                               "the server's log says more") from None

    def resolve(self, scenario: Any) -> str | Path:
        """A shipped name, or the regular file under one of the server's scenario directories that
        ``scenario`` names (relative to the directory or absolute); anything else is refused."""
        if not isinstance(scenario, str) or not scenario:
            raise EpisodeError(f"start_episode: scenario: expected a string, got {_shown(scenario)}")
        if scenario in shipped_names():
            return scenario
        dirs = self.args.scenario_dirs
        expected = (f"expected a shipped name ({', '.join(shipped_names())})" +
                    (f" or a .yaml file under {', '.join(map(str, dirs))}" if dirs else
                     "; files only from directories the server was started with (--scenario-dir)"))
        if "\0" in scenario or not scenario.endswith((".yaml", ".yml")):
            raise EpisodeError(f"start_episode: scenario {_shown(scenario)}: {expected}")
        for folder in dirs:
            try:
                path = inside(folder, scenario)
            except (ValueError, OSError):
                continue
            if path.is_file():  # a regular file: never a FIFO, a device or a folder
                return path
        raise EpisodeError(f"start_episode: scenario {_shown(scenario)}: {expected}")

    def step(self, name: str, arguments: dict[str, Any]) -> str:
        prefix = ""
        if self.key is None:  # a harness that skipped start_episode: start with the command line's
            prefix = self.start() + "\n\n"
        elif self.ended:
            raise EpisodeError(f"the episode has ended ({self._where()}); call start_episode to play another")
        obs, reward, terminated, truncated, self.info = self.env.step(json.dumps({"tool": name, "arguments": arguments}))
        self._return += float(reward)
        if terminated or truncated:
            return prefix + obs + "\n\n" + self._finish(truncated)
        return prefix + obs

    def end(self) -> str:
        if self.key is None or self.ended:
            raise EpisodeError("no episode is under way; call start_episode" if self.key is None
                               else f"the episode has already ended ({self._where()})")
        wait = json.dumps({"tool": "wait", "arguments": {}})
        while True:
            _, reward, terminated, truncated, self.info = self.env.step(wait)
            self._return += float(reward)
            if terminated or truncated:
                return self._finish(truncated)

    def scores(self) -> str:
        if self.key is None:
            raise EpisodeError("no episode yet; call start_episode")
        scores = self.info["scores"]
        report = {m: round(scores[m], 4) for m in HEADLINE if isinstance(scores.get(m), (int, float))}
        report.update(time=self.info.get("time"), ended=self.ended)
        if self.saved:
            report["trajectory"] = str(self.saved)
        return json.dumps(report)

    def invalid(self) -> bool:
        """Whether the last step was a call the env refused (its text starts with ``Error:``)."""
        return bool(self.info.get("invalid_action"))

    def close(self) -> None:
        self.env.close()

    def _finish(self, truncated: bool) -> str:
        """The run has ended: save it as ``eval`` does and report the final scores."""
        self.ended = True
        trajectory = self.env.unwrapped.trajectory(agent=self.args.agent)
        trajectory["return"] = self._return
        trajectory["truncated"] = bool(truncated)
        path = self.key.path(Path(self.args.out).absolute())  # the harness may run elsewhere
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, trajectory)
        self.saved = path
        return f"The episode has ended. Final scores: {self.scores()}"

    def _where(self) -> str:
        return f"{self.key.scenario}, {self.key.persona}, seed {self.key.seed}"


def build_server(episode: EpisodeHost) -> Server:
    """The low-level MCP server around ``episode``; calls are serialised (one episode, one clock)."""
    lock = anyio.Lock()
    scenario = episode.env.unwrapped.scenario

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=f["name"], description=f["description"], input_schema=f["parameters"])
            for f in (t["function"] for t in episode.tools())])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        async with lock:
            before = episode.made
            try:
                text = await anyio.to_thread.run_sync(episode.call, params.name, dict(params.arguments or {}))
                error = params.name not in SERVER_TOOLS and episode.invalid()
            except EpisodeError as exc:
                text, error = f"Error: {exc}", True
            except Exception as exc:  # a fault of ours: the agent hears of it and the server stays up
                _log(traceback.format_exc(), one_line=False)
                text = f"Error: the server failed on this call ({type(exc).__name__}; see the server's log)"
                error = True
            changed = episode.made != before
        if changed:
            try:  # another scenario or persona: the tools are listed anew
                await ctx.session.send_tool_list_changed()
            except Exception:  # a client that cannot hear it lists the tools again on its own
                pass
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)

    return Server("proactivity-gym", version=_package_version(), instructions=INSTRUCTIONS,
                  description=f"Proactivity-Gym text face: {scenario.title} ({episode.args.persona})",
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _package_version() -> str:
    try:
        return version("proactivity-gym")
    except PackageNotFoundError:  # a checkout that is not installed
        return "0"


async def _serve_stdio(server: Server) -> None:
    from mcp.server.lowlevel.server import NotificationOptions
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        options = server.create_initialization_options(NotificationOptions(tools_changed=True))
        await server.run(read_stream, write_stream, options)


class BearerToken:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>`` (compared in
    constant time); any other gets 401 before it reaches the MCP app."""

    def __init__(self, app, token: str):
        self.app, self.expected = app, b"Bearer " + token.encode()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            given = [v for k, v in scope.get("headers", []) if k.lower() == b"authorization"]
            if len(given) != 1 or not hmac.compare_digest(given[0], self.expected):
                body = b'{"error": "expected the header Authorization: Bearer <token>"}'
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                    (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(server: Server, args: McpArgs):
    """The streamable-HTTP app, behind the bearer token when one is set."""
    app = server.streamable_http_app(host=args.host)
    token = args.token()
    return BearerToken(app, token) if token else app


async def _serve_http(server: Server, args: McpArgs) -> None:
    import uvicorn

    app = http_app(server, args)
    await uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")).serve()


def boundary_notes(args: McpArgs) -> list[str]:
    """What the server lets clients do, said at start."""
    dirs = ", ".join(map(str, args.scenario_dirs))
    notes = [f"clients may load scenario files under {dirs}" if dirs else
             "clients may pick shipped scenarios only (--scenario-dir DIR allows files under DIR)"]
    if args.transport == "http":
        if not is_loopback(args.host):
            notes.append(f"WARNING: listening beyond loopback on {args.host}: any machine that reaches this port and "
                         f"holds the token in ${args.token_env} can play and write episodes here")
        notes.append(f"every request must carry Authorization: Bearer <the token in ${args.token_env}>"
                     if args.token() else "no token: loopback clients only")
    return notes


def serve(args: McpArgs) -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP)."""
    episode = EpisodeHost(args)
    server = build_server(episode)
    where = "stdio" if args.transport == "stdio" else f"http://{args.host}:{args.port}/mcp"
    _log(f"proactivity-gym mcp: {args.scenario} ({args.persona}, seed {args.seed}) on {where}; finished "
         f"episodes are saved under {Path(args.out) / 'trajectories' / args.agent}")
    for line in boundary_notes(args):
        _log(f"proactivity-gym mcp: {line}")
    try:
        if args.transport == "stdio":
            anyio.run(_serve_stdio, server)
        else:
            anyio.run(_serve_http, server, args)
    finally:
        episode.close()
