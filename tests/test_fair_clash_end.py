"""A clash is over when the urgent side's hold on what it shares is over, as the agent saw it
(issue #20.2), over every pair and seeds 0, 1000, 1001.

The window's end is a constant the agent never sees (and a quota the urgent run drew on while it
was short, a resource's ``consumed`` span, is back only when it refills: issue #20 TA class 1). In a clash over a resource, what it sees is
the urgent task's run there ending ("Work finished (n/n units)"): from then on the competing side
takes nothing from it, so a postponement of the competing side to that moment is "later" and what
it does from then on does not compete (``_Decision.clash_end``). Where nothing observable ends it
earlier (the urgent task runs nowhere on that resource, its run outlasts the window, or the clash
is over the user's time), the clash ends with the window.

Each play is the text oracle, with the competing side's deferral moved to a chosen minute and the
task left alone until the window closes, as the oracle leaves it."""

from __future__ import annotations

import functools

import pytest

from proactive_env.baselines.oracle import TextOracleAgent
from proactive_env.evaluate import play
from proactive_env.replay import scenario_of
from proactive_env.scoring import score_log
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1000, 1001)


class _DeferredTo(TextOracleAgent):
    """The text oracle, deferring the competing task of ``decision`` to minute ``at`` (None: where
    the oracle defers it) and noting whether its remaining work fits from there (``fits``)."""

    def __init__(self, decision: str | None = None, at: int | None = None):
        self.decision, self.at = decision, at
        self.name = f"text-oracle-deferring-{decision}-to-{at}"

    def reset(self, env, seed: int) -> None:
        super().reset(env, seed)
        self.fits: bool | None = None

    def defer_until(self, t):
        d = next((d for d in self.world.scenario.ta_decisions if d.id == self.decision), None)
        if d is None or t.spec.id != d.competing or self.at is None:
            return super().defer_until(t)
        w, resource, minutes = self.world, t.spec.work.resource, self.world.remaining_minutes(t)
        self.fits = self.at + minutes < t.spec.deadline and (
            resource is None or w.resource_free(resource, self.at, self.at + minutes))
        return self.at

    def holding(self, t):
        hold = super().holding(t)
        d = next((d for d in self.world.scenario.ta_decisions if d.id == self.decision), None)
        if hold and d is not None and t.spec.id == d.competing and self.fits is not None:
            return False  # deferred once: left alone until the window closes, as the oracle leaves it
        return hold


@functools.lru_cache(maxsize=None)
def _played(scenario: str, persona: str, seed: int, decision: str | None = None, at: int | None = None):
    """(the scores, each decision's clash end as the scorer saw it, whether the moved deferral fit)."""
    agent = _DeferredTo(decision, at)
    scores = play(agent, scenario, persona, seed)["scores"]
    ends = {d.spec.id: (d.hold_end, d.clash_end) for d in agent.env.core.scorer.decisions}
    return scores, ends, agent.fits


def _won(scores: dict, decision: str) -> bool:
    d = next(d for d in scores["ta_decisions"] if d["id"] == decision)
    return bool(d["now"] and (d["later"] or d["nothing_to_postpone"]))


@pytest.mark.parametrize("scenario", shipped_names())
def test_a_resource_clash_ends_when_the_urgent_run_there_finished(scenario):
    """For every counted decision over a resource: the oracle's play with the competing side
    deferred to the minute the clash ended (the urgent run's last unit reported done inside the
    window, else the window's end) still wins where the competing work fits from there; deferred to
    the minute before, it loses. A run's end ends the clash only where the urgent task runs on what
    the clash shares. (Of the suite's ten clashes over a resource, four end at the urgent run's
    finish — exam_prep ta2, job_applications ta_thursday_tokens, and apartment_move ta2 and
    job_applications ta_monday_lunch_stream, whose competing work would run from there into the user's own use, so
    only feasibility decides them; the others end with the window. ta_thursday_tokens's run ends
    inside the quota's ``consumed`` span: what it took is back only at the 00:00 reset, its clash end.)"""
    moved = fitted = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            scores, ends, _ = _played(scenario, persona, seed)
            assert scores["TA"] == 1.0 and not scores["needless_postponements"], (persona, seed)
            s = _variant(scenario, persona, seed)
            counted = {x["id"] for x in scores["ta_decisions"]}
            for d in s.ta_decisions:
                if d.shares == "user_time" or d.id not in counted:
                    continue
                hold_end, end = ends[d.id]
                if hold_end is not None:
                    urgent = next(t for t in s.tasks if t.id == d.urgent)
                    assert urgent.work.resource == d.shares and d.start <= hold_end < d.end, (persona, seed, d.id)
                    moved += 1
                at_end, ends_then, fits = _played(scenario, persona, seed, d.id, end)
                assert ends_then[d.id] == (hold_end, end), (persona, seed, d.id)
                if not fits:  # from there its work would run into the user's own use, or past its deadline
                    continue
                fitted += 1
                assert _won(at_end, d.id), (persona, seed, d.id, end)
                assert not _won(_played(scenario, persona, seed, d.id, end - 1)[0], d.id), (persona, seed, d.id, end - 1)
    if scenario == "exam_prep":  # ta2's transcript done at 07:30, before the 07:45 window end; the heads-up fits
        assert moved == fitted == len(PERSONAS) * len(SEEDS)


@functools.lru_cache(maxsize=None)
def _variant(scenario: str, persona: str, seed: int):
    from gymnasium.utils import seeding

    from proactive_env.spec import load_scenario, variant

    base = load_scenario(scenario)
    rng, _ = seeding.np_random(seed)
    return variant.apply(base, variant.draw(base, persona, rng))


def test_round_23_the_heads_up_deferred_until_the_transcript_was_done():
    """Blind round 23, exam_prep/reviewer/1020, replayed call for call: at D3 07:10 the player
    allocated the L22 Whisper run to the laptop (07:10–07:30) and deferred the LockDown heads-up
    until 07:30 ("once the transcript is done"); the run was reported finished at 07:30 and the
    heads-up was put to Jamie then. It was lost as 'the competing task reached what the clash
    shares inside the window' (the window ran to 07:45, which the agent never sees). It is won;
    the same log with the deferral one minute shorter loses it."""
    from runs import played_case

    env = played_case("blind23-exam_prep-reviewer-1020")
    log = env.world.log
    d3 = 2 * 1440
    deferral = next(e for e in log if e["type"] == "defer" and e["task"] == "t13_lockdown_update")
    assert (deferral["t"], deferral["until"]) == (d3 + 7 * 60 + 10, d3 + 7 * 60 + 30)
    done = next(e for e in log if e["type"] == "work_done" and e["task"] == "t14_transcripts")
    told = next(e for e in log if e["type"] == "present" and e["task"] == "t13_lockdown_update")
    assert done["t"] == told["t"] == d3 + 7 * 60 + 30 and log.index(done) < log.index(told)
    trajectory = env.trajectory(agent="blind-23")
    scores = trajectory["scores"]
    assert _won(scores, "ta2_quiz_morning") and not scores["needless_postponements"]
    assert scores["TA"] == pytest.approx(2 / 3)
    scenario = scenario_of(trajectory)
    assert score_log(scenario, "reviewer", log)["J"] == pytest.approx(scores["J"], abs=1e-12)
    shorter = [dict(e, until=e["until"] - 1) if e is deferral else e for e in log]
    assert not _won(score_log(scenario, "reviewer", shorter), "ta2_quiz_morning")


def _serves(s, d, x: int, urgent_done: int | None, competing) -> bool:
    """Could the shared resource serve the competing work from minute ``x``, as the records show it?
    Not before the urgent run there is over (its finish inside the window, else the window's end);
    not while a quota the urgent run drew on is short (a ``consumed`` span: back at its end); and
    the work done before its deadline, its own compute (if any) free of the user's use."""
    from proactive_env.spec import resource_use

    res = next(r for r in s.resources if r.id == d.shares)
    held = d.end if urgent_done is None else urgent_done
    if x < held or any(c.start <= held < c.end and x < c.end for c in res.consumed):
        return False
    end, own = x + competing.work.minutes * competing.work.units, competing.work.resource
    return end < competing.deadline and not (own and any(a < end and b > x for a, b in resource_use(s, own)))


def _urgent_done(log: list[dict], d, urgent) -> int | None:
    """When the world reported the urgent task's run on the shared resource all done inside the
    window (None: it was not, or it runs elsewhere)."""
    if urgent.work.resource != d.shares:
        return None
    return next((max(e["t"], d.start) for e in log if e["type"] == "work_done" and e["task"] == d.urgent
                 and e["units_done"] >= urgent.work.units and e["t"] < d.end), None)


@pytest.mark.parametrize("scenario", shipped_names())
def test_a_deferral_to_when_the_resource_cannot_serve_the_competing_work_is_never_later(scenario):
    """Every counted decision over a resource, every pair and seed: the competing side deferred to
    the urgent run's finish, to the minute after, to the window's end and to just before and at each
    end of a span where the resource is consumed (a quota short until it refills) — where the
    resource could not serve the competing work from there, as its records show, the decision is
    never won. (job_applications ta_thursday_tokens: after Northwind's run the quota left cannot
    cover the Lumen summary before the 00:00 reset.)"""
    refused = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            scores, _, _ = _played(scenario, persona, seed)
            s = _variant(scenario, persona, seed)
            # (a decision whose competing task came up after the urgent work was handled needs no postponement)
            counted = {x["id"] for x in scores["ta_decisions"] if not x["nothing_to_postpone"]}
            tasks = {t.id: t for t in s.tasks}
            for d in s.ta_decisions:
                if d.shares == "user_time" or d.id not in counted:
                    continue
                agent = _DeferredTo(d.id, None)
                play(agent, scenario, persona, seed)
                done = _urgent_done(agent.world.log, d, tasks[d.urgent])
                res = next(r for r in s.resources if r.id == d.shares)
                times = {d.end - 1, d.end} | ({done, done + 1} if done is not None else set())
                times |= {t for c in res.consumed for t in (c.start, c.end - 1, c.end)}
                competing = tasks[d.competing]
                for x in sorted(t for t in times if d.start <= t < competing.deadline):
                    if _serves(s, d, x, done, competing):
                        continue
                    refused += 1
                    assert not _won(_played(scenario, persona, seed, d.id, x)[0], d.id), (persona, seed, d.id, x)
    if scenario == "job_applications":  # Thursday's deferral to just after Northwind's run, at least
        assert refused >= len(PERSONAS) * len(SEEDS)
