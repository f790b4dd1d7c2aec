"""Training throughput: env steps per second inside sb3-contrib's MaskablePPO, per policy
(the slot policy and the mlp) and per way of stepping the envs.

    .venv/bin/python bench/bench_training.py                 # 8,192 steps x 3 repeats per setting
    .venv/bin/python bench/bench_training.py --steps 16384 --repeats 5 --policies slots --json bench/training.json

Measures ``model.learn`` wall time (rollouts and updates together, as a user experiences it) on
``Proactivity-Monitor-v0`` with the trainer's default MaskablePPO settings (``train_maskable_ppo.Args``:
2,048 steps a rollout, batch 512, 5 epochs, the slot network 32 wide with one attention layer),
one torch thread, with one env, with the default 16 envs in one process (DummyVecEnv: one batched
forward for all of them) and with two envs in subprocesses (SubprocVecEnv). Reports the median
and range over repeats. Say what else ran on the machine when you quote it.
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


SETTINGS = (("dummy", 1), ("dummy", 16), ("subproc", 2))  # (--vec-env, --n-envs)


def steps_per_second(policy: str, vec_env: str, n_envs: int, steps: int, seed: int) -> float:
    rollout = Args.n_steps * Args.n_envs  # the same rollout (and so the same updates) in every setting
    args = Args(policy=policy, vec_env=vec_env, n_envs=n_envs, n_steps=rollout // n_envs, seed=seed,
                progress_bar=False)
    envs = make_envs(args, flat=False)
    kwargs = {**args.model_kwargs(), "tensorboard_log": None}
    model = MaskablePPO(policy_class(policy), envs, **kwargs)
    spent = _timed(model, envs)
    start = time.perf_counter()
    model.learn(steps)
    elapsed = time.perf_counter() - start
    envs.close()
    print(f"  {policy}, {vec_env}, n_envs={n_envs}: {steps / elapsed:,.0f} steps/s; ms per env step: env "
          f"{1e3 * spent['env'] / steps:.3f}, policy forward {1e3 * spent['forward'] / steps:.3f}, rest of the "
          f"rollout {1e3 * (spent['rollout'] - spent['env'] - spent['forward']) / steps:.3f}, PPO update "
          f"{1e3 * spent['update'] / steps:.3f}", flush=True)
    return steps / elapsed


def _timed(model, envs) -> dict[str, float]:
    """Wall seconds spent in the envs' step, the policy's forward pass while collecting, the whole
    rollout and the PPO update, filled in as ``model.learn`` runs."""
    spent = {"env": 0.0, "forward": 0.0, "rollout": 0.0, "update": 0.0}
    for owner, method, key in ((envs, "step_wait", "env"), (model.policy, "forward", "forward"),
                               (model, "collect_rollouts", "rollout"), (model, "train", "update")):
        inner = getattr(owner, method)

        def timed(*args, _inner=inner, _key=key, **kwargs):
            start = time.perf_counter()
            try:
                return _inner(*args, **kwargs)
            finally:
                spent[_key] += time.perf_counter() - start

        setattr(owner, method, timed)
    return spent


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
        for vec_env, n_envs in SETTINGS:
            runs = [steps_per_second(policy, vec_env, n_envs, args.steps, seed) for seed in range(args.repeats)]
            results[f"{policy}/{vec_env}/{n_envs}"] = {"median": statistics.median(runs), "min": min(runs),
                                                       "max": max(runs), "runs": runs}
            print(f"{policy}, {vec_env}, n_envs={n_envs}: {statistics.median(runs):,.0f} steps/s "
                  f"(min {min(runs):,.0f}, max {max(runs):,.0f})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
