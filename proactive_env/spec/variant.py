"""Seeds draw variants of a scenario within the bounds it states (DESIGN.md §3).

A variant moves unconditional events and records in time (``variants.jitter``), draws the
persona's rules among the alternatives the scenario allows, keeps or drops each distractor task
(a dropped one takes the events and records only it brings with it), shuffles the order of records
and of tasks (the structured face's slots), and tosses the user's coins (``coins``). ``draw`` returns
the choices as a JSON-serialisable dict, so a trajectory stores them and ``apply`` rebuilds the
exact scenario when the run is re-scored. Seeds below ``TEST_SEEDS`` are for training; seeds
from it on are the test split.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .models import Scenario
from .validate import trigger_minute

TEST_SEEDS = 1000  # seeds ≥ this are the test split
STEP = 15
RULE_WORDS = {"prepare": "do the work privately, don't bring it to me", "suggest": "bring it to me for review; I decide",
              "approve": "ask me first, then do it once I say yes", "execute": "just do it"}
RULE_PLACEHOLDER = re.compile(r"\{rule:([A-Za-z0-9_]+)\}")  # in a persona's policy: the sentence of a drawn rule

# How prose states a depth (spec/validate.py reads category descriptions and persona prose with
# it): each rule's own words (``RULE_WORDS``) read as that rule and nothing else
# (tests/test_fair_variants.py). A phrase after "don't"/"never" is not stated.
DEPTH_PHRASES = {
    "execute": ("just do", "without asking", "without checking", "no need to ask", "no need to check", "go ahead"),
    "approve": ("ask me first", "my ok", "wait for my", "ask me before", "check with me", "once i say yes",
                "my sign-off", "my approval", "ask me, then", "before it goes", "before they go", "my say-so",
                "i'll say yes or no"),
    "suggest": ("show me", "bring it to me", "bring them to me", "bring me", "for review", "i decide", "i'll decide",
                "i send", "i'll send", "i check", "i'll check", "you draft", "draft it", "i'll do it myself"),
    "prepare": ("privately", "don't bring", "don't ping", "don't message", "keep them in your notes",
                "stay in your notes", "don't tell me", "no need to tell"),
}
_NOT = re.compile(r"(?:\bdon't|\bdo not|\bnever|\bnot)\s+$")


def stated_depths(text: str) -> set[str]:
    """The depths ``text`` states in words (``DEPTH_PHRASES``, on whole words, case-insensitive)."""
    low = " ".join(text.lower().replace("\u2019", "'").split())
    found = set()
    for depth, phrases in DEPTH_PHRASES.items():
        for phrase in phrases:
            for m in re.finditer(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", low):
                if phrase.startswith(("don't", "no need")) or not _NOT.search(low[:m.start()]):
                    found.add(depth)
    return found


def policy_text(s: Scenario, persona: str, rules: dict[str, str] | None = None) -> str:
    """The persona's policy prose as this run states it: each ``{rule:category}`` in it becomes the
    sentence of the rule drawn for that category (default: the persona's own), so the prose never
    contradicts what a seed drew (spec/validate.py checks that every drawn category has one)."""
    rules = rules or s.personas[persona].rules

    def sentence(match: re.Match) -> str:
        category = match[1]
        what = s.categories[category]
        return f"{what[0].upper()}{what[1:]} — {RULE_WORDS[rules[category]]}."

    return RULE_PLACEHOLDER.sub(sentence, s.personas[persona].policy)


def draw(s: Scenario, persona: str, rng: np.random.Generator) -> dict:
    """The choices one seed makes for a scenario (see module doc)."""
    jitter = s.variants.jitter // STEP
    offsets = {}
    if jitter:
        revealed = {r for ev in s.events for r in ev.reveals}
        moved = [ev.id for ev in s.events if ev.when is None] + [
            rec.id for rec in s.records if rec.when is None and rec.appears is not None and rec.id not in revealed]
        # one draw per moved event, then per moved record, in one call: numpy's Generator draws a
        # vector of bounded integers as it draws them one at a time (the same values, the same
        # state after: tests/test_variant_draws.py holds it to the one-at-a-time draws)
        for item, step in zip(moved, rng.integers(-jitter, jitter + 1, size=len(moved)).tolist()):
            offsets[item] = STEP * step
    rules = dict(s.personas[persona].rules)
    for category, options in sorted(s.variants.rules.get(persona, {}).items()):
        choices = sorted({rules[category], *options})
        rules[category] = choices[int(rng.integers(len(choices)))]
    dropped = [t for t in s.variants.distractors if rng.random() < 0.5]
    kept = [t.id for t in s.tasks if t.id not in dropped]
    task_order = [kept[i] for i in rng.permutation(len(kept))]
    record_order = [s.records[i].id for i in rng.permutation(len(s.records))]
    return {"offsets": offsets, "rules": rules, "tasks": task_order, "records": record_order, "coins": coins(s, rng)}


def identity(s: Scenario, persona: str, rng: np.random.Generator | None = None) -> dict:
    """The scenario as written (no seed draw): for tests and for reading a file as its author
    wrote it; the user's coins are still tossed where ``rng`` is given (their answers stay stochastic)."""
    return {"offsets": {}, "rules": dict(s.personas[persona].rules), "tasks": [t.id for t in s.tasks],
            "records": [r.id for r in s.records], **({"coins": coins(s, rng)} if rng is not None else {})}


def coins(s: Scenario, rng: np.random.Generator) -> dict[str, float]:
    """The user's coins: one uniform in [0, 1) per task, in the file's task order (never the
    variant's shuffled one), fixed for the run. Every stochastic answer about a task compares its
    coin with the acceptance probability of the rule that applies (``sim.user.decide``): the
    same request gets the same answer whoever asks and whatever came before (common random
    numbers), and the scorer knows at reset which answers the oracle's requests get."""
    return {t.id: float(u) for t, u in zip(s.tasks, rng.random(len(s.tasks)))}


def apply(s: Scenario, variant: dict) -> Scenario:
    """The scenario with a variant's choices applied (times clamped so that nothing crosses a
    deadline or a TA window boundary it matters for)."""
    offsets = variant["offsets"]
    prepared = _prepared(s)
    events = [prepared.moved(ev, "at", _moved(ev.at, offsets[ev.id], prepared.event_bounds(s, ev)))
              if offsets.get(ev.id) and ev.id not in prepared.pinned else ev for ev in s.events]
    records = {r.id: r for r in s.records}
    for rid, offset in offsets.items():
        rec = records.get(rid)
        if rec is not None and rec.appears is not None:
            bounds, latest = prepared.record_bounds(s, rec)
            at = _moved(rec.appears, offset, bounds)
            records[rid] = prepared.moved(rec, "appears", max(0, min(at, max(latest, rec.appears))))
    by_id = {t.id: t for t in s.tasks}
    tasks = [by_id[t] for t in variant["tasks"] if t in by_id]
    dropped = frozenset(by_id) - {t.id for t in tasks}
    if dropped not in prepared.dropped:
        prepared.dropped[dropped] = _without_dropped(s, s.events, tasks)
    gone_events, gone = prepared.dropped[dropped]
    events = [ev for ev in events if ev.id not in gone_events]
    return s.model_copy(update={"events": events, "records": [records[r] for r in variant["records"] if r not in gone],
                                "tasks": tasks})


@dataclass
class _Prepared:
    """What a scenario's variants share, worked out once per scenario (a reset applies a variant)."""

    pinned: frozenset[str]  # the events that stay put (``_pinned``)
    dropped: dict[frozenset, tuple[frozenset[str], frozenset[str]]]  # tasks dropped -> events, records gone
    bounds: dict[str, tuple] = field(default_factory=dict)  # event / record id -> what its moves are clamped to
    copies: dict[tuple, object] = field(default_factory=dict)  # (event / record id, time) -> it, moved there

    def moved(self, item, name: str, minute: int):
        """The scenario's event or record ``item`` with its time ``name`` set to ``minute``: one copy
        per (item, minute), shared by the variants that move it there (a jitter makes few moves)."""
        key = (type(item).__name__, item.id, minute)
        copy = self.copies.get(key)
        if copy is None:
            copy = self.copies[key] = item.model_copy(update={name: minute})
        return copy

    def event_bounds(self, s: Scenario, ev) -> tuple[int, int]:
        key = f"event:{ev.id}"
        if key not in self.bounds:
            self.bounds[key] = _bounds(s, ev.at, _triggered(s, ev.id))
        return self.bounds[key]

    def record_bounds(self, s: Scenario, rec) -> tuple[tuple[int, int], int]:
        """The bounds of a record's moves, and the latest it may appear: never after its first
        version, nor after a task that needs it is triggered."""
        key = f"record:{rec.id}"
        if key not in self.bounds:
            latest = min([v.at - 1 for v in rec.versions] + [trigger_minute(s, t) - s.variants.jitter
                                                              for t in s.tasks if rec.id in t.evidence]
                         + [s.end_minute])
            self.bounds[key] = (_bounds(s, rec.appears, []), latest)
        return self.bounds[key]


_PREPARED: dict[int, tuple[Scenario, _Prepared]] = {}


def _prepared(s: Scenario) -> _Prepared:
    hit = _PREPARED.get(id(s))
    if hit is not None and hit[0] is s:
        return hit[1]
    if len(_PREPARED) >= 256:
        _PREPARED.clear()
    prepared = _Prepared(frozenset(ev.id for ev in s.events if _pinned(s, ev)), {})
    _PREPARED[id(s)] = (s, prepared)  # (held: its id stays its own)
    return prepared


def _without_dropped(s: Scenario, events: list, kept: list) -> tuple[frozenset[str], frozenset[str]]:
    """A dropped task drops what only it brings: the events that trigger it and nothing kept, and
    the records that only it or those events concern (no kept task cites them, no kept event
    reveals them). Returns the ids of the events and of the records dropped (a function of the
    tasks kept: moving an event in time changes neither)."""
    kept_ids = {t.id for t in kept}
    dropped = {t.id for t in s.tasks} - kept_ids
    if not dropped:
        return frozenset(), frozenset()

    def triggers(ev, ids) -> bool:
        return any(t.trigger.type == "event" and t.trigger.event == ev.id and t.id in ids for t in s.tasks)

    gone_events = {ev.id for ev in events if triggers(ev, dropped) and not triggers(ev, kept_ids)}
    kept_events = [ev for ev in events if ev.id not in gone_events]
    cited = {r for t in kept for r in _cited(t)} | {r for ev in kept_events for r in ev.reveals}
    concern = {r for t in s.tasks if t.id in dropped for r in _cited(t)}
    concern |= {r for ev in events if ev.id in gone_events for r in ev.reveals}
    return frozenset(gone_events), frozenset(concern - cited)


def _cited(task) -> set[str]:
    """The records a task's spec names: its evidence, its facts' sources, what refutes its claims."""
    c = task.constraints
    return ({*task.evidence} | {f.source for f in (*task.facts, *c.must_include)}
            | {f.refuted_by for f in c.must_not_include})


def _triggered(s: Scenario, event_id: str) -> list:
    return [t for t in s.tasks if t.trigger.type == "event" and t.trigger.event == event_id]


def _pinned(s: Scenario, ev) -> bool:
    """Events that stay put: paired with a user/agent trigger at the same minute, carrying a policy
    change, or triggering a task of a TA decision."""
    if ev.policy_change is not None:
        return True
    if any(t.trigger.type != "event" and t.trigger.at == ev.at for t in s.tasks):
        return True
    decision_tasks = ({d.urgent for d in s.ta_decisions} | {d.competing for d in s.ta_decisions}
                      | {t for pair in s.decoys for t in pair.tasks})
    return any(t.id in decision_tasks for t in _triggered(s, ev.id))


def _moved(at: int, offset: int, bounds: tuple[int, int]) -> int:
    """``at + offset`` within ``offset`` of ``at`` and within its ``bounds`` (``_bounds``); ``at``
    where they leave no room."""
    lo, hi = max(at - abs(offset), bounds[0]), min(at + abs(offset), bounds[1])
    return min(max(at + offset, lo), hi) if lo <= hi else at


def _bounds(s: Scenario, at: int, triggered: list) -> tuple[int, int]:
    """Where a time ``at`` may move to (a function of the scenario and ``at``, worked out once per
    scenario): on the same side of every TA window boundary, inside the run, and — for an event
    that triggers tasks — early enough for their work before their deadlines."""
    lo, hi = 0, s.end_minute - 2
    for d in s.ta_decisions:
        for boundary in (d.start, d.end):
            if at < boundary:
                hi = min(hi, boundary - 1)
            else:
                lo = max(lo, boundary)
    for task in triggered:
        hi = min(hi, task.deadline - task.work.units * task.work.minutes - 1)
    return lo, hi
