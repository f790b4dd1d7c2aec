"""Instructions per env step and per reset, counted by valgrind's callgrind: a measure that a
loaded machine does not move (wall-clock steps/s swing by 2x when other jobs share the cores).

Each env plays a fixed script in its own process under ``valgrind --tool=callgrind``: ``gym.make``
(default wrappers, as ``bench_env.py``), a warm-up of ``--warmup`` steps, then ``--steps`` steps
of the bench's policy (a uniform random valid action from ``info["action_mask"]``, from ``u``
drawn up front by ``numpy.random.default_rng(seed)``), resetting at episode ends, then
``--resets`` seeded resets (seeds ``seed+1 …``). Collection is off but inside two C entry points
the script calls only there: every timed ``step`` is called through ``operator.call`` and every
reset through an ``operator.methodcaller``, and callgrind is told to collect only inside those
(``--collect-atstart=no --toggle-collect=_operator_call --toggle-collect=methodcaller_call``).
Their inclusive costs, over their call counts, are the instructions per step and per reset.
Choosing the action, imports and warm-up are not counted.

    .venv/bin/python bench/count_instructions.py                         # Monitor and CartPole-v1
    .venv/bin/python bench/count_instructions.py --env Proactivity-Monitor-v0 --steps 1000
"""

from __future__ import annotations

import argparse
import json
import operator
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEP_ENTRY, RESET_ENTRY = "_operator_call", "methodcaller_call"


def play(env_id: str, steps: int, warmup: int, resets: int, seed: int) -> None:
    """The fixed script (run under callgrind): only the steps and resets after warm-up count."""
    import gymnasium as gym
    import numpy as np

    import proactive_env  # noqa: F401  (registers our ids)

    env = gym.make(env_id)
    all_actions = np.arange(env.action_space.n)

    def run(n: int, u, timed_step, timed_reset, first_seed: int):
        _, info = timed_reset(env, first_seed)
        for i in range(n):
            mask = info.get("action_mask")
            valid = all_actions if mask is None else np.flatnonzero(mask)
            _, _, terminated, truncated, info = timed_step(env.step, int(valid[int(u[i] * len(valid))]))
            if terminated or truncated:
                _, info = timed_reset(env, None)

    run(warmup, np.random.default_rng(seed + 10_000).random(warmup),
        lambda f, a: f(a), lambda e, s: e.reset(seed=s), seed + 10_000)
    reset_counted = operator.methodcaller("reset")
    run(steps, np.random.default_rng(seed).random(steps), operator.call,
        lambda e, s: reset_counted(e) if s is None else operator.methodcaller("reset", seed=s)(e), seed)
    for r in range(resets):
        operator.methodcaller("reset", seed=seed + 1 + r)(env)


def count(env_id: str, steps: int, warmup: int, resets: int, seed: int) -> dict:
    """Run ``play`` under callgrind; instructions and calls of the step and reset entry points."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        t0 = time.perf_counter()
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
                        f"--toggle-collect={STEP_ENTRY}", f"--toggle-collect={RESET_ENTRY}",
                        sys.executable, __file__, "--play", env_id, "--steps", str(steps), "--warmup", str(warmup),
                        "--resets", str(resets), "--seed", str(seed)],
                       check=True, capture_output=True)
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out)],
                              check=True, capture_output=True, text=True).stdout
        calls = _calls(out)
    figures = {"env": env_id, "steps": calls[STEP_ENTRY], "resets": calls.get(RESET_ENTRY, 0),
               "valgrind_s": round(time.perf_counter() - t0, 1)}
    for name, key in ((STEP_ENTRY, "instructions_per_step"), (RESET_ENTRY, "instructions_per_reset")):
        found = re.search(r"^\s*([\d,]+)\s.*\b" + name + r"\b", text, re.M)
        total = int(found.group(1).replace(",", "")) if found else 0
        figures[key] = round(total / max(1, calls.get(name, 0)))
    return figures


def _calls(out: Path) -> dict[str, int]:
    """How often each entry point was called, from callgrind's ``calls=`` lines (summed over its
    callers: each ``cfn=`` naming it is followed by a ``calls=N`` line)."""
    names, calls, current = {}, {}, None
    for line in out.read_text().splitlines():
        if line.startswith("cfn="):
            m = re.match(r"cfn=\((\d+)\)(?: (.*))?", line)
            if m.group(2):
                names[m.group(1)] = m.group(2).strip()
            current = names.get(m.group(1))
        elif line.startswith("fn="):
            m = re.match(r"fn=\((\d+)\)(?: (.*))?", line)
            if m and m.group(2):
                names[m.group(1)] = m.group(2).strip()
            current = None
        elif line.startswith("calls=") and current in (STEP_ENTRY, RESET_ENTRY):
            calls[current] = calls.get(current, 0) + int(line.split()[0][6:])
            current = None
    return calls


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", nargs="+", default=["Proactivity-Monitor-v0", "CartPole-v1"])
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=1500)
    p.add_argument("--resets", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path)
    p.add_argument("--play", metavar="ENV", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.play:
        play(a.play, a.steps, a.warmup, a.resets, a.seed)
        return 0
    rows = [count(env_id, a.steps, a.warmup, a.resets, a.seed) for env_id in a.env]
    base = next((r for r in rows if r["env"].startswith("CartPole")), None)
    for r in rows:
        if base is not None and r is not base:
            r["x_cartpole"] = round(base["instructions_per_step"] / r["instructions_per_step"], 3)
        print(json.dumps(r))
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
