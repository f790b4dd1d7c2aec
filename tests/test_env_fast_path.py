"""The structured env's fast path (issue #21.4) shows exactly what its slow path would.

The fast path updates the observation in place for only what changed (rows of dirty tasks, the
clock's columns when it moves), copies it once per step, scores only the log entries that can
matter and caches what does not change (a task's verdicts per (task, what the rubric judge reads
of its work), its composed work per (evidence read, units done), a variant's seed-independent
parts, static slot rows, the facts a text states, the tasks the user is meant to see, the counted
TA decisions, the action sources, a variant's moved copies), queues the world's first entries at
once and words no inbox. The slow path, patched in here, rebuilds every row and clock column at
every step, reads every log entry, checks every TA window, judges the whole work, caches nothing,
pushes each queue entry in turn and words every inbox line. The
same action sequences (oracle, a seeded random player, the policy-follower; shaped and not) on
every scenario–persona pair must give bit-identical observations, rewards, infos and final scores,
the rewards must sum to J, and re-scoring the log must give the live scores.
"""

from __future__ import annotations

import copy
import json
import math
import pickle
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from proactive_env.baselines import make_agent
from proactive_env.envs import structured
from proactive_env.envs.structured import ProactivityEnv
from proactive_env.envs.suite import SuiteEnv
from proactive_env.scoring import judge, metrics
from proactive_env.scoring.compose import compose_artifact
from proactive_env.scoring.metrics import RunScorer, score_log
from proactive_env.sim import world as world_module
from proactive_env.sim.clock import EventQueue
from proactive_env.sim.schedule import SEARCH_STEP, Schedule
from proactive_env.spec import PERSONAS, load_scenario, shipped_names, variant

ROOT = Path(__file__).resolve().parents[1]
CASES = [(s, p) for s in shipped_names() for p in PERSONAS]
PLAYS = [("oracle", 0, False), ("random", 1000, False), ("random", 1001, True), ("policy-follower", 1001, False)]


def _play(scenario: str, persona: str, agent: str, seed: int, shaping: bool) -> list:
    """Every step's observation (bytes) and info (JSON), reward and end flags; on the way, the
    return is J, no step's arrays changed later, and re-scoring the log gives the live scores."""
    env = ProactivityEnv(scenario, persona=persona, reward_shaping=shaping)
    obs, info = env.reset(seed=seed)
    player = make_agent(agent)
    player.reset(env, seed)
    seen = [(obs, {k: v.copy() for k, v in obs.items()})]
    trace, total, done = [_shown(obs, info)], 0.0, False
    while not done:
        obs, reward, terminated, truncated, info = env.step(player.act(obs, info))
        seen.append((obs, {k: v.copy() for k, v in obs.items()}))
        trace.append((_shown(obs, info), reward, terminated, truncated))
        total += reward
        done = terminated or truncated
    assert not truncated
    assert total == pytest.approx(info["scores"]["J"], abs=1e-9)
    for returned, kept in seen:  # no step's arrays are the env's own (a later step changed none)
        assert all(np.array_equal(returned[k], kept[k]) for k in kept)
    rescored = score_log(env.scenario, env.persona, env.world.log, env.weights)
    assert json.dumps(rescored, sort_keys=True) == json.dumps(info["scores"], sort_keys=True)
    return trace


def _shown(obs: dict, info: dict) -> tuple[bytes, str]:
    return (b"".join(obs[k].tobytes() for k in sorted(obs)),
            json.dumps(info, sort_keys=True, default=lambda a: a.tolist()))


@pytest.fixture
def slow_path(monkeypatch):
    """Patch the env into its slow path: everything recomputed, nothing skipped, nothing cached."""
    refresh = ProactivityEnv._refresh

    def refresh_everything(self, moved):
        self.world.dirty.update(range(len(self.world.tasks)))
        refresh(self, True)  # (moving or not: every clock-dependent column recomputed)

    def judged_afresh(self, spec, work):
        return judge.judge_task(self.judges, spec, work), self._constraints(spec, work)

    def static_row_afresh(self, t):
        self._prepared.clear()
        return static_row(self, t)

    class NeverHeld(dict):  # a cache that keeps nothing
        def __setitem__(self, key, value):
            pass

    static_row = ProactivityEnv._static_row
    monkeypatch.setattr(judge.RubricJudge, "observed_it_reads", staticmethod(lambda task, observed: observed))
    monkeypatch.setattr(ProactivityEnv, "_refresh", refresh_everything)
    monkeypatch.setattr(ProactivityEnv, "_static_row", static_row_afresh)
    monkeypatch.setattr(RunScorer, "_judged", judged_afresh)
    monkeypatch.setattr(RunScorer, "_next_window_end", property(lambda self: -math.inf, lambda self, value: None),
                        raising=False)
    monkeypatch.setattr(metrics, "_substantive", judge.substantive)
    monkeypatch.setattr(metrics, "_composed", lambda spec, reads, units: compose_artifact(spec, set(reads), units))
    monkeypatch.setattr(variant, "_prepared", lambda s: variant._Prepared(
        frozenset(ev.id for ev in s.events if variant._pinned(s, ev)), {}))
    monkeypatch.setattr(world_module, "_replies", lambda scenario, persona: scenario.model_copy(
        update=persona.model_dump(exclude_unset=True) if persona else {}))
    monkeypatch.setattr(judge, "_STATED", NeverHeld())
    claim_made_afresh = judge.claim_made.__wrapped__
    monkeypatch.setattr(judge, "claim_made", claim_made_afresh)
    monkeypatch.setattr(metrics, "claim_made", claim_made_afresh)
    monkeypatch.setattr(metrics, "_MEANT_TO_SEE", SimpleNamespace(get=lambda key, held, compute: compute()))
    monkeypatch.setattr(structured, "_clock_text", world_module.clock_text)
    monkeypatch.setattr(metrics, "_CONTESTED", SimpleNamespace(get=lambda key, held, compute: compute()))
    monkeypatch.setattr(world_module, "_action_sources", world_module.action_sources)
    monkeypatch.setattr(EventQueue, "extend", lambda self, items: [self.push(*item) for item in items] and None)
    # the world words its inbox, as for the text face (the structured face's world words none)
    monkeypatch.setattr(structured, "World", lambda *args, **kw: world_module.World(*args, **{**kw, "inbox": []}))


def test_fast_path_shows_what_the_slow_path_shows_on_every_pair(request):
    fast = {(s, p, *play): _play(s, p, *play) for s, p in CASES for play in PLAYS}
    request.getfixturevalue("slow_path")
    for (s, p, *play), trace in fast.items():
        slow = _play(s, p, *play)
        assert len(slow) == len(trace), (s, p, play)
        for step, (a, b) in enumerate(zip(trace, slow)):
            assert a == b, (s, p, play, step)


def test_the_suite_plays_as_before_while_the_scenario_it_leaves_holds_no_episode(monkeypatch):
    """``SuiteEnv`` releases the scenario env it leaves (``ProactivityEnv.release``): the suite's
    steps are bit-identical to a suite that keeps every episode, and a left env holds none."""
    def play(suite, released: bool) -> list:
        rng, trace = np.random.default_rng(7), []
        obs, info = suite.reset(seed=11)
        for _ in range(3000):
            obs, reward, terminated, truncated, info = suite.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            trace.append((_shown(obs, info), reward, terminated, truncated))
            if terminated or truncated:
                obs, info = suite.reset()
                trace.append(_shown(obs, info))
                assert not released or all(env.world is None for env in suite.envs if env is not suite.current)
        return trace

    released = play(SuiteEnv(), released=True)
    monkeypatch.setattr(ProactivityEnv, "release", lambda self: None)
    assert released == play(SuiteEnv(), released=False)


def test_every_kind_the_scorer_reads_is_one_the_world_records():
    """``metrics._READERS`` maps each kind of log entry the scorer reads to its reader; every other
    kind is read for its time only. A key the world never records (a typo, a renamed kind) would
    silently stop the scorer reading that kind: each must be a kind some ``_record("...")`` call of
    the simulator writes, and each reader must be the scorer's method of that name."""
    sources = [p for p in (ROOT / "proactive_env" / "sim").glob("*.py")]
    recorded = {m for p in sources for m in re.findall(r'_record\(\s*"([a-z_]+)"', p.read_text(encoding="utf-8"))}
    assert {"run_start", "read", "work", "task_closed", "run_end", "action"} <= recorded  # (the scan finds them)
    assert set(metrics._READERS) <= recorded, set(metrics._READERS) - recorded
    assert all(reader is getattr(RunScorer, f"_on_{kind}") for kind, reader in metrics._READERS.items())


def test_observation_parts_tile_one_buffer():
    """The observation's float parts are disjoint views of one buffer, in the space's shapes."""
    env = ProactivityEnv("monitor")
    obs, _ = env.reset(seed=0)
    ends = [structured._CLOCK, structured._TASKS, structured._RESOURCES, structured._RULES, structured._FEEDBACK]
    assert [(p.start, p.stop) for p in ends] == list(zip([0] + [p.stop for p in ends[:-1]], [p.stop for p in ends]))
    for key, space in env.observation_space.spaces.items():
        assert obs[key].shape == space.shape and obs[key].dtype == space.dtype, key


@pytest.mark.parametrize("clone", [lambda env: pickle.loads(pickle.dumps(env)),
                                   copy.deepcopy], ids=["pickle", "deepcopy"])
def test_a_cloned_env_steps_as_the_original(clone):
    """A clone's observation parts are views of its own buffer again: it steps as the original."""
    env = ProactivityEnv("monitor")
    obs, info = env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(10):
        obs, *_, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    twin = clone(env)
    for _ in range(30):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        a, b = env.step(action), twin.step(action)
        assert all(np.array_equal(a[0][k], b[0][k]) for k in a[0]) and a[1:4] == b[1:4]
        info = a[4]
        assert twin._tasks.base is twin._buffer or twin._tasks.base.base is twin._buffer


def _scan_opportunity(schedule, after, free, duration, deadline):
    """The slow path of ``Schedule.next_opportunity``: every point of the search grid in turn."""
    t = -(-after // SEARCH_STEP) * SEARCH_STEP
    while t + duration < deadline:
        if schedule.available(t) and free(t, t + duration):
            return t
        t += SEARCH_STEP
    return None


def _scan_free_window(schedule, after, free, duration, deadline, idle_fallback):
    """The slow path of ``Schedule.next_free_window``: every point of the search grid in turn."""
    fallback, t = None, -(-after // SEARCH_STEP) * SEARCH_STEP
    while t + duration < deadline:
        if free(t, t + duration):
            if schedule.sleep.contains(t) and schedule.sleep.contains(t + duration - 1):
                return t, True
            if fallback is None and idle_fallback:
                fallback = t
        t += SEARCH_STEP
    return (fallback, False) if fallback is not None else None


@pytest.mark.parametrize("scenario", shipped_names())
def test_schedule_searches_that_skip_spans_find_what_a_grid_scan_finds(scenario):
    """``next_opportunity`` jumps over the user's unavailable spans and ``next_free_window`` over
    the hours outside their sleep once only a sleep start can win: both find what a scan of
    every grid point finds, for every resource of every scenario (and none, with or without a check)."""
    s = load_scenario(scenario)
    schedule = Schedule.of(s)
    rng = np.random.default_rng(0)
    for resource in [None, *(r.id for r in s.resources)]:
        free = (lambda a, b: True) if resource is None else (lambda a, b: schedule.resource_free(resource, a, b))
        for _ in range(150):
            after = int(rng.integers(0, s.end_minute))
            duration = int(rng.choice([15, 45, 120, 300, 600, 1500]))
            deadline = after + int(rng.integers(0, 4 * 1440))
            assert schedule.next_opportunity(after, free, duration, deadline) == \
                _scan_opportunity(schedule, after, free, duration, deadline)
            if resource is None:  # (no check at all: what the world passes for work that needs no compute)
                assert schedule.next_opportunity(after, None, duration, deadline) == \
                    _scan_opportunity(schedule, after, free, duration, deadline)
            for idle in (False, True):
                assert schedule.next_free_window(after, free, duration, deadline, idle) == \
                    _scan_free_window(schedule, after, free, duration, deadline, idle)


def test_a_full_held_cache_evicts_its_oldest_entry_only():
    """``_HeldCache`` bounds its size by dropping the entry put in first (dicts keep insertion
    order), never by emptying itself: the entries still in use stay warm."""
    cache, computed = metrics._HeldCache(3), []

    def value(k):
        computed.append(k)
        return k * 10

    for k in (1, 2, 3):
        assert cache.get((k,), (), lambda k=k: value(k)) == k * 10
    assert cache.get((4,), (), lambda: value(4)) == 40  # full: (1,) goes
    assert list(cache.entries) == [(2,), (3,), (4,)]
    assert cache.get((2,), (), lambda: value(2)) == 20 and cache.get((3,), (), lambda: value(3)) == 30
    assert computed == [1, 2, 3, 4]  # the survivors were not computed again
    assert cache.get((1,), (), lambda: value(1)) == 10 and computed[-1] == 1  # the evicted one is
    assert len(cache.entries) == 3
