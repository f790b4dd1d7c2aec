"""How long `report` takes per episode page (issue 23: at most 0.2 s), in one process.

    .venv/bin/python bench/bench_report.py                  # 3 agents × 3 scenarios × 3 personas, seed 1000
    .venv/bin/python bench/bench_report.py --pictures       # with the timeline picture embedded

Plays the runs (not timed), then times writing every run's episode page (the scorer's take-apart
of the run and the page) and the whole `build_report`, and prints seconds per page.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from proactive_env.baselines import make_agent
from proactive_env.evaluate import evaluate, plan
from proactive_env.report.build import build_report, explain_runs
from proactive_env.report.collect import collect


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="oracle,policy-follower,random")
    parser.add_argument("--scenarios", default="monitor,experiments,medications")
    parser.add_argument("--pictures", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        keys = plan(args.agents.split(","), args.scenarios.split(","), ["reviewer", "planner", "operator"], [1000])
        evaluate(keys, root / "eval", make_agent)
        runs, _ = collect([root / "eval"])
        start = time.perf_counter()
        explain_runs(runs, {r.path for r in runs}, root / "pages", pictures=args.pictures, workers=1)
        pages = time.perf_counter() - start
        start = time.perf_counter()
        build_report([root / "eval"], root / "report", workers=1, pictures=args.pictures)
        whole = time.perf_counter() - start
    print(f"{len(runs)} episode pages{' with pictures' if args.pictures else ''}: {pages / len(runs):.3f} s per page "
          f"(one process); whole report {whole:.1f} s")


if __name__ == "__main__":
    main()
