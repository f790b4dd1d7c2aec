"""The README's tables are the generated files they cite (scripts/readme_figures.py)."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARK = re.compile(r"<!-- generated: (docs/generated/[\w-]+\.md) \(python scripts/readme_figures\.py ([\w-]+)\) -->")


def _script():
    spec = importlib.util.spec_from_file_location("readme_figures", ROOT / "scripts" / "readme_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cited_tables() -> list[tuple[str, str, list[str]]]:
    """(file, table name, the README's table lines) for each marked table."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        match = MARK.search(line)
        if match:
            table = []
            for following in lines[i + 1:]:
                if not following.startswith("|"):
                    if table:
                        break
                    continue
                table.append(following)
            out.append((match.group(1), match.group(2), table))
    return out


def test_every_readme_table_is_its_generated_file():
    script = _script()
    cited = cited_tables()
    assert {name for _, name, _ in cited} == set(script.TABLES)  # every generated table is shown, once each
    for file, name, table in cited:
        assert file == f"docs/generated/{name}.md"
        generated = script.table_of(ROOT / file)
        assert table == generated, f"README table citing {file} differs from it: python scripts/readme_figures.py {name}"


def test_the_scenario_table_is_the_current_suite():
    script = _script()
    assert script.scenarios_table() == script.table_of(ROOT / "docs" / "generated" / "scenarios.md")


def test_generated_files_say_what_made_them():
    for path in (ROOT / "docs" / "generated").glob("*.md"):
        head = path.read_text(encoding="utf-8").splitlines()[0]
        assert head.startswith(f"<!-- made by: python scripts/readme_figures.py {path.stem} | suite ") and "UTC" in head
