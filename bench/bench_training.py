"""Training throughput: env steps per second inside sb3-contrib's MaskablePPO, per policy
(the slot policy and the mlp) and with 1 and 2 envs.

    .venv/bin/python bench/bench_training.py                 # 8,192 steps x 3 repeats per setting
    .venv/bin/python bench/bench_training.py --steps 16384 --repeats 5 --policies slots --json bench/training.json

Measures ``model.learn`` wall time (rollouts and updates together, as a user experiences it) on
``Proactivity-Monitor-v0`` with the trainer's default MaskablePPO settings (``train_maskable_ppo.Args``:
n_steps 2048 per env, batch 512, 5 epochs), one torch thread, with one env in-process
(DummyVecEnv) and two envs in subprocesses (SubprocVecEnv). Reports the median and range over
repeats. Say what else ran on the machine when you quote it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
from sb3_contrib import MaskablePPO

from proactive_env.baselines.train_maskable_ppo import POLICIES, Args, policy_class
from proactive_env.baselines.training import make_envs


def steps_per_second(policy: str, n_envs: int, steps: int, seed: int) -> float:
    args = Args(policy=policy, n_envs=n_envs, seed=seed, progress_bar=False)
    envs = make_envs(args, flat=False)
    kwargs = {**args.model_kwargs(), "tensorboard_log": None}
    model = MaskablePPO(policy_class(policy), envs, **kwargs)
    start = time.perf_counter()
    model.learn(steps)
    elapsed = time.perf_counter() - start
    envs.close()
    return steps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8_192)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"# MaskablePPO on Proactivity-Monitor-v0: {args.steps} steps x {args.repeats} repeats; "
          f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    results: dict[str, dict] = {}
    for policy in args.policies.split(","):
        for n_envs in (1, 2):
            runs = [steps_per_second(policy, n_envs, args.steps, seed) for seed in range(args.repeats)]
            results[f"{policy}/{n_envs}"] = {"median": statistics.median(runs), "min": min(runs), "max": max(runs),
                                             "runs": runs}
            print(f"{policy}, n_envs={n_envs}: {statistics.median(runs):,.0f} steps/s "
                  f"(min {min(runs):,.0f}, max {max(runs):,.0f})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
