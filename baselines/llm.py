"""An LLM agent on the text/tool face, over any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, ...).

The conversation is a system prompt, the env's first observation (the briefing) as the first user
message, then one assistant tool call per step, each answered by a ``tool`` message carrying the
next observation. Episodes run for hundreds of steps, so only the latest ``window`` turns are sent
after the briefing; the trajectory keeps the whole conversation (``transcript``). An answer without a tool call is played as ``wait`` and counted.

What the model writes is bounded where it is kept (the window, so every request, and the
transcript): text beside or instead of a tool call is cut at ``MAX_CONTENT`` characters and a tool
name at ``MAX_NAME``, each cut marked ``[… N characters cut]``; arguments over the env's
``MAX_ACTION`` are replaced by a note of their size (the env refuses such a call anyway).
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from proactive_env.envs.text import MAX_ACTION
from proactive_env.scoring.client import ChatClient, Endpoint, LLMEndpointError, Usage

PROMPT_VERSION = 2
SYSTEM_PROMPT = """\
You are a proactive assistant working for one user over several simulated days. Each turn you see \
what is new (messages from the user, notifications, replies, the results of your tool calls) and \
the current time, and you answer with exactly one tool call. The first message (the briefing) gives \
the user's policy for you and how this world works; follow both.

How to act:
- Find what the user needs: what they ask for and what their records imply, including problems \
nobody has mentioned yet. Read the records a matter needs before acting on it, and only those.
- Name the matter each call concerns with 'about' (its id, e.g. m3, from the message or \
list_matters). Leave 'about' out only for something you took up on your own.
- Go exactly as deep as the user's policy says for each kind of matter. Tools are tagged \
"depth: prepare" (private), "depth: suggest" (the user sees it and decides) or "depth: execute" \
(changes things outside). Where approval is needed, ask with request_approval about one matter, \
listing every action you intend to take with its exact arguments, and act only after the user \
approves that request. Nothing else counts as approval.
- Do the work: write notes with your findings in your own words (each note launches a unit of the \
matter's work; you are told when it finishes), then bring the user what the policy says they \
should see, with the facts that matter (prices, dates, times, codes).
- Mind timing. Do urgent work now; when two pieces of work compete for the user's time or shared \
compute, do the urgent one and explicitly postpone the other with defer_task, giving a concrete \
time after the clash and before its deadline, or reserve free compute for it with allocate_resource \
(e.g. while the user sleeps). Deliver results by the time the user needs them.
- Doing nothing is sometimes right. Call wait when there is nothing useful to do now: the clock \
moves on to the next moment that needs you.
- Only your latest turns stay in this conversation; keep what you must remember in write_note.
"""
WAIT = json.dumps({"tool": "wait", "arguments": {}})
NO_CALL = "(You answered without a tool call; that counts as wait.)\n"
WINDOW = 20  # turns (assistant call + observation) kept after the briefing
MAX_CONTENT = 2000  # characters of an answer's text kept in the window and the transcript
MAX_NAME = 64  # characters of a tool name kept (the env reads no more)


class OpenAIAgent:
    """``name = "openai:MODEL"``; plays the text face through the endpoint's tool calling."""

    face = "text"

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 temperature: float = 0.0, max_tokens: int = 1024, timeout: float = 60.0, retries: int = 3,
                 backoff: float = 1.0, window: int = WINDOW):
        if window < 1 or max_tokens < 1:
            raise ValueError(f"expected window >= 1 and max_tokens >= 1, got {window} and {max_tokens}")
        if not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:  # NaN fails too
            raise ValueError(f"temperature: expected a number from 0 to 2, got {temperature!r}")
        self.name = f"openai:{model}"
        self.endpoint = Endpoint(model, base_url, api_key_env, timeout, retries, backoff)
        self.temperature, self.max_tokens, self.window = temperature, max_tokens, window
        self._client = ChatClient(self.endpoint)

    def reset(self, env: Any, seed: int) -> None:
        self._tools: list[dict] = env.tools()
        self._seed = seed
        self._briefing: dict | None = None
        self._turns: deque[list[dict]] = deque(maxlen=self.window)
        self._call_id: str | None = None
        self._dropped = 0  # extra tool calls in the last answer, not carried out
        self._client.usage = Usage()
        self.no_tool_call = 0
        self.extra_tool_calls = 0
        self.transcript: list[dict] = [{"role": "system", "content": SYSTEM_PROMPT}]  # all of it, for the trajectory
        self._saved_calls = 0

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self._hear(obs)
        message = self._client.chat(messages=self.context(), tools=self._tools, temperature=self.temperature,
                                    max_tokens=self.max_tokens, seed=self._seed)
        return self._answer(message)

    def context(self) -> list[dict]:
        """What the next request sends: system prompt, briefing, the latest turns."""
        head = [{"role": "system", "content": SYSTEM_PROMPT}, self._briefing]
        return head + [m for turn in self._turns for m in turn]

    def trajectory_extras(self) -> dict:
        """Saved with the run's trajectory: token accounting and the settings that reproduce it."""
        usage = {**self._client.usage.to_dict(), "no_tool_call": self.no_tool_call,
                 "extra_tool_calls": self.extra_tool_calls}
        return {"llm_usage": usage, "agent_settings": self.settings(), "transcript": self.transcript}

    def settings(self) -> dict:
        """What a run depends on, fit to store: the endpoint's URL redacted, the key never (only the
        name of its environment variable)."""
        ep = self.endpoint
        return {"model": ep.model, "base_url": self._client.where, "api_key_env": ep.api_key_env,
                "temperature": self.temperature, "max_tokens": self.max_tokens, "window": self.window,
                "prompt_version": PROMPT_VERSION}

    def _hear(self, obs: str) -> None:
        if self._briefing is None:
            self._briefing = {"role": "user", "content": obs}
            message = self._briefing
        elif self._call_id is not None:
            note = f"(Only the first of your {self._dropped + 1} tool calls was carried out: one per turn.)\n"
            message = {"role": "tool", "tool_call_id": self._call_id, "content": (note if self._dropped else "") + obs}
            self._turns[-1].append(message)
            message = {**message, "tool_call_id": self._saved_id()}
        else:
            message = {"role": "user", "content": NO_CALL + obs}
            self._turns[-1].append(message)
        self.transcript.append(message)

    def _saved_id(self, next_call: bool = False) -> str:
        """The id a tool call has in the saved transcript: its turn number, not the server's id
        (which differs between runs and would make identical runs differ)."""
        self._saved_calls += next_call
        return f"call_{self._saved_calls}"

    def _answer(self, message: Any) -> str:
        calls = message.tool_calls or []
        if not calls:
            self.no_tool_call += 1
            self._call_id = None
            self._turns.append([{"role": "assistant", "content": _capped(message.content or "", MAX_CONTENT)}])
            self.transcript.append(self._turns[-1][0])
            return WAIT
        call, self._dropped = calls[0], len(calls) - 1
        self.extra_tool_calls += self._dropped
        self._call_id = call.id or f"call_{self._client.usage.calls}"  # some servers send no id
        name, arguments = _capped(call.function.name or "", MAX_NAME), call.function.arguments or "{}"
        kept = arguments if len(arguments) <= MAX_ACTION else _oversized(arguments)  # never resent nor saved whole
        content = None if message.content is None else _capped(message.content, MAX_CONTENT)
        self._turns.append([{"role": "assistant", "content": content, "tool_calls": [
            {"id": self._call_id, "type": "function", "function": {"name": name, "arguments": kept}}]}])
        sent = self._turns[-1][0]
        self.transcript.append({**sent, "tool_calls": [{**sent["tool_calls"][0], "id": self._saved_id(next_call=True)}]})
        return json.dumps({"name": name, "arguments": arguments})


def _capped(text: str, limit: int) -> str:
    """``text`` cut at ``limit`` characters, the cut marked with how much was dropped."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}[… {len(text) - limit} characters cut]"


def _oversized(arguments: str) -> str:
    """What the conversation keeps of arguments over the env's limit (the env refuses the call)."""
    return json.dumps({"omitted": f"{len(arguments)} characters of arguments, over the limit of {MAX_ACTION}"})


__all__ = ["LLMEndpointError", "OpenAIAgent", "SYSTEM_PROMPT"]
