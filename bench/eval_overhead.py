"""How much of the default evaluation (6 agents × 10 scenarios × 3 personas × 3 seeds = 540 runs)
is spent outside the runs themselves: imports, configuration, writing trajectories, aggregation,
the results table. Target: at most 10 % of the wall time.

    python bench/eval_overhead.py [--out DIR]
"""

import time

START = time.perf_counter()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import tempfile  # noqa: E402

import proactive_env.evaluate as evaluate  # noqa: E402
from proactive_env.cli import main  # noqa: E402

inside = {"seconds": 0.0, "runs": 0}
play = evaluate.play


def timed_play(*args, **kwargs):
    t = time.perf_counter()
    try:
        return play(*args, **kwargs)
    finally:
        inside["seconds"] += time.perf_counter() - t
        inside["runs"] += 1


evaluate.play = timed_play

parser = argparse.ArgumentParser()
parser.add_argument("--out", help="output folder (default: a fresh temporary one)")
out = parser.parse_args().out or tempfile.mkdtemp(prefix="eval-overhead-")
with contextlib.redirect_stdout(io.StringIO()):
    status = main(["eval", "--out", out])
wall = time.perf_counter() - START
outside = wall - inside["seconds"]
print(f"status {status}; {inside['runs']} runs; wall {wall:.2f} s; in runs {inside['seconds']:.2f} s; "
      f"outside {outside:.2f} s = {100 * outside / wall:.1f} % (target <= 10 %)")
