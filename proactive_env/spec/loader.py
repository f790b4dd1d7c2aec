"""Loading scenario files: YAML → typed model → semantic checks, with one-line errors.

Every error names the file, the path inside it and what was expected, e.g.
``monitor.yaml: tasks[3].deadline: expected a time like 'D2 09:30' ..., got 'tomorrow'``.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from .models import Scenario
from .validate import semantic_errors


class ScenarioError(ValueError):
    """A scenario file that cannot be used; ``str()`` is one line: file, path, expectation."""

    def __init__(self, file: str, path: str, message: str):
        self.file, self.path, self.message = file, path, message
        super().__init__(f"{file}: {path}: {message}" if path else f"{file}: {message}")


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _describe(error: dict[str, Any]) -> str:
    kind, msg = error["type"], error["msg"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field (check the spelling against `proactivity-gym schema`)"
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    return f"{msg}, got {error.get('input')!r}" if "input" in error and not isinstance(error["input"], (dict, list)) else msg


def parse_scenario(data: Any, file: str = "<scenario>") -> Scenario:
    """Validate already-parsed YAML data; raises ``ScenarioError`` on the first problem."""
    if not isinstance(data, dict):
        raise ScenarioError(file, "", f"expected a mapping of scenario fields at the top level, got {type(data).__name__}")
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ScenarioError(file, _path(first["loc"]), _describe(first)) from None
    problems = semantic_errors(scenario)
    if problems:
        path, message = problems[0]
        raise ScenarioError(file, path, message)
    return scenario


def load_file(path: str | Path) -> Scenario:
    path = Path(path)
    name = path.name
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(name, "", f"cannot read the file ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise ScenarioError(name, where, f"expected valid YAML: {problem}") from None
    scenario = parse_scenario(data, name)
    if scenario.name != path.stem:
        raise ScenarioError(name, "name", f"expected the file's name, {path.stem!r}, got {scenario.name!r}")
    return scenario


def scenario_dir() -> Path:
    return Path(str(resources.files("proactive_env.scenarios")))


def shipped_names() -> list[str]:
    """Names of the scenarios shipped with the package, in suite order."""
    return sorted(p.stem for p in scenario_dir().glob("*.yaml"))


@functools.lru_cache(maxsize=None)
def _load_shipped(name: str) -> Scenario:
    return load_file(scenario_dir() / f"{name}.yaml")


def load_scenario(name_or_path: str | Path) -> Scenario:
    """A shipped scenario by name (``"monitor"``) or any scenario file by path."""
    text = str(name_or_path)
    if text.endswith((".yaml", ".yml")) or "/" in text or "\\" in text:
        return load_file(text)
    if text not in shipped_names():
        raise ScenarioError(text, "", f"no shipped scenario of that name; expected one of {shipped_names()} or a path to a .yaml file")
    return _load_shipped(text)


def json_schema() -> str:
    """JSON Schema of a scenario file."""
    return json.dumps(Scenario.model_json_schema(), indent=2)
