"""The training runs behind the README's training tables, each kept as a result file.

    .venv/bin/python bench/training_results.py --list                      # the runs, their commands, which files exist
    .venv/bin/python bench/training_results.py rllib-monitor               # train, evaluate, write bench/training-results/rllib-monitor.json
    .venv/bin/python bench/training_results.py rllib-monitor --collect     # only write the file, from the run's eval folder

Each named run is the README's own commands (train, then eval on the test split), run in order
from the repository root; a command whose output already exists is skipped, so a run resumes.
The file written, ``bench/training-results/NAME.json``, holds what the README's table is made of: the eval
folder's rows (results.json: means and intervals per agent × scenario × persona, on the data
scale), the commands with the time and git commit each ran at (the eval folder's manifest), the
trainer's arguments (``agent.json``), the wall time of each command run here (none with ``--collect``) and the machine the file was written on.
``python scripts/readme_figures.py training-NAME`` turns it into the README's table, and
tests/test_readme_figures.py keeps the two equal. Training takes minutes to hours: say what else
ran on the machine when you quote a run's time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "training-results"
FORMAT = "proactivity-gym/training-result-1"


@dataclass(frozen=True)
class TrainingRun:
    """A README training table's run: the commands (each with the path it writes, to resume),
    the eval folder the table is read from, the training folders, and each agent's label."""

    title: str
    commands: tuple[tuple[str, str], ...]  # (command line, the path it writes)
    eval_dir: str
    train_dirs: tuple[str, ...]
    labels: dict[str, str]  # agent name in the eval → its row label in the README
    held_out: str = ""  # the scenario training never saw, where there is one


SLOT_CHECKPOINT = "runs/monitor-slots/checkpoints/maskable-ppo_{}_steps.zip"  # SB3's CheckpointCallback names
# Validation while training (which picks best_model.zip) plays the scenarios trained on, never the held-out one
NINE_WITHOUT_MONITOR = ("apartment_move,conference_trip,exam_prep,experiments,household_finances,job_applications,"
                        "meal_planning,medications,pottery_studio")
# Model selection for a held-out scenario without playing it: train on six of the nine, choose the
# epoch count on how the policy plays the other three (every third of the nine in name order), then
# train on all nine for that many epochs
SELECTION_SCENARIOS = ",".join(NINE_WITHOUT_MONITOR.split(",")[2::3])
STRUCTURED_ADVERSARIES = ("defer-everything", "allocate-everything", "persona-blind", "ask-on-everything", "prepare-only")
RUNS: dict[str, TrainingRun] = {
    "rllib-monitor": TrainingRun(
        "RLlib PPO with the slot module on Monitor, MaskablePPO's recipe, 300k steps",
        (("proactivity-gym train --algo rllib-ppo --env Proactivity-Monitor-v0 --timesteps 300000 "
          "--eval-freq 50000 --eval-episodes 5 --out runs/rllib-monitor",
          "runs/rllib-monitor/policy"),
         ("proactivity-gym eval --agents rllib:runs/rllib-monitor/policy,policy-follower,oracle --scenarios monitor "
          "--seed 1000 --seeds 10 --out runs/rllib-monitor/eval-unseen", "runs/rllib-monitor/eval-unseen/results.json")),
        "runs/rllib-monitor/eval-unseen", ("runs/rllib-monitor",),
        {"rllib:runs/rllib-monitor/policy": "RLlib PPO, slot module (300k steps)", "policy-follower": "policy-follower",
         "oracle": "oracle"}),
    "maskable-ppo-monitor": TrainingRun(
        "MaskablePPO on Monitor, slot policy and mlp, 300k steps",
        (("proactivity-gym train --algo maskable-ppo --env Proactivity-Monitor-v0 --timesteps 300000 "
          "--eval-freq 50000 --eval-episodes 5 --checkpoint-freq 50000 --out runs/monitor-slots",
          "runs/monitor-slots/model.zip"),
         ("proactivity-gym train --algo maskable-ppo --policy mlp --env Proactivity-Monitor-v0 --timesteps 300000 "
          "--eval-freq 50000 --eval-episodes 5 --checkpoint-freq 50000 --out runs/monitor-mlp",
          "runs/monitor-mlp/model.zip"),
         ("proactivity-gym eval --agents sb3:runs/monitor-slots/model.zip,"
          f"sb3:{SLOT_CHECKPOINT.format(200000)},sb3:{SLOT_CHECKPOINT.format(100000)},sb3:runs/monitor-mlp/model.zip,"
          f"{','.join(STRUCTURED_ADVERSARIES)},policy-follower,random,oracle --scenarios monitor --seed 1000 "
          "--seeds 10 --out runs/monitor-slots/eval-unseen", "runs/monitor-slots/eval-unseen/results.json")),
        "runs/monitor-slots/eval-unseen", ("runs/monitor-slots", "runs/monitor-mlp"),
        {"sb3:runs/monitor-slots/model.zip": "MaskablePPO, slot policy, 300k steps",
         f"sb3:{SLOT_CHECKPOINT.format(200000)}": "MaskablePPO, slot policy, its 200k-step checkpoint",
         f"sb3:{SLOT_CHECKPOINT.format(100000)}": "MaskablePPO, slot policy, its 100k-step checkpoint",
         "sb3:runs/monitor-mlp/model.zip": "MaskablePPO, mlp, 300k steps",
         **{name: f"adversary: {name}" for name in STRUCTURED_ADVERSARIES},
         "policy-follower": "policy-follower", "random": "random", "oracle": "oracle"}),
    "suite-holdout-monitor": TrainingRun(
        "MaskablePPO on nine scenarios, Monitor held out, 1M steps",
        (("proactivity-gym train --algo maskable-ppo --env Proactivity-Suite-v0 --env-kwargs '{\"exclude\": \"monitor\"}' "
          f"--eval-scenarios {NINE_WITHOUT_MONITOR} --timesteps 1000000 --eval-freq 100000 --eval-episodes 2 "
          "--checkpoint-freq 100000 "
          "--out runs/suite-holdout-monitor", "runs/suite-holdout-monitor/model.zip"),
         ("proactivity-gym eval --agents sb3:runs/suite-holdout-monitor/model.zip,policy-follower,oracle "
          "--scenarios monitor --seed 1000 --seeds 10 --out runs/suite-holdout-monitor/eval-unseen",
          "runs/suite-holdout-monitor/eval-unseen/results.json")),
        "runs/suite-holdout-monitor/eval-unseen", ("runs/suite-holdout-monitor",),
        {"sb3:runs/suite-holdout-monitor/model.zip": "MaskablePPO", "policy-follower": "policy-follower",
         "oracle": "oracle"}, held_out="monitor"),
    "bc-holdout-monitor": TrainingRun(
        "Behaviour cloning with the slot policy on the oracle's play of nine scenarios, Monitor held out, "
        "the number of epochs chosen by leave-scenarios-out play among the nine",
        ((f"proactivity-gym dataset --agents oracle --scenarios {NINE_WITHOUT_MONITOR} --seeds 0-49 "
          "--data-path runs/bc-holdout-monitor/datasets --out proactivity/oracle-nine-v0",
          "runs/bc-holdout-monitor/datasets/proactivity/oracle-nine-v0"),
         ("proactivity-gym train --algo bc --dataset proactivity/oracle-nine-v0 --data-path runs/bc-holdout-monitor/datasets "
          f"--exclude-scenarios {SELECTION_SCENARIOS} --eval-scenarios {SELECTION_SCENARIOS} --epochs 16 --eval-every 2 "
          "--out runs/bc-holdout-monitor/select", "runs/bc-holdout-monitor/select/bc.json"),
         ("proactivity-gym train --algo bc --dataset proactivity/oracle-nine-v0 --data-path runs/bc-holdout-monitor/datasets "
          "--epochs-from runs/bc-holdout-monitor/select/bc.json --out runs/bc-holdout-monitor/bc",
          "runs/bc-holdout-monitor/bc/bc.pt"),
         ("proactivity-gym eval --agents bc:runs/bc-holdout-monitor/bc/bc.pt,policy-follower,oracle --scenarios monitor "
          "--seed 1000 --seeds 10 --out runs/bc-holdout-monitor/eval-unseen",
          "runs/bc-holdout-monitor/eval-unseen/results.json")),
        "runs/bc-holdout-monitor/eval-unseen", ("runs/bc-holdout-monitor/select", "runs/bc-holdout-monitor/bc"),
        {"bc:runs/bc-holdout-monitor/bc/bc.pt": "BC, slot policy", "policy-follower": "policy-follower",
         "oracle": "oracle"}, held_out="monitor"),
    "bc-offline": TrainingRun(
        "Behaviour cloning on the oracle, nine scenarios, Monitor held out",
        (("PPO_STEPS=0 BC_EPOCHS=8 bash scripts/offline_baselines.sh", "runs/offline/eval/results.json"),),
        "runs/offline/eval", ("runs/offline/bc",),
        {"bc:runs/offline/bc/bc.pt": "BC", "policy-follower": "policy-follower", "oracle": "oracle"}, held_out="monitor"),
}


def _machine() -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"machine": platform.machine(), "cores": os.cpu_count(), "python": platform.python_version(),
            "system": platform.system(), "load_average": [round(x, 2) for x in load] if load else None}


def _bin(command: str) -> str:
    """The command with ``proactivity-gym`` from this interpreter's venv."""
    tool = Path(sys.executable).with_name("proactivity-gym")
    return command.replace("proactivity-gym ", f"{shlex.quote(str(tool))} ", 1) if tool.exists() else command


def run_commands(run: TrainingRun) -> list[dict]:
    """Run each command whose output is missing; how long each took (None: skipped, output there)."""
    timings = []
    for command, writes in run.commands:
        if (ROOT / writes).exists():
            timings.append({"command": command, "wall_s": None, "skipped": f"{writes} exists"})
            continue
        print(f"$ {command}", flush=True)
        start = time.perf_counter()
        subprocess.run(_bin(command), shell=True, cwd=ROOT, check=True)
        timings.append({"command": command, "wall_s": round(time.perf_counter() - start, 1)})
    return timings


def _curve(path: Path) -> list[dict]:
    """The trainer's evaluations (validation seeds): steps, wall seconds since training began
    (where the trainer recorded them) and the mean J."""
    import csv

    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        return [{"timesteps": int(float(r["timesteps"])), "wall_s": float(r["wall_s"]) if r.get("wall_s") else None,
                 "J": round(float(r["overall/J"]), 4)} for r in csv.DictReader(fh)]


def _read_json(path: Path) -> dict | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def decoy_summary(eval_dir: Path) -> dict[str, dict]:
    """Per agent (its eval label), from the eval folder's trajectories: how many of the scenarios'
    decoy pairs (two tasks open together that compete for nothing, built to tempt a needless
    postponement) it played and failed (a task of the pair postponed inside the pair's window),
    and its needless postponements per run. An agent that wins TA by postponing everything
    (an adversary family in disguise) fails them."""
    from proactive_env.spec import load_scenario

    pairs: dict[str, int] = {}
    out: dict[str, dict] = {}
    for path in sorted((eval_dir / "trajectories").glob("*/*.json")):
        trajectory = json.loads(path.read_text(encoding="utf-8"))
        scores, scenario = trajectory["scores"], trajectory["scenario"]
        if scenario not in pairs:
            pairs[scenario] = len(load_scenario(scenario).decoys)
        agent = out.setdefault(trajectory["agent"], {"runs": 0, "decoy_pairs": 0, "decoys_failed": 0,
                                                     "needless_postponements": 0})
        agent["runs"] += 1
        agent["decoy_pairs"] += pairs[scenario]
        agent["decoys_failed"] += len(scores["decoys_failed"])
        agent["needless_postponements"] += len(scores["needless_postponements"])
    return out


def result_document(name: str, run: TrainingRun, timings: list[dict] | None) -> dict:
    """The result file of ``run``, read from its eval folder (and its training folders)."""
    from proactive_env.scoring.results import load_results
    from proactive_env.spec import SUITE_VERSION

    eval_dir = ROOT / run.eval_dir
    results = load_results(eval_dir / "results.json")
    manifest = _read_json(eval_dir / "manifest.json") or {}
    training = {}
    for folder in run.train_dirs:
        agent = _read_json(ROOT / folder / "agent.json") or _read_json(ROOT / folder / "bc.json")
        if agent is not None:
            training[folder] = {k: agent[k] for k in ("algo", "policy", "args", "episodes", "steps", "best_epoch", "history")
                                if k in agent}
            training[folder]["curve"] = _curve(ROOT / folder / "eval.csv")
    return {
        "format": FORMAT, "name": name, "title": run.title, "suite_version": results["suite_version"],
        "suite_version_now": SUITE_VERSION, "commands": [c for c, _ in run.commands], "labels": run.labels,
        "held_out": run.held_out,
        "eval_dir": run.eval_dir, "eval_commands": manifest.get("commands", []), "training": training,
        "timings": timings, "written": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "written_on": _machine(), "rows": results["rows"], "decoys": decoy_summary(eval_dir),
    }


def write_result(name: str, document: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", choices=[*RUNS, []], help="which runs")
    parser.add_argument("--collect", action="store_true", help="only write the result file, from the eval folder")
    parser.add_argument("--list", action="store_true", help="the runs, their commands and which files exist")
    args = parser.parse_args(argv)
    if args.list or not args.names:
        for name, run in RUNS.items():
            state = "written" if (RESULTS / f"{name}.json").exists() else "no file yet"
            print(f"{name}: {run.title} [{state}]\n" + "".join(f"    {c}\n" for c, _ in run.commands))
        return 0
    for name in args.names:
        run = RUNS[name]
        if not (ROOT / run.eval_dir / "results.json").is_file() and args.collect:
            print(f"error: {run.eval_dir}/results.json: no such file; run without --collect to make it", file=sys.stderr)
            return 2
        timings = None if args.collect else run_commands(run)
        print(write_result(name, result_document(name, run, timings)).relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
