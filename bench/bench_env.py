"""Throughput benchmark of the structured Proactivity-Gym env, beside CartPole-v1 and MiniGrid.

Every env is built with ``gym.make`` (default wrappers included) and driven by a uniform random
*valid* action: for envs that publish ``info["action_mask"]`` the choice is among
``np.flatnonzero(mask)``, otherwise among ``range(action_space.n)``. Only ``env.step`` is inside
the step clock; the action choice and ``env.reset`` are timed apart (resets reported on their own).

    .venv/bin/python bench/bench_env.py                      # defaults, < 1 minute
    .venv/bin/python bench/bench_env.py --all-personas --json bench/results.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import sys
import time
import tracemalloc
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

import proactive_env  # noqa: F401  (registers Proactivity-* ids)

try:
    import minigrid  # noqa: F401  (registers MiniGrid-* ids)
except ImportError:  # pragma: no cover - optional extra "bench"
    minigrid = None

CARTPOLE = "CartPole-v1"
MINIGRID = "MiniGrid-Empty-8x8-v0"
# Targets (issue #21): ours against CartPole in the same run, reset time, tracemalloc peak.
TARGET_X_CARTPOLE = 0.3
GOAL_X_CARTPOLE = 0.5
TARGET_RESET_MS = 0.5
TARGET_TRACED_MIB = 2.0
MEMORY_STEPS = 5_000  # steps of the separate tracemalloc pass (tracemalloc slows Python a lot)


@dataclass
class Run:
    """One timed run of ``steps`` env steps."""

    steps_per_s: float
    step_s: float
    reset_s: list[float]
    episodes: int


@dataclass
class EnvResult:
    env_id: str
    ours: bool
    make_s: float = 0.0
    runs: list[Run] = field(default_factory=list)
    tracemalloc_peak_mib: float = float("nan")

    def sps(self) -> np.ndarray:
        return np.array([r.steps_per_s for r in self.runs])

    def resets(self) -> np.ndarray:
        return np.array([t for r in self.runs for t in r.reset_s])


def pin_to_one_core() -> int | None:
    """Pin this process to one CPU (the last allowed one) where the OS supports it."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        core = max(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        return core
    except OSError:
        return None


def valid_actions(info: dict[str, Any], all_actions: np.ndarray) -> np.ndarray:
    """Indices of the valid actions: from the env's mask if it gives one, else all of them."""
    mask = info.get("action_mask")
    return all_actions if mask is None else np.flatnonzero(mask)


def run_env(env: gym.Env, steps: int, seed: int) -> Run:
    """Step ``env`` ``steps`` times with a random valid action; time steps and resets apart."""
    clock = time.perf_counter
    all_actions = np.arange(env.action_space.n)
    u = np.random.default_rng(seed).random(steps)  # pre-drawn U[0,1) — one per step
    resets: list[float] = []
    step_s = 0.0
    t0 = clock()
    _, info = env.reset(seed=seed)
    resets.append(clock() - t0)
    for i in range(steps):
        valid = valid_actions(info, all_actions)
        action = int(valid[int(u[i] * len(valid))])
        t0 = clock()
        _, _, terminated, truncated, info = env.step(action)
        step_s += clock() - t0
        if terminated or truncated:
            t0 = clock()
            _, info = env.reset()
            resets.append(clock() - t0)
    return Run(steps / step_s, step_s, resets, len(resets))


def peak_memory_mib(env_id: str, steps: int, seed: int) -> float:
    """tracemalloc peak (MiB) over ``gym.make`` + reset + ``steps`` steps, in a pass of its own."""
    gc.collect()
    tracemalloc.start()
    try:
        env = gym.make(env_id)
        run_env(env, steps, seed)
        env.close()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def bench(env_ids: list[str], ours: set[str], steps: int, repeats: int, seed: int) -> list[EnvResult]:
    """Warm each env up, then run the repeats interleaved across envs so drift hits all alike."""
    results: dict[str, EnvResult] = {}
    envs: dict[str, gym.Env] = {}
    for env_id in env_ids:
        t0 = time.perf_counter()
        envs[env_id] = gym.make(env_id)
        results[env_id] = EnvResult(env_id, env_id in ours, make_s=time.perf_counter() - t0)
        run_env(envs[env_id], min(steps, 2_000), seed)  # warm-up: env checker, caches
    for r in range(repeats):
        for env_id, env in envs.items():
            gc.collect()
            results[env_id].runs.append(run_env(env, steps, seed + 1 + r))
    for env_id, env in envs.items():
        env.close()
        results[env_id].tracemalloc_peak_mib = peak_memory_mib(env_id, min(steps, MEMORY_STEPS), seed)
    return list(results.values())


def max_rss_mib() -> float:
    """Peak resident set size of this process (ru_maxrss: KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 2**20 if sys.platform == "darwin" else rss / 2**10


def spread(x: np.ndarray) -> dict[str, float]:
    q1, med, q3 = np.percentile(x, [25, 50, 75])
    return {"median": float(med), "q1": float(q1), "q3": float(q3), "min": float(x.min()), "max": float(x.max())}


def summarise(results: list[EnvResult], ours: list[str]) -> dict[str, Any]:
    """Per-env figures, ratios of ours to each baseline and the target verdicts."""
    per_env = {res.env_id: {
        "ours": res.ours,
        "steps_per_s": spread(res.sps()),
        "reset_ms": spread(res.resets() * 1e3),
        "resets": int(res.resets().size),
        "make_ms": res.make_s * 1e3,
        "tracemalloc_peak_mib": res.tracemalloc_peak_mib,
        "runs": [asdict(r) for r in res.runs],
    } for res in results}
    med = {k: v["steps_per_s"]["median"] for k, v in per_env.items()}
    verdicts = {}
    for env_id in ours:
        env = per_env[env_id]
        v = {"steps_per_s": med[env_id], "reset_ms": env["reset_ms"]["median"],
             "tracemalloc_peak_mib": env["tracemalloc_peak_mib"],
             "meets_reset": env["reset_ms"]["median"] <= TARGET_RESET_MS,
             "meets_memory": env["tracemalloc_peak_mib"] <= TARGET_TRACED_MIB}
        if MINIGRID in med:
            v["x_minigrid"] = med[env_id] / med[MINIGRID]  # reported, no target
        if CARTPOLE in med:
            v["x_cartpole"] = med[env_id] / med[CARTPOLE]
            v["meets_cartpole"] = v["x_cartpole"] >= TARGET_X_CARTPOLE
            v["reaches_goal"] = v["x_cartpole"] >= GOAL_X_CARTPOLE
        v["met"] = all(val for key, val in v.items() if key.startswith("meets_"))
        verdicts[env_id] = v
    return {"envs": per_env, "targets": verdicts}


def print_table(summary: dict[str, Any], meta: dict[str, Any]) -> None:
    print(f"# {meta['steps']} steps x {meta['repeats']} repeats per env, seed {meta['seed']}; "
          f"core: {meta['core'] if meta['core'] is not None else 'not pinned'}; "
          f"python {meta['python']}, gymnasium {meta['gymnasium']}, numpy {meta['numpy']}")
    head = (f"{'env':<34} {'steps/s med':>12} {'IQR':>17} {'min':>9} {'max':>9} "
            f"{'reset ms':>9} {'resets':>7} {'tm peak MiB':>12}")
    print(head)
    print("-" * len(head))
    for env_id, e in summary["envs"].items():
        s, rs = e["steps_per_s"], e["reset_ms"]
        iqr = f"{s['q1']:,.0f}-{s['q3']:,.0f}"
        print(f"{env_id:<34} {s['median']:>12,.0f} {iqr:>17} {s['min']:>9,.0f} {s['max']:>9,.0f} "
              f"{rs['median']:>9.3f} {e['resets']:>7} {e['tracemalloc_peak_mib']:>12.2f}")
    print(f"process peak RSS (ru_maxrss): {meta['ru_maxrss_mib']:.1f} MiB")
    print()
    yes = {True: "met", False: "NOT met"}
    for env_id, v in summary["targets"].items():
        parts = [f"{v['steps_per_s']:,.0f} steps/s"]
        if "x_cartpole" in v:
            parts.append(f"{v['x_cartpole']:.3f}x CartPole (>= {TARGET_X_CARTPOLE:g}: {yes[v['meets_cartpole']]}; "
                         f"goal {GOAL_X_CARTPOLE:g}: {'reached' if v['reaches_goal'] else 'not reached'})")
        if "x_minigrid" in v:
            parts.append(f"{v['x_minigrid']:.2f}x MiniGrid")
        parts.append(f"reset {v['reset_ms']:.3f} ms (<= {TARGET_RESET_MS:g}: {yes[v['meets_reset']]})")
        parts.append(f"traced {v['tracemalloc_peak_mib']:.2f} MiB (<= {TARGET_TRACED_MIB:g}: {yes[v['meets_memory']]})")
        print(f"{env_id}: " + "; ".join(parts) + f" -> targets {yes[v['met']]}")
    print(f"load average (1, 5, 15 min) at the end: {meta['load_average']}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", nargs="+", default=["Proactivity-Monitor-v0"], help="env id(s) to benchmark")
    p.add_argument("--all-personas", action="store_true",
                   help="also benchmark each persona id (e.g. Proactivity-Monitor-Operator-v0)")
    p.add_argument("--steps", type=int, default=20_000, help="env steps per run")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per env (median reported)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-baselines", action="store_true", help=f"skip {CARTPOLE} and {MINIGRID}")
    p.add_argument("--no-pin", action="store_true", help="do not pin the process to one core")
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = p.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        p.error("--steps and --repeats must be >= 1")
    return args


def our_ids(envs: list[str], all_personas: bool) -> list[str]:
    ids = list(envs)
    if all_personas:
        personas = [p.capitalize() for p in proactive_env.spec.PERSONAS]
        for env_id in envs:
            stem = env_id.removesuffix("-v0")
            ids += [f"{stem}-{p}-v0" for p in personas if f"{stem}-{p}-v0" in gym.registry]
    return list(dict.fromkeys(ids))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    core = None if args.no_pin else pin_to_one_core()
    ours = our_ids(args.env, args.all_personas)
    missing = [env_id for env_id in ours if env_id not in gym.registry]
    if missing:
        print(f"not registered: {', '.join(missing)}", file=sys.stderr)
        return 2
    baselines = [] if args.no_baselines else [CARTPOLE] + ([MINIGRID] if minigrid is not None else [])
    results = bench(ours + baselines, set(ours), args.steps, args.repeats, args.seed)
    meta = {"steps": args.steps, "repeats": args.repeats, "seed": args.seed, "core": core,
            "python": platform.python_version(), "gymnasium": gym.__version__, "numpy": np.__version__,
            "minigrid": getattr(minigrid, "__version__", None), "machine": platform.machine(),
            "ru_maxrss_mib": max_rss_mib(),
            "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
            "cpus": os.cpu_count()}
    summary = summarise(results, ours)
    print_table(summary, meta)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, **summary}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
