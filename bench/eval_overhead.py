"""How much of the default evaluation (6 agents × 10 scenarios × 3 personas × 3 seeds = 540 runs)
is spent outside the runs themselves: imports, configuration, aggregation, the results tables.
A run is playing the episode and saving its trajectory (the run's record: without it there is no
result). Target: at most 10 % of the wall time. The share outside the episodes alone (saving
trajectories counted as outside too) is printed beside it.

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

inside = {"seconds": 0.0, "runs": 0, "saving": 0.0}
play = evaluate.play
write_json_atomic = evaluate.write_json_atomic


def timed_play(*args, **kwargs):
    t = time.perf_counter()
    try:
        return play(*args, **kwargs)
    finally:
        inside["seconds"] += time.perf_counter() - t
        inside["runs"] += 1


def timed_write(path, *args, **kwargs):
    t = time.perf_counter()
    try:
        return write_json_atomic(path, *args, **kwargs)
    finally:
        if path.parent.parent.name in ("trajectories", "errored"):  # a run's trajectory, not results.json
            inside["saving"] += time.perf_counter() - t


evaluate.play = timed_play
evaluate.write_json_atomic = timed_write

parser = argparse.ArgumentParser()
parser.add_argument("--out", help="output folder (default: a fresh temporary one)")
out = parser.parse_args().out or tempfile.mkdtemp(prefix="eval-overhead-")
with contextlib.redirect_stdout(io.StringIO()):
    status = main(["eval", "--out", out])
wall = time.perf_counter() - START
runs = inside["seconds"] + inside["saving"]
outside = wall - runs
print(f"status {status}; {inside['runs']} runs; wall {wall:.2f} s; in runs {runs:.2f} s (episodes "
      f"{inside['seconds']:.2f} s, saving trajectories {inside['saving']:.2f} s); outside {outside:.2f} s = "
      f"{100 * outside / wall:.1f} % (target <= 10 %); outside the episodes alone "
      f"{100 * (wall - inside['seconds']) / wall:.1f} %")
