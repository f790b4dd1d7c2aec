"""Evaluation of agents on scenarios × personas × seeds, written incrementally and resumable.

Layout of an output folder::

    DIR/manifest.json                                             what the folder holds (below)
    DIR/trajectories/<agent>/<scenario>-<persona>-s<seed>.json   one per finished run
    DIR/errored/<agent>/<scenario>-<persona>-s<seed>.json        runs over their fault budget
    DIR/results.json                                              rows agent × scenario × persona, with units
    DIR/.lock                                                     held while an evaluation writes

The manifest records, per agent, the configuration its runs were made with: the agent's settings
(an LLM's model, redacted endpoint, temperature, ...; a learned model's file hash), the suite
version, each scenario file's hash and the package version; and every command that wrote to the
folder. A run is finished when its trajectory file exists (written atomically) and was made with
the same configuration; a restarted evaluation skips those and plays only what is missing. An
evaluation whose configuration differs from the folder's is refused, with the differences,
unless asked to add to it (``add=True``, ``--add``): its runs then go under ``<agent>@<id>``.
``results.json`` is rebuilt from every trajectory in the folder, once at the end (and every
minute or so on long evaluations), from scores computed afresh: a finished run found on disk is
re-scored by replaying its actions from its seed (``replay.rescore``), never by
reading the scores stored in it. A file the evaluator did not write (not a trajectory, not under
its configuration's label, not reproduced by its actions) is named and left out; nothing in the
folder is ever deleted (a damaged or refused trajectory of a planned run is moved aside, then
played again). The rows are aggregated in one canonical order (agent, scenario, persona,
seed), so results.json is byte-identical whatever the concurrency or the interruptions.
The evaluator follows no symlink inside its folder: one planted there is refused.

An agent's bad output never ends an evaluation: the text face turns it into an error
observation, and a fault in a run (a tool that failed inside the world, an exception while
playing) is counted against the run's fault budget (``FaultBudget``, like Inspect's
``fail_on_error``), which decides whether the run is kept, retried or marked errored. Only an
unreachable endpoint or an unwritable folder stops an evaluation — everything finished is kept.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import queue
import re
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym

from .envs import ProactivityEnv, ProactivityTextEnv, env_name
from .envs.registration import MAX_EPISODE_STEPS
from .scoring import aggregate, results_document, write_json_atomic
from .scoring.metrics import Weights
from .replay import remember_live, rescore_cached
from .scoring.trajectory import TrajectoryError, UnreadableTrajectory, read_trajectory
from .scoring.client import LLMEndpointError, redact_settings, scrub
from .spec import PERSONAS, SUITE_VERSION, shipped_names
from .spec.escape import slug
from .spec.files import read_regular
from .spec.loader import scenario_dir

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "proactivity-gym/eval-1"
RESULTS_EVERY = 60.0  # seconds between interim rewrites of results.json on long evaluations


class EvalError(ValueError):
    """An evaluation that cannot start or go on; ``str()`` is one line saying why and what to do."""


@dataclass(frozen=True)
class RunKey:
    agent: str
    scenario: str
    persona: str
    seed: int

    def path(self, out: Path, label: str | None = None) -> Path:
        return out / "trajectories" / _safe(label or self.agent) / self.file

    @property
    def file(self) -> str:
        scenario = self.scenario if self.scenario in shipped_names() else slug(Path(self.scenario).stem)
        return f"{scenario}-{self.persona}-s{self.seed}.json"


@dataclass(frozen=True)
class FaultBudget:
    """How many faults a run may have and still be kept (``max_faults``); a run over it, or one
    that raised, is ``"error"``: marked errored (kept aside under ``errored/``, out of the
    results), or ``"retry"``: played again up to ``retries`` times, then marked errored."""

    max_faults: int = 10
    on_exceed: str = "error"
    retries: int = 1

    def __post_init__(self) -> None:
        if self.max_faults < 0 or self.retries < 0 or self.on_exceed not in ("error", "retry"):
            raise EvalError(f"fault budget: expected max_faults >= 0, retries >= 0 and on_exceed 'error' or 'retry', "
                            f"got {self.max_faults}, {self.retries}, {self.on_exceed!r}")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@-]+", "_", name)


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
    if persona not in PERSONAS:
        raise ValueError(f"persona: expected one of {list(PERSONAS)}, got {persona!r}")
    check_seed(seed)
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


def check_seed(seed) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: expected a non-negative integer, got {seed!r}")


def plan(agents: Iterable[str], scenarios: Iterable[str], personas: Iterable[str], seeds: Iterable[int]) -> list[RunKey]:
    """Every run of agents × scenarios × personas × seeds; a list given twice, an empty list or a
    negative seed is refused (a run counted twice would weigh twice in the results)."""
    lists = {"agents": list(agents), "scenarios": list(scenarios), "personas": list(personas), "seeds": list(seeds)}
    for what, items in lists.items():
        if not items:
            raise EvalError(f"{what}: expected at least one, got none")
        twice = sorted({str(x) for x in items if items.count(x) > 1})
        if twice:
            raise EvalError(f"{what}: {', '.join(twice)} given more than once; expected each once")
    for seed in lists["seeds"]:
        try:
            check_seed(seed)
        except ValueError as exc:
            raise EvalError(str(exc)) from None
    return [RunKey(a, s, p, seed) for a in lists["agents"] for s in lists["scenarios"] for p in lists["personas"]
            for seed in lists["seeds"]]


def run_record(key: RunKey, trajectory: dict, label: str | None = None) -> dict:
    scores = trajectory["scores"]
    return {"agent": label or key.agent, "scenario": key.scenario, "persona": key.persona, "seed": key.seed,
            "scores": {m: scores[m] for m in ("TC", "TA", "TR_D", "TR_J", "J", "continuation")}}


# ---------------------------------------------------------------------------------- configuration
def _sha256(path: Path) -> str:
    stat = path.stat()
    return _sha256_of(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def _sha256_of(path: Path, mtime_ns: int, size: int) -> str:
    """A file's digest, once per version of it (the runs of one configuration share the files)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def code_version() -> dict:
    """The package version (part of every run's configuration) and, informationally, the git
    commit of a source checkout (asked of git once per process)."""
    return dict(_code_version())


@functools.lru_cache(maxsize=1)
def _code_version() -> dict:
    from . import __version__

    version = {"package": __version__}
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True,
                                text=True, timeout=5)
        if commit.returncode == 0:
            version["git"] = commit.stdout.strip()
    return version


def agent_config(spec: str, agent, scenarios: Iterable[str], text_options: dict | None = None) -> dict:
    """What a run of ``agent`` depends on besides (scenario, persona, seed)."""
    settings = agent.settings() if hasattr(agent, "settings") else {}
    config = {"agent": spec, "settings": settings, "suite_version": SUITE_VERSION,
              "package": code_version()["package"],
              "scenarios": {name: _sha256(scenario_dir() / f"{name}.yaml" if name in shipped_names() else Path(name))
                            for name in scenarios}}
    if getattr(agent, "face", "structured") == "text" and text_options:
        config["text_options"] = {k: redact_settings(v) if isinstance(v, dict) else v for k, v in text_options.items()}
    return config


def config_id(config: dict) -> str:
    """A short id of a configuration (scenario hashes excluded: they are compared per scenario)."""
    core = {k: v for k, v in config.items() if k != "scenarios"}
    return hashlib.sha256(json.dumps(core, sort_keys=True, default=str).encode()).hexdigest()[:10]


def differences(old: dict, new: dict) -> list[str]:
    """What differs between two configurations of one agent, in words."""
    out = []
    for key in sorted(set(old) | set(new)):
        if key == "scenarios":
            for name in sorted(set(old.get(key, {})) & set(new.get(key, {}))):
                if old[key][name] != new[key][name]:
                    out.append(f"scenario {name} changed (sha256 {old[key][name][:12]}… → {new[key][name][:12]}…)")
        elif isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
            out += [f"{key}.{d}" for d in differences(old[key], new[key])]
        elif old.get(key) != new.get(key):
            out.append(f"{key} {old.get(key)!r} → {new.get(key)!r}")
    return out


class Manifest:
    """``DIR/manifest.json``: the configuration of each agent label, and the commands."""

    def __init__(self, out: Path):
        self.path = out / MANIFEST
        self.data = {"format": MANIFEST_FORMAT, "configurations": {}, "commands": []}
        if os.path.lexists(self.path):
            try:
                data = json.loads(read_regular(_no_link(self.path), 64 * 2**20).decode("utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
                raise EvalError(f"{self.path}: expected the evaluator's manifest: {exc}; "
                                "use another --out (nothing was changed)") from None
            problem = _manifest_problem(data)
            if problem:
                raise EvalError(f"{self.path}: {problem}; use another --out (nothing was changed)")
            self.data = data

    @classmethod
    def read(cls, out: Path) -> Manifest | None:
        """The folder's manifest, or None if it has none or one the evaluator did not write."""
        try:
            return cls(out)
        except EvalError:
            return None

    @property
    def configurations(self) -> dict[str, dict]:
        return self.data["configurations"]

    def label(self, config: dict, add: bool) -> str:
        """The label runs of ``config`` go under: the agent's name, or ``agent@id`` for a further
        configuration of it added to the folder. Raises ``EvalError`` on a conflict unless ``add``."""
        agent = config["agent"]
        held = self.configurations.get(agent)
        if held is None or not differences(held, config):
            return agent
        extra = f"{agent}@{config_id(config)}"
        if extra in self.configurations and not differences(self.configurations[extra], config):
            return extra
        if add:
            return extra
        raise EvalError(f"{self.path.parent} holds runs of {agent} with another configuration "
                        f"({'; '.join(differences(held, config))}); use --add to add this configuration to "
                        f"the folder (its runs go under {extra}), or another --out")

    def register(self, label: str, config: dict) -> None:
        held = self.configurations.get(label)
        if held is not None:
            config = {**config, "scenarios": {**held.get("scenarios", {}), **config["scenarios"]}}
        self.configurations[label] = config

    def save(self, command: list[str] | None) -> None:
        if command is not None:
            self.data["commands"].append({"argv": [scrub(str(a)) for a in command], "code": code_version(),
                                          "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
        write_json_atomic(self.path, self.data)


def _manifest_problem(data) -> str | None:
    """What is wrong with a manifest's shape (None: nothing), as ``field: expected …``."""
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        return f"format: expected {MANIFEST_FORMAT!r}"
    configurations, commands = data.get("configurations"), data.get("commands")
    if not isinstance(configurations, dict):
        return "configurations: expected an object of agent label → configuration"
    if not isinstance(commands, list):
        return "commands: expected a list of the commands that wrote to the folder"
    for label, config in configurations.items():
        if not isinstance(config, dict) or not isinstance(config.get("agent"), str):
            return f"configurations.{label[:60]}: expected a configuration with its 'agent'"
        scenarios = config.get("scenarios", {})
        if not isinstance(scenarios, dict) or not all(isinstance(v, str) for v in scenarios.values()):
            return f"configurations.{label[:60]}.scenarios: expected an object of scenario → sha256"
        if not isinstance(config.get("suite_version", ""), str):
            return f"configurations.{label[:60]}.suite_version: expected a string"
    return None


def _no_link(path: Path) -> Path:
    """``path``, refused if it is a symlink: the evaluator writes and reads only inside --out."""
    if path.is_symlink():
        raise EvalError(f"{path}: is a symlink; the evaluator follows no link inside its output folder "
                        "(one planted there could point anywhere); remove it or use another --out")
    return path


def _check_links(out: Path, labels: Iterable[str]) -> None:
    """Refuse a symlink (or anything but a folder) where the evaluator makes its folders and
    files (trajectories/, errored/, trajectories/<label>/, the manifest, results.json, .lock)."""
    for name in (MANIFEST, "results.json", ".lock"):
        _no_link(out / name)
    for folder in ("trajectories", "errored"):
        for path in (out / folder, *(out / folder / _safe(label) for label in labels)):
            if _no_link(path).exists() and not path.is_dir():
                raise EvalError(f"{path}: expected a folder of the evaluator's; use another --out")


@contextlib.contextmanager
def _locked(out: Path):
    """An exclusive lock on ``DIR/.lock`` for the evaluation's lifetime (released by the OS if the
    process dies)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    # Opened without following a link, and only if a regular file: a planted link is never truncated.
    try:
        fd = os.open(_no_link(out / ".lock"), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as exc:
        raise EvalError(f"{out / '.lock'}: cannot open the evaluator's lock file ({exc.strerror or exc}); "
                        "use another --out") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise EvalError(f"{out / '.lock'}: expected the evaluator's lock file; use another --out")
    with os.fdopen(fd, "r+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise EvalError(f"{out}: another evaluation is writing to this folder (pid {holder}); wait for it "
                            "or use another --out") from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                fh.truncate(0)
            fcntl.flock(fh, fcntl.LOCK_UN)


def _prepare(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test-{os.getpid()}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))  # never through a planted link
        probe.unlink()
    except OSError as exc:
        raise EvalError(f"--out {out}: cannot write there ({exc.strerror or exc}); expected a writable folder") from None


def _set_aside(path: Path, why: str) -> Path:
    """Move a file the evaluator cannot use out of the way, never deleting it."""
    n = 0
    while os.path.lexists(aside := path.with_name(f"{path.name}.{why}{n or ''}")):
        n += 1
    os.replace(path, aside)  # a symlink is moved as it is, never followed
    return aside


# ---------------------------------------------------------------------------------- evaluation
@dataclass
class _Run:
    key: RunKey
    label: str
    config_id: str


def evaluate(keys: list[RunKey], out: Path, make_agent: Callable[[str], object],
             on_run: Callable[[RunKey, bool], None] = lambda key, skipped: None, concurrency: int = 1,
             text_options: dict | None = None, player: Callable[[RunKey], dict] | None = None, *,
             add: bool = False, faults: FaultBudget | None = None, command: list[str] | None = None) -> list[dict]:
    """Play every run not already on disk, ``concurrency`` at a time; returns the run records of
    ``keys`` that are kept (finished ones included) in plan order. Errors in the configuration
    (see the module) are raised before anything runs. An endpoint that stays unreachable or a
    folder that cannot be written stops new runs from starting; the runs under way finish and are
    kept, then the failure is raised. ``player`` (key → trajectory) plays a run elsewhere, e.g. as
    a Ray task (``ray_eval.ray_player``); files are written here."""
    if concurrency < 1:
        raise EvalError(f"concurrency: expected at least 1, got {concurrency}")
    if len(set(keys)) != len(keys):
        raise EvalError("runs: some run is planned twice; expected each (agent, scenario, persona, seed) once")
    budget = faults or FaultBudget()
    out = Path(out)
    _prepare(out)
    with _locked(out):
        _check_links(out, ())
        manifest = Manifest(out)
        runs = _configure(keys, manifest, make_agent, text_options, add)
        _check_links(out, {run.label for run in runs})
        manifest.save(command)
        records, errored = _finished(runs, out)
        for run in runs:
            if run.key in records or run.key in errored:
                on_run(run.key, True)
        interim = _Interim(out, runs, records)
        made: set[Path] = set()  # the folders of trajectories made so far

        def play_and_save(run: _Run) -> tuple[str, dict]:
            status, trajectory = _play_within_budget(run, make_agent, text_options, budget, player)
            trajectory["config"] = {"label": run.label, "id": run.config_id}
            folder = "trajectories" if status == "kept" else "errored"
            path = out / folder / _safe(run.label) / run.key.file
            if path.parent not in made:
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            # Compact and without fsync: the C encoder, and a file torn by a power cut is set aside and played again.
            write_json_atomic(path, trajectory, durable=False, indent=None)
            if status == "kept":
                remember_live(trajectory)  # its live scores, under the file's digest: no replay on resume or report
            return status, trajectory

        def saved(run: _Run, result: tuple[str, dict]) -> None:
            status, trajectory = result
            if status == "kept":
                records[run.key] = run_record(run.key, trajectory, run.label)
            else:
                errored[run.key] = trajectory
            interim.maybe_write()
            on_run(run.key, False)

        todo = [run for run in runs if run.key not in records and run.key not in errored]
        try:
            _run_all(todo, play_and_save, saved, concurrency)
        finally:
            write_results(out, runs, records, errored, manifest)
        return [records[run.key] for run in runs if run.key in records]


def _configure(keys: list[RunKey], manifest: Manifest, make_agent, text_options, add: bool) -> list[_Run]:
    """Each run with its label and configuration id; the manifest learns the configurations."""
    labels: dict[str, tuple[str, str]] = {}
    for agent in dict.fromkeys(k.agent for k in keys):
        scenarios = sorted({k.scenario for k in keys if k.agent == agent})
        config = agent_config(agent, make_agent(agent), scenarios, text_options)
        label = manifest.label(config, add)
        labels[agent] = (label, config_id(config))
        manifest.register(label, config)
    return [_Run(k, *labels[k.agent]) for k in keys]


def _finished(runs: list[_Run], out: Path) -> tuple[dict[RunKey, dict], dict[RunKey, dict]]:
    """Runs already kept (their records, re-scored by replaying them) and runs already marked
    errored. A trajectory made with another configuration is refused; a damaged one (not JSON),
    or one that is not this run's or that its actions do not reproduce, is set aside (and said)
    and played again."""
    records, errored = {}, {}
    present = {p for folder in ("trajectories", "errored") for p in (out / folder).glob("*/*.json")}  # one listing
    for run in runs:
        for folder, found in (("trajectories", records), ("errored", errored)):
            path = out / folder / _safe(run.label) / run.key.file
            if path not in present:
                continue
            try:
                if path.is_symlink():
                    raise TrajectoryError(f"{path.name}: is a symlink; the evaluator follows no link in its folder")
                if folder == "errored":
                    trajectory = _load_errored(path)
                else:
                    trajectory, digest = read_trajectory(path)
                made_with = (trajectory.get("config") or {}).get("id")
                if made_with != run.config_id:
                    raise EvalError(f"{path}: made with another configuration ({made_with or 'none recorded'}, "
                                    f"this evaluation is {run.config_id}); use another --out")
                if folder == "trajectories":
                    _check_run(trajectory, run.key, run.label)
                    trajectory = {"scores": rescore_cached(trajectory, digest, path.name)}
            except UnreadableTrajectory:
                _set_aside(path, "damaged")
                continue
            except TrajectoryError as exc:
                aside = _set_aside(path, "refused")
                _warn(f"{path.parent}/{exc}; moved to {aside.name}, the run is played again")
                continue
            found[run.key] = run_record(run.key, trajectory, run.label) if folder == "trajectories" else trajectory
    return records, errored


def _check_run(trajectory: dict, key: RunKey, label: str) -> None:
    """A trajectory found at a run's path is that run's, of this label, on the evaluator's weights."""
    found = (trajectory["scenario"], trajectory["persona"], trajectory["seed"])
    if found != (key.scenario, key.persona, key.seed):
        raise TrajectoryError(f"{key.file}: holds the run {found}, expected {(key.scenario, key.persona, key.seed)}")
    if (trajectory.get("config") or {}).get("label") != label:
        raise TrajectoryError(f"{key.file}: config.label: expected {label!r}")
    if trajectory["weights"] != Weights().as_dict():
        raise TrajectoryError(f"{key.file}: weights: expected the evaluator's {Weights().as_dict()}")


def _load_errored(path: Path) -> dict:
    """A run marked errored: a JSON object with its ``error`` (it is counted, never scored)."""
    try:
        data = json.loads(read_regular(path, 256 * 2**20).decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise UnreadableTrajectory(f"{path.name}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("error"), str) or not all(
            isinstance(data.get(k), str) for k in ("agent", "scenario", "persona")):
        raise TrajectoryError(f"{path.name}: expected an errored run's record (agent, scenario, persona, error)")
    if not isinstance(data.get("config") or {}, dict):
        raise TrajectoryError(f"{path.name}: config: expected an object")
    return data


_warned: set[str] = set()


def _warn(message: str) -> None:
    """Say, once per process, what the evaluator refused or left out (it never stops for it)."""
    if message not in _warned:
        _warned.add(message)
        print(f"warning: {message}", file=sys.stderr)


def _play_within_budget(run: _Run, make_agent, text_options, budget: FaultBudget, player=None) -> tuple[str, dict]:
    """Play a run; ``"kept"`` with its trajectory if within the fault budget, else retried or
    ``"errored"`` with what is known of it. Endpoint failures are not faults: they stop the eval."""
    attempts = 1 + (budget.retries if budget.on_exceed == "retry" else 0)
    for attempt in range(attempts):
        try:
            trajectory = player(run.key) if player else play(make_agent(run.key.agent), run.key.scenario,
                                                             run.key.persona, run.key.seed, text_options)
        except (LLMEndpointError, OSError, MemoryError):
            raise
        except Exception as exc:  # a fault while playing: never the end of the evaluation
            trajectory = {"format": "proactivity-gym/trajectory-1", "scenario": run.key.scenario,
                          "persona": run.key.persona, "seed": run.key.seed, "agent": run.key.agent,
                          "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}"}
        else:
            if len(trajectory.get("faults", [])) <= budget.max_faults:
                return "kept", trajectory
            trajectory["error"] = (f"{len(trajectory['faults'])} faults, over the budget of {budget.max_faults}")
        trajectory["attempts"] = attempt + 1
    return "errored", trajectory


class _Interim:
    """Rewrites results.json now and then on long evaluations, never so often that it costs much:
    at most every ``RESULTS_EVERY`` seconds and 20 times as long as the last rewrite took."""

    def __init__(self, out: Path, runs: list[_Run], records: dict):
        self.out, self.runs, self.records = out, runs, records
        self.last, self.cost = time.monotonic(), 0.0

    def maybe_write(self) -> None:
        now = time.monotonic()
        if now - self.last < max(RESULTS_EVERY, 20 * self.cost):
            return
        write_results(self.out, self.runs, self.records, {})
        self.last = time.monotonic()
        self.cost = self.last - now


def write_results(out: Path, runs: list[_Run], records: dict[RunKey, dict], errored: dict[RunKey, dict],
                  manifest: Manifest | None = None) -> list[dict]:
    """``results.json`` from every trajectory in the folder: this evaluation's records plus every
    other configuration's trajectories on disk, each re-scored by replaying it. A file the
    evaluator did not write is named (on stderr) and left out. A row whose group has errored
    runs (kept under ``errored/``, out of the means) counts them in ``errored``. The records are
    aggregated in one canonical order, so the file does not depend on the order runs finished."""
    manifest = manifest or Manifest.read(out)
    configurations = manifest.configurations if manifest else {}
    planned = {out / "trajectories" / _safe(r.label) / r.key.file for r in runs}
    everything = list(records.values())
    for path in sorted((out / "trajectories").glob("*/*.json")):
        if path in planned:
            continue
        try:
            everything.append(_other_record(path, configurations))
        except (TrajectoryError, EvalError) as exc:
            _warn(f"left out of results.json: {path}: {str(exc).removeprefix(f'{path.name}: ')}")
    everything.sort(key=lambda r: (r["agent"], r["scenario"], r["persona"], r["seed"]))
    rows = aggregate(everything, ("agent", "scenario", "persona"))
    counts: dict[tuple, int] = {}
    for path in sorted((out / "errored").glob("*/*.json")):
        with contextlib.suppress(TrajectoryError):
            t = _load_errored(path)
            label = (t.get("config") or {}).get("label") or t["agent"]
            if path.is_symlink() or _safe(label) != path.parent.name or label not in configurations:
                continue  # not the evaluator's
            counts[(label, t["scenario"], t["persona"])] = counts.get((label, t["scenario"], t["persona"]), 0) + 1
    for row in rows:
        row["suite_version"] = configurations.get(row["agent"], {}).get("suite_version", SUITE_VERSION)
        if counts.get((row["agent"], row["scenario"], row["persona"])):
            row["errored"] = counts[(row["agent"], row["scenario"], row["persona"])]
    write_json_atomic(out / "results.json", results_document(rows, SUITE_VERSION))
    return rows


def _other_record(path: Path, configurations: dict[str, dict]) -> dict:
    return verified_run(path, configurations)[0]


def verified_run(path: Path, configurations: dict[str, dict] | None) -> tuple[dict, dict]:
    """(the run record, the trajectory) of the file at ``path`` in an output folder, its scores
    re-scored by replaying its actions. Raises ``TrajectoryError`` for a file the evaluator (or
    the MCP server) did not write there: a symlink, not a trajectory, not in the folder of its
    label or the file of its run, not on the evaluator's weights, not reproduced by its actions
    and, where the folder has a manifest (``configurations``), not of a configuration in it."""
    if path.is_symlink() or path.parent.is_symlink():
        raise TrajectoryError(f"{path.name}: is or is under a symlink (not followed)")
    trajectory, digest = read_trajectory(path)
    config = trajectory.get("config") or {}
    label = config.get("label") or trajectory["agent"]
    if _safe(label) != path.parent.name:
        raise TrajectoryError(f"{path.name}: config.label: expected the label of its folder {path.parent.name!r}, "
                              f"got {str(label)[:60]!r}")
    if configurations is not None:
        if label not in configurations:
            raise TrajectoryError(f"{path.name}: config.label: {str(label)[:60]!r} is no configuration in the manifest")
        if config.get("id") != config_id(configurations[label]):
            raise TrajectoryError(f"{path.name}: config.id: expected the id of {label}'s configuration in the manifest")
    if trajectory["seed"] is None:
        raise TrajectoryError(f"{path.name}: seed: expected the run's seed")
    key = RunKey(trajectory["agent"], trajectory["scenario"], trajectory["persona"], trajectory["seed"])
    if path.name != key.file:
        raise TrajectoryError(f"{path.name}: expected the file of the run it holds, {key.file}")
    if trajectory["weights"] != Weights().as_dict():
        raise TrajectoryError(f"{path.name}: weights: expected the evaluator's {Weights().as_dict()}")
    return run_record(key, {"scores": rescore_cached(trajectory, digest, path.name)}, label), trajectory


def _run_all(runs: list[_Run], work: Callable[[_Run], object], saved: Callable[[_Run, object], None],
             concurrency: int) -> None:
    """``work`` on each run in up to ``concurrency`` daemon threads; ``saved`` in this thread.

    Daemon threads, so that an interrupt (Ctrl-C, SIGTERM) ends the process at once: a run under
    way is lost, and every finished one is already on disk.
    """
    todo: queue.SimpleQueue[_Run] = queue.SimpleQueue()
    for run in runs:
        todo.put(run)
    done: queue.SimpleQueue[tuple[_Run, object, BaseException | None] | None] = queue.SimpleQueue()
    stop = threading.Event()

    def worker() -> None:
        try:
            while not stop.is_set():
                try:
                    run = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    done.put((run, work(run), None))
                except Exception as exc:
                    stop.set()
                    done.put((run, None, exc))
        finally:
            done.put(None)  # this worker has stopped

    workers = [threading.Thread(target=worker, daemon=True) for _ in range(min(concurrency, len(runs)))]
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
    unknown = [s for s in scenario_list if s not in shipped_names() and not Path(s).is_file()]
    if unknown:
        raise ValueError(f"--scenarios: unknown {unknown}; expected 'all', names from {shipped_names()} or "
                         "scenario files")
    bad = [p for p in persona_list if p not in PERSONAS]
    if bad:
        raise ValueError(f"--personas: unknown {bad}; expected 'all' or names from {list(PERSONAS)}")
    return scenario_list, persona_list
