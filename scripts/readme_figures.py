#!/usr/bin/env python
"""Regenerate the README's tables from the current suite, into docs/generated/NAME.md.

    python scripts/readme_figures.py                 # every table (a few minutes on 2 cores)
    python scripts/readme_figures.py scenarios       # only some: scenarios, adversaries, text-baselines, ...
    python scripts/readme_figures.py --check         # regenerate into a scratch folder and diff (exit 1 if stale)
    python scripts/readme_figures.py --readme        # regenerate, then put each table into the README where it is cited

Each generated file starts with a comment stating the command, the machine, the time and the
suite version, then the table exactly as the README shows it. The README marks each table with
``<!-- generated: docs/generated/NAME.md (python scripts/readme_figures.py NAME) -->`` on the line
before it, and tests/test_readme_figures.py fails when a README table differs from the file it
cites. The timing and content families are played here like the adversaries. The training
tables (``training-NAME``) are made from the result files ``bench/training_results.py NAME``
writes into bench/training-results/ (training takes minutes to hours, so it is not re-run here): one
table per file there, each file's header naming the result file and when its runs were made.
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
    source = ""
    if name.startswith("training-"):  # the table is read from a result file: say which, and when its runs were made
        import json

        result = json.loads((RESULTS / f"{name.removeprefix('training-')}.json").read_text(encoding="utf-8"))
        ran = ", ".join(c.get("time", "?") for c in result.get("eval_commands", [])) or result.get("written", "?")
        source = (f" | from bench/training-results/{name.removeprefix('training-')}.json (suite {result['suite_version']}, "
                  f"evaluated {ran})")
    return (f"<!-- made by: python scripts/readme_figures.py {name} | suite {SUITE_VERSION} | {machine} | "
            f"{when}{source} -->\n")


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


_PLAYED: dict[tuple[str, str, str, int], dict] = {}  # one play per job per invocation, shared by the tables


def _runs(agents: list[str], seeds: dict[str, tuple[int, ...]], workers: int) -> list[dict]:
    from proactive_env.spec import PERSONAS, shipped_names

    jobs = [(a, s, p, seed) for a in agents for s in shipped_names() for p in PERSONAS for seed in seeds[a]]
    todo = [job for job in dict.fromkeys(jobs) if job not in _PLAYED]
    if workers <= 1:
        _PLAYED.update(zip(todo, map(_play, todo)))
    elif todo:
        with ProcessPoolExecutor(workers) as pool:
            _PLAYED.update(zip(todo, pool.map(_play, todo, chunksize=8)))
    return [_PLAYED[job] for job in jobs]


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


def _suite_means(agent: str, runs: list[dict]) -> dict[str, float]:
    mine = [r for r in runs if r["agent"] == agent]
    return {m: _mean([r[m] for r in mine]) for m in ("TC", "TA", "TR_D", "TR_J", "J")}


def _shown(means: dict[str, float], columns: tuple[str, ...]) -> list[str]:
    shown = {"TC": lambda v: f"{v:.1f}", "TA": lambda v: f"{100 * v:.1f}", "TR_D": lambda v: f"{100 * v:.1f}",
             "TR_J": lambda v: f"{v:.2f}", "J": lambda v: f"{v:.3f}"}
    return [shown[c](means[c]) for c in columns]


def timing_families_table(workers: int) -> list[str]:
    """Every timing family (baselines/timing_adversaries.py) on its face, beside the follower it adds
    a rule to: structured ones on the three test seeds, text ones on seed 1000 (as the tests play them)."""
    from proactive_env.baselines.timing_adversaries import STRUCTURED_NAMES, TEXT_NAMES

    structured = ["policy-follower", *STRUCTURED_NAMES]
    text = ["text-policy-follower", *TEXT_NAMES]
    runs = _runs(structured + text, {**{a: TEST_SEEDS for a in structured}, **{a: TEST_SEEDS[:1] for a in text}},
                 workers)
    columns = ("TC", "TA", "TR_D", "J")
    lines = ["| rule on top of the policy-follower | face | TC | TA % | TR-D % | J |", "|---|---|---|---|---|---|"]
    for face, agents in (("structured", structured), ("text", text)):
        for agent in agents:
            name = f"(none: {agent})" if agent.endswith("policy-follower") else f"`{agent.removeprefix('text-')}`"
            lines.append(f"| {name} | {face} | " + " | ".join(_shown(_suite_means(agent, runs), columns)) + " |")
    return lines


def content_families_table(workers: int) -> list[str]:
    """Every content family (baselines/adversaries.py's CONTENT, as tests/test_content.py finds
    them) on the text face, seed 1000, beside the text policy-follower whose texts it replaces."""
    from proactive_env.baselines import adversaries
    from proactive_env.spec.escape import md_cell

    agents = ["text-policy-follower", *(c.name for c in adversaries.CONTENT)]
    runs = _runs(agents, {a: TEST_SEEDS[:1] for a in agents}, workers)
    docs = {c.name: md_cell(" ".join((c.__doc__ or "").split())) for c in adversaries.CONTENT}
    docs["text-policy-follower"] = "its own work (the family's baseline)"
    lines = ["| content family (on the text policy-follower) | what it writes | TC | TR-D % | J |",
             "|---|---|---|---|---|"]
    for agent in agents:
        lines.append(f"| `{agent}` | {docs[agent]} | " + " | ".join(_shown(_suite_means(agent, runs), ("TC", "TR_D", "J")))
                     + " |")
    return lines


# ---------------------------------------------------------------------------------- training tables
RESULTS = ROOT / "bench" / "training-results"
TRAINING_LAYOUT = {"rllib-monitor": "persona", "maskable-ppo-monitor": "agent",
                   "suite-holdout-monitor": "scenario", "bc-offline": "scenario",
                   "bc-holdout-monitor": "scenario"}


def _pooled(rows: list[dict], metric: str) -> float:
    """The mean over the runs of result rows (each row a mean over its ``runs``)."""
    return sum(r[metric] * r["runs"] for r in rows) / sum(r["runs"] for r in rows)


def training_table(name: str) -> list[str]:
    """A README training table from bench/training-results/NAME.json (bench/training_results.py): per agent
    and persona, per agent, or per scenario (the held-out one first), as TRAINING_LAYOUT says."""
    import json

    result = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    labels, rows, layout = result["labels"], result["rows"], TRAINING_LAYOUT.get(name, "agent")
    agents = [a for a in labels if any(r["agent"] == a for r in rows)]
    columns = ("TC", "TA", "TR_D", "TR_J", "J")
    if layout == "scenario":
        learner, others = agents[0], agents[1:]
        held_out = result.get("held_out", "")
        scenarios = sorted({r["scenario"] for r in rows}, key=lambda s: (s != held_out, s))
        lines = [f"| scenario | {labels[learner]} J | TA % | TR-D % | " + " | ".join(f"{labels[a]} J" for a in others)
                 + " |", "|---" * (4 + len(others)) + "|"]
        for scenario in scenarios:
            mine = lambda a: [r for r in rows if r["agent"] == a and r["scenario"] == scenario]  # noqa: E731
            first = _shown({m: _pooled(mine(learner), m) for m in columns}, ("J", "TA", "TR_D"))
            label = f"{scenario} (held out)" if scenario == held_out else scenario
            lines.append(f"| {label} | " + " | ".join(first + [f"{_pooled(mine(a), 'J'):.3f}" for a in others]) + " |")
        return lines
    by_persona = layout == "persona"
    decoys = result.get("decoys") if not by_persona else None  # per agent: decoy pairs played and failed
    lines = ["| agent | " + ("persona | " if by_persona else "") + "TC | TA % | TR-D % | TR-J | J |"
             + (" decoy pairs failed |" if decoys else ""), "|---" * (6 + by_persona + bool(decoys)) + "|"]
    for agent in agents:
        personas = sorted({r["persona"] for r in rows if r["agent"] == agent}, key=PERSONA_ORDER.index) \
            if by_persona else [None]
        for persona in personas:
            mine = [r for r in rows if r["agent"] == agent and persona in (None, r["persona"])]
            lines.append(f"| {labels[agent]} | " + (f"{persona} | " if by_persona else "")
                         + " | ".join(_shown({m: _pooled(mine, m) for m in columns}, columns)) + " |"
                         + (f" {_decoys(decoys.get(agent))} |" if decoys else ""))
    return lines


def _decoys(counts: dict | None) -> str:
    """'failed / played' decoy pairs (a task of the pair postponed needlessly inside its window)."""
    return f"{counts['decoys_failed']} / {counts['decoy_pairs']}" if counts else "–"


PERSONA_ORDER = ("reviewer", "planner", "operator")
TABLES = {"scenarios": lambda workers: scenarios_table(), "adversaries": adversaries_table,
          "text-baselines": text_baselines_table, "timing-families": timing_families_table,
          "content-families": content_families_table,
          **{f"training-{path.stem}": (lambda workers, name=path.stem: training_table(name))
             for path in sorted(RESULTS.glob("*.json"))}}


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


_MARK = re.compile(r"<!-- generated: docs/generated/([\w-]+)\.md \(python scripts/readme_figures\.py ([\w-]+)\) -->")


def cited_tables(readme_text: str) -> list[tuple[str, str, list[str]]]:
    """(file stem, table name in the command, the README's table lines) for each marked table."""
    lines, out = readme_text.splitlines(), []
    for i, line in enumerate(lines):
        match = _MARK.search(line)
        if not match:
            continue
        table = []
        for following in lines[i + 1:]:
            if not following.startswith("|"):
                if table:
                    break
                continue
            table.append(following)
        out.append((match.group(1), match.group(2), table))
    return out


def readme_mismatches(readme_text: str, generated: Path = OUT) -> list[str]:
    """What is wrong with the README's generated tables, one line each (none: all as generated):
    a table that differs from the file it cites, a mark whose command names another table, a
    generated table the README does not show or shows twice."""
    problems, seen = [], []
    for stem, command, table in cited_tables(readme_text):
        seen.append(stem)
        if command != stem:
            problems.append(f"docs/generated/{stem}.md is cited with the command of {command!r}")
        elif stem not in TABLES:
            problems.append(f"docs/generated/{stem}.md: no such generated table ({', '.join(TABLES)})")
        elif table != table_of(generated / f"{stem}.md"):
            problems.append(f"README table citing docs/generated/{stem}.md differs from it: "
                            f"python scripts/readme_figures.py {stem} --readme")
    problems += [f"generated table {name} is not in the README" for name in TABLES if name not in seen]
    problems += [f"generated table {name} is in the README {seen.count(name)} times" for name in sorted(set(seen))
                 if seen.count(name) > 1]
    return problems


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
