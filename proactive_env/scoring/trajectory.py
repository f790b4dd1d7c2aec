"""Trajectory files: everything a run leaves, so it can be re-scored without re-running.

A trajectory is one JSON document: what was run (scenario, its version and the SHA-256 of the
exact text it was played on — with the text itself for a file that is not one of the shipped
scenarios —, the seed's variant, persona, seed, face, agent), what happened (the agent's actions
and the world's event log with every approval decision), and the scores computed at the time.

Scores are never read back from a file. ``proactive_env.replay.rescore`` (above the envs) replays the recorded actions from the seed
on the recorded scenario and refuses a trajectory whose actions do not reproduce its log (or
whose scenario text is neither in it nor the shipped file of that hash); the scores are then a
function of the (reproduced) log and the scenario alone, so they equal the live ones exactly.
``trust_log=True`` skips the replay and scores the log as recorded (faster, and forgeable).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

from ..spec import PERSONAS, SUITE_VERSION, Scenario, ScenarioError, load_scenario, shipped_names
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


def read_trajectory(path: Path) -> tuple[dict, str]:
    """(the trajectory at ``path`` as ``load_trajectory`` checks it, the SHA-256 of the file)."""
    raw = _read(path)
    return _parse(raw, path), hashlib.sha256(raw).hexdigest()
