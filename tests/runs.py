"""Runs of the baselines and adversaries on the shipped suite, played once per test session and
shared by the tests that judge them (test_baselines.py, test_adversaries.py)."""

from __future__ import annotations

import functools

from proactive_env.baselines import make_agent
from proactive_env.evaluate import play
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1, 2)
CASES = [(s, p) for s in shipped_names() for p in PERSONAS]


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


def played_case(name: str):
    """A recorded case (``tests/data/NAME.json``: scenario, persona, seed and the player's calls)
    played again on the text face call for call, then waited out to the end: the env, done."""
    import json
    import pathlib

    from proactive_env.envs.text import ProactivityTextEnv

    case = json.loads((pathlib.Path(__file__).parent / "data" / f"{name}.json").read_text())
    env = ProactivityTextEnv(case["scenario"], case["persona"])
    env.reset(seed=case["seed"])
    for call in case["actions"]:
        if env.world.done:
            break
        env.step(json.dumps(call))
    while not env.world.done:
        env.step(json.dumps({"tool": "wait", "arguments": {}}))
    return env
