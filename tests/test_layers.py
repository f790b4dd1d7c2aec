"""Each folder of ``proactive_env/`` is one layer and imports only the layers below it
(spec → sim → scoring → envs; everything else sits above): checked on every import statement,
function-level ones included, so a layer cannot reach up by importing late."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import proactive_env

ROOT = Path(proactive_env.__file__).parent
LAYERS = ("spec", "sim", "scoring", "envs")


def _imported(path: Path) -> set[str]:
    """The ``proactive_env`` sub-packages and top-level modules a file imports, by name."""
    package = path.relative_to(ROOT.parent).with_suffix("").parts[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            parts = [*base, *(node.module or "").split(".")] if node.module else base
            if parts[:1] != ["proactive_env"]:
                continue
            targets = [parts[1:2]] if len(parts) > 1 else [[a.name] for a in node.names]
            names.update(t[0] for t in targets if t)
        elif isinstance(node, ast.Import):
            names.update(a.name.split(".")[1] for a in node.names if a.name.startswith("proactive_env."))
    return names


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_the_layers_below_it(layer):
    allowed = set(LAYERS[: LAYERS.index(layer) + 1])
    reaching_up = {str(p.relative_to(ROOT)): sorted(_imported(p) - allowed)
                   for p in sorted((ROOT / layer).rglob("*.py")) if _imported(p) - allowed}
    assert not reaching_up, reaching_up
