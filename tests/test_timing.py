"""'Later' is a decision about a clash the agent could see (issue 19 items 1–3, issue 20 item 2).

A postponement counts only when made while the clash was in view — inside the window with both
matters known, or before it once the agent had read what shows the clash and the urgent demand
(foresight: the urgent task's trigger is not what the agent sees); an allocation
only where the run would otherwise overlap the user's use or the urgent work's compute; one that
resolves no clash is needless and counts as a decision lost; every scenario has decoy pairs; the
demand that defines each decision is on record before its window opens (the validator)."""

from __future__ import annotations

import datetime as dt

import pytest

from proactive_env.baselines import OracleAgent, TextOracleAgent, make_agent
from proactive_env.evaluate import play
from proactive_env.replay import rescore
from proactive_env.sim import Verb
from proactive_env.spec import (PERSONAS, ScenarioError, contested, load_scenario, parse_scenario, shipped_names,
                                through_user)
from proactive_env.spec.loader import scenario_dir

import yaml

SCENARIOS = shipped_names()


class _OracleWith(OracleAgent):
    """The oracle, with one (verb, task) of the test's choosing taken once, when ``when`` holds."""

    def __init__(self, when, verb: Verb):
        self.when, self.verb, self.done = when, verb, set()

    def decide(self):
        w = self.world
        for t in w.tasks:
            if t.active and not t.closed and t.spec.id not in self.done and self.when(w, t) and w.valid_verbs(t)[self.verb]:
                self.done.add(t.spec.id)
                return self.verb, t
        return super().decide()


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_scenario_has_decoy_pairs(name):
    s = load_scenario(name)
    assert len(s.decoys) >= 1
    decision_tasks = {t for d in s.ta_decisions for t in (d.urgent, d.competing)}
    for pair in s.decoys:
        assert len(set(pair.tasks)) == 2 and pair.rationale


def test_decoy_count_across_the_suite():
    counts = {n: len(load_scenario(n).decoys) for n in SCENARIOS}
    assert sum(counts.values()) >= 2 * len(SCENARIOS) - 1, counts


@pytest.mark.parametrize("name", SCENARIOS)
def test_postponing_either_side_of_a_decoy_fails_it_and_costs_a_decision(name):
    s = load_scenario(name)
    for pair in s.decoys:
        for side in pair.tasks:
            agent = _OracleWith(lambda w, t, p=pair, side=side: t.spec.id == side and p.start <= w.now < p.end, Verb.DEFER)
            scores = play(agent, name, "planner", 0)["scores"]
            if not agent.done:
                continue  # (the seed's follow-ups left no step inside the pair's window)
            assert pair.id in scores["decoys_failed"], (pair.id, side)
            assert side in scores["needless_postponements"]
            won = sum(d["now"] and (d["later"] or d["nothing_to_postpone"]) for d in scores["ta_decisions"])
            lost = len(scores["needless_postponements"])  # each a decision lost, over the fixed denominator
            assert scores["TA"] == pytest.approx(max(0, won - lost) / len(scores["ta_decisions"]))
            assert scores["TA"] < 1.0


def _own_records(s, task_id: str) -> set[str]:
    """A task's evidence that shows its own demand (the calendar shows the user's time, not it)."""
    calendar = {r.id for r in s.records if r.kind.startswith("calendar")}
    return set(next(t for t in s.tasks if t.id == task_id).evidence) - calendar


def _read_so_far(w) -> set[str]:
    return {e["record"] for e in w.log if e["type"] == "read"}


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_postponement_made_before_the_clash_was_visible_does_not_count(name):
    """The competing task deferred before the window, while nothing the agent had seen showed the
    urgent demand (the urgent task not come up, none of its own records read; and never deferred
    again inside the window): no 'later' for that decision, and the postponement is needless
    (where its compute was free of the user's use then: deferring what would run over it is not)."""
    s = load_scenario(name)
    early = {d.competing: d for d in s.ta_decisions}

    def unseen(w, t):
        d = early.get(t.spec.id)
        return (d is not None and w.now < d.start and not w.by_id[d.urgent].active
                and not _own_records(s, d.urgent) & _read_so_far(w)
                and w.schedule.resource_free(t.spec.work.resource, w.now, w.now + w.remaining_minutes(t)))

    class EarlyOnly(_OracleWith):
        def holding(self, t):  # never defer it again inside the window
            return False if t.spec.id in self.done else super().holding(t)

    for persona in PERSONAS:
        agent = EarlyOnly(unseen, Verb.DEFER)
        scores = play(agent, name, persona, 0)["scores"]
        for tid in agent.done:
            d = early[tid]
            label = next((x for x in scores["ta_decisions"] if x["id"] == d.id), None)
            if label is not None:
                assert not label["later"], (d.id, persona)
            assert tid in scores["needless_postponements"]


class _Foresighted(TextOracleAgent):
    """The text oracle, deferring each decision's competing task before its window as soon as it
    is open and the urgent demand is on record: it reads what shows the clash (``shown_by``) and
    the urgent task's own records, then defers the competing task past the window (and leaves it
    there)."""

    def reset(self, env, seed):
        super().reset(env, seed)
        self.early: dict[str, int] = {}  # competing task -> when it was deferred before its window

    def _foreseen(self, t):
        w = self.world
        for d in w.scenario.ta_decisions:
            if d.competing == t.spec.id and w.now < d.start and t.spec.id not in self.early:
                own = _own_records(w.scenario, d.urgent) & w.store.visible
                if own or w.by_id[d.urgent].active:
                    return d, own
        return None

    def holding(self, t):
        return True if self._foreseen(t) else super().holding(t)

    def _calls(self, verb, t):
        seen = self._foreseen(t) if verb is Verb.DEFER else None
        if seen is None:
            return super()._calls(verb, t)
        d, own = seen
        self.early[t.spec.id] = self.world.now
        reads = [{"tool": "read_record", "arguments": {"record_id": r}} for r in sorted(set(d.shown_by) | own)]
        return [*reads, *super()._calls(verb, t)]


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_postponement_made_with_foresight_counts_when_in_force_at_the_window(name):
    """Issue 20 item 2 (blind round 20, conference_trip/planner/1010): the demand of every decision
    is on record before its window, so an agent that sees it coming and puts the competing task past
    the window before the urgent task's trigger wins the decision: 'later' holds and nothing is
    needless — the text oracle's score, on every persona and seed."""
    for persona in PERSONAS:
        for seed in (0, 1000, 1001):
            agent = _Foresighted()
            run = play(agent, name, persona, seed)
            scores = run["scores"]
            assert scores["TA"] == 1.0 and not scores["needless_postponements"], (persona, seed, scores["ta_decisions"])
            assert rescore(run)["TA"] == 1.0  # the saved log scores the same
            counted = {x["id"]: x for x in scores["ta_decisions"]}
            for d in load_scenario(name).ta_decisions:
                if d.competing in agent.early and d.id in counted:  # (one no clash for this persona is not counted)
                    label = counted[d.id]
                    assert label["later"] and label["J_share"] > 0, (d.id, persona, seed)


@pytest.mark.parametrize("name", SCENARIOS)
def test_allocating_work_that_competes_with_nothing_is_needless(name):
    s = load_scenario(name)
    in_decisions = {t for d in s.ta_decisions for t in (d.urgent, d.competing)}

    def free_now(w, t):
        return (t.spec.work.resource is not None and t.spec.id not in in_decisions and not t.started
                and w.resource_free(t.spec.work.resource, w.now, w.now + w.remaining_minutes(t))
                and (w.free_window(t) or (w.now, False))[0] > w.now)

    agent = _OracleWith(free_now, Verb.ALLOCATE)
    scores = play(agent, name, "operator", 0)["scores"]
    for tid in agent.done:
        assert tid in scores["needless_postponements"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_decision_with_nothing_to_postpone_does_not_count(name):
    """Competing work finished, or not yet come up, when the urgent work was handled is no
    failure (and no credit): the policy-follower, who works on everything at once, loses every
    decision that counts, and each one left out had nothing to postpone (or is no clash for the
    persona: not counted at all)."""
    from proactive_env.baselines import make_agent

    s = load_scenario(name)
    for persona in PERSONAS:
        run = play(make_agent("policy-follower"), name, persona, 0)
        log, counted = run["log"], {d["id"]: d for d in run["scores"]["ta_decisions"]}
        assert not any(d["now"] and d["later"] for d in counted.values())
        active = {e["task"]: e["t"] for e in log if e["type"] == "task_active"}
        rules = next(e["rules"] for e in log if e["type"] == "run_start")
        for d in s.ta_decisions:
            if d.id in counted or d.urgent not in active or d.competing not in active:
                continue
            if not contested(s, d, persona, rules):
                continue
            handled = min((e["t"] for e in log if e.get("task") == d.urgent and e["type"] in ("work", "present", "execute")
                           and d.start <= e["t"] < d.end), default=None)
            assert handled is not None, (d.id, persona)
            delivered = [e["t"] for e in log if e.get("task") == d.competing and e["type"] in ("present", "execute")]
            assert active[d.competing] > handled or (delivered and delivered[0] <= handled), (d.id, persona)


# ---------------------------------------------------------------------------- the validator
def _raw(name: str) -> dict:
    return yaml.safe_load((scenario_dir() / f"{name}.yaml").read_text(encoding="utf-8"))


def _problem(raw: dict) -> str:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(raw, "test.yaml")
    return str(caught.value)


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_decision_is_shown_before_its_window_opens(name):
    s = load_scenario(name)
    for d in s.ta_decisions:
        assert d.shown_by
    raw = _raw(name)
    late = raw["ta_decisions"][0]
    raw["records"].append({"id": "late_notice", "kind": "note", "title": "Late", "text": "Too late.",
                           "appears": late["end"]})
    late["shown_by"] = ["late_notice"]
    assert "expected 'late_notice' to be visible before the window opens" in _problem(raw)


def test_the_briefing_states_the_cost_of_needless_postponements():
    from proactive_env.envs.text import ProactivityTextEnv

    briefing, _ = ProactivityTextEnv("monitor", "planner").reset(seed=0)
    # the wrong pick (postponing the urgent work) costs as postponing work that competes with nothing
    assert "postponing the urgent work, or work competing with nothing, costs a decision" in " ".join(briefing.split())


def test_a_decision_needs_the_record_that_shows_it():
    raw = _raw("monitor")
    del raw["ta_decisions"][0]["shown_by"]
    assert "shown_by" in _problem(raw)
    raw = _raw("monitor")
    raw["ta_decisions"][0]["shown_by"] = ["no_such_record"]
    assert "expected the id of one of the scenario's records, got 'no_such_record'" in _problem(raw)


def test_an_urgent_task_with_a_later_chance_is_no_decision():
    """The urgent task's deadline may lie after the window only where no later opportunity
    exists before it: otherwise 'urgent' would just mean 'due first'."""
    raw = _raw("monitor")
    d = raw["ta_decisions"][0]
    urgent = next(t for t in raw["tasks"] if t["id"] == d["urgent"])
    urgent["deadline"] = "D9 20:00"
    assert "expected the window to be the urgent task's chance" in _problem(raw)


def test_a_decoy_must_not_clash():
    raw = _raw("experiments")
    pair = raw["decoys"][0]
    d = raw["ta_decisions"][1]
    pair["tasks"] = [pair["tasks"][0], d["competing"]]
    pair["start"], pair["end"] = d["start"], d["end"]
    assert f"decoys[{pair['id']}]" in _problem(raw)


def test_in_a_third_of_the_suites_decisions_the_nearer_deadline_is_the_wrong_work_now():
    """Issue 19 item 1: "do what is needed soonest, hold the rest" must lose a third of the
    decisions by construction (the urgent task needed later, its only chance the window)."""
    from proactive_env.check import deadline_order_wrong

    scenarios = [load_scenario(n) for n in SCENARIOS]
    against = sum(len(deadline_order_wrong(s)) for s in scenarios)
    total = sum(len(s.ta_decisions) for s in scenarios)
    assert 3 * against >= total, f"{against} of {total} decisions"
    assert all(deadline_order_wrong(s) for s in scenarios), [s.name for s in scenarios if not deadline_order_wrong(s)]


@pytest.mark.parametrize("name", SCENARIOS)
def test_no_decision_is_won_by_doing_everything_at_once(name):
    """A decision the policy-follower (every task at once, nothing postponed) wins tests nothing:
    the competing task is open and clashing when the urgent one is handled."""
    won = {d["id"] for p in PERSONAS for seed in (0, 1000, 1001)
           for d in play(make_agent("policy-follower"), name, p, seed)["scores"]["ta_decisions"] if d["J_share"] > 0}
    assert not won, won


@pytest.mark.parametrize("name", SCENARIOS)
def test_telling_the_user_about_the_competing_task_competes_only_for_their_time(name):
    """Blind round 19 (pottery_studio/reviewer/1008): a message explaining that the test tiles wait
    for Saturday's free kiln, sent inside a kiln clash, failed the decision as if the tiles had been
    fired. In a clash over a resource only running the competing work on it competes; in a clash
    over the user's time, putting the competing matter to them does — and so it does where the
    competing side reaches the resource only through the user (``through_user``: exam_prep's
    LockDown heads-up, told, restarts the laptop)."""
    s = load_scenario(name)
    checked = 0
    for d in s.ta_decisions:
        def inside(w, t, d=d):
            return t.spec.id == d.competing and d.start <= w.now < d.end and w.by_id[d.urgent].active
        run = play(_OracleWith(inside, Verb.PRESENT), name, "planner", 0)
        presented = any(e["type"] == "present" and e.get("task") == d.competing and d.start <= e["t"] < d.end
                        for e in run["log"])
        label = next((x for x in run["scores"]["ta_decisions"] if x["id"] == d.id), None)
        if not presented or label is None:  # (no clash for the planner: not counted)
            continue
        checked += 1
        assert (label["J_share"] > 0) == (not through_user(s, d)), (d.id, d.shares)
    assert checked, "no decision where the competing task could be put to the user inside the window"


def test_blind_round_20_hotel_before_the_hold_lapses_with_the_dinner_put_off_beforehand():
    """Blind round 20, conference_trip/planner/1010, replayed call for call: at D2 10:21, as Dana's
    dinner came in, the player deferred it to 13:15 (plan: the hotel hold HH-40716 lapses at noon,
    Priya has only 10:50–11:10) having read ``hotel_hold`` and ``cal_tuesday`` at 08:30; Mina's reply
    opened the window at 10:32 and the hotel was booked by 11:15. The postponement was counted
    needless (a decision lost, cancelling ta2, which had nothing to postpone) and not as 'later':
    TA 0. It is the decision won, and the dinner's postponement is not needless; rescoring the log
    gives the same. (At D5 09:00 the player deferred Leo's meeting, ta3's urgent side, for the
    expense claim: the wrong pick, which loses ta3 and, since suite 0.8.0, is needless besides.)"""
    from runs import played_case

    env = played_case("blind20-conference_trip-planner-1010")
    deferral = next(e for e in env.world.log if e["type"] == "defer" and e["task"] == "t07_collab_dinner")
    assert (deferral["t"], deferral["until"]) == (1440 + 10 * 60 + 21, 1440 + 13 * 60 + 15)
    trajectory = env.trajectory(agent="blind-20b")
    scores = trajectory["scores"]
    ta1 = next(d for d in scores["ta_decisions"] if d["id"] == "ta1_hotel_in_teaching_gap")
    assert ta1["now"] and ta1["later"] and ta1["J_share"] > 0
    assert scores["needless_postponements"] == ["t14_leo_meeting"] and scores["TA"] == pytest.approx(1 / 3)
    again = rescore(trajectory)
    assert again["TA"] == scores["TA"] and again["J"] == pytest.approx(scores["J"], abs=1e-12)


# ---------------------------------------------------------------------------- an action's declared start
class _QueueAfter(TextOracleAgent):
    """The text oracle, except that inside a clash over a resource it does not defer the competing
    task: it carries out the task's action there and then, its declared start (``Tool.starts``)
    set by ``begin(world, decision)`` (None: left out, so it begins now)."""

    def __init__(self, begin):
        self.begin = begin

    def _queued(self, t):
        w = self.world
        starts = {tool.name: tool.starts for tool in w.scenario.tools if tool.starts}
        for d in w.scenario.ta_decisions:
            if (d.competing == t.spec.id and d.shares != "user_time" and t.spec.action is not None
                    and t.spec.action.tool in starts and d.start <= w.now < d.end and w.by_id[d.urgent].active):
                return d, starts[t.spec.action.tool]
        return None

    def holding(self, t):
        return False if self._queued(t) else super().holding(t)

    def _next(self, t):
        if self._queued(t) is None:
            return super()._next(t)
        if t.executed:
            return None
        return Verb.EXECUTE if self.world.policy.authorised(t.spec) else (None if t.presented else Verb.PRESENT)

    def _calls(self, verb, t):
        calls, queued = super()._calls(verb, t), self._queued(t)
        if queued is None or verb is not Verb.EXECUTE:
            return calls
        d, names = queued
        when = self.begin(self.world, d)
        for call in calls:
            if call["tool"] == t.spec.action.tool:
                args = call["arguments"]
                for n in names:
                    args.pop(n, None)
                if when is not None:
                    at = dt.datetime.combine(self.world.scenario.start_date, dt.time()) + dt.timedelta(minutes=when)
                    values = [at.strftime("%Y-%m-%dT%H:%M")] if len(names) == 1 else [at.strftime("%Y-%m-%d"), at.strftime("%H:%M")]
                    args.update(zip(names, values))
        return calls


def _reference_start(w, d) -> int:
    from proactive_env.sim.tools import parse_when

    task = w.by_id[d.competing].spec
    names = next(tool.starts for tool in w.scenario.tools if tool.name == task.action.tool)
    return parse_when(w.scenario, "T".join(str(task.action.args[n]) for n in names))


def test_an_action_queued_to_begin_after_the_clash_puts_it_later():
    """Blind round 20 (experiments/operator/1009, ta2): queuing the competing job to begin after the
    clash puts it later as much as ``defer_task`` does. A tool's declared start (``Tool.starts``:
    ``launch_job.begin``) is read like an allocation's start: the competing task's action carried
    out inside the window to begin after it wins the decision; left to begin now, its run takes
    the resource and loses it. Every decision of the suite whose competing action declares a start,
    every persona, seeds 0, 1000, 1001."""
    checked = 0
    for name in SCENARIOS:
        s = load_scenario(name)
        starts = {tool.name for tool in s.tools if tool.starts}
        decisions = [d for d in s.ta_decisions if d.shares != "user_time" and any(
            t.id == d.competing and t.action is not None and t.action.tool in starts for t in s.tasks)]
        for d in decisions:
            for persona in PERSONAS:
                for seed in (0, 1000, 1001):
                    for begin, wins in ((_reference_start, True), (lambda w, d: None, False)):
                        run = play(_QueueAfter(begin), name, persona, seed)
                        done = [e for e in run["log"] if e["type"] == "execute" and e.get("task") == d.competing
                                and e["ok"] and d.start <= e["t"] < d.end]
                        if not done:
                            continue
                        checked += 1
                        label = next(x for x in run["scores"]["ta_decisions"] if x["id"] == d.id)
                        assert (label["later"] and label["J_share"] > 0) == wins, (name, d.id, persona, seed, begin)
                        assert rescore(run)["J"] == pytest.approx(run["scores"]["J"], abs=1e-12)
                        assert not run["scores"]["needless_postponements"]
    assert checked >= 6, checked


def test_a_declared_start_is_one_or_two_string_parameters_of_the_tool():
    raw = _raw("experiments")
    tool = next(t for t in raw["tools"] if t["name"] == "launch_job")
    tool["starts"] = ["no_such_param"]
    assert "tools[" in _problem(raw) and "starts" in _problem(raw)


def test_round28_a_needless_postponement_of_finished_work_says_so():
    """Blind round 28 (apartment_move / reviewer / 1035): the broadband comparison, ta1's competing
    side, was delivered at D4 06:50 and then deferred; the deferral was needless (nothing of it was
    left to put after the clash), but `show --why` said "it competes with nothing: it is in no
    timing decision". The reason given is the one the scorer applied."""
    from proactive_env.report.explain import explain
    from runs import played_case

    env = played_case("blind28-apartment_move-reviewer-1035")
    why = explain(env.trajectory(agent="blind-28"), env.world.scenario)
    row = next(r for r in why.needless if r.task.startswith("t03_broadband_compare"))
    assert "already finished" in row.why and "ta1_sofa_before_movers" in row.why
    assert "in no timing decision" not in row.why
