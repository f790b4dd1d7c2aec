"""Trajectory files: everything a run leaves, so it can be re-scored without re-running.

A trajectory is one JSON document: what was run (scenario, its version and the SHA-256 of the
exact text it was played on — with the text itself for a file that is not one of the shipped
scenarios —, the seed's variant, persona, seed, face, agent), what happened (the agent's actions
and the world's event log with every approval decision), and the scores computed at the time.

Scores are never read back from a file. ``rescore`` replays the recorded actions from the seed
on the recorded scenario and refuses a trajectory whose actions do not reproduce its log (or
whose scenario text is neither in it nor the shipped file of that hash); the scores are then a
function of the (reproduced) log and the scenario alone, so they equal the live ones exactly.
``trust_log=True`` skips the replay and scores the log as recorded (faster, and forgeable).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
from collections import OrderedDict
from pathlib import Path

from ..spec import PERSONAS, SUITE_VERSION, Scenario, ScenarioError, load_scenario, shipped_names, variant
from ..spec.files import FileKindError, read_regular, write_atomic
from ..spec.loader import content_of, parse_content
from .judge import Judge
from .metrics import Weights, score_log

FORMAT = "proactivity-gym/trajectory-3"
MAX_TRAJECTORY_BYTES = 256 * 2**20  # an LLM run with long answers is tens of MB at most
MALFORMED_KEPT = 2000  # how much of a malformed call the text face records (envs/text.py)
_HEX64 = re.compile(r"[0-9a-f]{64}")


class TrajectoryError(ValueError):
    """A trajectory that cannot be used: ``str()`` names the file (where known), the field path
    inside it and what was expected."""


class UnreadableTrajectory(TrajectoryError):
    """A file that is not JSON at all (e.g. one torn by a kill while it was written)."""


def write_json_atomic(path: str | Path, data, durable: bool = True, indent: int | None = 1) -> None:
    """Write JSON atomically (``spec.files.write_atomic``: a reader never sees half a file, and a
    device, FIFO, socket or directory at ``path`` is refused, not replaced). ``durable``: fsync
    before the rename. ``indent=None``: compact (4x faster to write: the C encoder)."""
    write_atomic(path, json.dumps(data, indent=indent, sort_keys=False), durable)


def make_trajectory(*, scenario: Scenario, persona: str, seed: int | None, agent: str, weights: Weights,
                    variant: dict, actions: list, log: list[dict], scores: dict, face: str = "structured") -> dict:
    """The trajectory of a run of ``scenario`` (the base the env loaded, before the seed's
    variant): its text's hash always, the text itself when it is not a shipped file."""
    content = content_of(scenario) or _content_in_memory(scenario)
    source = {"scenario_sha256": content.sha256}
    if not content.shipped:
        source["scenario_content"] = content.text
    return {
        "format": FORMAT,
        "scenario": scenario.name,
        "scenario_version": scenario.version,
        **source,
        "suite_version": SUITE_VERSION,
        "persona": persona,
        "seed": seed,
        "face": face,
        "variant": variant,
        "agent": agent,
        "weights": weights.as_dict(),
        "actions": actions,
        "log": log,
        "scores": scores,
    }


def _content_in_memory(scenario: Scenario):
    """A scenario built in memory has no file: its JSON (a YAML document too) stands for its text."""
    from ..spec.loader import ScenarioContent, content_sha256

    text = json.dumps(scenario.model_dump(mode="json", exclude_none=True), sort_keys=True)
    return ScenarioContent(text, content_sha256(text), shipped=False)


def load_trajectory(path: str | Path) -> dict:
    """The trajectory at ``path``, its fields checked (``check_fields``); raises
    ``TrajectoryError`` naming the file and the field."""
    path = Path(path)
    return _parse(_read(path), path)


def _read(path: Path) -> bytes:
    try:
        return read_regular(path, MAX_TRAJECTORY_BYTES)
    except FileKindError as exc:
        raise TrajectoryError(f"{path.name}: {str(exc).removeprefix(f'{path}: ')}") from None
    except OSError as exc:
        raise UnreadableTrajectory(f"{path.name}: expected a trajectory JSON file: {exc.strerror or exc}") from None


def _parse(raw: bytes, path: Path) -> dict:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise UnreadableTrajectory(f"{path.name}: expected a trajectory JSON file: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise TrajectoryError(f"{path.name}: format: expected {FORMAT!r}, got {str(got)[:60]!r}")
    try:
        check_fields(data)
    except TrajectoryError as exc:
        raise TrajectoryError(f"{path.name}: {exc}") from None
    return data


# ---------------------------------------------------------------------------------- fields
def _short(value) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _expect(ok: bool, field: str, expected: str, value) -> None:
    if not ok:
        raise TrajectoryError(f"{field}: expected {expected}, got {_short(value)}")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_fields(t: dict) -> None:
    """The fields replaying and scoring read, by type (their values are checked by the replay)."""
    for field in ("scenario", "scenario_version", "agent"):
        _expect(isinstance(t.get(field), str), field, "a string", t.get(field))
    _expect(isinstance(t.get("scenario_sha256"), str) and bool(_HEX64.fullmatch(t["scenario_sha256"])),
            "scenario_sha256", "the SHA-256 (64 lowercase hex digits) of the scenario text the run was played on",
            t.get("scenario_sha256"))
    if "scenario_content" in t:
        _expect(isinstance(t["scenario_content"], str), "scenario_content", "the scenario's YAML text",
                t["scenario_content"])
    _expect(t.get("persona") in PERSONAS, "persona", f"one of {list(PERSONAS)}", t.get("persona"))
    seed = t.get("seed")
    _expect("seed" in t and (seed is None or (_is_int(seed) and seed >= 0)), "seed", "a non-negative integer or null",
            seed)
    _expect(t.get("face") in ("structured", "text"), "face", "'structured' or 'text'", t.get("face"))
    _expect(isinstance(t.get("variant"), dict), "variant", "the seed's variant (an object)", t.get("variant"))
    weights = t.get("weights")
    _expect(isinstance(weights, dict) and set(weights) == {"TC", "TA", "TR"}, "weights",
            "an object with TC, TA and TR", weights)
    for k, v in weights.items():
        _expect(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0,
                f"weights.{k}", "a positive finite number", v)
    _expect(isinstance(t.get("actions"), list), "actions", "a list of the agent's actions", t.get("actions"))
    _expect(isinstance(t.get("log"), list), "log", "a list of log entries", t.get("log"))
    for i, entry in enumerate(t["log"]):
        _expect(isinstance(entry, dict) and isinstance(entry.get("type"), str) and _is_int(entry.get("t")),
                f"log[{i}]", "an entry with a 'type' (string) and a 't' (minute)", entry)
    config = t.get("config")
    if config is not None:
        _expect(isinstance(config, dict) and all(isinstance(config.get(k), str) for k in ("label", "id")),
                "config", "an object with 'label' and 'id' strings", config)


def weights_of(trajectory: dict) -> Weights:
    return Weights(**{k.lower(): v for k, v in trajectory["weights"].items()})


# ---------------------------------------------------------------------------------- scenario
def base_scenario(trajectory: dict, base: Scenario | None = None) -> Scenario:
    """The scenario file a run was played on, as recorded by the SHA-256 of its text: ``base``
    if given (its text must have that hash), else the text the trajectory carries, else the
    shipped scenario of that name if its text has that hash. Anything else is refused: a
    trajectory never names a file to open, and is never scored on a file it was not played on."""
    check_fields(trajectory)  # a trajectory built in memory is checked as a loaded one is
    want = trajectory["scenario_sha256"]
    if base is not None:
        have = (content_of(base) or _content_in_memory(base)).sha256
        if have != want:
            raise TrajectoryError(f"scenario_sha256: the run was played on scenario text {want[:12]}…, the "
                                  f"scenario given is {have[:12]}…; expected the file it was played on")
    elif "scenario_content" in trajectory:
        text = trajectory["scenario_content"]
        have = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if have != want:
            raise TrajectoryError(f"scenario_content: its SHA-256 is {have[:12]}…, the run records "
                                  f"{want[:12]}…; expected the text the run was played on")
        try:
            base = parse_content(text, "scenario_content", trajectory["scenario"])
        except ScenarioError as exc:
            raise TrajectoryError(f"scenario_content: {exc}") from None
    else:
        name = trajectory["scenario"]
        if name not in shipped_names():
            raise TrajectoryError(f"scenario: {str(name)[:80]!r} is not a shipped scenario and the trajectory "
                                  "carries no scenario_content; a trajectory never names a file to open")
        base = load_scenario(name)
        have = content_of(base).sha256
        if have != want:
            raise TrajectoryError(f"scenario_sha256: the run was played on {name} text {want[:12]}…, the shipped "
                                  f"{name}.yaml is {have[:12]}… and the trajectory carries no scenario_content; "
                                  "expected the scenario it was played on")
    if base.version != trajectory["scenario_version"]:
        raise TrajectoryError(f"scenario_version: the run records {trajectory['scenario']} "
                              f"v{trajectory['scenario_version']}, its scenario text is v{base.version}")
    return base


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
    from ..envs import ProactivityEnv, ProactivityTextEnv  # envs sit above scoring: imported when replaying

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
    raise TrajectoryError(f"variant: expected the variant seed {seed} draws for {trajectory['scenario']} "
                          f"({trajectory['persona']}); the recorded one is not")


def replay(trajectory: dict, base: Scenario | None = None) -> Scenario:
    """Play the recorded actions again from the seed on the recorded scenario; returns the
    scenario the run played (variant applied). Raises ``TrajectoryError`` naming the first action
    or log entry that the replay does not reproduce."""
    return _replay(trajectory, base)[0]


def _replay(trajectory: dict, base: Scenario | None = None) -> tuple[Scenario, dict]:
    """``replay``, and the breakdown the replayed env's own scorer gives (the live scores)."""
    from ..envs.registration import MAX_EPISODE_STEPS

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


def score_checked(scenario: Scenario, trajectory: dict, weights: Weights | None = None,
                  judges: list[Judge] | None = None, **overrides) -> dict:
    """``score_log`` on the run's log; a log the scorer cannot read (possible only with
    ``trust_log``) is a ``TrajectoryError`` naming the entry."""
    log = trajectory["log"]
    try:
        return score_log(scenario, trajectory["persona"], log, weights, judges, **overrides)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        bad = _bad_entry(scenario, trajectory["persona"], log)
        raise TrajectoryError(f"log{f'[{bad}]' if bad is not None else ''}: expected an entry the env writes, the "
                              f"scorer could not read it ({type(exc).__name__}: {_short(str(exc))})") from None


def _bad_entry(scenario: Scenario, persona: str, log: list[dict]) -> int | None:
    from .metrics import RunScorer

    scorer, grown = RunScorer(scenario, persona), []
    for i, entry in enumerate(log):
        grown.append(entry)
        try:
            scorer.feed(grown)
        except Exception:
            return i
    return None


_VERIFIED: OrderedDict[str, dict] = OrderedDict()
_VERIFIED_MAX = 8192
CACHED_METRICS = ("TC", "TA", "TR_D", "TR_J", "J", "continuation")


def read_trajectory(path: Path) -> tuple[dict, str]:
    """(the trajectory at ``path`` as ``load_trajectory`` checks it, the SHA-256 of the file)."""
    raw = _read(path)
    return _parse(raw, path), hashlib.sha256(raw).hexdigest()


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
    """SHA-256 of the source of every layer a replay runs (spec, sim, scoring, envs)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(p for layer in ("spec", "sim", "scoring", "envs") for p in (root / layer).rglob("*.py")):
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


def rescore_file(path: Path) -> tuple[dict, dict]:
    """(the trajectory at ``path``, its scores by ``rescore``, cached as ``rescore_cached`` says)."""
    trajectory, digest = read_trajectory(path)
    return trajectory, rescore_cached(trajectory, digest, path.name)
