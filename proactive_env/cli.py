"""``proactivity-gym``: validate scenarios, play and evaluate agents, train policies, and compare
and look at the results.

Each subcommand is two functions: ``_add_<name>(sub)`` declares its options (every one with its
default and choices in ``--help``) and ``_<name>(args)`` runs it. A misuse ends in one line on
stderr, ``proactivity-gym <command>: error: ...``, and exit code 2.
"""

from __future__ import annotations

import argparse
import builtins
import json
import math
import os
import signal
import sys
from pathlib import Path

from .spec import PERSONAS, SUITE_VERSION, ScenarioError, json_schema, load_file, shipped_names
from .spec.escape import strip_control


def print(*values, sep: str = " ", end: str = "\n", file=None, flush: bool = False) -> None:  # noqa: A001
    """Every ``print`` of this module, with control characters stripped: what the CLI prints (scenario
    strings, model text, error messages) reaches a terminal, where escape sequences could forge it.
    What goes to stderr (errors, notices) is also redacted and kept to one line per call."""
    text = sep.join(map(str, values))
    if file is sys.stderr:
        from .scoring.client import redact

        text = strip_control(redact(text), keep_newlines=False)
    builtins.print(strip_control(text), end=end, file=file, flush=flush)


PROG = "proactivity-gym"
TRAINERS = {"maskable-ppo": "train_maskable_ppo", "ppo": "train_ppo", "dqn": "train_dqn", "rllib-ppo": "train_rllib",
            "bc": "bc"}
TRAINER_EXTRAS = {"rllib-ppo": "rllib", "bc": "minari"}  # the rest need the rl extra
AGENT_PREFIXES = {"rllib-ppo": "rllib", "bc": "bc"}  # the rest save sb3: models
DEFAULT_AGENTS = "oracle,policy-follower,always-suggest,always-execute,random,noop"
TEST_SEED = 1000  # seeds from here on are the test split: what the README's tables report


class UsageError(Exception):
    """A misuse the user can fix; reported as one line."""


# ---------------------------------------------------------------------------------- parser
class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every option's help ends with its default (where it has one)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if ("%(default)" in text or "default:" in text or default in (None, argparse.SUPPRESS)
                or isinstance(action, (argparse._HelpAction, argparse._VersionAction))
                or (not action.option_strings and action.nargs not in ("?", "*"))):
            return text
        if isinstance(action, argparse._StoreTrueAction) and default is False:
            return text
        if default == "":
            return f"{text} (default: empty)".strip()
        return f"{text} (default: %(default)s)".strip()


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors and defaults in the help."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _int_at_least(low: int, high: int | None = None):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {strip_control(text)[:40]!r}") from None
        if value < low or (high is not None and value > high):
            within = f"≥ {low}" + (f" and ≤ {high}" if high is not None else "")
            raise argparse.ArgumentTypeError(f"expected an integer {within}, got {value}")
        return value

    parse.__name__ = "int"
    return parse


def _float_above(low: float, inclusive: bool, high: float | None = None):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {strip_control(text)[:40]!r}") from None
        within = f"{'≥' if inclusive else '>'} {low:g}" + (f" and ≤ {high:g}" if high is not None else "")
        if not math.isfinite(value):  # NaN passes every comparison below and would poison the manifest
            raise argparse.ArgumentTypeError(f"expected a finite number {within}, got {text!r}")
        if value < low or (value == low and not inclusive) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected a number {within}, got {value:g}")
        return value

    parse.__name__ = "float"
    return parse


_positive_float = _float_above(0.0, inclusive=False)
_nonnegative_float = _float_above(0.0, inclusive=True)
_temperature = _float_above(0.0, inclusive=True, high=2.0)  # the OpenAI API's range
_timeout = _float_above(0.0, inclusive=False, high=86_400.0)
# Upper bounds: a value past them is a typo, and accepted it would hang (10^20 seeds) or flood.
MAX_PORT = 65535
MAX_SEEDS = 10_000


def _markup_free(value: object) -> str:
    """Data for a rich console: control characters stripped and rich's own markup escaped, so a
    path or a name prints as it is (``[bold]`` stays text)."""
    from rich.markup import escape

    from .spec.escape import strip_control

    return escape(strip_control(value))
MAX_RETRIES = 100


def _version() -> str:
    try:
        from importlib.metadata import version

        package = version("proactivity-gym")
    except Exception:  # running from a checkout that is not installed
        from . import __version__ as package
    return f"{PROG} {package} (scenario suite {SUITE_VERSION})"


# ---------------------------------------------------------------------------------- names
def agent_help() -> str:
    from .baselines import SCRIPTED, TEXT_SCRIPTED

    names = ", ".join([*SCRIPTED, *TEXT_SCRIPTED])
    return (f"{names}; sb3:PATH, rllib:PATH or bc:PATH (a policy saved by `train`); "
            "openai:MODEL or openai/MODEL (an LLM on --base-url)")


def scenario_ref(text: str) -> tuple[str, str | None]:
    """A scenario as the user wrote it — a shipped name (``monitor``), a scenario file, or a gym
    id (``Proactivity-Monitor-v0``, ``Proactivity-Monitor-Planner-v0``, ``proactive_env:…``) —
    as (name or path, the persona the id names or None). Every command resolves through here."""
    from .envs.resolve import resolve_scenario

    try:
        ref = resolve_scenario(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return ref.scenario, ref.persona


def _make_agent(spec: str, **llm_options):
    from .baselines import make_agent

    try:
        return make_agent(spec, **llm_options)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# ---------------------------------------------------------------------------------- validate / check / schema
def _add_validate(sub) -> None:
    p = sub.add_parser("validate", help="check scenario files", description="Check scenario files: one line per "
                       "file, `ok` or file: path inside it: what was expected.")
    p.add_argument("files", nargs="+", metavar="SCENARIO", help="a scenario file, shipped name or gym id")
    p.set_defaults(func=_validate)


def _validate(args) -> int:
    from .spec.loader import scenario_dir

    status = 0
    for text in args.files:
        name, _ = scenario_ref(text)
        path = scenario_dir() / f"{name}.yaml" if name in shipped_names() else Path(name)
        try:
            s = load_file(path)
        except ScenarioError as exc:  # every problem of the file, one line each
            for line in exc.lines():
                print(f"error: {line}", file=sys.stderr)
            status = 1
            continue
        except Exception as exc:  # never stop before the other files are reported
            print(f"error: {path.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            status = 1
            continue
        print(f"ok: {path.name}: {s.title} v{s.version}, {len(s.tasks)} tasks, {s.days} days")
    return status


def _add_check(sub) -> None:
    p = sub.add_parser("check", help="play the oracle and baselines on a scenario against the acceptance rules")
    p.add_argument("file", metavar="SCENARIO", help="a scenario file, shipped name or gym id")
    p.add_argument("--seeds", type=_int_at_least(1, MAX_SEEDS), default=3, help="runs per persona")
    p.set_defaults(func=_check)


def _check(args) -> int:
    from .baselines import make_agent
    from .check import check_scenario

    name, _ = scenario_ref(args.file)
    rules = check_scenario(name, make_agent, seeds=args.seeds)
    for rule in rules:
        print(f"{'PASS' if rule.passed else 'FAIL'}  {rule.description}: {rule.detail}")
    failed = sum(not r.passed for r in rules)
    print(f"{len(rules) - failed} passed, {failed} failed")
    return 1 if failed else 0


def _add_schema(sub) -> None:
    p = sub.add_parser("schema", help="print the JSON Schema of a scenario file")
    p.set_defaults(func=_schema)


def _schema(args) -> int:
    print(json_schema())
    return 0


# ---------------------------------------------------------------------------------- run
def _add_run(sub) -> None:
    p = sub.add_parser("run", help="play one episode and print its timeline and scores",
                       description="Play one episode, print its timeline and its scores (data scale: TA, TR-D, "
                                   "J and continuation as fractions, TC 0–100, TR-J 1–5).")
    p.add_argument("--scenario", default="monitor", help="a shipped name, a scenario file or a gym id "
                   "(Proactivity-Monitor-v0, Proactivity-Monitor-Planner-v0, proactive_env:…)")
    p.add_argument("--persona", choices=PERSONAS, help="default: the id's persona, else operator")
    p.add_argument("--agent", default="oracle", help=agent_help())
    p.add_argument("--seed", type=_int_at_least(0), default=0, help="the episode's seed (≥ 1000: the test split)")
    p.add_argument("--save", metavar="TRAJECTORY", help="also write the run's trajectory file (for `show`, `rescore`)")
    _add_llm_options(p)
    p.set_defaults(func=_run)


def _scenario_and_persona(args) -> tuple[str, str]:
    """--scenario and --persona of a one-scenario command; a gym id may name the persona."""
    scenario, id_persona = scenario_ref(args.scenario)
    if id_persona and args.persona and args.persona != id_persona:
        raise UsageError(f"--persona {args.persona} contradicts --scenario {args.scenario} (persona {id_persona})")
    return scenario, args.persona or id_persona or "operator"


def _run(args) -> int:
    from .envs.render import ansi_timeline
    from .evaluate import make_env
    from .scoring import write_json_atomic

    scenario, persona = _scenario_and_persona(args)
    llm_options, text_options = _llm_options(args)
    agent = _make_agent(args.agent, **llm_options)
    _llm_options(args, [agent])  # refuses what this agent does not use
    env = make_env(scenario, persona, getattr(agent, "face", "structured"), text_options)
    obs, info = env.reset(seed=args.seed)
    agent.reset(env.unwrapped, args.seed)
    terminated = truncated = False
    while not (terminated or truncated):
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
    print(ansi_timeline(env.unwrapped.world, last=None))
    print(json.dumps({k: round(v, 4) for k, v in info["scores"].items() if isinstance(v, float)}))
    if args.save:
        trajectory = env.unwrapped.trajectory(agent=agent.name)
        trajectory["truncated"] = bool(truncated)
        trajectory.update(getattr(agent, "trajectory_extras", dict)())
        write_json_atomic(args.save, trajectory)
        print(f"trajectory: {args.save} (draw it with: {PROG} show {args.save})")
    env.close()
    return 0


# ---------------------------------------------------------------------------------- eval
def _add_eval(sub) -> None:
    p = sub.add_parser("eval", help="evaluate agents on scenarios × personas × seeds; print the results table",
                       description="Evaluate agents and print the results table. Writes OUT/results.json (units "
                                   "inside) and one trajectory per run under OUT/trajectories/; an interrupted "
                                   "evaluation resumes with the same command.")
    p.add_argument("--agents", default=DEFAULT_AGENTS, help=f"comma-separated: {agent_help()}")
    p.add_argument("--scenarios", default="all", help="'all' or comma-separated shipped names, scenario files "
                   f"or gym ids ({', '.join(shipped_names())}); an id naming a persona selects it")
    p.add_argument("--personas", default="all", help=f"'all' or comma-separated from {', '.join(PERSONAS)}")
    p.add_argument("--seeds", type=_int_at_least(1, MAX_SEEDS), default=3, help="runs per scenario–persona pair")
    p.add_argument("--seed", type=_int_at_least(0), default=TEST_SEED,
                   help=f"first seed: ≥ {TEST_SEED} is the test split (the benchmark's numbers), below it the "
                        "training seeds")
    p.add_argument("--out", default="results", help="output folder")
    p.add_argument("--concurrency", type=_int_at_least(1, 256), default=1, help="runs played at once (threads)")
    p.add_argument("--add", action="store_true",
                   help="add this configuration to an --out folder that holds another one (else refused, with why)")
    p.add_argument("--max-faults", type=_int_at_least(0), default=10,
                   help="faults (tool calls the world failed on) a run may have and still be kept")
    p.add_argument("--on-fault", choices=["error", "retry"], default="error",
                   help="a run over its fault budget is marked errored (kept under OUT/errored/), or played once "
                        "more first")
    p.add_argument("--trust-model-files", action="store_true",
                   help="let sb3:PATH and rllib:PATH unpickle whatever the model files hold (runs code from them: "
                        "only files you trust; rllib folders trained on this machine need no flag)")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="play each run as a Ray task: on the cluster at ADDRESS, or (no ADDRESS) on a local Ray of "
                        "--concurrency CPUs (1: all cores) started and stopped here; needs the rllib extra")
    _add_llm_options(p)
    p.set_defaults(func=_eval)


def _add_llm_options(p) -> None:
    llm = p.add_argument_group("LLM agents (openai:MODEL) and the user-reply rephraser")
    llm.add_argument("--base-url", help="an OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 "
                                        "(default: the openai client's, OPENAI_BASE_URL or api.openai.com)")
    llm.add_argument("--api-key-env", default="OPENAI_API_KEY",
                     help="the environment variable holding the API key (unset: 'EMPTY', for local servers)")
    llm.add_argument("--temperature", type=_temperature, default=0.0, help="sampling temperature (0 to 2)")
    llm.add_argument("--max-tokens", type=_int_at_least(1, 1_000_000), default=1024, help="per model answer")
    llm.add_argument("--timeout", type=_timeout, default=60.0, help="seconds per request")
    llm.add_argument("--retries", type=_int_at_least(0, MAX_RETRIES), default=3,
                     help="further attempts after a failed request")
    llm.add_argument("--rephraser", metavar="MODEL",
                     help="reword the simulated user's replies with this model (never changes a decision)")
    llm.add_argument("--rephraser-base-url", help="the rephraser's endpoint (default: --base-url)")


def _eval_plan(args) -> tuple[list[str], list[str], list[str]]:
    from .evaluate import resolve

    refs = [scenario_ref(s) for s in args.scenarios.split(",") if s.strip()] if args.scenarios != "all" else []
    named = sorted({p for _, p in refs if p})
    personas = args.personas
    if named:
        if args.personas != "all" and set(named) - set(args.personas.split(",")):
            raise UsageError(f"--scenarios names personas {named} that --personas {args.personas} leaves out")
        personas = ",".join(named) if args.personas == "all" else args.personas
    try:
        scenarios, persona_list = resolve(",".join(s for s, _ in refs) if refs else "all", personas)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    from .baselines import canonical_agent

    try:
        agents = [canonical_agent(a.strip()) for a in args.agents.split(",") if a.strip()]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not agents:
        raise UsageError("--agents: expected at least one agent")
    return agents, scenarios, persona_list


def _eval(args) -> int:
    if args.ray is None:
        return _eval_here(args)
    try:  # --ray: the same evaluation, each run a Ray task; files are written here as without it
        from .ray_eval import ray_session
    except ImportError as exc:
        raise UsageError(f"--ray needs the rllib extra ({exc.name} is missing): pip install -e '.[rllib]'") from None
    with ray_session(args.ray, args.concurrency if args.concurrency > 1 else None) as cpus:
        return _eval_here(args, ray_cpus=cpus)


def _ray_player(llm_options: dict, text_options: dict | None):
    from .baselines import make_agent
    from .ray_eval import agent_factory, ray_player

    return ray_player(agent_factory(make_agent, llm_options), text_options)


def _eval_here(args, ray_cpus: int = 0) -> int:
    try:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        raise UsageError("`eval` needs rich: pip install -e '.[eval]'") from None
    from .evaluate import FaultBudget, evaluate, plan
    from .scoring import aggregate
    from .scoring.client import LLMEndpointError

    llm_options, text_options = _llm_options(args)
    llm_options = {**llm_options, "trust_model_files": args.trust_model_files}
    agents, scenarios, personas = _eval_plan(args)
    _llm_options(args, [_make_agent(agent, **llm_options) for agent in agents])  # refuses unused options
    if text_options:
        from .envs.rephrase import OpenAIRephraser

        try:
            OpenAIRephraser(text_options["rephraser"])
        except (ValueError, ImportError) as exc:
            raise UsageError(f"--rephraser: {exc}") from None
    try:
        keys = plan(agents, scenarios, personas, range(args.seed, args.seed + args.seeds))
        budget = FaultBudget(args.max_faults, args.on_fault)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    console = Console() if sys.stdout.isatty() else Console(width=160)
    out = Path(args.out)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False, refresh_per_second=2) as progress:  # light on the GIL
        bar = progress.add_task("evaluating", total=len(keys))

        def step(key, skipped):
            progress.update(bar, advance=1, description=_markup_free(f"{key.agent} {key.scenario} {key.persona} s{key.seed}")
                            + (" (done before)" if skipped else ""))

        previous = signal.signal(signal.SIGTERM, _exit_on_signal(out))
        try:
            player = _ray_player(llm_options, text_options) if ray_cpus else None
            records = evaluate(keys, out, lambda spec: _make_agent(spec, **llm_options), on_run=step,
                               concurrency=ray_cpus or args.concurrency, text_options=text_options, player=player,
                               add=args.add, faults=budget, command=sys.argv)
        except KeyboardInterrupt:
            console.print(f"[yellow]interrupted; finished runs are kept in {_markup_free(out)} — run the same command to resume")
            return 130
        except (LLMEndpointError, OSError) as exc:
            progress.stop()
            print(f"error: {exc}; finished runs are kept in {out} — run the same command to resume", file=sys.stderr)
            return 1
        except ValueError as exc:  # a configuration the folder refuses, a lock held by another eval
            progress.stop()
            print(f"error: {exc}", file=sys.stderr)
            return 2
        finally:
            signal.signal(signal.SIGTERM, previous)
    overall = aggregate(records, ("agent",))
    console.print(results_table("Proactivity-Gym results", overall, ("agent",)))
    console.print(results_table("By persona", aggregate(records, ("agent", "persona")), ("agent", "persona")))
    if len(scenarios) > 1:
        console.print(results_table("By scenario", aggregate(records, ("agent", "scenario")), ("agent", "scenario")))
    from .scoring.results import LEGEND, ci_statement

    console.print(LEGEND, style="dim")
    console.print(ci_statement(overall), style="dim")
    errored = len(list((out / "errored").glob("*/*.json")))
    if errored:
        console.print(f"[yellow]{errored} runs errored (over the fault budget): {_markup_free(out / 'errored')}")
    console.print(split_line(args.seed, args.seeds))
    console.print(_markup_free(f"results: {out / 'results.json'}; trajectories: {out / 'trajectories'}; "
                               f"compare and plot with: {PROG} report {out}"))
    return 0


def split_line(first: int, count: int) -> str:
    """Which split an evaluation ran on, said with its seeds."""
    last = first + count - 1
    seeds = f"seed {first}" if count == 1 else f"seeds {first}–{last}"
    if first >= TEST_SEED:
        return f"split: test ({seeds}), the split the README's tables report"
    if last < TEST_SEED:
        return f"split: training ({seeds}); the benchmark's numbers are on the test split: --seed {TEST_SEED}"
    return f"split: MIXED ({seeds}: training below {TEST_SEED}, test from it) — not comparable with either"


def results_table(title: str, rows: list[dict], keys: tuple[str, ...]):
    """A rich table of aggregated rows: % only here, labelled in the headers."""
    from rich.table import Table
    from rich.text import Text

    from .scoring.results import METRICS, display, display_ci, header

    table = Table(title=title)
    for key in keys:
        table.add_column(key.capitalize(), no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True)
    for metric in METRICS:
        table.add_column(header(metric), justify="right", no_wrap=True)
    table.add_column("J 95% CI", justify="right", no_wrap=True)
    for row in rows:  # names as plain Text: rich would read '[...]' in them as markup (links, styles)
        table.add_row(*[Text(strip_control(row[k], keep_newlines=False)) for k in keys], str(row["runs"]),
                      *[display(m, row[m]) for m in METRICS], display_ci("J", row["J_ci"]))
    return table


def _exit_on_signal(out: Path):
    """A SIGTERM handler that ends the evaluation at once. Every finished run is already on disk
    (written atomically) and the next run rebuilds results.json; an exception raised from the
    handler instead could land in a ``__del__`` and be swallowed."""
    def handler(signum, frame) -> None:
        sys.stdout.flush()
        print(f"terminated; finished runs are kept in {out} — run the same command to resume", file=sys.stderr,
              flush=True)
        os._exit(128 + signum)

    return handler


LLM_DEFAULTS = {"base_url": None, "api_key_env": "OPENAI_API_KEY", "temperature": 0.0, "max_tokens": 1024,
                "timeout": 60.0, "retries": 3}  # as declared in _add_llm_options


def _llm_options(args, agents: list | None = None) -> tuple[dict, dict | None]:
    """The endpoint flags as ``make_agent`` options for openai: agents, and the text env's
    options (the rephraser, on the same endpoint unless --rephraser-base-url says otherwise).
    With the agents they serve (specs or made agents), an option none of them uses is refused."""
    endpoint = {"base_url": args.base_url, "api_key_env": args.api_key_env, "timeout": args.timeout,
                "retries": args.retries}
    agent = {**endpoint, "temperature": args.temperature, "max_tokens": args.max_tokens}
    if agents is not None:
        _refuse_unused_llm_options(args, agents)
    if not args.rephraser:
        return agent, None
    rephraser = {**endpoint, "model": args.rephraser, "base_url": args.rephraser_base_url or args.base_url}
    return agent, {"rephraser": rephraser}


def _refuse_unused_llm_options(args, agents: list) -> None:
    """Every option is used or refused: a flag that no agent of the run reads is a mistake (a
    ``--rephraser`` with only structured-face agents would otherwise change nothing, silently)."""
    names = [getattr(a, "name", a) for a in agents]
    if args.rephraser_base_url and not args.rephraser:
        raise UsageError("--rephraser-base-url: expected --rephraser MODEL beside it")
    if args.rephraser and not any(getattr(a, "face", "structured") == "text" for a in agents):
        raise UsageError(f"--rephraser rewords the user's replies on the text face; none of {', '.join(names)} "
                         "plays it (openai:MODEL and text-face baselines do)")
    rephrased = bool(args.rephraser)  # the endpoint flags serve the rephraser too
    if any(str(n).startswith("openai:") for n in names) or rephrased:
        return
    given = [k for k, default in LLM_DEFAULTS.items() if getattr(args, k) != default]
    if given:
        flags = ", ".join("--" + k.replace("_", "-") for k in given)
        raise UsageError(f"{flags}: used by openai:MODEL agents and the rephraser only; none of {', '.join(names)} "
                         "is one")


# ---------------------------------------------------------------------------------- rescore
def _add_rescore(sub) -> None:
    p = sub.add_parser("rescore", help="re-score saved trajectories with other judges, without re-running episodes")
    p.add_argument("dir", help="an eval output folder (with trajectories/)")
    p.add_argument("--judge", action="append", metavar="SPEC",
                   help="'rubric' or 'openai:MODEL@BASE_URL'; repeat to average judges (default: rubric)")
    p.add_argument("--out", required=True, help="the rescored results file (results.json format)")
    p.add_argument("--cache", help="verdict cache folder (default: ~/.cache/proactivity-gym/judges)")
    p.add_argument("--timeout", type=_timeout, default=60.0, help="seconds per LLM request")
    p.add_argument("--retries", type=_int_at_least(0, MAX_RETRIES), default=3,
                   help="further attempts after a failed LLM request")
    p.add_argument("--backoff", type=_float_above(0.0, inclusive=True, high=3600.0), default=1.0,
                   help="seconds before the first retry, doubling after each")
    p.add_argument("--trust-log", action="store_true", help="score each log as recorded, without replaying its "
                   "actions to check them (faster; a forged log is then not detected)")
    p.set_defaults(func=_rescore)


def _rescore(args) -> int:
    from .evaluate import RunKey, run_record
    from .scoring import aggregate, load_trajectory, results_document, write_json_atomic
    from .rejudge import agreement_table, parse_judge, rejudge_with

    paths = sorted((Path(args.dir) / "trajectories").rglob("*.json"))
    if not paths:
        raise UsageError(f"{args.dir}: no trajectories under {Path(args.dir) / 'trajectories'}")
    try:
        config = {"timeout": args.timeout, "retries": args.retries, "backoff": args.backoff}
        sets = [parse_judge(spec, Path(args.cache) if args.cache else None, **config) for spec in args.judge or ["rubric"]]
    except ImportError as exc:
        raise UsageError(f"LLM judges need the llm extra ({exc.name} is missing): pip install -e '.[llm]'") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    from .scoring.llm_judge import JudgeError

    from .scoring.metrics import Weights  # the benchmark's J (equal λ), whatever weights a run recorded
    from .rejudge import played_scenario

    records, per_judge, refused = [], {s.name: [] for s in sets}, []
    if args.trust_log:
        print("--trust-log: the logs are scored as recorded, their actions not replayed (a forged log is not "
              "detected)", file=sys.stderr)
    try:
        for path in paths:
            try:  # a file whose actions do not reproduce its log (or that is no trajectory) is named and skipped
                trajectory = load_trajectory(path)
                scenario = played_scenario(trajectory, trust_log=args.trust_log)
                if len(sets) > 1:  # each judge alone, for the agreement table (its verdicts are cached)
                    alone = [rejudge_with(trajectory, [s], trust_log=args.trust_log, scenario=scenario,
                                          weights=Weights()) for s in sets]
                breakdown = rejudge_with(trajectory, sets, trust_log=args.trust_log, scenario=scenario, weights=Weights())
            except ValueError as exc:
                refused.append(f"{path}: {str(exc).removeprefix(f'{path.name}: ')}")
                continue
            if len(sets) > 1:
                for judge_set, scores in zip(sets, alone):
                    per_judge[judge_set.name].append(scores)
            key = RunKey(trajectory["agent"], trajectory["scenario"], trajectory["persona"], trajectory["seed"])
            records.append(run_record(key, {"scores": breakdown}))
    except JudgeError as exc:
        print(f"error: {exc} (the verdicts obtained so far are cached: the same command resumes)", file=sys.stderr)
        return 1
    if not records:
        more = f" (and {len(refused) - 1} more refused)" if len(refused) > 1 else ""
        print(f"error: no trajectory under {args.dir} could be rescored: {refused[0]}{more}", file=sys.stderr)
        return 1
    for line in refused:
        print(f"refused {line}", file=sys.stderr)
    rows = aggregate(records, ("agent", "scenario", "persona"))
    for row in rows:
        row["suite_version"] = SUITE_VERSION
    write_json_atomic(args.out, results_document(rows, SUITE_VERSION))
    if len(sets) > 1:
        print(f"{'judge A':<24} {'judge B':<24} {'metric':<6} {'n':>4} {'Pearson':>8} {'Spearman':>8} {'mean Δ':>8}")
        for r in agreement_table(per_judge):
            print(f"{r['a']:<24} {r['b']:<24} {r['metric']:<6} {r['n']:>4} {r['pearson']:>8.3f} {r['spearman']:>8.3f} "
                  f"{r['mean_delta']:>8.3f}")
    print(f"rescored {len(records)} runs with {', '.join(s.name for s in sets)}"
          f"{' (logs trusted, not replayed)' if args.trust_log else ''}: {args.out}"
          + (f"; {len(refused)} files refused (named above)" if refused else ""))
    return 1 if refused else 0


# ---------------------------------------------------------------------------------- train
def _add_train(sub) -> None:
    p = sub.add_parser("train", help="train an SB3 / sb3-contrib, RLlib (rllib-ppo) or behaviour-cloning (bc) agent "
                                     "(`train --algo ALGO --help`: every option)",
                       add_help=False)
    p.set_defaults(func=_train, passthrough=True)  # its options depend on --algo: parsed in _train


def _train_parser(algo: str | None) -> Parser:
    """The train command's parser: ``--algo`` and, once the algorithm is known, one option per
    field of its dataclass of arguments."""
    p = Parser(prog=f"{PROG} train", description="Train a policy with the benchmark's scorer as its evaluator. "
               "Every option below comes from the trainer's dataclass of arguments.",
               epilog=None if algo else f"Each algorithm's own options: {PROG} train --algo ALGO --help")
    p.add_argument("--algo", required=True, choices=sorted(TRAINERS))
    if algo:
        from .baselines.training import add_arguments

        add_arguments(p.add_argument_group(f"{algo} arguments"), _trainer(algo).Args)
        return p
    try:
        from .baselines.training import CommonArgs, add_arguments
    except ImportError:  # without the rl extra: --algo only
        return p
    add_arguments(p.add_argument_group("arguments every algorithm takes"), CommonArgs)
    return p


def _trainer(algo: str):
    import importlib

    try:
        return importlib.import_module(f"proactive_env.baselines.{TRAINERS[algo]}")
    except ImportError as exc:
        extra = TRAINER_EXTRAS.get(algo, "rl")
        raise UsageError(f"{algo} needs the {extra} extra ({exc.name} is missing): pip install -e '.[{extra}]'") from None


def _train(args) -> int:
    pre = argparse.ArgumentParser(add_help=False)  # which algorithm's options to offer
    pre.add_argument("--algo")
    known, _ = pre.parse_known_args(args.rest)
    parsed = vars(_train_parser(known.algo if known.algo in TRAINERS else None).parse_args(args.rest))
    algo = parsed.pop("algo")
    module = _trainer(algo)
    train_args = module.Args(**parsed)
    _check_training_args(train_args)
    path = module.train(train_args)
    print(f"model: {path}; learning curve: {path.parent / 'learning_curve.png'}; "
          f"evaluate with: {PROG} eval --agents {AGENT_PREFIXES.get(algo, 'sb3')}:{path}")
    return 0


# ---------------------------------------------------------------------------------- dataset
def _add_dataset(sub) -> None:
    p = sub.add_parser("dataset", help="record agents' episodes as a local Minari dataset",
                       description="Record agents' episodes as a local Minari dataset: observations (the Dict, "
                                   "action_mask included), actions, rewards, terminations; each episode's "
                                   "metadata holds its agent, scenario, persona, seed and 3T scores. Read it back "
                                   "with minari.load_dataset(NAME). Needs the minari extra.")
    p.add_argument("--agents", default="oracle", help=f"comma-separated: {agent_help()}")
    p.add_argument("--scenarios", default="all", help="'all' or comma-separated shipped names, scenario files or "
                   f"gym ids ({', '.join(shipped_names())})")
    p.add_argument("--personas", default="all", help=f"'all' or comma-separated from {', '.join(PERSONAS)}")
    p.add_argument("--seeds", default="0-9", help="e.g. 0-99 or 0,3,7: training seeds (< 1000)")
    p.add_argument("--out", required=True, metavar="NAME", help="the dataset id, e.g. proactivity/oracle-v0")
    p.add_argument("--data-path", help="where datasets live (default: $MINARI_DATASETS_PATH or ~/.minari/datasets)")
    p.add_argument("--allow-test-seeds", action="store_true", help="also record seeds >= 1000 (the test split)")
    p.set_defaults(func=_dataset)


def _dataset(args) -> int:
    if args.data_path:
        os.environ["MINARI_DATASETS_PATH"] = str(Path(args.data_path).resolve())
    try:
        import minari  # noqa: F401
    except ImportError as exc:
        raise UsageError(f"datasets need the minari extra ({exc.name} is missing): pip install -e '.[minari]'") from None
    from .baselines import make_agent
    from .dataset import parse_seeds, write_dataset
    from .evaluate import resolve

    refs = [scenario_ref(s)[0] for s in args.scenarios.split(",") if s.strip()] if args.scenarios != "all" else []
    try:
        scenarios, personas = resolve(",".join(refs) if refs else "all", args.personas)
        agents = [a.strip() for a in args.agents.split(",") if a.strip()]
        for agent in agents:
            make_agent(agent)
        dataset = write_dataset(args.out, agents, scenarios, personas, parse_seeds(args.seeds), make_agent,
                                args.allow_test_seeds)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(f"dataset {args.out}: {dataset.total_episodes} episodes, {dataset.total_steps} steps in "
          f"{os.environ.get('MINARI_DATASETS_PATH', '~/.minari/datasets')}; read with minari.load_dataset({args.out!r})")
    return 0


def _check_training_args(args) -> None:
    """What would otherwise fail only once training has started, as one line now (for the
    fields the trainer's arguments have)."""
    import gymnasium as gym

    import proactive_env  # noqa: F401  (registers the ids)

    env = getattr(args, "env", None)
    if env and not env.startswith("proactivity_"):  # proactivity_multi_v0 lives in RLlib's registry only
        try:
            gym.spec(env)
        except gym.error.Error as exc:
            raise UsageError(f"--env {env}: {exc}") from None
    if getattr(args, "env_kwargs", ""):
        try:
            kwargs = json.loads(args.env_kwargs)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--env-kwargs: expected a JSON object, e.g. '{{\"exclude\": \"monitor\"}}': {exc}") from None
        if not isinstance(kwargs, dict):
            raise UsageError(f"--env-kwargs: expected a JSON object, got {args.env_kwargs!r}")
    if hasattr(args, "eval_scenarios"):
        names = [scenario_ref(s)[0] for s in args.eval_scenarios.split(",") if s.strip()]
        unknown = [n for n in names if n not in shipped_names()]
        optional = getattr(type(args), "eval_scenarios", None) == ""  # BC evaluates only when asked to
        if unknown or not (names or optional):
            raise UsageError(f"--eval-scenarios: expected shipped scenario names, got {args.eval_scenarios!r}")
        args.eval_scenarios = ",".join(names)  # gym ids given as their scenario names
    for name in ("timesteps", "eval_freq", "eval_episodes", "n_envs", "checkpoint_freq", "epochs"):
        if hasattr(args, name) and getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')}: expected at least 1, got {getattr(args, name)}")
    for name, value in vars(args).items():  # every numeric option: rates, coefficients, counts
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not (
                math.isfinite(value) and value >= 0):
            raise UsageError(f"--{name.replace('_', '-')}: expected a finite number ≥ 0, got {value!r}")


# ---------------------------------------------------------------------------------- report / show
def _add_report(sub) -> None:
    p = sub.add_parser("report", help="compare every agent found in eval output folders: leaderboard, plots, HTML",
                       description="Compare every agent found in one or more eval output folders: a leaderboard "
                                   "(markdown and CSV; overall, per scenario, per persona, per metric, with 95% "
                                   "CIs and n), bar and radar plots of the 3T, and one self-contained HTML page "
                                   "linking each run's episode view.")
    p.add_argument("dirs", nargs="+", metavar="DIR", help="eval output folders (each with trajectories/)")
    p.add_argument("--out", help="report folder (default: DIR/report for one DIR, else ./report)")
    p.add_argument("--reported", action="store_true",
                   help="add reference rows: model figures published in the paper, labelled as reported (not re-run)")
    p.add_argument("--episodes", choices=("auto", "all", "first", "none"), default="auto",
                   help="episode pages to write (why points were lost, trust over time, the event log): every run; "
                        "the first seed of each agent × scenario × persona; none; auto = all up to 100 runs, else "
                        "first")
    p.add_argument("--pictures", action="store_true",
                   help="embed each episode page's timeline picture (about half a second a page; without, "
                        "`show TRAJECTORY` draws it)")
    p.add_argument("--formats", default="png,svg", help="plot formats, comma-separated from png, svg")
    p.set_defaults(func=_report)


def _report(args) -> int:
    from .report import build_report

    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    if not formats or set(formats) - {"png", "svg"}:
        raise UsageError(f"--formats: expected png and/or svg, got {args.formats!r}")
    out = Path(args.out) if args.out else (Path(args.dirs[0]) / "report" if len(args.dirs) == 1 else Path("report"))
    try:
        summary = build_report([Path(d) for d in args.dirs], out, reported=args.reported, episodes=args.episodes,
                               formats=formats, pictures=args.pictures)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(summary)
    return 0


def _add_show(sub) -> None:
    p = sub.add_parser("show", help="draw one episode from a saved trajectory (PNG and HTML)",
                       description="Draw one episode from a trajectory file: the user's days, sleep and busy "
                                   "blocks, each resource's use, the TA windows, one lane per task with the "
                                   "agent's actions by verb and depth, the user's decisions and trust over time; "
                                   "the HTML page adds an LLM agent's transcript when the file has one.")
    p.add_argument("trajectory", help="a trajectory file (eval's OUT/trajectories/…, or `run --save`)")
    p.add_argument("--out", help="output path without extension (default: the trajectory's, beside it)")
    p.add_argument("--formats", default="png,html", help="comma-separated from png, svg, html")
    p.add_argument("--transcript", action="store_true",
                   help="print the LLM agent's whole conversation (system prompt, briefing, each observation, "
                        "each tool call with its arguments) instead of drawing")
    p.add_argument("--why", action="store_true",
                   help="print why points were lost (per task, per TA decision, trust over time) instead of drawing")
    p.set_defaults(func=_show)


def _show(args) -> int:
    from .report.episode import transcript_text, write_episode

    if args.transcript:
        from .scoring.trajectory import load_trajectory

        try:
            trajectory = load_trajectory(Path(args.trajectory))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if not trajectory.get("transcript"):
            raise UsageError(f"{args.trajectory}: has no transcript (only LLM agents' runs keep one)")
        print(transcript_text(trajectory["transcript"]))
        return 0

    if args.why:
        from .report.explain import explain
        from .scoring.trajectory import load_trajectory
        from .spec.escape import strip_control

        try:
            lines = explain(load_trajectory(Path(args.trajectory))).lines()
        except (ValueError, KeyError) as exc:
            raise UsageError(f"{args.trajectory}: {exc}") from None
        print("\n".join(strip_control(line) for line in lines))
        return 0

    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    if not formats or set(formats) - {"png", "svg", "html"}:
        raise UsageError(f"--formats: expected png, svg and/or html, got {args.formats!r}")
    stem = Path(args.out) if args.out else Path(args.trajectory).with_suffix("")
    try:
        written = write_episode(Path(args.trajectory), stem, formats)
    except (ValueError, ScenarioError) as exc:
        raise UsageError(str(exc)) from None
    print("\n".join(str(p) for p in written))
    if "html" in formats:
        print(f"why points were lost: the page's tables, or in the terminal: {PROG} show {args.trajectory} --why")
    return 0


# ---------------------------------------------------------------------------------- mcp
def _add_mcp(sub) -> None:
    p = sub.add_parser("mcp", help="serve the text face's tools to agent harnesses over the Model Context Protocol",
                       description="Serve one scenario's text face as an MCP server: each scenario tool is one "
                                   "step of the episode, plus start_episode, get_scores and end_episode. A finished "
                                   "episode is saved as `eval` saves a run, under OUT/trajectories/AGENT/. Needs "
                                   "the mcp extra.")
    p.add_argument("--scenario", default="monitor", help="a shipped name, a scenario file or a gym id")
    p.add_argument("--persona", choices=PERSONAS, help="default: the id's persona, else operator")
    p.add_argument("--seed", type=_int_at_least(0), default=0, help="the episode's seed (start_episode may change it)")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (the harness starts this command) or streamable HTTP at http://HOST:PORT/mcp")
    p.add_argument("--host", default="127.0.0.1", help="HTTP only: the address to listen on (beyond loopback: "
                   "needs --allow-remote)")
    p.add_argument("--port", type=_int_at_least(1, MAX_PORT), default=8000, help="HTTP only: the port to listen on")
    p.add_argument("--out", default="results/mcp", help="output folder, as eval's")
    p.add_argument("--agent", default="mcp", help="the name saved episodes are filed under (e.g. one per harness)")
    p.add_argument("--scenario-dir", action="append", default=[], metavar="DIR",
                   help="start_episode may load scenario files under DIR (repeatable); without it, shipped names only")
    p.add_argument("--allow-remote", action="store_true",
                   help="HTTP only: allow a --host beyond loopback; every request must then carry the bearer token")
    p.add_argument("--token-env", default="PROACTIVITY_GYM_MCP_TOKEN", metavar="VAR",
                   help="HTTP only: the environment variable holding the bearer token (checked whenever it is set)")
    p.set_defaults(func=_mcp)


def _mcp(args) -> int:
    try:
        from .mcp_server import McpArgs, serve
    except ImportError as exc:
        raise UsageError(f"needs the mcp extra ({exc.name} is missing): pip install -e '.[mcp]'") from None
    scenario, persona = _scenario_and_persona(args)
    try:
        if args.transport == "stdio" and (args.allow_remote or args.host != "127.0.0.1" or args.port != 8000):
            raise UsageError("--host, --port and --allow-remote: expected --transport http beside them")
        serve(McpArgs(scenario=scenario, persona=persona, seed=args.seed, out=Path(args.out), agent=args.agent,
                      transport=args.transport, host=args.host, port=args.port,
                      scenario_dirs=tuple(Path(d) for d in args.scenario_dir), allow_remote=args.allow_remote,
                      token_env=args.token_env))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt:
        return 130
    return 0


# ---------------------------------------------------------------------------------- play
def _add_play(sub) -> None:
    p = sub.add_parser("play", help="play the text face yourself, some tool calls at a time",
                       description="Play one episode of the text face by hand (or from a script): reads tool calls "
                                   "from standard input, one JSON object per line ({\"tool\": ..., \"arguments\": "
                                   "{...}}), carries them out in order and prints each result. The session file "
                                   "keeps the calls so far; the next `play` with it replays them (episodes are "
                                   "deterministic) and goes on. A new session prints the briefing; the end of the "
                                   "episode prints the scores and saves the trajectory next to the session file.")
    p.add_argument("--session", metavar="FILE", help="the session file (created if absent); needed except with --tools")
    p.add_argument("--scenario", help="a shipped name, a scenario file or a gym id; needed for a new session "
                                      "(an existing one knows its own)")
    p.add_argument("--persona", choices=PERSONAS, help="default: the session's, else the id's persona, else operator")
    p.add_argument("--seed", type=_int_at_least(0), help="the episode's seed (default: the session's, else 0)")
    p.add_argument("--tools", action="store_true", help="print the tool schemas (OpenAI format) of the session's "
                                                        "scenario, or of --scenario, and exit")
    p.set_defaults(func=_play)


def _play(args) -> int:
    from .envs.text import ProactivityTextEnv
    from .scoring import write_json_atomic

    if args.session is None and not args.tools:
        raise UsageError("play needs --session FILE (the file that keeps the calls so far); only --tools runs without one")
    path = Path(args.session) if args.session is not None else None
    session = _load_session(path) if path is not None and path.exists() else None
    setup = _play_setup(args, session)
    env = ProactivityTextEnv(setup["scenario"], setup["persona"])
    if args.tools:
        print(json.dumps(env.tools(), indent=1, ensure_ascii=False))
        return 0
    session = session or {**setup, "calls": []}
    obs, info = env.reset(seed=setup["seed"])
    done = False
    for call in session["calls"]:
        obs, _, terminated, truncated, info = env.step(call)
        done = terminated or truncated
    calls = _json_calls(sys.stdin.read())
    if not session["calls"] or not calls:  # a new session's briefing, or where the last one stopped
        print(obs)
    for call in calls:
        if done:
            break
        session["calls"].append(call)
        obs, _, terminated, truncated, info = env.step(call)
        done = terminated or truncated
        print(f"> {call}\n{obs}\n")
    write_json_atomic(path, session)
    if done:
        trajectory = env.trajectory(agent="player")
        saved = path.with_suffix(".trajectory.json")
        write_json_atomic(saved, trajectory)
        print(json.dumps({k: round(v, 4) for k, v in info["scores"].items() if isinstance(v, float)}))
        print(f"trajectory: {saved}")
    return 0


def _play_setup(args, session: dict | None) -> dict:
    """The episode ``play`` is about: an existing session's own scenario, persona and seed (any
    given on the command line must agree with it), else those given (a new session or --tools
    needs --scenario: a silent default would play, or list the tools of, another scenario)."""
    old = session or {}
    if args.scenario is None and session is None:
        raise UsageError("play needs --scenario (a shipped name, a scenario file or a gym id) for a new session"
                         + ("" if args.tools else f"; {args.session} does not exist yet"))
    if args.scenario is None:
        scenario, id_persona = session["scenario"], None
    else:
        scenario, id_persona = scenario_ref(args.scenario)
        if id_persona and args.persona and args.persona != id_persona:
            raise UsageError(f"--persona {args.persona} contradicts --scenario {args.scenario} (persona {id_persona})")
    setup = {"scenario": scenario, "persona": args.persona or id_persona or old.get("persona") or "operator",
             "seed": args.seed if args.seed is not None else old.get("seed", 0)}
    if session is not None and {k: session.get(k) for k in setup} != setup:
        raise UsageError(f"{args.session}: a session of {', '.join(f'{k}={session.get(k)}' for k in setup)}; "
                         f"expected {', '.join(f'{k}={v}' for k, v in setup.items())}")
    return setup


def _json_calls(text: str) -> list[str]:
    """The tool calls in ``play``'s input: JSON values one after another, each on one line or
    spread over several (a pretty-printed call is one call, kept as one line); a line that starts
    no JSON value is passed on as it is, so the episode answers it with an error like any
    malformed call."""
    decoder, calls, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return calls
        try:
            value, end = decoder.raw_decode(text, at)
            call = text[at:end] if "\n" not in text[at:end] else json.dumps(value, ensure_ascii=False)
        except json.JSONDecodeError:
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            call = text[at:end].strip()
        calls.append(call)
        at = end


def _load_session(path: Path) -> dict:
    """A session file as ``play`` writes it: an object with scenario, persona, seed and the list of
    calls so far (each one JSON text); anything else is refused before it is overwritten."""
    try:
        session = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: expected a session file (JSON) written by `{PROG} play`: {exc}") from None
    expected = f"expected a session file written by `{PROG} play`: an object with scenario, persona, seed and calls"
    if not isinstance(session, dict):
        raise UsageError(f"{path}: {expected}, got a JSON {type(session).__name__}")
    calls = session.get("calls")
    if not isinstance(calls, list) or not all(isinstance(c, str) for c in calls):
        raise UsageError(f"{path}: calls: {expected}; 'calls' must be a list of tool calls as JSON text")
    if not isinstance(session.get("scenario"), str) or session.get("persona") not in PERSONAS:
        raise UsageError(f"{path}: {expected}; 'scenario' must be a scenario's name or file and 'persona' one of "
                         f"{', '.join(PERSONAS)}")
    seed = session.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UsageError(f"{path}: seed: {expected}; 'seed' must be a whole number of at least 0, got {seed!r}")
    return session


# ---------------------------------------------------------------------------------- main
SUBCOMMANDS = (_add_validate, _add_check, _add_schema, _add_run, _add_eval, _add_rescore, _add_train, _add_dataset,
               _add_report, _add_show, _add_mcp, _add_play)


def build_parser() -> Parser:
    parser = Parser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=_version())
    parser.add_argument("--debug", action="store_true", help="on an error, show the traceback too")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    for command in sub.choices.values():  # `proactivity-gym eval --debug` works as well as before the command
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command. Whatever goes wrong ends in one line on stderr (control characters
    stripped, credentials redacted) and exit code 2 for input the user can fix, 1 for a fault of
    ours; ``--debug`` adds the traceback."""
    signal.signal(signal.SIGINT, signal.default_int_handler)  # (the package's quiet start-up handler ends here)
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if getattr(args, "passthrough", False):
        args.rest = [a for a in rest if a != "--debug"]
    elif rest:
        parser.parse_args(argv)  # reports the unknown arguments and exits
    try:
        _refuse_unused_options(parser, args)
        return args.func(args)
    except KeyboardInterrupt:  # Ctrl-C outside the evaluation loop (which says more itself)
        print(f"{PROG} {args.command}: interrupted", file=sys.stderr)
        return 130
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - the one handler: every failure is one line
        if args.debug:
            import traceback

            traceback.print_exc()
        message, code = error_line(exc)
        print(f"{PROG} {args.command}: error: {message}", file=sys.stderr)
        return code


def _llm_judged(args) -> bool:
    return any(str(spec).startswith("openai:") for spec in args.judge or [])


# Options that only some uses of a command read: (command, options, whether they are read, why not).
# A non-default value where it is not read is refused: every option is used or refused. (The LLM
# endpoint options of run and eval depend on the agents: ``_refuse_unused_llm_options``.)
CONDITIONAL_OPTIONS = (
    ("show", ("out", "formats"), lambda a: not a.transcript, "`show --transcript` prints the conversation and "
     "writes no file"),
    ("rescore", ("timeout", "retries", "backoff", "cache"), _llm_judged, "they apply to LLM judges "
     "(--judge openai:MODEL@URL) only"),
)


def _refuse_unused_options(parser: Parser, args) -> None:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, options, read, why in CONDITIONAL_OPTIONS:
        if args.command != command or read(args):
            continue
        given = [o for o in options if getattr(args, o, None) != sub.choices[command].get_default(o)]
        if given:
            raise UsageError(f"{', '.join('--' + o.replace('_', '-') for o in given)}: not used here; {why}")


def error_line(exc: BaseException) -> tuple[str, int]:
    """What to tell the user about ``exc`` on one line, and the exit code: 2 for input they can fix
    (a misuse, a bad file, a missing extra), 1 for a fault of ours."""
    from .scoring.client import redact

    if isinstance(exc, ImportError):
        text, code = missing_extra(exc), 2
    elif isinstance(exc, (UsageError, ScenarioError, ValueError, OSError, LookupError, TypeError)):
        text, code = str(exc) or type(exc).__name__, 2
        if isinstance(exc, (LookupError, TypeError)):  # raised by code that met input of an unexpected shape
            text = f"unexpected input ({type(exc).__name__}: {text}); run with --debug for the traceback"
    else:
        text, code = f"internal error ({type(exc).__name__}: {exc}); run with --debug for the traceback", 1
    text = " ".join(redact(text).split())
    return (text if len(text) <= 2000 else text[:2000] + "…"), code


def missing_extra(exc: ImportError) -> str:
    """One line naming the missing module and the extra that installs it (from the package's own
    metadata, so a new extra needs no change here)."""
    module = (exc.name or "").split(".")[0]
    if not module:
        return str(exc)
    if "pip install" in str(exc):  # already says what to install
        return str(exc)
    extra = extra_for(module)
    how = f"pip install 'proactivity-gym[{extra}]'" if extra else f"pip install {module}"
    return f"this needs {module}, which is not installed: {how}"


def extra_for(module: str) -> str | None:
    """The smallest extra of this package whose requirements provide ``module``."""
    import re
    from importlib.metadata import PackageNotFoundError, packages_distributions, requires

    try:
        requirements = requires("proactivity-gym") or []
    except PackageNotFoundError:
        return None
    dists = {d.lower().replace("_", "-") for d in packages_distributions().get(module, [module])}
    dists.add(module.lower().replace("_", "-"))
    sizes: dict[str, int] = {}
    chosen = []
    for requirement in requirements:
        name = re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)", requirement)
        if extra:
            sizes[extra.group(1)] = sizes.get(extra.group(1), 0) + 1
            if name in dists and extra.group(1) not in ("all", "test"):
                chosen.append(extra.group(1))
    return min(chosen, key=lambda e: sizes[e]) if chosen else None


if __name__ == "__main__":
    sys.exit(main())
