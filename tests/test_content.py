"""Content that is the agent's own (issue 19, item 4), checked on text over every task of the
suite: the reference facts (what the oracle writes) are the agent's own and state every fact;
every disguised paste of a task's records (the content families of ``baselines/adversaries.py``,
several seeds each) is copying and states nothing. Episodes of the families are in
tests/test_adversaries.py."""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np
import pytest

from proactive_env.baselines import adversaries
from proactive_env.baselines.oracle import work_text
from proactive_env.scoring.judge import (TaskWork, common_terms, copying, source_index, states, strip_copies,
                                         substantive)
from proactive_env.scoring.metrics import _source_texts
from proactive_env.sim.records import View
from proactive_env.spec import load_scenario, shipped_names

SEEDS = (0, 1000, 1001)
FAMILIES = {cls.name: cls for cls in adversaries.CONTENT}


@functools.lru_cache(maxsize=None)
def _scenario(name: str):
    s = load_scenario(name)
    return s, frozenset(v for r in s.records for v in _source_texts(r))


def _tasks():
    return [(name, t.id) for name in shipped_names() for t in _scenario(name)[0].tasks if not t.noop]


def _work(text: str, sources) -> TaskWork:
    return TaskWork(task="t", artifact=text, own_words=strip_copies(text, sources), observed=(), units_done=1,
                    units=1, noop=False, intervened=True, evidence_read=1, evidence_total=1)


def test_the_oracles_words_are_its_own_and_state_every_fact():
    """The reference facts restate the records; restating is not copying (TC 100 for the oracles)."""
    for name, task_id in _tasks():
        s, sources = _scenario(name)
        task = next(t for t in s.tasks if t.id == task_id)
        text = work_text(SimpleNamespace(spec=task))
        work = _work(text, sources)
        assert work.own and substantive(task, work), (name, task_id)
        common = common_terms(task)
        missed = [f.text for f in (*task.facts, *task.constraints.must_include) if not states(work.own_words, f, common)]
        assert not missed, (name, task_id, missed)
        assert copying(text, sources).copied_share < 0.2, (name, task_id)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_disguised_paste_of_every_task_is_copying(family):
    """Each content family's text for every task (three seeds): not substantive work, and no
    reference fact is stated in its own clauses."""
    cls = FAMILIES[family]
    passed = []
    for name, task_id in _tasks():
        s, sources = _scenario(name)
        task = next(t for t in s.tasks if t.id == task_id)
        by_id = {r.id: r for r in s.records}
        records = [View(r.id, r.kind, r.title, r.text, dict(r.fields)).render()
                   for r in (by_id[e] for e in task.evidence)] or [task.title]
        for seed in SEEDS:
            text = cls.compose(None, SimpleNamespace(spec=task), records, np.random.default_rng([seed, len(task_id)]))
            if substantive(task, _work(text, sources)):
                passed.append((name, task_id, seed))
    total = len(_tasks()) * len(SEEDS)
    # Quoting, verbatim, the record sentences that hold a keyword: a quote shorter than the
    # longest reference fact (12 terms) reads as restating one, so a few pass (episodes: TC <= 35).
    # A list of keywords states the facts whose every key term is a keyword (a code, an amount
    # the title already names): a few tasks.
    allowed = {"keyword-sentences": 0.1 * total, "keyword-stuffing": 0.05 * total}.get(family, 0)
    assert len(passed) <= allowed, (family, len(passed), total, passed[:5])


def test_the_copy_index_is_keyed_on_the_set_of_records_not_their_order():
    s, sources = _scenario("monitor")
    texts = [v for r in s.records for v in _source_texts(r)]
    assert source_index(texts) is source_index(list(reversed(texts))) is source_index(sources)


@pytest.mark.parametrize(("every", "filler"), [(7, "basically"), (3, "indeed"), (2, "zebra"), (1, "zebra")])
def test_a_pasted_record_with_fillers_is_copied_whatever_the_rate(every, filler):
    s, sources = _scenario("monitor")
    record = next(r for r in s.records if r.id == "listing_arcvue")
    words = record.text.split()
    padded = " ".join(w + (f" {filler}" if i % every == 0 else "") for i, w in enumerate(words, start=1))
    c = copying(padded, sources)
    assert c.copied_share > 0.9 and len(c.own_text.split()) <= 1  # at most a trailing filler is left


def test_a_quote_inside_own_work_is_fine():
    s, sources = _scenario("monitor")
    own = ("The Arcvue Q27 is the one to get: it is on sale at £142 until noon on Tuesday, and with the £18 "
           "Linkwell cable the setup comes to exactly £160. I checked that your laptop's USB-C carries "
           "DisplayPort Alt Mode, so nothing else is needed.")
    quote = next(r for r in s.records if r.id == "listing_arcvue").text.split(". ")[0]
    work = _work(f"{own}\nFrom the listing: \"{quote}.\"", sources)
    assert work.own
    fact = next(f for t in s.tasks for f in t.facts if "sale at £142" in f.text)
    assert states(work.own_words, fact)
