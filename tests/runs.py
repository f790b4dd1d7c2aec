"""Runs of the baselines and adversaries on the shipped suite, played once per test session and
shared by the tests that judge them (test_baselines.py, test_adversaries.py); and recorded cases
(tests/data) replayed call for call, their matters named by identity."""

from __future__ import annotations

import functools
import json
import pathlib

from proactive_env.baselines import make_agent
from proactive_env.evaluate import make_env, play
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1, 2)
CASES = [(s, p) for s in shipped_names() for p in PERSONAS]


def episode(agent, name: str, persona: str, seed: int, stop=lambda agent, obs: False):
    """One text-face episode of ``agent`` until it ends or ``stop(agent, obs)`` holds; returns the
    env (still open: its world and trajectory are read) and the last observation."""
    env = make_env(name, persona, "text")
    obs, info = env.reset(seed=seed)
    agent.reset(env.unwrapped, seed)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated or stop(agent, obs)
    return env, obs


def ask_approval(tools, message, actions, about):
    """A request_approval on the text face's tools: its result and what it changed, the log and
    inbox entries it added."""
    from proactive_env.sim import ToolError

    world = tools.world
    log, inbox = len(world.log), len(world.inbox)
    try:
        result = tools.call("request_approval", {"message": message, "actions": actions,
                                                 **({"about": about} if about is not None else {})})
    except ToolError as exc:
        result = f"Error: {exc}"
    return result, world.log[log:], world.inbox[inbox:]


@functools.lru_cache(maxsize=None)
def runs(agent: str, scenario: str, persona: str, seeds: tuple[int, ...] = SEEDS) -> tuple[dict, ...]:
    return tuple(play(make_agent(agent), scenario, persona, seed) for seed in seeds)


def mean(agent: str, scenario: str, persona: str, metric: str, seeds: tuple[int, ...] = SEEDS) -> float:
    played = runs(agent, scenario, persona, seeds)
    return sum(r["scores"][metric] for r in played) / len(played)


def suite_mean(agent: str, metric: str, personas=PERSONAS, seeds: tuple[int, ...] | None = None) -> float:
    seeds = seeds or SEEDS
    values = [mean(agent, s, p, metric, seeds) for s in shipped_names() for p in personas]
    return sum(values) / len(values)


def component_mean(agent: str, component: str, seeds: tuple[int, ...] = SEEDS) -> float:
    """Mean over the suite's runs of a TC component (0–100), where it applies."""
    values = [r["scores"]["components"][component] for s, p in CASES for r in runs(agent, s, p, seeds)
              if r["scores"]["components"][component] is not None]
    return sum(values) / len(values)


CASES_DIR = pathlib.Path(__file__).parent / "data"


def load_case(name: str) -> dict:
    """A recorded case, ``tests/data/NAME.json``: scenario, persona, seed and the player's calls."""
    return json.loads((CASES_DIR / f"{name}.json").read_text())


def matter_id(world, of: str) -> str:
    """The id the live world gives the matter a recorded call named, by its identity, not its
    number (numbering moves whenever the face opens more or fewer matters of the agent's own
    before it): an event's id names the matter that event raised; a task's id names the matter
    the agent took up for it, else the one the task is filed under."""
    events = {e["id"]: e["matter"] for e in world.log if e["type"] == "event"}
    if of in events:
        return events[of]
    task = world.by_id.get(of)
    if task is None:
        raise LookupError(f"no matter of {of!r} yet at {world.clock_text()} (no such event raised, nor task)")
    own = next((m for m in world.matters.values() if m.own and m.tasks[:1] == [task.index]), None)
    filed = own or world.matter_of(task)
    if filed is None:
        raise LookupError(f"no matter of {of!r} yet at {world.clock_text()}")
    return filed.id


def resolved(value, world):
    """``value`` with every ``{"matter_of": ID}`` in it replaced by that matter's live id."""
    if isinstance(value, dict):
        if set(value) == {"matter_of"}:
            return matter_id(world, value["matter_of"])
        return {k: resolved(v, world) for k, v in value.items()}
    if isinstance(value, list):
        return [resolved(v, world) for v in value]
    return value


BLIND_SESSIONS = pathlib.Path(__file__).parent.parent / "docs" / "blind-sessions"


def blind_session(stem: str, upto: int):
    """A blind round's session, as ``play`` kept it (docs/blind-sessions), played on the text face
    up to call ``upto``: ``(env, calls)``, every call of the session as sent."""
    from proactive_env.envs.text import ProactivityTextEnv

    case = json.loads((BLIND_SESSIONS / f"{stem}.session.json").read_text())
    env = ProactivityTextEnv(case["scenario"], case["persona"])
    env.reset(seed=case["seed"])
    for call in case["calls"][:upto]:
        env.step(call)
    return env, case["calls"]


def replayed_calls(name: str, upto: int | None = None):
    """A recorded case played again on the text face call for call: ``(env, calls, replies)``,
    each call's JSON as sent (its matters resolved live, ``resolved``) and the reply it got, None
    for both where a call is not made. A wait marked ``"waited_for": "work"`` was answered in the
    play only by its work finishing: where no work is running live (the call before found done
    what the play ran a unit for), nothing is waited for and it is not made."""
    from proactive_env.envs.text import ProactivityTextEnv

    case = load_case(name)
    env = ProactivityTextEnv(case["scenario"], case["persona"])
    env.reset(seed=case["seed"])
    calls, said = [], []
    for call in case["actions"][:upto]:
        world = env.world
        if world.done:
            break
        if call.get("waited_for") == "work" and not any(t.running for t in world.tasks):
            calls.append(None)
            said.append(None)
            continue
        sent = json.dumps({"tool": call["tool"], "arguments": resolved(call["arguments"], world)})
        calls.append(sent)
        said.append(env.step(sent)[0])
    return env, calls, said


def played_case(name: str):
    """A recorded case played again call for call (``replayed_calls``), then waited out to the
    end: the env, done."""
    env = replayed_calls(name)[0]
    while not env.world.done:
        env.step(json.dumps({"tool": "wait", "arguments": {}}))
    return env
