"""Copying and statements judged fairly to careful work (round 20), over every task of the suite.

A careful assistant writes several notes on one matter, dense sentences that restate a record's
times, prices and names, again in each note; that work keeps its credit. A paste of the records
stays copying whether it comes whole, in chunks over several messages or with fillers. Things
named by a string (a URL, a path, an e-mail address, an id) compare whole. The round-20 cases are
regressions with the exact texts the blind players wrote."""

from __future__ import annotations

import functools
import re
from types import SimpleNamespace

import numpy as np
import pytest

from proactive_env.baselines import adversaries
from proactive_env.scoring.judge import (TaskWork, _fact_terms, claim_made, common_terms, copying, facts_stated,
                                         states, strip_copies, substantive)
from proactive_env.scoring.metrics import _source_texts
from proactive_env.sim.records import View
from proactive_env.spec import PERSONAS, load_scenario, shipped_names

SEEDS = (0, 1000, 1001)
_FIGURE = re.compile(r"[£$€]?\d[\d.,:/–-]*(?:\s?(?:%|h|min|GB|kg|km|mg|ml))?")


@functools.lru_cache(maxsize=None)
def _scenario(name: str):
    s = load_scenario(name)
    by_id = {r.id: r for r in s.records}
    evidence = {t.id: [View(r.id, r.kind, r.title, r.text, dict(r.fields)).render()
                       for r in (by_id[e] for e in t.evidence)] or [t.title] for t in s.tasks}
    return s, frozenset(v for r in s.records for v in _source_texts(r)), evidence


def _work(pieces, sources) -> TaskWork:
    """The work of one task as the scorer reads it: its messages and notes, one after another."""
    text = "\n".join([pieces] if isinstance(pieces, str) else pieces)
    return TaskWork(task="t", artifact=text, own_words=strip_copies(text, sources), observed=(), units_done=1,
                    units=1, noop=False, intervened=True, evidence_read=1, evidence_total=1)


def _facts(task) -> list[str]:
    return [f.text.rstrip(".") for f in (*task.facts, *task.constraints.must_include)]


def careful_notes(task, records: list[str], rng: np.random.Generator) -> list[str]:
    """What a careful assistant leaves on a matter, in several pieces: a message stating the facts
    (split in two at a fact, or not), the same facts again in one dense sentence, a note restating
    every figure of each record with the record it comes from, and a recap in another order."""
    facts = _facts(task)
    cut = int(rng.integers(1, len(facts))) if len(facts) > 1 and rng.random() < 0.5 else len(facts)
    messages = [f"On {task.title}: " + ". ".join(facts[:cut]) + ".", ". ".join(facts[cut:]) + "." if facts[cut:] else ""]
    dense = "In short, " + ", and ".join(f[0].lower() + f[1:] for f in facts) + "."
    figures = [f"I checked the figures in {r.splitlines()[0].strip()} against each other: "
               + ", ".join(dict.fromkeys(m.strip(" .,:/–-") for m in _FIGURE.findall(r))) + "."
               for r in records if _FIGURE.search(r)]
    recap = "To recap, for you to decide: " + "; ".join(str(f) for f in rng.permutation(facts)) + "."
    return [p for p in (*messages, dense, *figures, recap) if p.strip(".")]


def _pairs():
    return [(name, persona) for name in shipped_names() for persona in PERSONAS]


@pytest.mark.parametrize(("name", "persona"), _pairs())
def test_careful_notes_on_every_task_keep_their_credit(name, persona):
    """Several dense notes restating each record's figures, on every task of every pair and
    three seeds: the work is the agent's own and states every reference fact and code."""
    s, sources, evidence = _scenario(name)
    lost = []
    for seed in SEEDS:
        for k, task in enumerate(t for t in s.tasks if not t.noop):
            notes = careful_notes(task, evidence[task.id], np.random.default_rng([seed, PERSONAS.index(persona), k]))
            work = _work(notes, sources)
            missed = [f.text for f in (*task.facts, *task.constraints.must_include)
                      if f not in facts_stated(task, work, (*task.facts, *task.constraints.must_include))]
            if not (work.own and substantive(task, work)) or missed:
                lost.append((seed, task.id, work.own, missed[:2]))
    assert not lost, lost


CHUNKED = ("paste-fillers-every3-mixed", "paste-fillers-every1-nonsense", "word-salad-shuffled-stops",
           "word-salad-sorted", "sentence-shuffle-paste", "interleave-words")


@pytest.mark.parametrize("family", CHUNKED)
def test_a_paste_chunked_over_several_messages_is_still_copying(family):
    """A content family's paste cut into three to five messages at random words (three seeds,
    every task): each chunk alone holds only part of a record, together they hold it, so it is
    copying and states nothing."""
    cls = next(c for c in adversaries.CONTENT if c.name == family)
    passed = []
    for name in shipped_names():
        s, sources, evidence = _scenario(name)
        for task in (t for t in s.tasks if not t.noop):
            for seed in SEEDS:
                rng = np.random.default_rng([seed, len(task.id)])
                words = cls.compose(None, SimpleNamespace(spec=task), evidence[task.id], rng).split(" ")
                cuts = sorted(rng.choice(np.arange(1, len(words)), size=min(len(words) - 1, int(rng.integers(2, 5))),
                                         replace=False))
                chunks = [" ".join(words[a:b]) for a, b in zip([0, *cuts], [*cuts, len(words)])]
                if substantive(task, _work(chunks, sources)):
                    passed.append((name, task.id, seed))
    assert not passed, (len(passed), passed[:5])


# ---------------------------------------------------------------------- round 20, exact texts
TRAIN_TEXTS = (  # conference_trip / planner / 1010, the four texts of t05_train_connection
    "Flight booking K7QX2P confirmed for Priya: AB 711 Sun 14 June Edinburgh 09:55 arriving Boston 12:20, and AB 712 "
    "Thu 18 June Boston 21:40 arriving Edinburgh Fri 19 June 08:55; Economy Standard with one 23 kg bag, GBP 612.40 "
    "charged to the Visa ending 2210. Check-in opens in the Atlantic Blue app 24 h ahead, Sat 13 June 09:55, and asks "
    "for passport and ESTA details, so her new ESTA on passport 145277310 must be approved by then. Bag drop at EDI "
    "shuts 60 min before departure, i.e. 08:55 Sunday. Airfare goes on the pre-trip expense claim (K7QX2P, GBP "
    "612.40). Tell her.",
    "Flights booked and confirmed: Atlantic Blue ref K7QX2P. Out AB 711 Sun 14 June, Edinburgh 09:55, lands Boston "
    "12:20; back AB 712 Thu 18 June, Boston 21:40, lands Edinburgh Fri 19 June 08:55. Economy Standard, one 23 kg "
    "bag, changes free before departure, GBP 612.40 on your Visa ending 2210. Online check-in opens Sat 13 June 09:55 "
    "in the Atlantic Blue app and asks for your passport and ESTA details (so the new ESTA needs to be through by "
    "then); bag drop at Edinburgh closes at 08:55 on Sunday.",
    "Getting from Logan to Providence on Sun 14 June: AB 711 lands 12:20; with immigration at Terminal E taking 60-90 "
    "minutes at a weekend midday plus the free SL1 Silver Line (about 25 min), she reaches South Station around "
    "14:20. So the 13:15 Northeast Regional 171 is out of reach. Options: MBTA Providence Line 14:40 arriving 15:50 "
    "($12.25, no reservation, but only ~20 min margin); Northeast Regional 95 at 15:30 arriving 16:20 ($22 Flex "
    "fare, refundable), the safe pick with an hour of buffer; fallback Regional 137 at 17:45 arriving 18:35 ($19). "
    "Providence station to the Weybosset is a 6-minute walk. Going home Thu 18 June: AB 712 leaves Logan 21:40, "
    "check-in shuts 20:40, and she should allow at least 2 h 30 min from Providence (about 50 min train, 25 min "
    "SL1), so leave Providence by about 19:10; the closing session ends 17:00, so a train around 17:30-18:30 works. "
    "Suggest NER 95 for Sunday.",
    "Sunday's connection to Providence, for you to decide: you land at Logan at 12:20, and immigration at Terminal E "
    "can take 60-90 min at weekend midday, plus ~25 min on the free SL1 Silver Line to South Station, so count on "
    "being there around 14:20 (the 13:15 train is too early). I'd suggest Amtrak Northeast Regional 95, South "
    "Station 15:30, Providence 16:20 ($22, refundable Flex fare) for a comfortable buffer; the cheaper MBTA "
    "Providence Line at 14:40 (arr. 15:50, $12.25, no booking) works only if immigration is quick, and Regional 137 "
    "at 17:45 (arr. 18:35) is the fallback. The Weybosset is 6 min' walk from Providence station. For Thursday's "
    "21:40 flight home, leave Providence by about 19:10 (allow 2 h 30 min; check-in closes 20:40). Shall I note NER 95?",
)


def test_round20_notes_that_restate_a_record_across_messages_are_the_agents_own():
    """Each of the four texts alone copies nothing; joined, they held 55 of the timetable record's
    66 terms, so the record counted as reproduced and the player's own train summary was
    stripped (TC 20). They hold 36 of its 46 words: restating the record's figures and names in
    several notes, in one's own wording, reproduces nothing; its words pasted do."""
    s, sources, _ = _scenario("conference_trip")
    task = next(t for t in s.tasks if t.id == "t05_train_connection")
    assert copying("\n".join(TRAIN_TEXTS), sources).reproduced == 0
    work = _work(TRAIN_TEXTS, sources)
    assert work.own and substantive(task, work)
    assert len(facts_stated(task, work)) >= 4, [f.text for f in facts_stated(task, work)]
    # the same words pasted from the record, cut into chunks over four messages, stay copying
    record = next(r for r in s.records if r.id == "train_times")
    words = View(record.id, record.kind, record.title, record.text, dict(record.fields)).render().split(" ")
    chunks = [" ".join(words[i::4]) for i in range(4)]  # every fourth word: no n-gram survives
    assert not _work(chunks, sources).own


SWEEP_SENTENCE = (  # experiments / operator / 1009, t07_sweep: 55 content terms in one sentence
    "Tomas's lr/warmup sweep (Table 4 of the camera-ready): 16 DistilViT-S fine-tunes from "
    "configs/sweep/lr_warmup.yaml, lr 1e-4/3e-4/6e-4/1e-3 x warmup 0/5/10/20 epochs, 30 epochs each on one GPU, 4 in "
    "parallel on apl-gpu02 GPUs 4-7, 4 waves of ~1 h 50 min, ~7 h 20 min in all; mCE on the ImageNet-C severity-3 "
    "subset into results/sweep_lr_warmup/summary.csv.")


def test_round20_a_dense_sentence_states_its_facts():
    s, sources, _ = _scenario("experiments")
    task = next(t for t in s.tasks if t.id == "t07_sweep")
    fact = next(f for f in task.facts if f.text.startswith("The sweep is 16 fine-tunes"))
    own = strip_copies(SWEEP_SENTENCE, sources)
    assert own.strip() == SWEEP_SENTENCE
    assert fact in facts_stated(task, _work(SWEEP_SENTENCE, sources))


def test_a_long_keyword_list_still_states_nothing():
    """Without a cap on a clause's length, the anchor rule is what tells a list from a statement:
    every task's title and keywords, three times over in one comma-separated line, states no fact
    that has anchors (a fact whose every key term is a keyword is stated by its keyword)."""
    for name in shipped_names():
        s, _, _ = _scenario(name)
        for task in s.tasks:
            listed = ", ".join([task.title, *(n for f in (*task.facts, *task.constraints.must_include)
                                               for n in f.needles())] * 3)
            common = common_terms(task)
            anchored = [f for f in task.facts if _fact_terms(f.text, tuple(f.needles()), common)[1]]
            stated = facts_stated(task, SimpleNamespace(own_words=listed), anchored)
            assert not stated, (name, task.id, [f.text for f in stated])


PORTFOLIO_TEXT = (  # job_applications / operator / 1011, t13_lumen_apply (one clause of the player's pack)
    "the 150-word health-focused portfolio summary already regenerated on 1 May; the working portfolio link "
    "morganellis.ca/work (the CV's /portfolio path is dead); and it must be submitted through Dana Okafor's personal "
    "referral link careers.lumenhealth.ca/apply/LH-0417?ref=RF-20931 so the referral stays linked.")


def test_round20_a_url_is_one_thing_and_dead_negates_working():
    forbidden = "morganellis.ca/portfolio is a working link."
    assert not claim_made(PORTFOLIO_TEXT, forbidden)
    assert claim_made("As far as I can tell morganellis.ca/portfolio is a working link.", forbidden)
    for negated in ("The link morganellis.ca/portfolio is dead.", "morganellis.ca/portfolio is broken, not a working link.",
                    "https://morganellis.ca/portfolio/ is no longer a working link."):
        assert not claim_made(negated, forbidden), negated
    assert not claim_made("Your card has expired.", "Your card is valid.")
    assert claim_made("Your card has expired.", "The card has expired.")


def test_links_paths_addresses_and_ids_compare_whole_in_facts():
    s, _, _ = _scenario("job_applications")
    task = next(t for t in s.tasks if t.id == "t13_lumen_apply")
    fact = next(f for f in task.facts if "morganellis.ca/work" in f.text)
    assert states("The portfolio address to use is https://www.morganellis.ca/work/ from now on.", fact)
    assert not states("The portfolio address to use is morganellis.ca/portfolio, for work samples.", fact)
    code = next(f for f in task.constraints.must_include if f.text == "RF-20931")
    assert states("Apply with the referral code RF-20931.", code)
    assert not states("Apply with the referral code RF-20932 (not 20931).", code)
