#!/usr/bin/env python
"""Regenerate the README's tables from the current suite, into docs/generated/NAME.md.

    python scripts/readme_figures.py                 # every table (a few minutes on 2 cores)
    python scripts/readme_figures.py scenarios       # only some: scenarios, adversaries, text-baselines
    python scripts/readme_figures.py --check         # regenerate into a scratch folder and diff (exit 1 if stale)
    python scripts/readme_figures.py --readme        # regenerate, then put each table into the README where it is cited

Each generated file starts with a comment stating the command, the machine, the time and the
suite version, then the table exactly as the README shows it. The README marks each table with
``<!-- generated: docs/generated/NAME.md (python scripts/readme_figures.py NAME) -->`` on the line
before it, and tests/test_readme_figures.py fails when a README table differs from the file it
cites. The training tables (MaskablePPO, train-on-nine, RLlib, BC) come from training runs that
take hours; they are not regenerated here (see the README for the command behind each).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "generated"
TEST_SEEDS = (1000, 1001, 1002)
STRUCTURED_BASELINES = ("oracle", "policy-follower", "always-suggest", "always-execute", "random", "noop")


def _header(name: str) -> str:
    from proactive_env.spec import SUITE_VERSION

    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"<!-- made by: python scripts/readme_figures.py {name} | suite {SUITE_VERSION} | {machine} | "
            f"{when} -->\n")


# ---------------------------------------------------------------------------------- scenarios
def _shares(scenario) -> str:
    """What the scenario's TA decisions compete for: the user's time or a resource (by id)."""
    counts: dict[str, int] = {}
    for d in scenario.ta_decisions:
        what = "the user's time" if d.shares == "user_time" else f"`{d.shares}`"
        counts[what] = counts.get(what, 0) + 1
    return ", ".join(f"{k} ({v})" if v > 1 else k for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def scenarios_table() -> list[str]:
    from proactive_env.envs import env_name
    from proactive_env.spec import load_scenario, shipped_names

    lines = ["| name | domain | id | tasks | days | TA decisions over |", "|---|---|---|---|---|---|"]
    for name in shipped_names():
        s = load_scenario(name)
        lines.append(f"| `{name}` | {s.domain} | `Proactivity-{env_name(name)}-v0` | {len(s.tasks)} | {s.days} | "
                     f"{_shares(s)} |")
    return lines


# ---------------------------------------------------------------------------------- agent tables
def _play(job: tuple[str, str, str, int]) -> dict:
    from proactive_env.baselines import make_agent
    from proactive_env.evaluate import play

    agent, scenario, persona, seed = job
    scores = play(make_agent(agent), scenario, persona, seed)["scores"]
    return {"agent": agent, "persona": persona, **{k: scores[k] for k in ("TC", "TA", "TR_D", "TR_J", "J")},
            "constraints": scores["components"].get("constraints")}


def _runs(agents: list[str], seeds: dict[str, tuple[int, ...]], workers: int) -> list[dict]:
    from proactive_env.spec import PERSONAS, shipped_names

    jobs = [(a, s, p, seed) for a in agents for s in shipped_names() for p in PERSONAS for seed in seeds[a]]
    if workers <= 1:
        return [_play(job) for job in jobs]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(_play, jobs, chunksize=8))


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def agent_table(agents: list[str], seeds: dict[str, tuple[int, ...]], workers: int,
                columns: tuple[str, ...]) -> list[str]:
    runs = _runs(agents, seeds, workers)
    heads = {"seeds": "seeds", "TC": "TC", "TA": "TA %", "TR_D": "TR-D %", "TR_D_operator": "TR-D % operator",
             "TR_J": "TR-J", "J": "J", "constraints": "Constraints %"}
    lines = ["| agent | " + " | ".join(heads[c] for c in columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for agent in agents:
        mine = [r for r in runs if r["agent"] == agent]
        cell = {"seeds": str(len(seeds[agent])), "TC": f"{_mean([r['TC'] for r in mine]):.1f}",
                "TA": f"{100 * _mean([r['TA'] for r in mine]):.1f}", "TR_D": f"{100 * _mean([r['TR_D'] for r in mine]):.1f}",
                "TR_D_operator": f"{100 * _mean([r['TR_D'] for r in mine if r['persona'] == 'operator']):.1f}",
                "TR_J": f"{_mean([r['TR_J'] for r in mine]):.2f}", "J": f"{_mean([r['J'] for r in mine]):.3f}",
                "constraints": f"{_mean([r['constraints'] or 0.0 for r in mine]):.1f}"}
        lines.append(f"| {agent} | " + " | ".join(cell[c] for c in columns) + " |")
    return lines


def adversaries_table(workers: int) -> list[str]:
    from proactive_env.baselines import adversaries

    structured = [*STRUCTURED_BASELINES, *(c.name for c in adversaries.STRUCTURED)]
    text = ["text-oracle", *(c.name for c in adversaries.TEXT)]
    seeds = {**{a: TEST_SEEDS for a in structured}, **{a: TEST_SEEDS[:1] for a in text}}
    return agent_table(structured + text, seeds, workers,
                       ("seeds", "TC", "TA", "TR_D", "TR_D_operator", "TR_J", "J", "constraints"))


def text_baselines_table(workers: int) -> list[str]:
    from proactive_env.baselines import TEXT_SCRIPTED

    agents = ["text-oracle", *(a for a in TEXT_SCRIPTED if a != "text-oracle")]
    return agent_table(agents, {a: TEST_SEEDS[:1] for a in agents}, workers,
                       ("TC", "TA", "TR_D", "TR_D_operator", "TR_J", "J"))


TABLES = {"scenarios": lambda workers: scenarios_table(), "adversaries": adversaries_table,
          "text-baselines": text_baselines_table}


def generate(names: list[str], out: Path, workers: int) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        path = out / f"{name}.md"
        path.write_text(_header(name) + "\n".join(TABLES[name](workers)) + "\n", encoding="utf-8")
        written.append(path)
        print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}", flush=True)
    return written


def table_of(path: Path) -> list[str]:
    """A generated file's table lines (its header comment left out)."""
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("|")]


_MARK = re.compile(r"<!-- generated: docs/generated/([\w-]+)\.md \(python scripts/readme_figures\.py [\w-]+\) -->")


def update_readme(readme: Path = ROOT / "README.md") -> list[str]:
    """Replace the table after each ``<!-- generated: … -->`` mark by its generated file's table;
    the names of the tables that changed."""
    lines, changed, out, i = readme.read_text(encoding="utf-8").splitlines(), [], [], 0
    while i < len(lines):
        out.append(lines[i])
        match = _MARK.search(lines[i])
        i += 1
        if not match:
            continue
        while i < len(lines) and not lines[i].startswith("|"):  # (text between the mark and its table)
            out.append(lines[i])
            i += 1
        old = []
        while i < len(lines) and lines[i].startswith("|"):
            old.append(lines[i])
            i += 1
        new = table_of(OUT / f"{match.group(1)}.md")
        out.extend(new)
        if new != old:
            changed.append(match.group(1))
    readme.write_text("\n".join(out) + "\n", encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="*", choices=[*TABLES, []], help="which tables (default: all)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes playing episodes")
    parser.add_argument("--check", action="store_true", help="regenerate into a scratch folder and compare")
    parser.add_argument("--readme", action="store_true", help="also put the tables into the README where cited")
    args = parser.parse_args(argv)
    names = args.tables or list(TABLES)
    if not args.check:
        generate(names, OUT, args.workers)
        if args.readme:
            print("README tables changed:", ", ".join(update_readme()) or "none")
        return 0
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        stale = [n for n, p in zip(names, generate(names, Path(scratch), args.workers))
                 if table_of(p) != table_of(OUT / f"{n}.md")]
    for name in stale:
        print(f"stale: docs/generated/{name}.md (run: python scripts/readme_figures.py {name})", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
