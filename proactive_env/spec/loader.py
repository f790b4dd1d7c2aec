"""Loading scenario files: YAML → typed model → semantic checks, with one-line errors.

Every error names the file, the path inside it and what was expected, e.g.
``monitor.yaml: tasks[3].deadline: expected a time like 'D2 09:30' ..., got 'tomorrow'``.

A scenario file is data from anywhere, so it is bounded before anything is built from it: file
size, nesting depth, nodes after alias expansion (a 1 KB "billion laughs" file is refused, not
expanded), string and integer lengths, entries per mapping or list; keys must be unique and
numbers finite. Files are UTF-8 (UTF-16/32 with a byte-order mark are read too). libyaml's C
parser is used where PyYAML has it.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import json
import math
import re
from importlib import resources
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from .files import FileKindError, read_regular
from .models import Scenario
from .validate import semantic_errors

MAX_FILE_BYTES = 8 * 2**20  # the shipped scenarios are ~55 KB
MAX_NODES = 250_000  # YAML nodes once aliases are expanded (a shipped scenario has ~6,000)
MAX_DEPTH = 48  # nesting of mappings and lists (the shipped scenarios nest 8 deep)
MAX_ITEMS = 10_000  # entries of one mapping or list
MAX_STRING = 100_000  # characters of one scalar
MAX_INT_DIGITS = 18  # integers in a scenario are minutes, counts and weights

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where available: ~10x faster
_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


class ScenarioError(ValueError):
    """A scenario file that cannot be used; ``str()`` is one line: file, path, expectation (and
    how many more problems the file has). ``problems`` holds every one, ``lines()`` as text."""

    def __init__(self, file: str, path: str, message: str, more: tuple[tuple[str, str], ...] = ()):
        self.file, self.path, self.message = file, path, message
        self.problems: list[tuple[str, str]] = [(path, message), *more]
        first = f"{file}: {path}: {message}" if path else f"{file}: {message}"
        super().__init__(first + (f" (and {len(more)} more problems: `proactivity-gym validate {file}` lists "
                                  "them all)" if more else ""))

    def lines(self) -> list[str]:
        return [f"{self.file}: {path}: {message}" if path else f"{self.file}: {message}"
                for path, message in self.problems]


# Fields that scenario files of an older suite used, with what replaced them and when (a file of
# that suite gets the way forward, not "unknown field").
REMOVED_FIELDS: dict[tuple[str, str], tuple[str, str]] = {
    ("ta_window", "ta_window"): ("ta_decisions (a list of at least 3 decisions, each with id, start, end, urgent, "
                                 "competing, shares, rationale)", "0.2.0"),
    ("always_approval", "always_approval"): ("categories, and each persona's rules: approve for those categories",
                                             "0.2.0"),
    ("personas", "delegates"): ("rules: a rule per category (prepare, suggest, approve or execute)", "0.2.0"),
    ("events", "delegate"): ("policy_change.rules: {category: execute}", "0.2.0"),
    ("events", "require_approval"): ("policy_change.rules: {category: approve}", "0.2.0"),
    ("tasks", "expect"): ("category (each persona's rule for it sets the depth), declines (who says no when "
                          "asked) and noop", "0.2.0"),
    ("tasks", "deliver"): ("category and the personas' rules (the depth that delivers follows from them); "
                           "needed_by for when the user needs it", "0.2.0"),
}


class _Located(dict):
    """Parsed YAML that remembers where each value was: path → line, and the text of unquoted
    times that YAML 1.1 read as numbers (``7:00`` → 420)."""

    lines: dict[str, int]
    sexagesimal: dict[str, str]


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
        loc = error["loc"]
        removed = REMOVED_FIELDS.get((str(loc[0]), str(loc[-1])))
        if removed:
            return f"field removed in suite {removed[1]}; use {removed[0]} (see docs/suite-changelog.md)"
        return "unknown field (check the spelling against `proactivity-gym schema`)"
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    if "input" in error and not isinstance(error["input"], (dict, list)):
        shown = repr(error["input"])
        return f"{msg}, got {shown[:80] + '…' if len(shown) > 80 else shown}"
    return msg


_INDEX = re.compile(r"(\w+)\[(\d+)\]")


def _where(path: str, data: Any) -> tuple[str, int | None]:
    """A path as a person finds it in the file: list items by their id where they have one
    (``tasks[t07_newsletter].deadline``, not ``tasks[6].deadline``) and the line it is on."""
    def by_id(match: re.Match) -> str:
        items = data.get(match.group(1)) if isinstance(data, dict) else None
        i = int(match.group(2))
        item = items[i] if isinstance(items, list) and i < len(items) else None
        return f"{match.group(1)}[{item['id']}]" if isinstance(item, dict) and isinstance(item.get("id"), str) \
            else match.group(0)

    lines = getattr(data, "lines", {})
    probe, line = path, None
    while probe and line is None:  # a missing field: the line of what holds it
        line = lines.get(probe)
        probe = probe[:max(probe.rfind("."), probe.rfind("["), 0)]
    # only top-level lists are labelled by id (deeper ones, e.g. versions, keep their index)
    shown = _INDEX.sub(by_id, path, count=1) if _INDEX.match(path) else path
    return shown, line


def _problem(data: Any, path: str, message: str) -> tuple[str, str]:
    original = getattr(data, "sexagesimal", {}).get(path)
    if original is not None and "as a string" in message:  # YAML 1.1 read the time as a number
        key = path.rsplit(".", 1)[-1]
        quoted = ":".join(part.zfill(2) for part in original.split(":"))
        message = (f"times must be quoted strings: YAML reads the unquoted {original} as the number "
                   f"{_number(data, path)}; write {key}: \"{quoted}\"")
    shown, line = _where(path, data)
    return shown, f"{message} (line {line})" if line else message


def _number(data: Any, path: str) -> Any:
    value: Any = data
    for part in re.findall(r"[^.\[\]]+", path):
        try:
            value = value[int(part)] if isinstance(value, list) else value[part]
        except (KeyError, IndexError, ValueError, TypeError):
            return "?"
    return value


def _raise_all(file: str, data: Any, problems: list[tuple[str, str]]) -> None:
    located = [_problem(data, path, message) for path, message in problems]
    (path, message), *more = located
    raise ScenarioError(file, path, message, tuple(more))


def parse_scenario(data: Any, file: str = "<scenario>") -> Scenario:
    """Validate already-parsed YAML data; raises one ``ScenarioError`` holding every problem found
    (``problems``: every field error, else every semantic one), each by id and line."""
    if not isinstance(data, dict):
        got = "an empty file" if data is None else type(data).__name__
        raise ScenarioError(file, "", f"expected a mapping of scenario fields at the top level, got {got}")
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        _raise_all(file, data, [(_path(e["loc"]), _describe(e)) for e in exc.errors()])
    try:
        problems = semantic_errors(scenario)
    except Exception as exc:  # a check that meets a case it does not expect: still one located line
        raise ScenarioError(file, "", f"could not be checked ({type(exc).__name__}: {exc}); "
                                      "expected a scenario the validator understands") from None
    if problems:
        _raise_all(file, data, list(dict.fromkeys(problems)))
    return scenario


def _decode(raw: bytes, name: str) -> str:
    encoding = next((enc for bom, enc in _BOMS if raw.startswith(bom)), "utf-8-sig")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise ScenarioError(name, f"line {line}", f"expected UTF-8 text (or UTF-16 with a byte-order mark), "
                                                  f"got byte 0x{raw[exc.start]:02x} at offset {exc.start}") from None


def _yaml_error(name: str, exc: yaml.YAMLError) -> ScenarioError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or "not valid YAML"
    return ScenarioError(name, where, f"expected valid YAML: {' '.join(str(problem).split())[:200]}")


class _Bounds:
    """Checks a composed YAML node graph against the limits above, without recursion, and
    computes its size as if every alias were expanded (memoised per node, so a bomb costs
    nothing to measure)."""

    def __init__(self, name: str):
        self.name = name
        self.lines: dict[str, int] = {}  # path → line (1-based), for error messages
        self.sexagesimal: dict[str, str] = {}  # path → the text of an unquoted time read as a number

    def fail(self, path: str, node, message: str) -> ScenarioError:
        line = f"line {node.start_mark.line + 1}" if getattr(node, "start_mark", None) else ""
        if len(path) > 100:
            path = "…" + path[-99:]
        where = f"{path} ({line})" if path and line else path or line
        return ScenarioError(self.name, where, message)

    def check(self, root) -> None:
        size: dict[int, int] = {}
        height: dict[int, int] = {}
        on_path: set[int] = set()
        stack = [(root, "", 1, False)]
        while stack:
            node, path, depth, children_done = stack.pop()
            key = id(node)
            if children_done:
                kids = self._children(node)
                size[key] = 1 + sum(size[id(k)] for k, _ in kids)
                height[key] = 1 + max((height[id(k)] for k, _ in kids), default=0)
                on_path.discard(key)
                if size[key] > MAX_NODES:
                    raise self.fail(path, node, f"expected at most {MAX_NODES} values once aliases are expanded, "
                                                f"got {size[key]}")
                continue
            if key in on_path:
                raise self.fail(path, node, "expected no alias inside the value it names (a recursive structure)")
            if key in size:
                continue
            if depth > MAX_DEPTH:
                raise self.fail(path, node, f"expected nesting at most {MAX_DEPTH} levels deep")
            self._node(node, path)
            on_path.add(key)
            stack.append((node, path, depth, True))
            stack.extend((child, child_path, depth + 1, False) for child, child_path in self._children(node, path))
        if height[id(root)] > MAX_DEPTH:
            raise self.fail("", root, f"expected nesting at most {MAX_DEPTH} levels deep once aliases are expanded")

    @staticmethod
    def _children(node, path: str = "") -> list:
        if isinstance(node, yaml.SequenceNode):
            return [(item, f"{path}[{i}]") for i, item in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            out = []
            for k, v in node.value:
                label = k.value if isinstance(k, yaml.ScalarNode) else "?"
                out += [(k, path), (v, f"{path}.{label}" if path else str(label))]
            return out
        return []

    def _node(self, node, path: str) -> None:
        if path and getattr(node, "start_mark", None) is not None:
            self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.ScalarNode):
            text = node.value
            if node.tag == _INT and ":" in text and not node.style:  # plain (C loader: "", Python: None)
                self.sexagesimal[path] = text
            if len(text) > MAX_STRING:
                raise self.fail(path, node, f"expected at most {MAX_STRING} characters, got {len(text)}")
            if node.tag == _INT and sum(c.isdigit() for c in text) > MAX_INT_DIGITS:
                raise self.fail(path, node, f"expected an integer of at most {MAX_INT_DIGITS} digits, got {len(text)}")
            if node.tag == _FLOAT:
                try:
                    finite = math.isfinite(float(text.replace("_", "").lower().replace(".inf", "inf").replace(".nan", "nan")))
                except ValueError:
                    finite = True  # the constructor reports it
                if not finite:
                    raise self.fail(path, node, f"expected a finite number, got {text!r}")
            return
        if len(node.value) > MAX_ITEMS:
            raise self.fail(path, node, f"expected at most {MAX_ITEMS} entries, got {len(node.value)}")
        if isinstance(node, yaml.MappingNode):
            seen: dict[tuple, int] = {}
            for k, _ in node.value:
                if isinstance(k, yaml.ScalarNode):
                    ident = (k.tag, k.value)
                    if ident in seen:
                        label = f"{path}.{k.value}" if path else k.value
                        raise self.fail(label, k, f"duplicate key {k.value!r} (first given on line {seen[ident]}); "
                                                  "expected each key once")
                    seen[ident] = k.start_mark.line + 1


def parse_yaml(text: str, name: str = "<scenario>"):
    """YAML text → plain data, within the bounds above; any failure is a one-line ``ScenarioError``."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        bounds = _Bounds(name)
        bounds.check(node)
        data = loader.construct_document(node)
        if isinstance(data, dict):  # remember where each value was, for error messages
            data = _Located(data)
            data.lines, data.sexagesimal = bounds.lines, bounds.sexagesimal
        return data
    except ScenarioError:
        raise
    except yaml.YAMLError as exc:
        raise _yaml_error(name, exc) from None
    except RecursionError:
        raise ScenarioError(name, "", f"expected nesting at most {MAX_DEPTH} levels deep") from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. a date like 2026-13-45
        raise ScenarioError(name, "", f"expected valid YAML values: {' '.join(str(exc).split())[:200]}") from None
    finally:
        loader.dispose()


@dataclass(frozen=True)
class ScenarioContent:
    """The exact text a scenario was parsed from, and its SHA-256 (over the text as UTF-8):
    what a trajectory records so that it is re-scored on the scenario it was played on."""

    text: str
    sha256: str
    shipped: bool  # read from the package's own scenario folder


def content_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_of(scenario: Scenario) -> ScenarioContent | None:
    """The text ``scenario`` was loaded from (None for one built in memory)."""
    return scenario.__dict__.get("_content")


def parse_content(text: str, name: str, expected_name: str | None = None, shipped: bool = False) -> Scenario:
    """A scenario from its YAML text (bounded as a file is), remembering the text (``content_of``)."""
    scenario = parse_scenario(parse_yaml(text, name), name)
    if expected_name is not None and scenario.name != expected_name:
        raise ScenarioError(name, "name", f"expected the file's name, {expected_name!r}, got {scenario.name!r}")
    # The model is frozen; the text rides along outside its fields (not compared, not dumped).
    object.__setattr__(scenario, "_content", ScenarioContent(text, content_sha256(text), shipped))
    return scenario


def load_file(path: str | Path) -> Scenario:
    path = Path(path)
    name = path.name
    try:
        raw = read_regular(path, MAX_FILE_BYTES)
    except FileKindError as exc:  # a FIFO, device or directory (read without blocking), or too large
        too_large = f"expected a scenario file of at most {MAX_FILE_BYTES // 2**20} MiB"
        raise ScenarioError(name, "", too_large if "bytes" in str(exc) else str(exc).removeprefix(f"{path}: ")) from None
    except OSError as exc:
        raise ScenarioError(name, "", f"cannot read the file ({exc.strerror or exc})") from None
    shipped = path.parent.resolve() == scenario_dir().resolve()
    return parse_content(_decode(raw, name), name, path.stem, shipped)


def scenario_dir() -> Path:
    return Path(str(resources.files("proactive_env.scenarios")))


def shipped_names() -> list[str]:
    """Names of the scenarios shipped with the package, in suite order."""
    return sorted(p.stem for p in scenario_dir().glob("*.yaml"))


@functools.lru_cache(maxsize=None)
def _load_shipped(name: str) -> Scenario:
    return load_file(scenario_dir() / f"{name}.yaml")


def load_scenario(name_or_path: str | Path) -> Scenario:
    """A shipped scenario by name (``"monitor"``) or any scenario file by path (a ``Scenario``
    is returned as it is, so an env can be built on one)."""
    if isinstance(name_or_path, Scenario):
        return name_or_path
    text = str(name_or_path)
    if text.endswith((".yaml", ".yml")) or "/" in text or "\\" in text:
        return load_file(text)
    if text not in shipped_names():
        raise ScenarioError(text, "", f"no shipped scenario of that name; expected one of {shipped_names()} or a path to a .yaml file")
    return _load_shipped(text)


def json_schema() -> str:
    """JSON Schema of a scenario file."""
    return json.dumps(Scenario.model_json_schema(), indent=2)
