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
"""

from __future__ import annotations

import json
import sys
import traceback
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server

from .baselines.llm import SYSTEM_PROMPT
from .evaluate import RunKey, make_env
from .scoring import write_json_atomic
from .spec import PERSONAS

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


class EpisodeError(Exception):
    """A call the episode cannot take now; its text goes back to the agent as a tool error."""


def _meta_tools() -> list[dict]:
    start = {"scenario": {"type": "string", "description": "a shipped scenario name or a scenario file "
                          "(default: the server's)"},
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
        scenario, persona = scenario or a.scenario, persona or a.persona
        seed = a.seed if seed is None else seed
        if persona not in PERSONAS:
            raise EpisodeError(f"start_episode: persona: expected one of {', '.join(PERSONAS)}, got {persona!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise EpisodeError(f"start_episode: seed: expected an integer >= 0, got {seed!r}")
        if (scenario, persona) != self.made:
            try:
                env = make_env(scenario, persona, "text")
            except Exception as exc:  # an unknown name, a broken file: the agent may try another
                raise EpisodeError(f"start_episode: scenario {scenario!r}: {exc}") from None
            self.env.close()
            self.env, self.made = env, (scenario, persona)
        obs, self.info = self.env.reset(seed=seed)
        core = self.env.unwrapped
        self.key = RunKey(self.args.agent, core.core.base.name, core.persona, seed)
        self.ended, self.saved, self._return = False, None, 0.0
        return obs

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
                traceback.print_exc(file=sys.stderr)
                text, error = f"Error: the server failed on this call ({type(exc).__name__}: {exc})", True
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


async def _serve_http(server: Server, host: str, port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(host=host)
    await uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).serve()


def serve(args: McpArgs) -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP)."""
    episode = EpisodeHost(args)
    server = build_server(episode)
    where = "stdio" if args.transport == "stdio" else f"http://{args.host}:{args.port}/mcp"
    print(f"proactivity-gym mcp: {args.scenario} ({args.persona}, seed {args.seed}) on {where}; finished "
          f"episodes are saved under {Path(args.out) / 'trajectories' / args.agent}", file=sys.stderr, flush=True)
    try:
        if args.transport == "stdio":
            anyio.run(_serve_stdio, server)
        else:
            anyio.run(_serve_http, server, args.host, args.port)
    finally:
        episode.close()
