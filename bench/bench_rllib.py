"""Training throughput side by side: SB3 MaskablePPO (1 env) and RLlib PPO (1 and 2 env runners).

    .venv-rllib/bin/python bench/bench_rllib.py                 # 8 iterations of 1024 steps x 3 repeats
    .venv-rllib/bin/python bench/bench_rllib.py --iterations 16 --repeats 5 --json bench/rllib.json

Same env (``Proactivity-Monitor-v0``), same work per iteration for both libraries: 1024 env steps,
10 epochs of minibatches of 256, a 256x256 MLP, on the CPU. Wall time of the training loop
(rollouts and updates together, after one warm-up iteration that builds the actors), reported as
env steps/s: median and range over repeats. For RLlib it also splits each iteration into
sampling and learning (RLlib's own timers), which is what the cluster projection rests on.
Needs the venv with the rllib extra (``bash scripts/setup.sh test,rllib,minari .venv-rllib``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_training import steps_per_second as sb3_steps_per_second  # noqa: E402

STEPS_PER_ITERATION, MINIBATCH, EPOCHS = 1024, 256, 10


def rllib_run(num_env_runners: int, iterations: int, seed: int) -> dict:
    """Env steps/s of ``iterations`` PPO iterations, and the mean seconds per iteration spent
    sampling and learning."""
    import ray
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    from proactive_env.baselines.rllib_env import register_rllib_envs
    from proactive_env.baselines.train_rllib import Args, build_config, start_ray

    args = Args(num_env_runners=num_env_runners, train_batch_size=STEPS_PER_ITERATION, minibatch_size=MINIBATCH,
                num_epochs=EPOCHS, seed=seed)
    start_ray("", num_env_runners)
    try:
        register_rllib_envs()
        algo = build_config(args).build_algo()
        warm_up = algo.train()  # actors built, first weights synced
        before = warm_up[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME]
        sample, learn = [], []
        start = time.perf_counter()
        for _ in range(iterations):
            result = algo.train()
            timers = result.get("timers", {})
            sample.append(float(timers.get("env_runner_sampling_timer", float("nan"))))
            learn.append(float(timers.get("learner_update_timer", float("nan"))))
        elapsed = time.perf_counter() - start
        steps = result[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME] - before
        algo.stop()
    finally:
        ray.shutdown()
    # RLlib's timers are smoothed over iterations (the warm-up included): keep their ratio, scaled to
    # the measured iteration time where they add up to more.
    iteration = elapsed / iterations
    sample_s, learn_s = statistics.mean(sample), statistics.mean(learn)
    scale = min(1.0, iteration / (sample_s + learn_s))
    return {"steps_per_s": steps / elapsed, "sample_s": sample_s * scale, "learn_s": learn_s * scale,
            "iteration_s": iteration}


def summary(runs: list[float]) -> dict:
    return {"median": statistics.median(runs), "min": min(runs), "max": max(runs), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=8, help="timed iterations of 1024 env steps")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import ray

    print(f"# Proactivity-Monitor-v0, {args.iterations} x {STEPS_PER_ITERATION} env steps x {args.repeats} repeats; "
          f"{os.cpu_count()} cores, torch {torch.__version__} ({torch.get_num_threads()} threads), ray {ray.__version__}")
    results = {}
    # (the mlp: the same 256x256 MLP as the RLlib module; bench_training's signature is (policy, n_envs, steps, seed))
    sb3 = [sb3_steps_per_second("mlp", "dummy", 1, args.iterations * STEPS_PER_ITERATION, seed) for seed in range(args.repeats)]
    results["sb3 MaskablePPO, 1 env"] = summary(sb3)
    for runners in (1, 2):
        runs = [rllib_run(runners, args.iterations, seed) for seed in range(args.repeats)]
        row = summary([r["steps_per_s"] for r in runs])
        row["sample_s"] = statistics.median(r["sample_s"] for r in runs)
        row["learn_s"] = statistics.median(r["learn_s"] for r in runs)
        row["iteration_s"] = statistics.median(r["iteration_s"] for r in runs)
        results[f"rllib PPO, {runners} env runner{'s' if runners > 1 else ''}"] = row
    print(f"{'setting':<28} {'steps/s':>9} {'min':>9} {'max':>9}   per iteration: sampling / learning / total")
    for name, row in results.items():
        split = (f"   {row['sample_s']:.2f} s / {row['learn_s']:.2f} s / {row['iteration_s']:.2f} s"
                 if "sample_s" in row else "")
        print(f"{name:<28} {row['median']:>9,.0f} {row['min']:>9,.0f} {row['max']:>9,.0f}{split}")
    one = results["rllib PPO, 1 env runner"]
    print("\n# Projection (on paper, not measured): PPO alternates sampling and learning; K env runners divide the "
          "sampling time, L learners (num_learners, data-parallel) the learning time, the rest stays.")
    rest = max(0.0, one["iteration_s"] - one["sample_s"] - one["learn_s"])
    for runners, learners in ((4, 1), (16, 1), (64, 1), (16, 4), (64, 16)):
        iteration = one["sample_s"] / runners + one["learn_s"] / learners + rest
        print(f"K={runners:>3} runners, L={learners:>2} learners: ~{STEPS_PER_ITERATION / iteration:,.0f} steps/s "
              f"per {STEPS_PER_ITERATION}-step iteration (batches grow with K in practice)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
