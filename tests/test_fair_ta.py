"""A TA decision judges only what its clash is about (issue #20.2), over every pair and seeds 0,
1000, 1001, for every TA decision of the scenario.

The principle (``spec.contested``, ``scoring.metrics``): the competing side competes only with what
reaches what the clash shares inside the window — the user (a message, a request, an action put to
them) where it reaches the clash through the user (``spec.through_user``), or the resource (its job
or its action begun there) where it runs on it. Private work never competes. A decision whose
competing side, for this persona, puts nothing to the user (its rule at the window's start is
prepare or a delegated execute) is no decision for that persona: it is not counted.

Each play is the text oracle (which handles the urgent task in the window and defers the competing
one) with one probe added inside every window: a private note on the competing task, or a message
to the user about it."""

from __future__ import annotations

import functools
import json

import pytest

from proactive_env.baselines.oracle import OracleAgent, TextOracleAgent, work_text
from proactive_env.evaluate import play
from proactive_env.scoring import RunScorer
from proactive_env.sim import Verb
from proactive_env.spec import PERSONAS, contested, load_scenario, shipped_names, through_user

SEEDS = (0, 1000, 1001)
CASES = [(s, p, seed) for s in shipped_names() for p in PERSONAS for seed in SEEDS]


class ProbingOracle(TextOracleAgent):
    """The text oracle, plus one call about each decision's competing task as soon as the agent is
    inside the window with both tasks come up: ``note`` (private work) or ``message`` (to the user);
    ``note-after``: the note once the competing task is postponed (deferred or given a later run)."""

    def __init__(self, probe: str):
        self.probe = probe
        self.name = f"text-oracle+{probe}-on-competing"

    def reset(self, env, seed: int) -> None:
        super().reset(env, seed)
        self.probed: set[str] = set()

    def act(self, obs: str, info: dict) -> str:
        w = self.world
        tasks = {t.spec.id: t for t in w.tasks}
        for d in w.scenario.ta_decisions:
            urgent, competing = tasks.get(d.urgent), tasks.get(d.competing)
            if (d.id in self.probed or urgent is None or competing is None or not d.start <= w.now < d.end
                    or not (urgent.active and competing.active) or competing.closed
                    or (self.probe == "note-after" and not (competing.deferred or competing.allocated))):
                continue
            self.probed.add(d.id)
            text = work_text(competing)
            if self.probe.startswith("note"):
                call = {"tool": "write_note", "arguments": {"text": text, "about": competing.spec.id}}
            else:
                call = {"tool": "message_user", "arguments": {"text": text, "about": competing.spec.id}}
            return json.dumps(call)
        return super().act(obs, info)


@functools.lru_cache(maxsize=None)
def probed(probe: str, scenario: str, persona: str, seed: int) -> dict:
    agent = ProbingOracle(probe)
    return {**play(agent, scenario, persona, seed), "probed": frozenset(agent.probed)}


def _decisions(run: dict) -> dict[str, dict]:
    return {d["id"]: d for d in run["scores"]["ta_decisions"]}


def _won(d: dict) -> bool:
    return bool(d["now"] and (d["later"] or d["nothing_to_postpone"]))


def _counted(scenario: str, persona: str, seed: int) -> tuple[set[str], set[str], object]:
    """The scenario's decisions counted for this run (its variant, its drawn rules) and those not."""
    from gymnasium.utils import seeding

    from proactive_env.spec import variant

    base = load_scenario(scenario)
    rng, _ = seeding.np_random(seed)
    drawn = variant.draw(base, persona, rng)
    s, rules = variant.apply(base, drawn), drawn["rules"]
    kept = {d.id for d in s.ta_decisions if contested(s, d, persona, rules)}
    return kept, {d.id for d in s.ta_decisions} - kept, s


def _probed_plays(kind: str, scenario: str):
    """Every persona and seed played with the ``kind`` probe: (persona, seed, run, the counted
    decisions, the variant, the run's decisions), the run's decisions checked to be the counted ones."""
    for persona in PERSONAS:
        for seed in SEEDS:
            run = probed(kind, scenario, persona, seed)
            kept, _, s = _counted(scenario, persona, seed)
            decisions = _decisions(run)
            assert set(decisions) == kept, (persona, seed, sorted(decisions), sorted(kept))
            yield persona, seed, run, kept, s, decisions


@pytest.mark.parametrize("probe", ["note", "note-after"])
@pytest.mark.parametrize("scenario", shipped_names())
def test_private_work_on_the_competing_task_in_the_window_never_fails_a_decision(scenario, probe):
    """A private note on the competing matter inside the window — before it is postponed, or after
    — is neither running the competing job (its unit of work takes no compute and puts nothing to
    the user) nor undoes its postponement: every decision won, TA 100 %, nothing needless."""
    for persona, seed, run, _, _, decisions in _probed_plays(probe, scenario):
        for did, d in decisions.items():
            assert _won(d), (persona, seed, did, d)
        assert run["scores"]["TA"] == 1.0 and not run["scores"]["needless_postponements"], (persona, seed)


def test_the_note_probes_reach_every_counted_decision():
    """The sweep above is no vacuous pass: the first note lands inside the window of every counted
    decision whose two tasks are both open there, and the later one after most postponements."""
    first = after = counted = 0
    for scenario, persona, seed in CASES:
        kept, _, _ = _counted(scenario, persona, seed)
        counted += len(kept)
        first += len(kept & probed("note", scenario, persona, seed)["probed"])
        after += len(kept & probed("note-after", scenario, persona, seed)["probed"])
    assert first == after == counted, (first, after, counted)


def test_round_20s_note_on_the_ablation_inside_tuesday_nights_clash_is_not_running_it():
    """Round 20 (experiments / operator / 1009): a private note on the ablation inside ta2's window
    (the sweep's night) counted as running the ablation on the GPUs, failing ta2. The note's unit
    of work runs on no compute: ta2 is won, before the ablation is deferred and after it."""
    for probe in ("note", "note-after"):
        run = probed(probe, "experiments", "operator", 1009)
        assert "ta2_tuesday_night" in run["probed"], probe
        d = next(d for d in load_scenario("experiments").ta_decisions if d.id == "ta2_tuesday_night")
        units = [e for e in run["log"] if e["type"] == "work" and e["task"] == "t06_ablation_queue"
                 and d.start <= e["t"] < d.end]
        assert units and all(e["resource"] is None for e in units), (probe, units)  # the note's unit: no GPU
        assert _won(_decisions(run)["ta2_tuesday_night"]), probe


@pytest.mark.parametrize("scenario", shipped_names())
def test_telling_the_user_about_the_competing_task_in_the_window_fails_where_it_reaches_the_clash(scenario):
    for persona, seed, _, kept, s, decisions in _probed_plays("message", scenario):
        for d in s.ta_decisions:
            if d.id not in kept:
                continue
            if through_user(s, d):  # the user's time, or a resource the user works on when told
                assert not _won(decisions[d.id]), (persona, seed, d.id, decisions[d.id])
            else:  # a clash over the compute its work runs on: telling the user takes none of it
                assert _won(decisions[d.id]), (persona, seed, d.id, decisions[d.id])


def test_a_decision_whose_competing_side_never_reaches_the_user_is_no_decision_for_that_persona():
    """apartment_move/operator/1017 (round 22): the broadband comparison is private work for the
    operator (ta1) and the internet booking delegated (ta3): neither is a clash over Sam's time;
    medications/operator (round 21): the dental booking is delegated on Monday (ta2), but Wednesday
    evening's feedback asks for Robin's OK on bookings, so Friday's physio rebooking competes (ta3)."""
    kept, dropped, _ = _counted("apartment_move", "operator", 1017)
    assert dropped == {"ta1_sofa_before_movers", "ta3_council_tax_before_football"}
    assert kept == {"ta2_evidence_before_backup"}
    kept, dropped, _ = _counted("medications", "operator", 1012)
    assert "ta2_gp_slot_before_dentist" in dropped and "ta3_claim_before_physio" in kept
    for persona in ("reviewer", "planner"):  # suggested or asked: it takes their time
        assert not _counted("apartment_move", persona, 1017)[1]


def test_the_scorers_denominator_counts_only_the_clashes_of_the_persona():
    s = load_scenario("apartment_move")
    for persona, n in (("reviewer", 3), ("planner", 3), ("operator", 1)):
        assert RunScorer(s, persona).denominators()["decisions"] == n, persona


def test_every_pair_keeps_at_least_one_decision():
    for scenario, persona, seed in CASES:
        kept, _, _ = _counted(scenario, persona, seed)
        assert kept, (scenario, persona, seed)


def test_the_validator_asks_every_persona_for_a_clash():
    """Without its laptop clash, apartment_move holds no decision for the operator (the other two
    are put to Sam only under the reviewer's and planner's rules): the validator says so."""
    from proactive_env.spec.validate import semantic_errors

    s = load_scenario("apartment_move")
    assert not [p for p in semantic_errors(s) if p[0].startswith("ta_decisions")]
    less = s.model_copy(update={"ta_decisions": [d for d in s.ta_decisions if d.shares == "user_time"]})
    problems = [msg for path, msg in semantic_errors(less) if path == "ta_decisions"]
    assert len(problems) == 1 and "'operator'" in problems[0], problems


def test_a_later_slot_put_to_the_user_starts_when_they_are_reachable():
    """The competing side's later opportunity, where it is put to the user, starts at a minute the
    user is reachable (the agent's minutes of work are not the user's): conference_trip ta3's claim
    (45 minutes of the agent's work, a moment of Priya's) fits the 11:00 gap."""
    from proactive_env.spec.validate import _later_slot, _reachable

    s = load_scenario("conference_trip")
    d = next(d for d in s.ta_decisions if d.id == "ta3_leo_before_claim")
    claim = next(t for t in s.tasks if t.id == d.competing)
    start = _later_slot(s, claim, d.end, reach_user=True)
    assert start is not None and _reachable(s, start) and start + claim.work.minutes < claim.deadline


class _DeferWhen(OracleAgent):
    """The oracle, deferring each task once (to its next opportunity) when ``when`` holds."""

    def __init__(self, when):
        self.when, self.done = when, set()

    def decide(self):
        w = self.world
        for t in w.tasks:
            if t.active and not t.closed and t.spec.id not in self.done and self.when(w, t) \
                    and w.valid_verbs(t)[Verb.DEFER]:
                self.done.add(t.spec.id)
                return Verb.DEFER, t
        return super().decide()


def _compute_now(w, t, busy: bool) -> bool:
    resource = t.spec.work.resource
    return (resource is not None and not t.started and t.units_done < t.spec.work.units
            and w.schedule.resource_free(resource, w.now, w.now + w.remaining_minutes(t)) != busy)


def test_deferring_work_whose_compute_the_user_is_using_is_not_needless():
    """Round 21 (exam_prep/planner/1013, t16): deferring work while the user holds its compute was
    charged as needless where allocating it was not. Run then, it would take the compute from the
    user: postponing it resolves that clash, deferred or allocated alike — on every pair. (Deferring
    compute work when its compute is free and it competes with nothing stays needless: the decoys'
    and ``test_timing``'s checks.)"""
    deferred = 0
    for scenario in shipped_names():
        in_decisions = {t for d in load_scenario(scenario).ta_decisions for t in (d.urgent, d.competing)}
        for persona in PERSONAS:
            agent = _DeferWhen(lambda w, t: t.spec.id not in in_decisions and _compute_now(w, t, busy=True))
            scores = play(agent, scenario, persona, 0)["scores"]
            deferred += len(agent.done)
            assert not set(agent.done) & set(scores["needless_postponements"]), (scenario, persona, agent.done)
    assert deferred, "no compute task was ever deferred while its compute was in the user's use"


def test_deferring_free_compute_that_competes_with_nothing_stays_needless():
    deferred = 0
    for scenario in shipped_names():
        in_decisions = {t for d in load_scenario(scenario).ta_decisions for t in (d.urgent, d.competing)}
        decoys = {t for p in load_scenario(scenario).decoys for t in p.tasks}
        agent = _DeferWhen(lambda w, t: t.spec.id not in in_decisions | decoys and _compute_now(w, t, busy=False))
        scores = play(agent, scenario, "planner", 0)["scores"]
        deferred += len(agent.done)
        assert set(agent.done) <= set(scores["needless_postponements"]), (scenario, agent.done)
    assert deferred
