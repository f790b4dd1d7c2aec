"""The text/tool face of a Proactivity-Gym scenario, for LLM agents."""

from __future__ import annotations

import json
import string
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from ..sim import TextTools, ToolError, tool_schemas
from .render import ansi_timeline
from .rephrase import OpenAIRephraser
from .structured import MAX_ACTIONS_PER_POINT, ProactivityEnv

MAX_OBSERVATION = 32_768
MAX_ACTION = 16_384


def _charset(scenario) -> frozenset[str]:
    """Printable ASCII plus every character the scenario's own text uses."""
    return frozenset(string.printable) | frozenset(scenario.model_dump_json())


def parse_call(action: Any) -> tuple[str, dict]:
    """A tool call from JSON text (or an already-parsed dict): ``{"tool": name, "arguments": {...}}``;
    the OpenAI shape ``{"name": ..., "arguments": "<json>"}`` is accepted too."""
    call = action
    if isinstance(action, (str, bytes)):
        try:
            call = json.loads(action)
        except json.JSONDecodeError as exc:
            raise ToolError(f"expected one tool call as JSON, e.g. {{\"tool\": \"wait\", \"arguments\": {{}}}}: {exc}") from None
    if not isinstance(call, dict):
        raise ToolError(f"expected a JSON object with 'tool' and 'arguments', got {type(call).__name__}")
    name = call.get("tool", call.get("name"))
    args = call.get("arguments", call.get("args", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            raise ToolError(f"{name}: expected 'arguments' to be a JSON object: {exc}") from None
    if not isinstance(name, str) or not name:
        raise ToolError("expected the tool's name in 'tool'")
    if not isinstance(args, dict):
        raise ToolError(f"{name}: expected 'arguments' to be a JSON object")
    return name, args


_RULE_WORDS = {"prepare": "do the work privately, don't bring it to me", "suggest": "bring it to me for review; I decide",
               "approve": "ask me first, then do it once I say yes", "execute": "just do it"}


class ProactivityTextEnv(gym.Env):
    """
    ## Description

    The same world and scorer as ``ProactivityEnv``, seen as text and acted on with tool calls,
    for LLM agents. The agent is told the user's stated delegation policy, the time and what it
    newly sees (user messages, notifications, replies, tool results); it acts with one JSON tool
    call per step: read and list records, private notes, messages to the user, approval requests
    with an explicit action list, the scenario's own domain tools, follow-ups, deferral with a
    plan, allocation of compute to a time window, and ``wait``. ``tools()`` gives the tool
    schemas in the OpenAI function-calling format. Each call is attributed to at most one task.

    ## Action Space

    ``Text``: one tool call, ``{"tool": "read_record", "arguments": {"record_id": "..."}}``. A
    malformed call or a refused one comes back as ``Error: ...`` in the next observation; it
    never raises.

    ## Observation Space

    ``Text``: what is new since the last call, ending with the current time.

    ## Rewards

    As in the structured face: the change in the run's J when tasks become final; the rewards of
    an episode sum to its J.

    ## Episode End

    When the scenario's last day ends. At most 24 calls are carried out at one decision point
    before the clock moves on by itself.

    ## Arguments

    ``scenario``, ``persona``, ``weights`` as for ``ProactivityEnv``; ``render_mode="ansi"``;
    ``rephraser``: an LLM endpoint (``{"model": ..., "base_url": ...}``, see ``OpenAIRephraser``)
    that rewords the user's templated replies in their speaking style — decisions and
    authorization are unchanged, and a rewording that contradicts the decision is dropped.

    ## Version History

    * v0: initial release.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, scenario: str = "monitor", persona: str | None = None,
                 weights: dict[str, float] | None = None, render_mode: str | None = None,
                 rephraser: dict[str, Any] | None = None, variants: bool = True):
        self.core = ProactivityEnv(scenario, persona=persona, weights=weights, variants=variants)
        self.core.face = "text"
        self.rephraser = OpenAIRephraser(rephraser) if rephraser else None
        self._rephraser_config = rephraser
        self.scenario = self.core.scenario
        self.render_mode = render_mode
        self.charset = _charset(self.scenario)
        self.observation_space = spaces.Text(max_length=MAX_OBSERVATION, min_length=0, charset=self.charset)
        self.action_space = spaces.Text(max_length=MAX_ACTION, min_length=0, charset=self.charset)
        self._read = self._log_read = 0

    @property
    def world(self):
        return self.core.world

    @property
    def persona(self) -> str:
        return self.core.persona

    def tools(self) -> list[dict]:
        """The tool schemas, OpenAI function-calling format."""
        return tool_schemas(self.core.base)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.core.reset(seed=seed, options=options)
        self.scenario = self.core.scenario  # this seed's variant
        self.toolbox = TextTools(self.core.world)
        self.core.world.rephrase = self.rephraser
        if self.rephraser is not None:
            self.rephraser.reset()
        self._read = self._log_read = 0
        return self._text(self._briefing() + "\n" + self._news()), self._info(False)

    def step(self, action):
        world = self.core.world
        invalid, result, wait, name = False, "", False, None
        try:
            name, args = parse_call(action)
            self.core._actions.append({"tool": name, "arguments": args})
            if name == "wait":
                wait = True
            else:
                result = self.toolbox.call(name, args)
        except ToolError as exc:
            if name is None:
                self.core._actions.append({"malformed": str(action)[:2000]})
            invalid, result = True, f"Error: {exc}"
            world._record("tool_error", error=str(exc)[:500])
        self.core._here += 1
        if wait or self.core._here >= MAX_ACTIONS_PER_POINT:
            world.advance()
            self.core._here = 0
        _, reward, terminated, truncated, info = self.core._observe(moved=True, invalid=invalid)
        text = "\n".join(part for part in (result, self._news()) if part)
        return self._text(text), reward, terminated, truncated, self._info(invalid, info)

    def render(self):
        if self.render_mode == "ansi":
            return ansi_timeline(self.core.world)
        return None

    def trajectory(self, agent: str) -> dict:
        trajectory = self.core.trajectory(agent)
        if self.rephraser is not None:
            trajectory["rephraser"] = {**self._rephraser_config, "usage": self.rephraser.usage.to_dict()}
        return trajectory

    # ------------------------------------------------------------------ text
    def _briefing(self) -> str:
        s, world = self.scenario, self.core.world
        persona = s.personas[self.core.persona]
        resources = "; ".join(f"{r.id} ({r.kind}: {r.name}, {r.capacity} job(s) at once)" for r in s.resources) or "none"
        rules = "; ".join(f"{c} ({s.categories[c]}): {_RULE_WORDS[r]}" for c, r in world.policy.rules.items())
        sleep = f"{s.user.sleep.start // 60:02d}:{s.user.sleep.start % 60:02d}–{s.user.sleep.end // 60:02d}:{s.user.sleep.end % 60:02d}"
        return (f"You are {s.user.name}'s proactive assistant ({s.title}, {s.days} days from "
                f"{s.start_date:%A %d %B %Y}, {s.timezone}; times are written 'D1 09:00' for day 1).\n"
                f"{s.user.name}'s policy for you: {persona.policy}\n"
                f"The same policy per kind of matter: {rules}.\n"
                f"{s.user.name} sleeps {sleep}. Shared compute: {resources}.\n"
                f"Records you can see now: {len(world.store.visible)} (use list_records / read_record).")

    def _news(self) -> str:
        """What is new since the last observation: messages and notifications (each says why the
        agent woke), records that appeared or changed, and the time and the user's availability."""
        world = self.core.world
        new = world.inbox[self._read:]
        self._read = len(world.inbox)
        changed = []
        for entry in world.log[self._log_read:]:
            if entry["type"] == "record":
                view = world.store.view(entry["id"])
                changed.append(f"{'updated' if entry['version'] else 'new'} record {view.id} ({view.kind}): {view.title}")
        self._log_read = len(world.log)
        if changed:
            new.append("Records: " + "; ".join(dict.fromkeys(changed)))
        if world.done:
            return "\n".join([*new, "The run has ended."])
        schedule, user = world.schedule, self.scenario.user.name
        state = "available" if schedule.available(world.now) else (
            "asleep" if schedule.sleep.contains(world.now) else "busy")
        return "\n".join([*new, f"Now: {world.clock_text()}. {user} is {state}."])

    def _text(self, text: str) -> str:
        clean = "".join(c if c in self.charset else "?" for c in text)
        return clean[-MAX_OBSERVATION:]

    def _info(self, invalid: bool, base: dict | None = None) -> dict:
        info = dict(base) if base else {"scores": dict(self.core._summary), "persona": self.core.persona}
        info.pop("action_mask", None)
        info["invalid_action"] = invalid
        info["time"] = self.core.world.clock_text()
        return info
