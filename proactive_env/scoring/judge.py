"""Judges fill in the four diagnostic scores of TC's Semantics and Completion components.

A judge sees a task's specification and the work the run left for it (``TaskWork``: what the
user received, in the agent's own words and in full, and the records the agent had read) and
returns ``correctness``, ``grounding``, ``completeness`` and ``artifact_quality``, each in
[0, 1]. The deterministic ``RubricJudge`` is the default; LLM judges implement the same protocol.
Several judges are averaged by ``judge_task``. Matching is on meaning (``spec.meaning``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Protocol

from ..spec import Task
from ..spec.meaning import mentions, normalise

DIAGNOSTICS = ("correctness", "grounding", "completeness", "artifact_quality")
COPY_SPAN = 8  # words: a run this long taken verbatim from a record is copying, not the agent's work
MIN_OWN_WORDS = 5  # below this, or below OWN_SHARE of what it delivered, the agent did no work of its own
OWN_SHARE = 0.5
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|cannot|neither|nor)\b|n't\b|n’t\b", re.IGNORECASE)
_STOP = {"the", "a", "an", "and", "or", "to", "of", "in", "on", "at", "for", "with", "is", "are", "was", "be",
         "it", "its", "this", "that", "will", "still", "has", "have", "had", "by", "as", "from", "so", "too",
         "their", "his", "her", "they", "you", "your", "i", "we", "our", "can", "does", "do", "did"}


@dataclass(frozen=True)
class TaskWork:
    """What a run left for one task, as a judge needs it."""

    task: str
    artifact: str  # everything the user received for it (structured face: the composed work)
    own_words: str  # the artifact less what was copied verbatim from records
    observed: tuple[str, ...]  # records the agent had read by then
    units_done: int
    units: int
    noop: bool  # the right behaviour was to do nothing the user sees
    intervened: bool  # the user saw something about it
    evidence_read: int
    evidence_total: int

    @property
    def own(self) -> bool:
        """Is there work of the agent's own in it (not just what it copied from the records)?"""
        own = len(self.own_words.split())
        return own >= MIN_OWN_WORDS and own >= OWN_SHARE * len(_words(self.artifact))


class Judge(Protocol):
    name: str
    rubric_version: str

    def judge(self, task: Task, work: TaskWork) -> dict[str, float]: ...


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'.:%-]+", normalise(text))


@functools.lru_cache(maxsize=64)
def source_grams(sources: tuple[str, ...], span: int = COPY_SPAN) -> frozenset:
    """Every run of ``span`` words in ``sources`` (computed once per scenario)."""
    grams = set()
    for source in sources:
        sw = _words(source)
        grams.update(tuple(sw[i:i + span]) for i in range(len(sw) - span + 1))
    return frozenset(grams)


def strip_copies(text: str, sources: tuple[str, ...], span: int = COPY_SPAN) -> str:
    """``text`` without the runs of ``span`` or more words that occur verbatim in ``sources``."""
    words = _words(text)
    if len(words) < span:
        return " ".join(words)
    grams = source_grams(sources, span)
    copied = [False] * len(words)
    for i in range(len(words) - span + 1):
        if tuple(words[i:i + span]) in grams:
            copied[i:i + span] = [True] * span
    return " ".join(w for w, c in zip(words, copied) if not c)


def claim_made(text: str, claim: str) -> bool:
    """Does ``text`` make ``claim``? Some statement (not a question) carries every content word
    of the claim close together (within twice the claim's length) with the same polarity: a
    negated claim is not the claim, and numbers and dates are compared on meaning. Deliberately
    strict: a false alarm would punish a correct agent; the LLM judges catch looser paraphrases."""
    negation_words = {"not", "no", "never", "none", "nothing", "cannot", "neither", "nor", "t"}
    content = {w for w in _words(claim) if w not in _STOP and w not in negation_words and len(w) > 1}
    if not content:
        return False
    negated = bool(_NEGATION.search(claim))
    span = 2 * len(content) + 2
    for sentence in re.split(r"(?<=[.!?;])\s+|\n", text):
        if sentence.rstrip().endswith("?") or negated != bool(_NEGATION.search(sentence)):
            continue
        words = _words(sentence)
        hits = [i for i, w in enumerate(words) if w in content]
        for first in range(len(hits)):
            window = {words[i] for i in hits[first:] if i < hits[first] + span}
            if content <= window:
                return True
    return False


def states(text: str, fact) -> bool:
    """Does ``text`` state the fact (any of its keywords, on meaning)?"""
    return any(mentions(text, k) for k in fact.needles())


class RubricJudge:
    """Checks the task's reference facts against the agent's own words and its observations.

    * correctness — share of reference facts stated, and of forbidden claims avoided (on meaning,
      negation-aware), over both;
    * grounding — share of the stated facts whose source record the agent had read;
    * completeness — share of reference facts the work covers;
    * artifact_quality — share of the task's work units done, if the work is the agent's own.

    Work mostly copied verbatim from the records (less than half of it the agent's own words) is
    not the agent's work: all four are 0. Quoting a record inside one's own work is fine. For a NOOP task all four measure
    whether the abstention is supported: the share of the task's evidence read, if the user saw
    nothing; 0 if the agent intervened.
    """

    name = "rubric"
    rubric_version = "rubric-2"

    def judge(self, task: Task, work: TaskWork) -> dict[str, float]:
        if work.noop:
            supported = 0.0
            if not work.intervened:
                supported = work.evidence_read / work.evidence_total if work.evidence_total else 1.0
            return dict.fromkeys(DIAGNOSTICS, supported)
        if not work.own:
            return dict.fromkeys(DIAGNOSTICS, 0.0)
        observed = set(work.observed)
        stated = [f for f in task.facts if states(work.artifact, f)]
        forbidden = task.constraints.must_not_include
        avoided = sum(1 for c in forbidden if not claim_made(work.artifact, c.text))
        checks = len(task.facts) + len(forbidden)
        correctness = (len(stated) + avoided) / checks if checks else 1.0
        grounding = (sum(1 for f in stated if f.source in observed) / len(stated)) if stated else (
            0.0 if task.facts else 1.0)
        completeness = len(stated) / len(task.facts) if task.facts else 1.0
        quality = min(1.0, work.units_done / work.units) if work.units else 1.0
        return {"correctness": correctness, "grounding": grounding,
                "completeness": completeness, "artifact_quality": quality}


def judge_task(judges: list[Judge], task: Task, work: TaskWork) -> dict[str, float]:
    """Mean of the judges' diagnostics."""
    verdicts = [j.judge(task, work) for j in judges]
    return {k: sum(v[k] for v in verdicts) / len(verdicts) for k in DIAGNOSTICS}
