"""Evaluation of agents on scenarios × personas × seeds, written incrementally and resumable.

Layout of an output folder::

    DIR/trajectories/<agent>/<scenario>-<persona>-s<seed>.json   one per finished run
    DIR/results.json                                              rows agent × scenario × persona, with units

A run is finished when its trajectory file exists (written atomically); a restarted evaluation
skips those and runs only what is missing, then rebuilds ``results.json`` from every trajectory.
Runs may be played several at a time (``concurrency``, threads: an LLM agent mostly waits on the
network); each is written the moment it finishes, whatever the others do.
"""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym

from .envs import ProactivityEnv, ProactivityTextEnv, env_name
from .envs.registration import MAX_EPISODE_STEPS
from .scoring import aggregate, load_trajectory, results_document, write_json_atomic
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


def make_env(scenario: str, persona: str, face: str = "structured", text_options: dict | None = None) -> gym.Env:
    """The registered env of a shipped scenario (structured or text face), or the same env
    built on a scenario file. ``text_options`` (e.g. ``rephraser``) go to the text face only."""
    if face == "text":
        options = {"persona": persona, **(text_options or {})}
        if scenario in shipped_names():
            return gym.make(f"Proactivity-{env_name(scenario)}-Text-v0", **options)
        return gym.wrappers.TimeLimit(ProactivityTextEnv(scenario=scenario, **options), MAX_EPISODE_STEPS)
    if scenario in shipped_names():
        return gym.make(f"Proactivity-{env_name(scenario)}-{persona.capitalize()}-v0")
    return gym.wrappers.TimeLimit(ProactivityEnv(scenario=scenario, persona=persona), MAX_EPISODE_STEPS)


def play(agent, scenario: str, persona: str, seed: int, text_options: dict | None = None) -> dict:
    """One episode of ``agent``; returns its trajectory, with what the agent adds to it
    (``trajectory_extras()``, e.g. an LLM agent's token usage and settings)."""
    env = make_env(scenario, persona, getattr(agent, "face", "structured"), text_options)
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
    trajectory.update(getattr(agent, "trajectory_extras", dict)())
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
    write_json_atomic(out / "results.json", results_document(rows, SUITE_VERSION))
    return rows


def evaluate(keys: list[RunKey], out: Path, make_agent: Callable[[str], object],
             on_run: Callable[[RunKey, bool], None] = lambda key, skipped: None, concurrency: int = 1,
             text_options: dict | None = None, player: Callable[[RunKey], dict] | None = None) -> list[dict]:
    """Play every run not already on disk, ``concurrency`` at a time; returns the run records
    (finished ones included) in plan order. The first failure stops new runs from starting; the
    runs under way finish and are kept, then the failure is raised. ``player`` (key → trajectory)
    plays a run elsewhere, e.g. as a Ray task (``ray_eval.ray_player``); files are written here."""
    if concurrency < 1:
        raise ValueError(f"concurrency: expected at least 1, got {concurrency}")
    out.mkdir(parents=True, exist_ok=True)
    records = finished(keys, out)
    for key in keys:
        if key in records:
            on_run(key, True)

    def play_here(key: RunKey) -> dict:
        return play(make_agent(key.agent), key.scenario, key.persona, key.seed, text_options)

    def play_and_save(key: RunKey) -> dict:
        trajectory = (player or play_here)(key)
        path = key.path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, trajectory)
        return run_record(key, trajectory)

    def saved(key: RunKey, record: dict) -> None:
        records[key] = record
        write_results([records[k] for k in keys if k in records], out)
        on_run(key, False)

    _run_all([k for k in keys if k not in records], play_and_save, saved, concurrency)
    ordered = [records[k] for k in keys if k in records]
    write_results(ordered, out)
    return ordered


def _run_all(keys: list[RunKey], work: Callable[[RunKey], dict], saved: Callable[[RunKey, dict], None],
             concurrency: int) -> None:
    """``work`` on each key in up to ``concurrency`` daemon threads; ``saved`` in this thread.

    Daemon threads, so that an interrupt (Ctrl-C, SIGTERM) ends the process at once: a run under
    way is lost, and every finished one is already on disk.
    """
    todo: queue.SimpleQueue[RunKey] = queue.SimpleQueue()
    for key in keys:
        todo.put(key)
    done: queue.SimpleQueue[tuple[RunKey, dict | None, Exception | None] | None] = queue.SimpleQueue()
    stop = threading.Event()

    def worker() -> None:
        try:
            while not stop.is_set():
                try:
                    key = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    done.put((key, work(key), None))
                except Exception as exc:
                    stop.set()
                    done.put((key, None, exc))
        finally:
            done.put(None)  # this worker has stopped

    workers = [threading.Thread(target=worker, daemon=True) for _ in range(min(concurrency, len(keys)))]
    for thread in workers:
        thread.start()
    failure, running = None, len(workers)
    try:
        while running:
            item = done.get()
            if item is None:
                running -= 1
            elif item[2] is not None:
                failure = failure or item[2]
            else:
                saved(item[0], item[1])
    finally:
        stop.set()
    if failure is not None:
        raise failure


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
