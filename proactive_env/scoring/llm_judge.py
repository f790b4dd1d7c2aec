"""LLM judges through any OpenAI-compatible endpoint (DESIGN.md §5 and §8).

The LLM only fills in fields — a verdict per criterion with the quotes it relies on. Code checks
the fields (pydantic), checks that every quote appears in the trajectory (whitespace-normalised,
case-insensitive) and computes the scores. An empty, malformed or unverifiable answer is an error,
never a pass: the call alone is retried (with backoff) and, if no valid verdict comes, a
``JudgeError`` is raised — an episode is never re-run. Valid answers are cached on disk, keyed by
the judge model, the rubric version and the full prompt (which holds the task input or the
rendered trajectory), so re-judging the same input costs no request.

Three judges share one endpoint client (``LLMClient``):

* ``LLMTaskJudge`` — the ``Judge`` protocol of ``judge.py``: TC's four diagnostics for one task;
* ``LLMTAJudge`` — the TA labels (now, later) and continuation quality of each TA decision of a run;
* ``LLMTrustJudge`` — TR-J per task the user saw: the five trust constructs, 1–5, averaged.

The prompts are versioned files in ``rubrics/`` (``tc-1.md``, ...): change a prompt, bump its
version.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..spec import Scenario, Task, format_at
from ..spec.variant import policy_text
from .client import ChatClient, Endpoint, LLMEndpointError, check_url, redact
from .judge import DIAGNOSTICS, TaskWork
from .trajectory import write_json_atomic

T = TypeVar("T")

MAX_BACKOFF = 30.0  # seconds
MIN_QUOTE = 4  # characters: shorter quotes (or "") would match almost any text
HALF_STEPS = (0.0, 0.5, 1.0)
CONSTRUCTS = ("understandability", "technical_competence", "reliability", "personal_attachment", "faith")
# Log entries that are the simulator's bookkeeping, not something the agent or the user did or saw
# (the user's trust value, the rules in force); judges never see them.
SIMULATOR_ONLY = {"run_start", "run_end", "trust", "record", "task_active", "task_inactive", "task_closed"}
HIDDEN_KEYS = {"t", "type", "minute", "trust_before", "trust_after", "rules", "version"}
# What the user sees: events, their own decisions and policy changes, the assistant's messages,
# suggestions, approval requests and executions, and its jobs that slowed theirs (not its reads
# or notes).
USER_VISIBLE = {"event", "decision", "execute", "policy_change", "intrusion", "present", "message"}
TIME_KEYS = {"followup", "start", "end", "until", "at"}


class JudgeError(RuntimeError):
    """No valid verdict: the endpoint failed or its answers did not pass the checks."""


def default_cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "proactivity-gym" / "judges"


@dataclass(frozen=True)
class OpenAIJudgeConfig:
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"  # unset (a local server) → the placeholder key "EMPTY"
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout: float = 60.0  # seconds per request
    retries: int = 3  # further attempts after the first
    backoff: float = 1.0  # seconds before the first retry, doubling after each
    cache_dir: Path | None = field(default_factory=default_cache_dir)  # None: no cache

    def __post_init__(self) -> None:
        check_url(self.base_url)  # a URL with a password is refused before anything prints it
        finite = all(math.isfinite(v) for v in (self.temperature, self.timeout, self.retries, self.backoff))
        if not finite or self.retries < 0 or self.timeout <= 0 or self.backoff < 0:
            raise ValueError(f"expected retries >= 0, timeout > 0 and backoff >= 0, got {self.retries}, "
                             f"{self.timeout}, {self.backoff}")

    @property
    def name(self) -> str:
        return f"openai:{self.model}"


def rubric(name: str) -> str:
    """A versioned prompt, e.g. ``rubric("tc-1")``."""
    return (resources.files(__package__) / "rubrics" / f"{name}.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------- verdicts
class _Fields(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Criterion(_Fields):
    score: float
    quotes: list[str] = Field(default_factory=list)
    reason: str = ""

    @field_validator("score")
    @classmethod
    def _half_steps(cls, value: float) -> float:
        if value not in HALF_STEPS:
            raise ValueError(f"expected a score of 0, 0.5 or 1, got {value}")
        return value

    @model_validator(mode="after")
    def _cited(self) -> "Criterion":
        if self.score > 0 and not self.quotes:
            raise ValueError("a score above 0 needs at least one quote")
        return self


class TaskVerdict(_Fields):
    correctness: Criterion
    grounding: Criterion
    completeness: Criterion
    artifact_quality: Criterion


class NoopVerdict(_Fields):
    abstention: Criterion


class Label(_Fields):
    label: bool
    quotes: list[str] = Field(default_factory=list)
    reason: str = ""

    @model_validator(mode="after")
    def _cited(self) -> "Label":
        if self.label and not self.quotes:
            raise ValueError("a true label needs at least one quote")
        return self


class TAVerdict(_Fields):
    now: Label
    later: Label
    continuation: Criterion


Rating = Annotated[int, Field(ge=1, le=5)]


class TrustVerdict(_Fields):
    understandability: Rating
    technical_competence: Rating
    reliability: Rating
    personal_attachment: Rating
    faith: Rating
    reason: str = Field(min_length=1)
    quotes: list[str] = Field(default_factory=list)


def _normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def verify_quotes(quotes: list[str], source: str, what: str) -> None:
    """Raise ``ValueError`` unless every quote appears in ``source`` (whitespace and case aside)."""
    haystack = _normalise(source)
    for quote in quotes:
        needle = _normalise(quote.strip().strip("\"'“”‘’"))
        if len(needle) < MIN_QUOTE:
            raise ValueError(f"{what}: quote {quote!r} is too short to check")
        if needle not in haystack:
            raise ValueError(f"{what}: quote {quote!r} does not appear in the trajectory")


def parse_json_object(content: str | None) -> dict:
    """The JSON object in an answer, tolerating code fences or prose around it."""
    if not content or not content.strip():
        raise ValueError("empty answer")
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", content.strip())
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ValueError(f"answer is not JSON: {content[:80]!r}") from None
        try:
            data = json.loads(text[start:end + 1])
        except json.JSONDecodeError as exc:
            raise ValueError(f"answer is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    return data


# ---------------------------------------------------------------------------------- endpoint
def _one_line(exc: Exception, limit: int = 300) -> str:
    text = " ".join(redact(exc).split())  # pydantic's messages span lines; errors are reported on one
    return text if len(text) <= limit else text[:limit] + "…"


class LLMClient:
    """One OpenAI-compatible endpoint: JSON verdicts, checked by code, retried, cached."""

    def __init__(self, config: OpenAIJudgeConfig):
        self.config = config
        self.name = config.name
        # One loop here covers HTTP failures and bad answers alike, so the transport tries once.
        self._chat = ChatClient(Endpoint(model=config.model, base_url=config.base_url, api_key_env=config.api_key_env,
                                         timeout=config.timeout, retries=0, backoff=0.0))

    def verdict(self, rubric_version: str, system: str, user: str, check: Callable[[dict], T]) -> T:
        """Ask for a JSON verdict and return ``check(answer)``; ``check`` raises ``ValueError``
        (pydantic's ``ValidationError`` is one) on an answer that does not pass."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        key = hashlib.sha256(json.dumps({"model": self.config.model, "rubric": rubric_version, "messages": messages},
                                        sort_keys=True, ensure_ascii=False).encode()).hexdigest()
        cached = self._cached(key)
        if cached is not None:
            try:
                return check(cached)
            except ValueError:
                pass  # a damaged or outdated entry is asked again
        attempts = self.config.retries + 1
        for attempt in range(attempts):
            if attempt:
                time.sleep(min(MAX_BACKOFF, self.config.backoff * 2 ** (attempt - 1)))
            try:
                answer = self._ask(messages)
                result = check(answer)
            except LLMEndpointError as exc:
                if not exc.transient:
                    raise JudgeError(f"{self.name}: {_one_line(exc)}") from None
                last: Exception = exc
                continue
            except ValueError as exc:  # an answer that does not pass the checks
                last = exc
                continue
            self._store(key, rubric_version, answer)
            return result
        raise JudgeError(f"{self.name} at {self._chat.where}: no valid verdict after {attempts} attempt(s); "
                         f"last: {type(last).__name__}: {_one_line(last)}")

    def _ask(self, messages: list[dict]) -> dict:
        c = self.config
        message = self._chat.chat(messages=messages, temperature=c.temperature, max_tokens=c.max_tokens,
                                  response_format={"type": "json_object"})
        return parse_json_object(getattr(message, "content", None))

    def _path(self, key: str) -> Path | None:
        return self.config.cache_dir / f"{key}.json" if self.config.cache_dir else None

    def _cached(self, key: str) -> dict | None:
        path = self._path(key)
        if path is None or not path.exists():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))["answer"]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _store(self, key: str, rubric_version: str, answer: dict) -> None:
        path = self._path(key)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(path, {"model": self.config.model, "rubric": rubric_version, "answer": answer})


# ---------------------------------------------------------------------------------- inputs
def _value(key: str, value) -> str:
    if key in TIME_KEYS and isinstance(value, int):
        return format_at(value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def render_log(scenario: Scenario, trajectory: dict, keep: Callable[[dict], bool]) -> str:
    """The kept log entries as readable lines: event texts from the scenario, the texts the agent
    wrote, times as ``D2 09:30``. Judges quote these lines."""
    events = {e.id: e for e in scenario.events}
    lines = []
    for entry in trajectory["log"]:
        if entry["type"] in SIMULATOR_ONLY or not keep(entry):
            continue
        at = f"[{format_at(entry['t'])}]"
        event = events.get(entry.get("id")) if entry["type"] == "event" else None
        if event is not None:
            line = f"{at} {event.kind} ({event.id}): {event.text}"
        else:
            fields = " ".join(f"{k}={_value(k, v)}" for k, v in entry.items() if k not in HIDDEN_KEYS)
            line = f"{at} {entry['type']}: {fields}"
        lines.append(line.replace("\n", "\n    "))  # continuation lines indented: one entry, one block
    return "\n".join(lines)


def _records(scenario: Scenario, ids: list[str]) -> str:
    by_id = {r.id: r for r in scenario.records}
    return "\n\n".join(f"### {by_id[i].title} ({i})\n{by_id[i].text}" for i in ids if i in by_id)


def _task_header(scenario: Scenario, task: Task) -> str:
    return (f"## Scenario\n{scenario.title}: {scenario.description}\n\n"
            f"## Task ({task.id})\n{task.title}\n{task.description}")


# ---------------------------------------------------------------------------------- judges
class LLMTaskJudge:
    """TC's four diagnostics for one task (the ``Judge`` protocol). It is bound to a scenario,
    whose records hold the texts the agent observed, because the protocol passes only the task.

    Without an LLM call: a task with no work scores 0 (nothing to judge), and so does a NOOP task
    the agent acted on (there is no abstention to support) — as for ``RubricJudge``."""

    rubric_version = "tc-1"

    def __init__(self, llm: LLMClient, scenario: Scenario):
        self.llm, self.scenario, self.name = llm, scenario, llm.name

    def judge(self, task: Task, work: TaskWork) -> dict[str, float]:
        if work.noop:
            if work.intervened:
                return dict.fromkeys(DIAGNOSTICS, 0.0)
            return self._abstention(task, work)
        if not work.artifact:
            return dict.fromkeys(DIAGNOSTICS, 0.0)
        records = _records(self.scenario, list(work.observed))
        facts = "\n".join(f"- {f.text}" for f in task.facts) or "- (none)"
        forbidden = "\n".join(f"- {c.text}" for c in task.constraints.must_not_include) or "- (none)"
        user = (f"{_task_header(self.scenario, task)}\n\n"
                f"## Reference checklist (not quotable)\nFacts the work should state:\n{facts}\n"
                f"Claims the work must not make:\n{forbidden}\n\n"
                f"## The assistant's work\n{work.artifact}\n\n## Records the assistant had observed\n{records}")
        source = f"{work.artifact}\n{records}"

        def check(answer: dict) -> dict[str, float]:
            verdict = TaskVerdict.model_validate(answer)
            for name in DIAGNOSTICS:
                verify_quotes(getattr(verdict, name).quotes, source, f"{task.id} {name}")
            return {name: getattr(verdict, name).score for name in DIAGNOSTICS}

        return self.llm.verdict(self.rubric_version, rubric("tc-1"), user, check)

    def _abstention(self, task: Task, work: TaskWork) -> dict[str, float]:
        records = _records(self.scenario, task.evidence)
        user = (f"{_task_header(self.scenario, task)}\n\n## What the assistant did\nIt abstained, having read "
                f"{work.evidence_read} of the task's {work.evidence_total} evidence records.\n\n"
                f"## Evidence records\n{records}")

        def check(answer: dict) -> dict[str, float]:
            verdict = NoopVerdict.model_validate(answer)
            verify_quotes(verdict.abstention.quotes, records, f"{task.id} abstention")
            return dict.fromkeys(DIAGNOSTICS, verdict.abstention.score)

        return self.llm.verdict(self.rubric_version, rubric("tc-noop-1"), user, check)


class LLMTAJudge:
    """Each TA decision's labels and continuation quality, from the run's log up to its window's end."""

    rubric_version = "ta-1"

    def __init__(self, llm: LLMClient):
        self.llm, self.name = llm, llm.name

    def judge_ta(self, scenario: Scenario, trajectory: dict) -> dict[str, dict]:
        """Labels per TA decision whose two tasks were active: ``{id: {now, later, continuation}}``."""
        active = {e["task"] for e in trajectory["log"] if e["type"] == "task_active"}
        return {d.id: self._decision(scenario, trajectory, d) for d in scenario.ta_decisions
                if d.urgent in active and d.competing in active}

    def _decision(self, scenario: Scenario, trajectory: dict, window) -> dict:
        tasks = {t.id: t for t in scenario.tasks}
        log = render_log(scenario, trajectory, lambda e: e["t"] < window.end)

        def describe(role: str, task_id: str) -> str:
            t = tasks[task_id]
            return f"{role} task ({t.id}): {t.title} — deadline {format_at(t.deadline)}\n{t.description}"

        user = (f"## Scenario\n{scenario.title}: {scenario.description}\n\n## Decision window\n"
                f"{format_at(window.start)} to {format_at(window.end)}; shared: {window.shares}\n{window.rationale}\n\n"
                f"{describe('Urgent', window.urgent)}\n\n{describe('Competing', window.competing)}\n\n"
                f"## The assistant's log up to the window's end\n{log}")

        def check(answer: dict) -> dict:
            verdict = TAVerdict.model_validate(answer)
            for name in ("now", "later", "continuation"):
                verify_quotes(getattr(verdict, name).quotes, log, f"TA {name}")
            later = verdict.later.label
            # as in the rubric scoring, continuation is only credited for an explicit deferral
            return {"now": verdict.now.label, "later": later,
                    "continuation": verdict.continuation.score if later else 0.0}

        return self.llm.verdict(self.rubric_version, rubric("ta-1"), user, check)


def _user_sees(entry: dict) -> bool:
    return entry["type"] in USER_VISIBLE


def user_history(scenario: Scenario, trajectory: dict, minute: int) -> str:
    """What the user saw up to ``minute``: messages and notifications, presented work, approval
    decisions, executions, and the assistant's jobs that slowed theirs — not its private work."""
    return render_log(scenario, trajectory, lambda e: e["t"] <= minute and _user_sees(e))


def last_seen_turns(trajectory: dict) -> dict[str, int]:
    """Each task the user saw, and the minute of its last turn they saw."""
    turns: dict[str, int] = {}
    for e in trajectory["log"]:
        if e["type"] in ("present", "execute", "decision") and e.get("task"):
            turns[e["task"]] = e["t"]
    return turns


class LLMTrustJudge:
    """TR-J per task the user saw: the five constructs (1–5) rated on the persona's stated policy,
    the scenario and the history the user saw up to the task's last turn; the task's TR-J is their
    mean."""

    rubric_version = "trj-1"

    def __init__(self, llm: LLMClient):
        self.llm, self.name = llm, llm.name

    def rate(self, scenario: Scenario, trajectory: dict) -> dict[str, float]:
        tasks = {t.id: t for t in scenario.tasks}
        persona = trajectory["persona"]
        ratings = {}
        for task_id, minute in last_seen_turns(trajectory).items():
            history = user_history(scenario, trajectory, minute)
            user = (f"## You\n{scenario.user.name}. Your stated policy for the assistant ({persona}):\n"
                    f"{policy_text(scenario, persona, trajectory.get('variant', {}).get('rules'))}\n\n## Scenario\n{scenario.title}: {scenario.description}\n\n"
                    f"## The task in question\n{tasks[task_id].title} (as of {format_at(minute)})\n\n"
                    f"## The interaction history you have seen\n{history or '(nothing yet)'}")
            ratings[task_id] = self.llm.verdict(self.rubric_version, rubric("trj-1"), user,
                                                partial(self._mean, history=history))
        return ratings

    @staticmethod
    def _mean(answer: dict, history: str) -> float:
        verdict = TrustVerdict.model_validate(answer)
        if history and not verdict.quotes:
            raise ValueError("TR-J: the reason needs at least one quote from the history")
        verify_quotes(verdict.quotes, history, "TR-J")
        return sum(getattr(verdict, c) for c in CONSTRUCTS) / len(CONSTRUCTS)
