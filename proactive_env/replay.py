"""Re-scoring saved runs by replaying them: the one way scores are read back from a file.

``rescore`` plays a trajectory's recorded actions again from its seed on the scenario text it
records (``scoring.trajectory.base_scenario``) and refuses a log the actions do not reproduce; the
scores are then a function of the reproduced log and the scenario alone, so they equal the live
ones exactly. ``rescore_cached`` keeps the headline scores per file content and code fingerprint.
This module sits above ``envs`` (a replay needs the env), which sits above ``scoring``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections import OrderedDict
from pathlib import Path

from .envs import ProactivityEnv, ProactivityTextEnv
from .envs.registration import MAX_EPISODE_STEPS
from .scoring.judge import Judge
from .scoring.metrics import Weights
from .scoring.trajectory import (MALFORMED_KEPT, TrajectoryError, _expect, _short, base_scenario, read_trajectory,
                                 score_checked, weights_of, write_json_atomic)
from .spec import Scenario, variant
from .spec.files import read_regular


def scenario_of(trajectory: dict, base: Scenario | None = None) -> Scenario:
    """The exact scenario a run played: its scenario text (``base_scenario``) with the run's
    variant applied, once the variant is checked to be the one its seed draws."""
    scenario = base_scenario(trajectory, base)
    _replay_env(scenario, trajectory).close()  # checks the variant against the seed's
    return variant.apply(scenario, trajectory["variant"])


# ---------------------------------------------------------------------------------- replay
def _normal(value):
    """As JSON would store it (tuples as lists, keys as strings), for comparing with a file."""
    return json.loads(json.dumps(value))


def _replay_env(base: Scenario, trajectory: dict):
    """The env of the run, reset with its seed: the one way of making it (persona fixed or drawn,
    seed's variant or the file as written) whose reset gives the recorded persona and variant."""
    seed = trajectory["seed"]
    if seed is None:
        raise TrajectoryError("seed: expected the run's seed; an unseeded run can be neither replayed nor checked "
                              "against the variant its seed draws")
    weights = {k.lower(): v for k, v in trajectory["weights"].items()}
    make = ProactivityTextEnv if trajectory["face"] == "text" else ProactivityEnv
    recorded = trajectory["variant"]
    for persona in (trajectory["persona"], None):
        for variants in (True, False):
            env = make(base, persona=persona, weights=weights, variants=variants)
            env.reset(seed=seed)
            core = env.core if trajectory["face"] == "text" else env
            if core.persona == trajectory["persona"] and _normal(core._variant) == recorded:
                return env
            env.close()
    # (a run recorded before the suite drew the user's coins, 0.10.0, has none: say so, not only "differs")
    older = ("; it has no 'coins', so it was recorded before suite 0.10.0, whose variants also draw the "
             "user's coins: replay it with the suite it was recorded on"
             f" ({trajectory.get('suite_version', 'unknown')})" if "coins" not in recorded else "")
    raise TrajectoryError(f"variant: expected the variant seed {seed} draws for {trajectory['scenario']} "
                          f"({trajectory['persona']}); the recorded one is not{older}")


def replay(trajectory: dict, base: Scenario | None = None) -> Scenario:
    """Play the recorded actions again from the seed on the recorded scenario; returns the
    scenario the run played (variant applied). Raises ``TrajectoryError`` naming the first action
    or log entry that the replay does not reproduce."""
    return _replay(trajectory, base)[0]


def _replay(trajectory: dict, base: Scenario | None = None) -> tuple[Scenario, dict]:
    """``replay``, and the breakdown the replayed env's own scorer gives (the live scores)."""
    scenario = base_scenario(trajectory, base)
    actions = trajectory["actions"]
    if len(actions) > MAX_EPISODE_STEPS:
        raise TrajectoryError(f"actions: expected at most {MAX_EPISODE_STEPS} (an episode's step limit), "
                              f"got {len(actions)}")
    text = trajectory["face"] == "text"
    log = trajectory["log"]
    if text and "rephraser" in trajectory:  # reworded replies are the endpoint's: not replayed, never scored
        log = [e for e in log if e.get("type") != "reply"]
    env = _replay_env(scenario, trajectory)
    try:
        core = env.core if text else env
        checked = _compare(log, core.world.log, 0)
        for i, action in enumerate(actions):
            if core.world.done:
                raise TrajectoryError(f"actions[{i}]: the run had ended; expected no further action")
            env.step(_replayable(action, text, i))
            if _normal(core._actions[-1]) != action:
                raise TrajectoryError(f"actions[{i}]: recorded {_short(action)}, the env records "
                                      f"{_short(_normal(core._actions[-1]))} for it{_REFUSED}")
            if text and _cut(action):
                _keep_recorded_error(core.world.log, log)
            checked = _compare(log, core.world.log, checked)  # the first entry that differs, as soon as it does
        if checked != len(log):
            raise TrajectoryError(f"log: {len(log)} entries recorded, the actions give {checked}{_REFUSED}")
        return core.scenario, core.scorer.breakdown()
    finally:
        env.close()


_REFUSED = "; a log that its actions do not reproduce is refused (--trust-log scores it as recorded)"


def _compare(recorded: list, replayed: list, start: int) -> int:
    """Compare the replay's log entries from ``start`` with the recorded ones; returns how many
    now agree."""
    for i in range(start, len(replayed)):
        entry = _normal(replayed[i])
        if i >= len(recorded) or recorded[i] != entry:
            got = _short(recorded[i]) if i < len(recorded) else "nothing"
            raise TrajectoryError(f"log[{i}]: recorded {got}, the replay gives {_short(entry)}{_REFUSED}")
    return len(replayed)


def _cut(action) -> bool:
    """A malformed call the text face kept only the start of: its error cannot be replayed."""
    return isinstance(action, dict) and len(str(action.get("malformed", ""))) >= MALFORMED_KEPT


def _keep_recorded_error(replayed: list[dict], recorded: list[dict]) -> None:
    """The error a cut malformed call drew echoes the part of it that was not kept: take the
    recorded words (an error entry is never scored; its type and time are still compared)."""
    k = len(replayed) - 1
    while k >= 0 and replayed[k]["type"] != "tool_error":
        k -= 1
    if k >= 0 and k < len(recorded) and recorded[k].get("type") == "tool_error" and recorded[k].get("t") == replayed[k]["t"]:
        replayed[k] = {**replayed[k], "error": recorded[k].get("error")}


def _replayable(action, text: bool, i: int):
    if not text:
        return action  # the env refuses what is not an action the way it did when played
    if isinstance(action, dict) and set(action) == {"malformed"} and isinstance(action["malformed"], str):
        return action["malformed"]
    _expect(isinstance(action, dict) and set(action) == {"tool", "arguments"}, f"actions[{i}]",
            "a tool call {'tool': ..., 'arguments': {...}} or {'malformed': text}", action)
    return action


# ---------------------------------------------------------------------------------- scores
def rescore(trajectory: dict, judges: list[Judge] | None = None, weights: Weights | None = None,
            base: Scenario | None = None, trust_log: bool = False) -> dict:
    """Scores of a saved run recomputed from its scenario and its log, once the recorded actions
    have been replayed from the seed and reproduce the log (``trust_log``: the log is scored as
    recorded, unchecked). Raises ``TrajectoryError`` for a trajectory that cannot be scored."""
    if trust_log:
        return score_checked(scenario_of(trajectory, base), trajectory, weights or weights_of(trajectory), judges)
    scenario, live = _replay(trajectory, base)
    if judges is None and (weights is None or weights == weights_of(trajectory)):
        return live  # the replayed env's scorer read the same log: score_log would give the same
    return score_checked(scenario, trajectory, weights or weights_of(trajectory), judges)


_VERIFIED: OrderedDict[str, dict] = OrderedDict()
_VERIFIED_MAX = 8192
CACHED_METRICS = ("TC", "TA", "TR_D", "TR_J", "J", "continuation")


def rescore_cached(trajectory: dict, digest: str, name: str = "trajectory") -> dict:
    """The headline scores (``CACHED_METRICS``) of ``rescore(trajectory)``, replayed once per
    file content: ``digest`` is the SHA-256 of the file it was read from, and the scores are kept
    in this process and in the user's cache folder under that digest and the fingerprint of the
    code that replays and scores (so a changed file, or changed code, is replayed again). Errors
    name ``name``."""
    if digest in _VERIFIED:
        _VERIFIED.move_to_end(digest)
        return _VERIFIED[digest]
    scores = _cache_read(digest)
    if scores is None:
        try:
            breakdown = rescore(trajectory)
        except TrajectoryError as exc:
            raise TrajectoryError(f"{name}: {exc}") from None
        scores = {m: breakdown[m] for m in CACHED_METRICS}
        _cache_write(digest, scores)
    _VERIFIED[digest] = scores
    if len(_VERIFIED) > _VERIFIED_MAX:
        _VERIFIED.popitem(last=False)
    return scores


def remember_live(trajectory: dict) -> None:
    """Remember the live scores of a trajectory just played, under the digest of the file
    ``write_json_atomic(path, trajectory, indent=None)`` writes, as ``rescore_cached`` would
    compute them by replaying it (rescore equals live): a report or a resume right after an
    evaluation replays nothing. (Another encoding of the file is only a cache miss.)"""
    digest = hashlib.sha256(json.dumps(trajectory, indent=None).encode("utf-8")).hexdigest()
    scores = {m: trajectory["scores"][m] for m in CACHED_METRICS}
    _VERIFIED[digest] = scores
    _cache_write(digest, scores)


@functools.lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """SHA-256 of the source of every layer a replay runs (spec, sim, scoring, envs, this file)."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    layers = [p for layer in ("spec", "sim", "scoring", "envs") for p in (root / layer).rglob("*.py")]
    for path in sorted([*layers, Path(__file__).resolve()]):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _cache_path(digest: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "proactivity-gym" / "rescored" / _code_fingerprint()[:16] / f"{digest}.json"


def _cache_read(digest: str) -> dict | None:
    try:
        data = json.loads(read_regular(_cache_path(digest), 4096))
    except (OSError, ValueError):
        return None
    ok = isinstance(data, dict) and set(data) == set(CACHED_METRICS) and all(
        v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in data.values())
    return data if ok else None


def _cache_write(digest: str, scores: dict) -> None:
    """Best effort: a read-only or full home is no error (the scores are recomputed next time)."""
    path = _cache_path(digest)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, scores, durable=False, indent=None)
    except (OSError, ValueError):
        pass
