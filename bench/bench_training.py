"""Training throughput: env steps per second inside sb3-contrib's MaskablePPO, per policy
(the slot policy and the mlp) and with 1 and 2 envs.

    .venv/bin/python bench/bench_training.py                 # 8,192 steps x 3 repeats per setting
    .venv/bin/python bench/bench_training.py --steps 16384 --repeats 5 --policies slots --json bench/training.json

Measures ``model.learn`` wall time (rollouts and updates together, as a user experiences it) on
``Proactivity-Monitor-v0`` with the trainer's default MaskablePPO settings (``train_maskable_ppo.Args``:
n_steps 2048 per env, batch 512, 5 epochs), one torch thread, with one env in-process
(DummyVecEnv) and two envs in subprocesses (SubprocVecEnv). Reports the median and range over
repeats and, with one env, where the time went: env steps (``step_wait``), the PPO update
(``train``) and the rest (the policy's forward passes while collecting, the buffer). Say what
else ran on the machine when you quote it.
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


def _timed(owner: object, name: str, spent: dict[str, float]) -> None:
    """Wrap ``owner.name`` so that the wall time spent in it adds up in ``spent[name]``."""
    inner = getattr(owner, name)

    def timed(*a, **k):
        start = time.perf_counter()
        try:
            return inner(*a, **k)
        finally:
            spent[name] += time.perf_counter() - start
    setattr(owner, name, timed)


def steps_per_second(policy: str, n_envs: int, steps: int, seed: int) -> tuple[float, dict[str, float]]:
    """Steps/s of ``model.learn`` and, with one in-process env, the share of its wall time spent
    in the env's steps (``step_wait``: env and its wrappers), in the PPO update (``train``) and in
    the rest (the policy's forward passes while collecting, the rollout buffer, callbacks)."""
    args = Args(policy=policy, n_envs=n_envs, seed=seed, progress_bar=False)
    envs = make_envs(args, flat=False)
    kwargs = {**args.model_kwargs(), "tensorboard_log": None}
    model = MaskablePPO(policy_class(policy), envs, **kwargs)
    spent = {"step_wait": 0.0, "train": 0.0}
    if n_envs == 1:  # (subprocess envs step in other processes: no split)
        _timed(model.env, "step_wait", spent)
        _timed(model, "train", spent)
    start = time.perf_counter()
    model.learn(steps)
    elapsed = time.perf_counter() - start
    envs.close()
    split = {}
    if n_envs == 1:
        split = {"env": spent["step_wait"] / elapsed, "update": spent["train"] / elapsed}
        split["rest"] = 1.0 - split["env"] - split["update"]
    return steps / elapsed, split


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
            measured = [steps_per_second(policy, n_envs, args.steps, seed) for seed in range(args.repeats)]
            runs = [sps for sps, _ in measured]
            results[f"{policy}/{n_envs}"] = {"median": statistics.median(runs), "min": min(runs), "max": max(runs),
                                             "runs": runs}
            line = (f"{policy}, n_envs={n_envs}: {statistics.median(runs):,.0f} steps/s "
                    f"(min {min(runs):,.0f}, max {max(runs):,.0f})")
            if measured[0][1]:
                split = {k: statistics.median(s[k] for _, s in measured) for k in measured[0][1]}
                results[f"{policy}/{n_envs}"]["time_share"] = split
                line += "; time in " + ", ".join(f"{k} {v:.0%}" for k, v in split.items())
            print(line)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
