"""Evaluation of agents on scenarios × personas × seeds, written incrementally and resumable.

Layout of an output folder::

    DIR/trajectories/<agent>/<scenario>-<persona>-s<seed>.json   one per finished run
    DIR/results.json                                              rows agent × scenario × persona

A run is finished when its trajectory file exists (written atomically); a restarted evaluation
skips those and runs only what is missing, then rebuilds ``results.json`` from every trajectory.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym

from .envs import ProactivityEnv, ProactivityTextEnv, env_name
from .envs.registration import MAX_EPISODE_STEPS
from .scoring import aggregate, load_trajectory, write_json_atomic
from .spec import PERSONAS, SUITE_VERSION, shipped_names


@dataclass(frozen=True)
class RunKey:
    agent: str
    scenario: str
    persona: str
    seed: int

    def path(self, out: Path) -> Path:
        return out / "trajectories" / _safe(self.agent) / f"{self.scenario}-{self.persona}-s{self.seed}.json"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def make_env(scenario: str, persona: str, face: str = "structured") -> gym.Env:
    """The registered env of a shipped scenario (structured or text face), or the same env
    built on a scenario file."""
    if face == "text":
        if scenario in shipped_names():
            return gym.make(f"Proactivity-{env_name(scenario)}-Text-v0", persona=persona)
        return gym.wrappers.TimeLimit(ProactivityTextEnv(scenario=scenario, persona=persona), MAX_EPISODE_STEPS)
    if scenario in shipped_names():
        return gym.make(f"Proactivity-{env_name(scenario)}-{persona.capitalize()}-v0")
    return gym.wrappers.TimeLimit(ProactivityEnv(scenario=scenario, persona=persona), MAX_EPISODE_STEPS)


def play(agent, scenario: str, persona: str, seed: int) -> dict:
    """One episode of ``agent``; returns its trajectory."""
    env = make_env(scenario, persona, getattr(agent, "face", "structured"))
    try:
        obs, info = env.reset(seed=seed)
        agent.reset(env.unwrapped, seed)
        total, terminated, truncated = 0.0, False, False
        while not (terminated or truncated):
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
            total += float(reward)
        trajectory = env.unwrapped.trajectory(agent=agent.name)
    finally:
        env.close()
    trajectory["return"] = total
    trajectory["truncated"] = bool(truncated)
    return trajectory


def plan(agents: Iterable[str], scenarios: Iterable[str], personas: Iterable[str], seeds: Iterable[int]) -> list[RunKey]:
    return [RunKey(a, s, p, seed) for a in agents for s in scenarios for p in personas for seed in seeds]


def run_record(key: RunKey, trajectory: dict) -> dict:
    scores = trajectory["scores"]
    return {"agent": key.agent, "scenario": key.scenario, "persona": key.persona, "seed": key.seed,
            "scores": {m: scores[m] for m in ("TC", "TA", "TR_D", "TR_J", "J", "continuation")}}


def finished(keys: list[RunKey], out: Path) -> dict[RunKey, dict]:
    """Runs whose trajectory is already on disk (a damaged file counts as not finished)."""
    done = {}
    for key in keys:
        path = key.path(out)
        if path.exists():
            try:
                done[key] = run_record(key, load_trajectory(path))
            except (ValueError, KeyError):
                path.unlink()
    return done


def write_results(records: list[dict], out: Path) -> list[dict]:
    rows = aggregate(records, ("agent", "scenario", "persona"))
    for row in rows:
        row["suite_version"] = SUITE_VERSION
    write_json_atomic(out / "results.json", rows)
    return rows


def evaluate(keys: list[RunKey], out: Path, make_agent: Callable[[str], object],
             on_run: Callable[[RunKey, bool], None] = lambda key, skipped: None) -> list[dict]:
    """Play every run not already on disk; returns the run records (finished ones included)."""
    out.mkdir(parents=True, exist_ok=True)
    done = finished(keys, out)
    records = [done[k] for k in keys if k in done]
    for key in keys:
        if key in done:
            on_run(key, True)
            continue
        trajectory = play(make_agent(key.agent), key.scenario, key.persona, key.seed)
        path = key.path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, trajectory)
        records.append(run_record(key, trajectory))
        write_results(records, out)
        on_run(key, False)
    write_results(records, out)
    return records


def resolve(scenarios: str, personas: str) -> tuple[list[str], list[str]]:
    """CLI lists: ``all`` or comma-separated names."""
    scenario_list = shipped_names() if scenarios == "all" else [s.strip() for s in scenarios.split(",") if s.strip()]
    persona_list = list(PERSONAS) if personas == "all" else [p.strip() for p in personas.split(",") if p.strip()]
    unknown = [s for s in scenario_list if s not in shipped_names()]
    if unknown:
        raise ValueError(f"--scenarios: unknown {unknown}; expected 'all' or names from {shipped_names()}")
    bad = [p for p in persona_list if p not in PERSONAS]
    if bad:
        raise ValueError(f"--personas: unknown {bad}; expected 'all' or names from {list(PERSONAS)}")
    return scenario_list, persona_list
