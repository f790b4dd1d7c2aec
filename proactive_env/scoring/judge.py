"""Judges fill in the four diagnostic scores of TC's Semantics and Completion components.

A judge sees a task's specification and the work the run left for it (``TaskWork``: what the
user received, in full; the part of it that is the agent's own; and the records the agent had
read) and returns ``correctness``, ``grounding``, ``completeness`` and ``artifact_quality``, each
in [0, 1]. The deterministic ``RubricJudge`` is the default; LLM judges implement the same
protocol. Several judges are averaged by ``judge_task``. Matching is on meaning (``spec.meaning``).

Content that is the agent's own (``copying``). Work is compared with every version of the
scenario's records as content terms (``spec.meaning.terms`` less stop words and fillers). An
executed call the scorer logs (``tool({...})``) is work the agent did: what its arguments state
(``action_words``) is the agent's content where it is not copied, judged for copying apart from
the prose, so an argument pasted from a record neither counts nor makes the prose look copied.
A term is *copied* where the work reproduces a record rather than restating a fact from it:

* it is a term of a record whose distinct content terms the work holds nearly all of
  (``REPRODUCED``): a pasted record, with fillers between its words, its words swapped for
  synonyms here and there, its sentences shuffled or interleaved with another's, or its distinct
  words sorted or shuffled into a salad, holds them all; a faithful statement of a few facts
  from a record holds a fraction (the reference facts of the suite: 0.40 on average, 0.77 at most).
  Nearly all its words as well as nearly all its terms, in one stretch of lines that restate
  little of each other (the terms the record says once, counted per line, at most
  ``COMPLEMENTARY`` times the distinct ones): a paste, whole or chunked over several messages,
  holds the wording and says each once-said term in one place; a careful summary in several
  notes restates a record's times, prices, dates and names, again in each note, in wording of
  its own (round 20: four notes held 55 of a timetable's 66 terms but 36 of its 46 words; a plan
  and a results note on one sweep each restated the results' names and figures);
* or it lies in one of the record's short n-grams (``GRAM`` distinct content terms within
  ``SOURCE_WINDOW`` consecutive ones of the record, found in any order within ``WORK_WINDOW``
  consecutive ones of the work, words no record uses skipped, so fillers or swapped words between
  them change nothing; figures skipped too, so a restated table of the record's numbers and the
  names they belong to is no n-gram) and the work holds at least ``GRAMS_COVERED`` of that record's n-grams:
  most of a record pasted is copying even where some of it was left out;
* or it lies in a stretch of ``VERBATIM`` or more terms (``VERBATIM_WORDS`` of them words) that
  one record says in the same order: a quote longer than any reference fact of the suite restates;
* or it is one of up to ``FILLER_GAP`` terms between copied ones (a filler of the copy).

Restating a fact in the record's words is not copying: every reference fact of the suite, as the
text oracle writes it, is the agent's own (tests/test_content.py). The copied share is the share
of the work's content terms that are copied. Only the clauses of the work that are mostly its own
(``own_text``) can state a fact, and a fact is stated only where one of its keywords and another
of its key terms (``anchors``: not the task's title or keywords, which a bare list would hold)
occur together in one sentence; the matter's title, which the agent was given, states nothing.
Work that states none of its task's reference facts in its own words is not substantive
(``substantive``): it earns no correctness, completeness, constraints, delivery or — on the text
face — work units.
"""

from __future__ import annotations

import functools
import json
import itertools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ..spec import Task
from ..spec.meaning import DateTerm, Term, find_terms, occurrences, spread_occurrences, terms

DIAGNOSTICS = ("correctness", "grounding", "completeness", "artifact_quality")
GRAM = 3  # content terms in a copied n-gram
SOURCE_WINDOW = 4  # ... found among this many consecutive content terms of a record (one left out or swapped)
WORK_WINDOW = 5  # ... and among this many of the work (up to two fillers or swapped words between)
REPRODUCED = 0.8  # a record whose distinct content terms the work holds this share of is reproduced
GRAMS_COVERED = 0.5  # a record this share of whose n-grams the work holds is mostly pasted
VERBATIM = 14  # content terms one record says in this order: a quote (no reference fact of the suite repeats more than 12)
VERBATIM_WORDS = 10  # ... of them words, not numbers: a restated table of the record's figures is no quote
FILLER_GAP = 2  # this many terms between copied ones are fillers of the copy
COMPLEMENTARY = 1.25  # lines that say a record's once-said terms this many times over restate it
MIN_RECORD_TERMS = 8  # a record with fewer distinct content terms is too short to be reproduced
MIN_OWN_WORDS = 5  # below this many words of its own, or below OWN_SHARE of what it delivered, no work of its own
OWN_SHARE = 0.5
CLAUSE_OWN = 0.5  # a clause counts as the agent's own while less than this share of its content terms is copied
ANCHOR_REACH = 12  # a fact's keyword and its other key term: at most this many terms apart

# Words that carry no content of their own: function words, and fillers a padded paste would use.
_STOP_WORDS = set("""a an the and or but if then so to of in on at for with by from as into onto over under about
after before until till than that this these those there here it its is are was were be been being am do does did done
have has had having will would shall should can could may might must i me my mine we us our ours you your yours he him
his she her hers they them their theirs who whom whose which what when where why how all any both each few more most
other some such no nor not only own same too very s t just also still yet again ever even up down out off per via
let get got one ones""".split())
FILLERS = frozenset("""um uh er erm hmm like basically actually literally really honestly totally simply
indeed okay ok anyway anyhow well yeah yes right quite kind sort stuff things thing etc furthermore moreover
besides additionally overall essentially generally""".split())
_NEGATIONS = frozenset({"not", "no", "never", "none", "nothing", "cannot", "neither", "nor", "t", "nobody",
                        "shut", "clos", "cancel", "cancell", "unavailable", "longer"})  # stems; "n't" leaves "t"
_NEGATIONS |= {"dead", "broken", "expir"}  # a link, card or booking said to be dead is not claimed working, live, valid
_NEGATION = re.compile(r"\b(?:not|no|never|none|nothing|nobody|cannot|neither|nor|shut|closed|cancel+ed|"
                       r"unavailable|no longer|dead|broken|expired)\b|n't\b|n’t\b", re.IGNORECASE)
# Things named by a string that compare whole (``whole_links``): an e-mail address, a URL (with or
# without its scheme), a path (from "/", or relative with two slashes or a file's extension), an id
# (parts joined by hyphens, from a letter, one with three digits or a letter beside a digit).
_ID = re.compile(r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b", re.IGNORECASE)
_LINK = re.compile(r"(?i:[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
                   r"|(?:https?://)?(?:www\.)?(?:[a-z0-9-]+\.)+[a-z]{2,6}\b(?:/[\w\-.~%/?=&#]*)?"
                   r"|(?<![\w/.])/[a-z_][\w\-.~]*(?:/[\w\-.~]+)*"
                   r"|\b[a-z_][\w-]*(?:/[a-z_][\w\-.]*){2,}|\b[a-z_][\w-]*(?:/[\w\-.]+)+\.[a-z]{2,4}\b)"
                   rf"|(?P<id>{_ID.pattern})", re.IGNORECASE)
_ID_PART = re.compile(r"\d{3}|[a-z]\d|\d[a-z]", re.IGNORECASE)  # "ccu-2219", "ns-0417-g2b"; not "epoch-60", "14-day"
_AMOUNT = re.compile(r"(?:gbp|usd|eur|cad|aud|chf|jpy)\d", re.IGNORECASE)  # "GBP180-a-night": an amount
_SCHEME = re.compile(r"^(?:https?://)?(?:www\.)?", re.IGNORECASE)


@functools.lru_cache(maxsize=8192)
def whole_links(text: str) -> str:
    """``text`` with every e-mail address, URL, path and id (``_LINK``) made one term: compared
    whole, "morganellis.ca/work" is not "morganellis.ca/portfolio", nor does it say "work"."""
    return _LINK.sub(_link_term, text)


def _link_term(match: re.Match) -> str:
    found = match.group(0)
    if match.group("id"):
        return f" {_term_of(found)} " if _is_id(found) else found
    link = found.rstrip("/.,;:?!")
    tail = found[len(link):].replace("/", "")  # a full stop after a link still ends the sentence
    inside = [_term_of(i) for i in _ID.findall(link) if _is_id(i)]  # "…/apply/LH-0417?ref=RF-20931" gives its codes
    return " " + " ".join([_term_of(_SCHEME.sub("", link)), *inside]) + tail + " "


def _is_id(word: str) -> bool:
    """Not a word with a number ("epoch-60", "severity-3") nor an amount ("GBP180-a-night")."""
    return bool(_ID_PART.search(word)) and not _AMOUNT.match(word)


def _term_of(link: str) -> str:
    return "link_" + re.sub(r"[^a-z0-9]+", "_", link.lower()).strip("_")
_GENERIC = frozenset({"gbp", "usd", "eur", "h", "min", "%", "kg", "cm", "gb", "mg", "ml", "g", "km"})
_CLAUSE_SPLIT = re.compile(r"((?<=[.!?;])\s+|\s*\n\s*|\s+[•·]\s+)")
# A full stop ends a sentence, but not the one of "a.m.", "p.m.", "e.g." or "i.e." ("at 2:40 p.m. MBTA trains…").
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])(?<![ap]\.m\.)(?<![AP]\.M\.)(?<!\be\.g\.)(?<!\bi\.e\.)\s+|\s*\n\s*|\s+[•·]\s+")
_ACTION = re.compile(r"^\s*[a-z_][a-z0-9_]*\(\{.*\}\)\s*$")  # how the scorer logs an executed call
_CONTRAST = re.compile(r"\s*(?:;|,\s*but\b|\s[—–-]\s*but\b|\bhowever\b|\bwhereas\b|\balthough\b)\s*",
                       re.IGNORECASE)  # a bare "but" is no break: "nothing but the batch size"


def _is_content(term: Term) -> bool:
    if isinstance(term, DateTerm):
        return True
    return term not in _STOP and term not in FILLERS and (len(term) > 1 or term.isdigit())


def _stems(words: Iterable[str]) -> set[str]:
    out = set()
    for w in words:
        out.update(str(t) for t in terms(w))
    return out | set(words)


_STOP = frozenset(_stems(_STOP_WORDS))


def content_terms(text: str) -> list[str]:
    """The content terms of ``text`` in order, as strings (a day as its ``DateTerm`` string)."""
    return [str(t) for t in terms(text) if _is_content(t)]


@dataclass(frozen=True)
class TaskWork:
    """What a run left for one task, as a judge needs it."""

    task: str
    artifact: str  # everything the user received for it (structured face: the composed work)
    own_words: str  # the clauses of the artifact that are the agent's own (``copying``), one a line
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
        return own >= MIN_OWN_WORDS and own >= OWN_SHARE * len(prose(self.artifact).split())


class Judge(Protocol):
    name: str
    rubric_version: str

    def judge(self, task: Task, work: TaskWork) -> dict[str, float]: ...


# ---------------------------------------------------------------------- copying
def _grams(seq: list[str], window: int) -> Iterable[tuple[int, int, tuple[str, ...]]]:
    """(first, last, gram): every set of ``GRAM`` distinct terms within ``window`` consecutive
    ones of ``seq``, sorted (order does not matter), with the span it covers."""
    for i in range(len(seq)):
        end = min(len(seq), i + window)
        for rest in itertools.combinations(range(i + 1, end), GRAM - 1):
            gram = {seq[i], *(seq[k] for k in rest)}
            if len(gram) == GRAM:
                yield i, rest[-1], tuple(sorted(gram))


@dataclass(frozen=True)
class _Record:
    vocab: frozenset[str]
    words: frozenset[str]  # its distinct content terms less its figures (``_figure``): what a paste holds and a summary does not
    once: frozenset[str]  # the terms it says once: a paste puts each in one place, notes that restate it in several
    grams: frozenset[tuple[str, ...]]
    runs: frozenset[tuple[str, ...]]  # its consecutive GRAM terms, in order: what a verbatim quote repeats


@dataclass(frozen=True)
class SourceIndex:
    """What the records say, as copying is measured against: per record, its distinct content
    terms and its n-grams; which records each n-gram and each in-order run occurs in; and every
    term any record uses."""

    records: tuple[_Record, ...]
    gram_records: dict
    run_records: dict
    vocab: frozenset[str]

    def __hash__(self) -> int:
        return id(self)


@functools.lru_cache(maxsize=4096)
def _record(text: str) -> _Record:
    """One record version's terms, n-grams and runs (computed once per text, whatever set it is in)."""
    seq = content_terms(text)
    counts = Counter(seq)
    return _Record(frozenset(seq), frozenset(t for t in seq if not _figure(t)), frozenset(t for t, n in counts.items() if n == 1),
                   frozenset(g for _, _, g in _grams([t for t in seq if not _figure(t)], SOURCE_WINDOW)),
                   frozenset(_runs(seq)))


def _figure(term: str) -> bool:
    """A number, time, day or amount (or its currency or unit; "6e-4" too): what a summary restates."""
    return term[:1].isdigit() or term.startswith("@") or term in _GENERIC


@functools.lru_cache(maxsize=64)
def _index(sources: frozenset[str]) -> SourceIndex:
    records, gram_records, run_records = [], {}, {}
    for text in sorted(sources):  # a fixed order: the set, not the order the records came in, decides
        rec = _record(text)
        for g in rec.grams:
            gram_records.setdefault(g, []).append(len(records))
        for run in rec.runs:
            run_records.setdefault(run, set()).add(len(records))
        records.append(rec)
    vocab = frozenset(t for r in records for t in r.vocab)
    return SourceIndex(tuple(records), gram_records, run_records, vocab)


def _runs(seq: list[str]) -> Iterable[tuple[str, ...]]:
    return (tuple(seq[i:i + GRAM]) for i in range(len(seq) - GRAM + 1))


def source_index(sources: Iterable[str]) -> SourceIndex:
    """The index of a set of record texts, computed once per set (whatever order they come in)."""
    return _index(sources if isinstance(sources, frozenset) else frozenset(sources))


@dataclass(frozen=True)
class Copying:
    """How much of a text is copied from the records (module doc)."""

    own_text: str  # the clauses that are the agent's own, one a line
    copied_share: float  # copied content terms / content terms (0 for a text without content)
    reproduced: int  # records the text reproduces


def prose(text: str) -> str:
    """``text`` less the executed calls the scorer logs in it (``tool({...})`` lines): the words
    the agent wrote to the user or in its notes."""
    return "\n".join(line for line in text.split("\n") if not _ACTION.match(line))


def action_words(text: str) -> str:
    """What the executed calls in ``text`` state, as sentences: the work the agent did through a
    domain tool (a study plan's sessions, an order's items, a reminder's title) is its content too,
    one argument (or one entry of a list argument) a line, its values without the schema's keys; an
    amount keyed ``*_usd``/``*_gbp`` reads with its currency. Judged for copying on its own, apart
    from the prose."""
    lines = []
    for line in text.split("\n"):
        if not _ACTION.match(line):
            continue
        try:
            args = json.loads(line[line.index("(") + 1:line.rindex(")")])
        except ValueError:
            continue
        if isinstance(args, dict):
            for key, value in args.items():
                lines += _stated(key, value)
    return "\n".join(lines)


def _stated(key: str, value) -> list[str]:
    """The values an argument states, without its keys (a schema's names are not the agent's words)."""
    if isinstance(value, list):
        return [s for v in value for s in _stated(key, v)]
    if isinstance(value, dict):
        return [", ".join(_value(k, v) for k, v in value.items())]
    return [_value(key, value)]


def _value(key: str, value) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        sign = "$" if key.endswith("_usd") else "£" if key.endswith("_gbp") else ""
        return f"{sign}{value:,.2f}" if sign else str(value)
    if isinstance(value, (list, dict)):
        return "; ".join(_stated(key, value))
    return str(value)


def copying(text: str, sources: Iterable[str]) -> Copying:
    return _copying(text, source_index(sources))


@functools.lru_cache(maxsize=4096)
def _copying(text: str, index: SourceIndex) -> Copying:
    """Copying in the prose; the executed calls' arguments, judged apart, add what of them is the
    agent's own (a copied argument adds nothing, and never makes the prose look copied)."""
    said = _copying_of(prose(text), index)
    acts = action_words(text)
    if not acts:
        return said
    done = _copying_of(acts, index)
    own = "\n".join(p for p in (said.own_text, done.own_text) if p)
    return Copying(own, said.copied_share, said.reproduced)


def _copying_of(text: str, index: SourceIndex) -> Copying:
    pieces = _CLAUSE_SPLIT.split(text)  # clause, separator, clause, ...
    clauses, seps = pieces[0::2], pieces[1::2] + [""]
    seqs = [content_terms(c) for c in clauses]
    seq = [t for s in seqs for t in s]  # across clauses: a full stop every few words hides nothing
    reproduced = _reproduced(seq, [set(content_terms(line)) for line in text.split("\n")], index)
    copied = _copied(seq, index, reproduced)
    own, at = [], 0
    for clause, sep, s in zip(clauses, seps, seqs):
        flags = copied[at:at + len(s)]
        at += len(s)
        if not s or sum(flags) < CLAUSE_OWN * len(s):
            own.append(clause + ("\n" if "\n" in sep else sep))
        elif own and not own[-1].endswith("\n"):
            own[-1] = own[-1].rstrip() + "\n"  # a copied clause ends the sentence: a fact cannot span it
    own_text = "".join(own).strip()
    return Copying(own_text, sum(copied) / len(seq) if seq else 0.0, len(reproduced))


def _reproduced(seq: list[str], lines: list[set[str]], index: SourceIndex) -> list[int]:
    """The records whose distinct content terms ``seq`` holds nearly all of, its words as well as
    its figures, in one stretch of lines that restate little of each other (module doc)."""
    held = set(seq)
    return [r for r, rec in enumerate(index.records) if len(rec.vocab) >= MIN_RECORD_TERMS
            and all(len(part & held) >= REPRODUCED * len(part) for part in (rec.vocab, rec.words))
            and _in_one_stretch(rec, lines)]


def _in_one_stretch(rec: _Record, lines: list[set[str]]) -> bool:
    """Do consecutive lines hold ``REPRODUCED`` of the record's terms between them, without
    restating each other: the terms the record says once, counted once per line that holds them,
    at most ``COMPLEMENTARY`` times as many as the distinct ones held? A record pasted, in one
    message or in chunks over several, says each such term in one place; notes that each restate
    the record's facts (its times, prices and names, again in every note) say them again."""
    need = REPRODUCED * len(rec.vocab)
    for first in range(len(lines)):
        union: set[str] = set()
        once: set[str] = set()
        counted = 0
        for line in lines[first:]:
            union |= line & rec.vocab
            once |= line & rec.once
            counted += len(line & rec.once)
            if len(union) >= need:
                if counted <= COMPLEMENTARY * len(once):
                    return True
                break
    return False


def _copied(seq: list[str], index: SourceIndex, reproduced: list[int]) -> list[bool]:
    """Which terms of ``seq`` are copied (module doc), given the records it reproduces."""
    if not seq:
        return []
    copied = [any(t in index.records[r].vocab for r in reproduced) for t in seq]
    # a word no record uses is no part of an n-gram, nor is a figure: a table of the record's
    # numbers restated, with the names they belong to, is data the user asked for, not a paste
    at = [i for i, t in enumerate(seq) if t in index.vocab and not _figure(t)]
    known = [seq[i] for i in at]
    matches: dict[int, list[tuple[int, int]]] = {}
    grams_held: dict[int, set] = {}
    for first, last, gram in _grams(known, WORK_WINDOW):
        for r in index.gram_records.get(gram, ()):
            matches.setdefault(r, []).append((at[first], at[last]))
            grams_held.setdefault(r, set()).add(gram)
    for r, spans in matches.items():
        if len(grams_held[r]) >= GRAMS_COVERED * max(1, len(index.records[r].grams)):
            for first, last in spans:
                copied[first:last + 1] = [True] * (last + 1 - first)
    _mark_verbatim(seq, index, copied)
    return _absorb_fillers(copied)


def _numeric(term: str) -> bool:
    return term.replace(".", "").replace(":", "").isdigit()


def _mark_verbatim(seq: list[str], index: SourceIndex, copied: list[bool]) -> None:
    """Marks every stretch of ``VERBATIM`` or more terms that one record says in the same order
    (a quoted sentence: longer than any reference fact restates), ``VERBATIM_WORDS`` of them words
    (a table of the record's numbers, restated, is data the user asked for, not a quote)."""
    started: dict[int, int] = {}  # record → where its current in-order run began
    runs = list(_runs(seq))
    for i, run in enumerate([*runs, None]):
        here = index.run_records.get(run, set()) if run is not None else set()
        for r in [r for r in started if r not in here]:
            begin, end = started.pop(r), i - 1 + GRAM
            if end - begin >= VERBATIM and sum(not _numeric(t) for t in seq[begin:end]) >= VERBATIM_WORDS:
                copied[begin:end] = [True] * (end - begin)
        for r in here:
            started.setdefault(r, i)


def _absorb_fillers(copied: list[bool]) -> list[bool]:
    """Up to ``FILLER_GAP`` terms between copied ones are fillers of the copy, whatever they are."""
    out, last = list(copied), None
    for i, c in enumerate(copied):
        if c:
            if last is not None and 0 < i - last - 1 <= FILLER_GAP:
                out[last + 1:i] = [True] * (i - last - 1)
            last = i
    return out


def strip_copies(text: str, sources: Iterable[str]) -> str:
    """The clauses of ``text`` that are the agent's own (less than half of each copied), one a
    line; what reproduces the records is left out."""
    return copying(text, sources).own_text


# ---------------------------------------------------------------------- claims and facts
def _sentences(text: str) -> list[str]:
    return [c for c in _SENTENCE_BREAK.split(text) if c.strip()]


@functools.lru_cache(maxsize=8192)
def claim_made(text: str, claim: str) -> bool:
    """Does ``text`` make ``claim``? Some statement (not a question; a contrast — "but", ";" —
    ends one) carries every content term of the claim close together (within twice the claim's
    length) with the same polarity: a negated claim is not the claim ("not open", "shut",
    "closed", "no longer", "isn't", "cancelled"), and numbers and dates are compared on meaning
    ("Sun 3 and Mon 4 May" names Sunday 3 May). Deliberately strict: a false alarm would punish a
    correct agent; the LLM judges catch looser paraphrases."""
    claim, text = whole_links(claim), whole_links(text)
    content = [t for t in terms(claim) if _is_content(t) and str(t) not in _NEGATIONS]
    if not content:
        return False
    negated = bool(_NEGATION.search(claim))
    span = 2 * len(content) + 2
    for sentence in _sentences(text):
        if sentence.rstrip().endswith("?"):
            continue
        for part in _CONTRAST.split(sentence):
            if negated != bool(_NEGATION.search(part)):
                continue
            hits = [occurrences(part, (c,)) for c in content]
            if all(hits) and _close(hits, span):
                return True
    return False


def _close(hits: list[list[int]], span: int) -> bool:
    """Is there one occurrence of every term within ``span`` consecutive positions?"""
    for start in sorted({i for h in hits for i in h}):
        if all(any(start <= i < start + span for i in h) for h in hits):
            return True
    return False


@functools.lru_cache(maxsize=4096)
def _fact_terms(text: str, needles: tuple[str, ...], common: frozenset = frozenset()) -> tuple[
        tuple[tuple[Term, ...], ...], frozenset[Term]]:
    """A fact's keywords as term runs, and its anchors: its other key terms (content terms of its
    text that are no keyword's, none of ``common`` — the task's title and other keywords, which a
    list of keywords would hold — nor a bare currency or unit)."""
    keywords = tuple(terms(whole_links(n)) for n in needles)
    used = {t for k in keywords for t in k} | common
    dated = any(isinstance(t, DateTerm) for t in used)
    anchors = frozenset(t for t in terms(whole_links(text)) if _is_content(t) and t not in used and str(t) not in _GENERIC
                        and not (dated and isinstance(t, DateTerm)))
    return keywords, anchors


def common_terms(task: Task) -> frozenset[Term]:
    """The terms a bare list of the task's title and keywords holds: never a fact's anchor."""
    needles = [n for f in (*task.facts, *task.constraints.must_include) for n in f.needles()]
    return frozenset(t for text in (task.title, *needles) for t in (*terms(text), *terms(whole_links(text))))


def states(text: str, fact, common: frozenset = frozenset()) -> bool:
    """Does ``text`` state the fact? One clause (of any length: a careful sentence can hold many
    figures; not a question) holds one of its keywords, on meaning (its words in order, a word or
    two between them allowed: ``spread_occurrences``), and — where the fact's text has other key
    terms — one of those within ``ANCHOR_REACH`` terms of it: a keyword alone in a list is not a
    statement. Pass the agent's own words (``TaskWork.own_words``): copied clauses state nothing."""
    keywords, anchors = _fact_terms(fact.text, tuple(fact.needles()), common)
    for clause in _sentences(whole_links(text)):
        if clause.rstrip().endswith("?"):
            continue
        said = terms(clause)
        for keyword in keywords:
            for at, end in spread_occurrences(clause, keyword):
                if not anchors:
                    return True
                near = said[max(0, at - ANCHOR_REACH): end + ANCHOR_REACH]
                if any(find_terms((t,), (a,)) == 0 for t in near for a in anchors if isinstance(a, DateTerm)) or (
                        anchors & set(near)):
                    return True
    return False


def facts_stated(task: Task, work: TaskWork, facts=None) -> list:
    """The facts (default: the task's reference facts) the work states in the agent's own words;
    the matter's title, which the agent was given, is not its words. (A function of the task, the
    facts and the own words alone: cached on them, since works that differ elsewhere — units
    done, what was read — say the same.)"""
    facts = task.facts if facts is None else facts
    key = (id(task), work.own_words, tuple(map(id, facts)))
    hit = _STATED.get(key)
    if hit is None or hit[0] is not task or any(a is not b for a, b in zip(hit[1], facts)):
        if len(_STATED) >= 8192:
            _STATED.clear()
        text = re.sub(re.escape(task.title), "\n", work.own_words, flags=re.IGNORECASE)
        common = common_terms(task)
        hit = _STATED[key] = (task, tuple(facts), [i for i, f in enumerate(facts) if states(text, f, common)])
    return [facts[i] for i in hit[2]]


_STATED: dict[tuple, tuple] = {}  # (id(task), own words, ids of the facts) -> (task, facts, indices stated): held, so the ids stay theirs


class RubricJudge:
    """Checks the task's reference facts against the agent's own words and its observations.

    * correctness — share of reference facts stated, and of forbidden claims avoided (on meaning,
      negation-aware), over both;
    * grounding — share of the stated facts whose source record the agent had read;
    * completeness — share of reference facts the work covers;
    * artifact_quality — share of the task's work units done, if the work is the agent's own.

    Facts count only where stated in the agent's own words (``TaskWork.own_words``; see the
    module doc). Work that is mostly copied from the records (less than half of it the agent's
    own), or that states none of the task's reference facts in its own words, is not the agent's
    work: all four are 0. Quoting a record inside one's own work is fine. For a NOOP task all
    four measure whether the abstention is supported: the share of the task's evidence read, if
    the user saw nothing; 0 if the agent intervened.
    """

    name = "rubric"
    rubric_version = "rubric-3"

    def judge(self, task: Task, work: TaskWork) -> dict[str, float]:
        if work.noop:
            supported = 0.0
            if not work.intervened:
                supported = work.evidence_read / work.evidence_total if work.evidence_total else 1.0
            return dict.fromkeys(DIAGNOSTICS, supported)
        stated = facts_stated(task, work)
        if not work.own or (task.facts and not stated):
            return dict.fromkeys(DIAGNOSTICS, 0.0)
        observed = set(work.observed)
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

    @staticmethod
    def observed_it_reads(task: Task, observed: tuple[str, ...]) -> tuple[str, ...]:
        """Of the records the agent had read (``TaskWork.observed``), those this judge reads: the
        sources of the task's facts (grounding asks nothing else of them), so that works differing
        only in what else the agent had read share one cached verdict (the scorer's). ``judge``,
        ``substantive`` and the constraints check give the same on both: keep it so when changing
        what they read (tests/test_env_fast_path.py plays every pair without it)."""
        sources = _fact_sources(task)
        return tuple(r for r in observed if r in sources)


_FACT_SOURCES: dict[int, tuple[Task, frozenset[str]]] = {}


def _fact_sources(task: Task) -> frozenset[str]:
    """The sources of a task's facts, kept per task object (asked at every close; a seed's variant
    shares the file's task objects, held here so that their ids stay theirs)."""
    hit = _FACT_SOURCES.get(id(task))
    if hit is not None and hit[0] is task:
        return hit[1]
    if len(_FACT_SOURCES) >= 4096:
        _FACT_SOURCES.clear()
    sources = frozenset(f.source for f in task.facts)
    _FACT_SOURCES[id(task)] = (task, sources)
    return sources


def substantive(task: Task, work: TaskWork) -> bool:
    """Is the work the agent's own and does it say something: at least one reference fact in its
    own words, where the task has any? (What delivery and constraints credit.)"""
    return work.own and (not task.facts or bool(facts_stated(task, work)))


def judge_task(judges: list[Judge], task: Task, work: TaskWork) -> dict[str, float]:
    """Mean of the judges' diagnostics."""
    verdicts = [j.judge(task, work) for j in judges]
    return {k: sum(v[k] for v in verdicts) / len(verdicts) for k in DIAGNOSTICS}
