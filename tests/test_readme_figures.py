"""The README's tables are the generated files they cite (scripts/readme_figures.py), and the
training tables are the result files bench/training_results.py writes."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def _script():
    return _load("readme_figures", ROOT / "scripts" / "readme_figures.py")


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_readme_table_is_its_generated_file():
    assert _script().readme_mismatches(_readme()) == []


def test_a_readme_table_that_disagrees_with_its_file_fails():
    script = _script()
    readme = _readme()
    for stem, _, table in script.cited_tables(readme):
        row = table[2]  # the first data row: change one figure in it
        cells = row.split(" | ")
        changed = row.replace(" | " + cells[-1], " | " + cells[-1].replace(cells[-1].strip(" |")[:1], "#", 1))
        assert changed != row
        problems = script.readme_mismatches(readme.replace(row, changed, 1))
        assert any(f"docs/generated/{stem}.md differs" in p for p in problems), (stem, problems)
    first = script.cited_tables(readme)[0][0]
    dropped = readme.replace(f"<!-- generated: docs/generated/{first}.md", "<!-- (was generated)", 1)
    assert f"generated table {first} is not in the README" in script.readme_mismatches(dropped)


def test_the_scenario_table_is_the_current_suite():
    script = _script()
    assert script.scenarios_table() == script.table_of(ROOT / "docs" / "generated" / "scenarios.md")


def test_training_tables_are_their_result_files():
    script = _script()
    names = [name for name in script.TABLES if name.startswith("training-")]
    assert names == [f"training-{p.stem}" for p in sorted((ROOT / "bench" / "training-results").glob("*.json"))]
    for name in names:
        generated = ROOT / "docs" / "generated" / f"{name}.md"
        assert script.training_table(name.removeprefix("training-")) == script.table_of(generated)
        assert f"from bench/training-results/{name.removeprefix('training-')}.json" in generated.read_text().splitlines()[0]


def test_generated_files_say_what_made_them():
    for path in (ROOT / "docs" / "generated").glob("*.md"):
        head = path.read_text(encoding="utf-8").splitlines()[0]
        assert head.startswith(f"<!-- made by: python scripts/readme_figures.py {path.stem} | suite ") and "UTC" in head


def test_a_training_result_file_is_its_eval_folder(tmp_path, monkeypatch):
    """bench/training_results.py writes what the eval folder holds, and the table read from the file
    is the eval's own means per agent and persona."""
    from proactive_env.baselines import make_agent
    from proactive_env.evaluate import evaluate, plan
    from proactive_env.scoring.results import aggregate

    bench = _load("training_results", ROOT / "bench" / "training_results.py")
    script = _script()
    eval_dir = tmp_path / "eval"
    evaluate(plan(["oracle", "noop", "defer-everything"], ["monitor"], ["planner", "operator"], range(1000, 1002)),
             eval_dir, make_agent)
    train_dir = tmp_path / "train"  # a trainer's folder: its arguments and its curve with wall times
    train_dir.mkdir()
    (train_dir / "agent.json").write_text(json.dumps({"algo": "maskable-ppo", "policy": "slots", "args": {}}))
    (train_dir / "eval.csv").write_text("timesteps,overall/J,wall_s\n0,0.2,3.5\n2048,0.25,9.0\n")
    run = bench.TrainingRun("a test run", (("proactivity-gym eval ...", str(eval_dir / "results.json")),),
                            str(eval_dir), (str(train_dir),), {"noop": "doing nothing", "oracle": "the oracle"})
    document = bench.result_document("test-run", run, None)
    assert document["training"][str(train_dir)]["curve"] == [{"timesteps": 0, "wall_s": 3.5, "J": 0.2},
                                                             {"timesteps": 2048, "wall_s": 9.0, "J": 0.25}]
    assert document["format"] == bench.FORMAT and document["timings"] is None and document["rows"]
    # Monitor has two decoy pairs: deferring everything fails both in every run, the oracle none.
    deferrer = document["decoys"]["defer-everything"]
    assert (deferrer["runs"], deferrer["decoy_pairs"], deferrer["decoys_failed"]) == (4, 8, 8)
    assert deferrer["needless_postponements"] >= 8
    assert document["decoys"]["oracle"]["decoys_failed"] == document["decoys"]["oracle"]["needless_postponements"] == 0
    monkeypatch.setattr(bench, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(script, "RESULTS", tmp_path / "results")
    bench.write_result("test-run", document)
    script.TRAINING_LAYOUT["test-run"] = "persona"
    table = script.training_table("test-run")
    records = [{"agent": r["agent"], "scenario": r["scenario"], "persona": r["persona"], "seed": 0, "scores": r}
               for r in json.loads((eval_dir / "results.json").read_text())["rows"]]
    assert len(table) == 2 + 4 and table[2].startswith("| doing nothing | planner |")
    oracle_planner = [r for r in aggregate(records, ("agent", "persona")) if r["agent"] == "oracle"
                      and r["persona"] == "planner"][0]
    assert table[4] == f"| the oracle | planner | {oracle_planner['TC']:.1f} | {100 * oracle_planner['TA']:.1f} | " \
                       f"{100 * oracle_planner['TR_D']:.1f} | {oracle_planner['TR_J']:.2f} | {oracle_planner['J']:.3f} |"
    with pytest.raises(SystemExit):
        bench.main(["no-such-run"])
