"""The benchmark as an Inspect AI task: ``inspect eval proactive_env/proactivity --model PROVIDER/MODEL``.

    inspect eval proactive_env/proactivity --model openai/gpt-4o -T scenario=monitor -T persona=planner -T seed=1000
    inspect eval proactive_env/proactivity --model mockllm/model -T scenario=path/to/new.yaml -T seeds=3
    inspect view                                  # Inspect's log viewer, unchanged

One sample per scenario × persona × seed. The solver plays the text face exactly as the built-in
``openai:MODEL`` evaluator does: the same system prompt, the briefing as the first user message,
one tool call per step (the face's own tools, as Inspect ``ToolInfo``; the calls are carried out
by the environment, not by Inspect), an answer without a tool call played as ``wait``, only the
latest ``window`` turns sent after the briefing. The scorer returns TC, TA, TR-D, TR-J and J from
the benchmark's own scorer (the environment's ``info["scores"]`` at the episode's end), so an
Inspect run scores what the same calls score through ``gym.make``. Inspect's model providers,
concurrency, retries, limits and logs apply unchanged. Needs the ``inspect`` extra.

Task options (``-T``): ``scenario`` (a shipped name, a scenario file or a gym id; ``all``: every
shipped one), ``persona`` (reviewer, planner, operator or ``all``), ``seed`` (the first seed;
default 1000, the test split), ``seeds`` (how many), ``window`` (turns kept, default as the
built-in evaluator's).
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageTool, ChatMessageUser, get_model
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolInfo, ToolParams

from .baselines.llm import NO_CALL, SYSTEM_PROMPT, WAIT, WINDOW
from .envs.registration import MAX_EPISODE_STEPS
from .spec import PERSONAS, shipped_names

SCORES = ("TC", "TA", "TR_D", "TR_J", "J")
TEST_SEED = 1000  # the test split starts here


def text_env(scenario: str, persona: str):
    """The text face as ``gym.make`` builds it (its step limit included), for a name or a file."""
    import gymnasium as gym

    from .envs.text import ProactivityTextEnv

    return gym.wrappers.TimeLimit(ProactivityTextEnv(scenario, persona), MAX_EPISODE_STEPS)


def _cells(scenario: str, persona: str) -> list[tuple[str, str]]:
    from .envs.resolve import resolve_scenario

    refs = ([(name, None) for name in shipped_names()] if scenario == "all" else
            [(ref.scenario, ref.persona) for ref in [resolve_scenario(scenario)]])
    personas = list(PERSONAS) if persona == "all" else [persona]
    if set(personas) - set(PERSONAS):
        raise ValueError(f"persona: expected one of {', '.join(PERSONAS)} or all, got {persona!r}")
    return [(name, fixed or p) for name, fixed in refs for p in ([fixed] if fixed else personas)]


def samples(scenario: str = "monitor", persona: str = "all", seed: int = TEST_SEED, seeds: int = 1) -> list[Sample]:
    """One sample per scenario × persona × seed; its input is the episode's briefing."""
    out = []
    for name, p in dict.fromkeys(_cells(scenario, persona)):
        env = text_env(name, p)
        for s in range(int(seed), int(seed) + int(seeds)):
            briefing, _ = env.reset(seed=s)
            label = env.unwrapped.scenario.name
            out.append(Sample(id=f"{label}-{p}-s{s}", input=briefing,
                              metadata={"scenario": name, "persona": p, "seed": s, "split": _split(s)}))
        env.close()
    return out


def _split(seed: int) -> str:
    return "test" if seed >= TEST_SEED else "train"


def tool_infos(tools: list[dict]) -> list[ToolInfo]:
    """The face's tools (OpenAI function schemas) as Inspect tool specifications."""
    infos = []
    for tool in tools:
        fn = tool["function"]
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        infos.append(ToolInfo(name=fn["name"], description=fn.get("description", ""),
                              parameters=ToolParams(properties=params.get("properties", {}),
                                                    required=params.get("required", []))))
    return infos


def _action(message) -> tuple[str, Any | None, int]:
    """The env action for an assistant message: its first tool call (extra calls dropped, as the
    built-in evaluator does), or ``wait`` when it made none. Returns (action, call, dropped)."""
    calls = message.tool_calls or []
    if not calls:
        return WAIT, None, 0
    call = calls[0]
    return json.dumps({"name": call.function, "arguments": call.arguments}), call, len(calls) - 1


@solver
def text_face(window: int = WINDOW):
    """Play one episode of the text face with the task's model, one tool call per step."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        env = text_env(meta["scenario"], meta["persona"])
        obs, info = env.reset(seed=meta["seed"])
        tools = tool_infos(env.unwrapped.tools())
        model = get_model()
        head: list[ChatMessage] = [ChatMessageSystem(content=SYSTEM_PROMPT), ChatMessageUser(content=obs)]
        turns: deque[list[ChatMessage]] = deque(maxlen=window)
        state.messages = list(head)
        counts = {"steps": 0, "no_tool_call": 0, "extra_tool_calls": 0}
        done = False
        while not done:
            output = await model.generate(head + [m for turn in turns for m in turn], tools=tools)
            message = output.message
            action, call, dropped = _action(message)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            counts["steps"] += 1
            counts["no_tool_call"] += call is None
            counts["extra_tool_calls"] += dropped
            if call is None:
                reply: ChatMessage = ChatMessageUser(content=NO_CALL + obs)
            else:
                note = f"(Only the first of your {dropped + 1} tool calls was carried out: one per turn.)\n"
                reply = ChatMessageTool(content=(note if dropped else "") + obs, tool_call_id=call.id,
                                        function=call.function)
                if dropped:  # every call needs an answer: the dropped ones say so
                    message = message.model_copy(update={"tool_calls": message.tool_calls[:1]})
            turns.append([message, reply])
            state.messages.extend([message, reply])
            state.output = output
        scores = {k: v for k, v in info["scores"].items() if isinstance(v, (int, float))}
        state.store.set("proactivity_scores", scores)
        state.store.set("proactivity_trajectory", env.unwrapped.trajectory(agent=f"inspect:{model.name}"))
        state.metadata.update(counts, truncated=bool(truncated))
        env.close()
        return state

    return solve


@scorer(metrics={m: [mean(), stderr()] for m in SCORES})
def benchmark_scores():
    """TC (0–100), TA, TR-D (fractions), TR-J (1–5) and J (0–1) from the benchmark's own scorer."""

    async def score(state: TaskState, target: Target) -> Score:
        scores = state.store.get("proactivity_scores")
        if scores is None:
            raise ValueError("the episode did not finish: no scores")
        return Score(value={m: float(scores[m]) for m in SCORES},
                     explanation=", ".join(f"{m} {scores[m]:.3f}" for m in SCORES),
                     metadata={"continuation": scores.get("continuation")})

    return score


def _task_name() -> str:
    """``proactive_env/proactivity`` however the package is installed. Inspect prefixes a task's
    name with its package when it can tell the package is installed: from site-packages, yes; an
    editable install of a distribution named unlike its package (proactivity-gym, proactive_env)
    it cannot tell, so there the prefix is given here."""
    try:
        from inspect_ai._util.package import get_installed_package_name  # the rule Inspect applies
    except ImportError:
        return "proactive_env/proactivity"
    return "proactivity" if get_installed_package_name(_task_name) == "proactive_env" else "proactive_env/proactivity"


@task(name=_task_name())
def proactivity(scenario: str = "monitor", persona: str = "all", seed: int = TEST_SEED, seeds: int = 1,
                window: int = WINDOW) -> Task:
    """Proactivity-Gym's text face: one sample per scenario × persona × seed, scored on the 3T and J."""
    return Task(dataset=MemoryDataset(samples(scenario, persona, int(seed), int(seeds)), name="proactivity"),
                solver=text_face(int(window)), scorer=benchmark_scores(),
                metadata={"suite": "proactivity-gym", "split": _split(int(seed))})


__all__ = ["benchmark_scores", "proactivity", "samples", "text_face", "tool_infos"]
