"""``proactivity-gym``: validate scenarios, export the schema, play a run, evaluate agents."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from .spec import ScenarioError, json_schema, load_file

METRIC_COLUMNS = (("TC", "TC", "{:.1f}"), ("TA", "TA %", "{:.1f}"), ("TR_D", "TR-D %", "{:.1f}"),
                  ("TR_J", "TR-J", "{:.2f}"), ("continuation", "Cont. %", "{:.1f}"), ("J", "J", "{:.3f}"))


def _validate(args) -> int:
    status = 0
    for path in args.files:
        try:
            s = load_file(path)
        except ScenarioError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 1
            continue
        except Exception as exc:  # never stop before the other files are reported
            print(f"error: {Path(path).name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            status = 1
            continue
        print(f"ok: {Path(path).name}: {s.title} v{s.version}, {len(s.tasks)} tasks, {s.days} days")
    return status


def _check(args) -> int:
    from .baselines import make_agent
    from .check import check_scenario

    rules = check_scenario(args.file, make_agent, seeds=args.seeds)
    for rule in rules:
        print(f"{'PASS' if rule.passed else 'FAIL'}  {rule.description}: {rule.detail}")
    failed = sum(not r.passed for r in rules)
    print(f"{len(rules) - failed} passed, {failed} failed")
    return 1 if failed else 0


def _schema(args) -> int:
    print(json_schema())
    return 0


def _run(args) -> int:
    from .baselines import make_agent
    from .envs.render import ansi_timeline
    from .evaluate import check_seed, make_env

    check_seed(args.seed)
    agent = make_agent(args.agent)
    env = make_env(args.scenario, args.persona, getattr(agent, "face", "structured"))
    obs, info = env.reset(seed=args.seed)
    agent.reset(env.unwrapped, args.seed)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated
    print(ansi_timeline(env.unwrapped.world, last=None))
    print(json.dumps({k: round(v, 4) for k, v in info["scores"].items() if isinstance(v, float)}))
    return 0


def _table(title: str, rows: list[dict], keys: tuple[str, ...]):
    from rich.table import Table

    table = Table(title=title)
    for key in keys:
        table.add_column(key.capitalize(), no_wrap=True)
    table.add_column("Runs", justify="right")
    for _, header, _ in METRIC_COLUMNS:
        table.add_column(header, justify="right")
    table.add_column("J 95% CI", justify="right", no_wrap=True)
    for row in rows:
        lo, hi = row["J_ci"]
        table.add_row(*[str(row[k]) for k in keys], str(row["runs"]),
                      *[fmt.format(row[key]) for key, _, fmt in METRIC_COLUMNS], f"[{lo:.3f}, {hi:.3f}]")
    return table


def _eval(args) -> int:
    try:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        print("error: `proactivity-gym eval` needs rich: pip install 'proactivity-gym[eval]'", file=sys.stderr)
        return 2
    from .baselines import make_agent
    from .evaluate import FaultBudget, evaluate, plan, resolve
    from .scoring.client import LLMEndpointError
    from .scoring import aggregate

    llm_options, text_options = _llm_options(args)

    def agent_of(spec: str):
        return make_agent(spec, trust_model_files=args.trust_model_files, **llm_options)

    try:
        scenarios, personas = resolve(args.scenarios, args.personas)
        agents = [a.strip() for a in args.agents.split(",") if a.strip()]
        keys = plan(agents, scenarios, personas, range(args.seed, args.seed + max(0, args.seeds)))
        budget = FaultBudget(args.max_faults, args.on_fault)
        for agent in agents:
            agent_of(agent)
        if args.concurrency < 1:
            raise ValueError(f"--concurrency: expected at least 1, got {args.concurrency}")
        if text_options:
            from .envs.rephrase import OpenAIRephraser

            OpenAIRephraser(text_options["rephraser"])
    except (ValueError, ImportError, ScenarioError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    console = Console() if sys.stdout.isatty() else Console(width=160)
    out = Path(args.out)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False) as progress:
        bar = progress.add_task("evaluating", total=len(keys))

        def step(key, skipped):
            progress.update(bar, advance=1, description=f"{key.agent} {key.scenario} {key.persona} s{key.seed}"
                            + (" (done before)" if skipped else ""))

        previous = signal.signal(signal.SIGTERM, _exit_on_signal(out))
        try:
            records = evaluate(keys, out, agent_of, on_run=step, concurrency=args.concurrency,
                               text_options=text_options, add=args.add, faults=budget, command=sys.argv)
        except KeyboardInterrupt:
            console.print(f"[yellow]interrupted; finished runs are kept in {out} — run the same command to resume")
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
    console.print(_table("Proactivity-Gym results (TA, TR-D and continuation in %)",
                         aggregate(records, ("agent",)), ("agent",)))
    console.print(_table("By persona", aggregate(records, ("agent", "persona")), ("agent", "persona")))
    if len(scenarios) > 1:
        console.print(_table("By scenario", aggregate(records, ("agent", "scenario")), ("agent", "scenario")))
    errored = len(list((out / "errored").glob("*/*.json")))
    if errored:
        console.print(f"[yellow]{errored} runs errored (over the fault budget): {out / 'errored'}")
    console.print(f"results: {out / 'results.json'}; trajectories: {out / 'trajectories'}")
    return 0


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


def _llm_options(args) -> tuple[dict, dict | None]:
    """The endpoint flags as ``make_agent`` options for openai: agents, and the text env's
    options (the rephraser, on the same endpoint unless --rephraser-base-url says otherwise)."""
    endpoint = {"base_url": args.base_url, "api_key_env": args.api_key_env, "timeout": args.timeout,
                "retries": args.retries}
    agent = {**endpoint, "temperature": args.temperature, "max_tokens": args.max_tokens}
    if not args.rephraser:
        return agent, None
    rephraser = {**endpoint, "model": args.rephraser, "base_url": args.rephraser_base_url or args.base_url}
    return agent, {"rephraser": rephraser}


def _rescore(args) -> int:
    from .evaluate import RunKey, run_record
    from .scoring import aggregate, load_trajectory, write_json_atomic
    from .scoring.rejudge import agreement_table, parse_judge, rejudge_with, scenario_of
    from .spec import SUITE_VERSION

    paths = sorted((Path(args.dir) / "trajectories").rglob("*.json"))
    try:
        if not paths:
            raise ValueError(f"{args.dir}: no trajectories under {Path(args.dir) / 'trajectories'}")
        config = {"timeout": args.timeout, "retries": args.retries, "backoff": args.backoff}
        sets = [parse_judge(spec, Path(args.cache) if args.cache else None, **config) for spec in args.judge or ["rubric"]]
    except ImportError as exc:
        print(f"error: LLM judges need the llm extra ({exc.name} is missing): pip install 'proactivity-gym[llm]'",
              file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from .scoring.llm_judge import JudgeError

    records, per_judge = [], {s.name: [] for s in sets}
    try:
        for path in paths:
            trajectory = load_trajectory(path)
            scenario = scenario_of(trajectory)
            if len(sets) > 1:  # each judge alone, for the agreement table (its verdicts are cached)
                for judge_set in sets:
                    per_judge[judge_set.name].append(rejudge_with(trajectory, [judge_set], scenario))
            key = RunKey(trajectory["agent"], trajectory["scenario"], trajectory["persona"], trajectory["seed"])
            records.append(run_record(key, {"scores": rejudge_with(trajectory, sets, scenario)}))
    except JudgeError as exc:
        print(f"error: {exc} (the verdicts obtained so far are cached: the same command resumes)", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    rows = aggregate(records, ("agent", "scenario", "persona"))
    for row in rows:
        row["suite_version"] = SUITE_VERSION
    write_json_atomic(args.out, rows)
    if len(sets) > 1:
        print(f"{'judge A':<24} {'judge B':<24} {'metric':<6} {'n':>4} {'Pearson':>8} {'Spearman':>8} {'mean Δ':>8}")
        for r in agreement_table(per_judge):
            print(f"{r['a']:<24} {r['b']:<24} {r['metric']:<6} {r['n']:>4} {r['pearson']:>8.3f} {r['spearman']:>8.3f} "
                  f"{r['mean_delta']:>8.3f}")
    print(f"rescored {len(records)} runs with {', '.join(s.name for s in sets)}: {args.out}")
    return 0


TRAINERS = {"maskable-ppo": "train_maskable_ppo", "ppo": "train_ppo", "dqn": "train_dqn"}


def _train(args, rest: list[str]) -> int:
    import importlib

    try:
        module = importlib.import_module(f"proactive_env.baselines.{TRAINERS[args.algo]}")
    except ImportError as exc:
        print(f"error: training needs the rl extra ({exc.name} is missing): pip install 'proactivity-gym[rl]'",
              file=sys.stderr)
        return 2
    from .baselines.training import parse_args

    path = module.train(parse_args(module.Args, rest))
    print(f"model: {path}; learning curve: {path.parent / 'learning_curve.png'}; "
          f"evaluate with: proactivity-gym eval --agents sb3:{path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="proactivity-gym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="check scenario files")
    p.add_argument("files", nargs="+")
    p.set_defaults(func=_validate)

    p = sub.add_parser("check", help="play the oracle and baselines on a scenario file against the acceptance rules")
    p.add_argument("file")
    p.add_argument("--seeds", type=int, default=3)
    p.set_defaults(func=_check)

    p = sub.add_parser("schema", help="print the JSON Schema of a scenario file")
    p.set_defaults(func=_schema)

    p = sub.add_parser("run", help="play one episode and print its timeline")
    p.add_argument("--scenario", default="monitor", help="a shipped scenario's name or a scenario file")
    p.add_argument("--persona", default="operator", choices=["reviewer", "planner", "operator"])
    p.add_argument("--agent", default="oracle")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_run)

    p = sub.add_parser("train", help="train an SB3 / sb3-contrib agent (further --options: see the trainer's Args)")
    p.add_argument("--algo", required=True, choices=sorted(TRAINERS))
    p.set_defaults(func=_train, passthrough=True)

    p = sub.add_parser("eval", help="evaluate agents and print the results table")
    p.add_argument("--agents", default="oracle,policy-follower,always-suggest,always-execute,random,noop")
    p.add_argument("--scenarios", default="all")
    p.add_argument("--personas", default="all")
    p.add_argument("--seeds", type=int, default=3, help="runs per scenario–persona pair")
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument("--out", default="results")
    p.add_argument("--concurrency", type=int, default=1, help="runs played at once (threads)")
    p.add_argument("--add", action="store_true",
                   help="add this configuration to an --out folder that holds another one (else refused)")
    p.add_argument("--max-faults", type=int, default=10,
                   help="faults (tool calls the world failed on) a run may have and still be kept")
    p.add_argument("--on-fault", choices=["error", "retry"], default="error",
                   help="a run over its fault budget is marked errored, or played once more first")
    p.add_argument("--trust-model-files", action="store_true",
                   help="let sb3:PATH unpickle anything the model file holds (runs code from it: only your own files)")
    llm = p.add_argument_group("LLM agents (openai:MODEL) and the user-reply rephraser")
    llm.add_argument("--base-url", help="an OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 "
                                        "(default: the openai client's, OPENAI_BASE_URL or api.openai.com)")
    llm.add_argument("--api-key-env", default="OPENAI_API_KEY",
                     help="the environment variable holding the API key (unset: 'EMPTY', for local servers)")
    llm.add_argument("--temperature", type=float, default=0.0)
    llm.add_argument("--max-tokens", type=int, default=1024, help="per model answer")
    llm.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    llm.add_argument("--retries", type=int, default=3, help="further attempts after a failed request")
    llm.add_argument("--rephraser", metavar="MODEL",
                     help="reword the simulated user's replies with this model (never changes a decision)")
    llm.add_argument("--rephraser-base-url", help="the rephraser's endpoint (default: --base-url)")
    p.set_defaults(func=_eval)

    p = sub.add_parser("rescore", help="re-score saved trajectories with other judges, without re-running episodes")
    p.add_argument("dir", help="an eval output folder (with trajectories/)")
    p.add_argument("--judge", action="append", metavar="SPEC",
                   help="'rubric' or 'openai:MODEL@BASE_URL'; repeat to average judges (default: rubric)")
    p.add_argument("--out", required=True, help="the rescored results file (results.json format)")
    p.add_argument("--cache", help="verdict cache folder (default ~/.cache/proactivity-gym/judges)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per LLM request")
    p.add_argument("--retries", type=int, default=3, help="further attempts after a failed LLM request")
    p.add_argument("--backoff", type=float, default=1.0, help="seconds before the first retry, doubling after each")
    p.set_defaults(func=_rescore)
    return parser


def main(argv: list[str] | None = None) -> int:
    args, rest = build_parser().parse_known_args(argv)
    if rest and not getattr(args, "passthrough", False):
        build_parser().parse_args(argv)  # reports the unknown arguments and exits
    try:
        return args.func(args, rest) if getattr(args, "passthrough", False) else args.func(args)
    except (ScenarioError, ValueError, OSError) as exc:  # bad input: one line, never a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
