"""Training throughput: env steps per second inside sb3-contrib's MaskablePPO, 1 and 2 envs.

    .venv/bin/python bench/bench_training.py                 # 16,384 steps x 3 repeats per setting
    .venv/bin/python bench/bench_training.py --steps 32768 --repeats 5 --json bench/training.json

Measures ``model.learn`` wall time (rollouts and updates together, as a user experiences it) on
``Proactivity-Monitor-v0`` with the default MaskablePPO settings of our trainer (n_steps 1024 per
env, batch 256, 10 epochs, 256x256 MLP), with one env in-process (DummyVecEnv) and two envs in
subprocesses (SubprocVecEnv). Reports the median and range over repeats.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
from sb3_contrib import MaskablePPO

from proactive_env.baselines.train_maskable_ppo import Args
from proactive_env.baselines.training import make_envs


def steps_per_second(n_envs: int, steps: int, seed: int) -> float:
    args = Args(n_envs=n_envs, seed=seed, progress_bar=False)
    envs = make_envs(args, flat=False)
    model = MaskablePPO("MultiInputPolicy", envs, n_steps=args.n_steps, batch_size=args.batch_size,
                        n_epochs=args.n_epochs, gamma=args.gamma, seed=seed, device="cpu",
                        policy_kwargs={"net_arch": [256, 256]}, verbose=0)
    start = time.perf_counter()
    model.learn(steps)
    elapsed = time.perf_counter() - start
    envs.close()
    return steps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=16_384)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    print(f"# MaskablePPO on Proactivity-Monitor-v0: {args.steps} steps x {args.repeats} repeats; "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    results = {}
    for n_envs in (1, 2):
        runs = [steps_per_second(n_envs, args.steps, seed) for seed in range(args.repeats)]
        results[n_envs] = {"median": statistics.median(runs), "min": min(runs), "max": max(runs), "runs": runs}
        print(f"n_envs={n_envs}: {results[n_envs]['median']:,.0f} steps/s (min {min(runs):,.0f}, max {max(runs):,.0f})")
    print(f"2 envs / 1 env: {results[2]['median'] / results[1]['median']:.2f}x")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
