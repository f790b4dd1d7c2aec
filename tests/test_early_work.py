"""Work before its matter comes up, and notes filed without ``about`` (issue #20, blind round 19).

Round 19's players did the work when they learnt of it and lost it: requests refused with "m6
calls for none of these actions now" until a later message opened the matter (apartment_move:
the sofa, the broadband booking, the deposit; household_finances: the rent), and a rent note
without ``about`` counted for the energy bill (TC 20 there). The rules now:

- A request for an action no open matter calls for now (on those arguments) is kept, with or
  without ``about``, and said word for word alike; it counts for the task that comes up with
  that action and fits its arguments. The user sees it only then and answers by the rule in
  force then (never before: an answer would tell whether a matter is coming).
- Words without ``about`` go to a task only where they fit it better than anything else the agent
  can see (``TextTools._fits_best``); else they wait for a matter they fit.

Each is swept over every scenario–persona pair and seeds 0, 1000, 1001 (one process, the cached
variants of ``tests/noninterference.py``); the regression tests quote the round-19 calls
(reconstructed from the players' reports: the transcripts were not kept).
"""

from __future__ import annotations

import json
import re

import pytest
from gymnasium.utils import seeding

from noninterference import drawn
from proactive_env.baselines.oracle import TextOracleAgent
from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.evaluate import play
from proactive_env.sim import TextTools, ToolError, World
from proactive_env.sim.tools import _needles
from proactive_env.spec import PERSONAS, shipped_names
from proactive_env.spec.meaning import mentions
from proactive_env.spec.timeline import parse_at

SEEDS = (0, 1000, 1001)
KEPT = "Request kept: it fits no open matter"


def _world(name, persona, seed):
    s, choice = drawn(name, persona, seed)
    rng, _ = seeding.np_random(seed)
    world = World(s, persona, rng, rules=dict(choice["rules"]), face="text")
    return world, TextTools(world)


def _alone(world, tools, task) -> bool:
    """Is the task's action told apart from every other task's by its arguments (a request, judged
    as the live one, ``_request_owner``, would go to no other)?"""
    args, tool = dict(task.spec.action.args), task.spec.action.tool
    return not any(o is not task and o.spec.action and o.spec.action.tool == tool
                   and tools._request_owner((tool,), args, None, task.spec.title, among=[o]) is o for o in world.tasks)


# ------------------------------------------------------------------ requests before their matter
@pytest.mark.parametrize("name", shipped_names())
def test_a_request_made_before_its_matter_comes_up_waits_and_counts_for_it(name):
    """Class sweep: at the first decision point, a request for each action still to come (its own
    arguments), with about naming the latest matter and without, is kept and said alike, and is
    shown to the user as that task's when the task comes up. (Actions that share a tool and
    fitting arguments with another task are left out: the request fits both; so are needs already
    knowable, which their request brings up at once.)"""
    checked = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            for named in (False, True):
                world, tools = _world(name, persona, seed)
                world.advance()
                tools.settle()
                asked = []
                for task in world.tasks:
                    if (task.spec.action is None or task.triggered or not _alone(world, tools, task)
                            or world.knowable(task)):
                        continue  # (a knowable need's own action brings it up: tests/test_fair_early.py)
                    call = {"message": f"May I do this? {task.spec.title}",
                            "actions": [{"tool": task.spec.action.tool, "args": dict(task.spec.action.args)}]}
                    if named and world.matters:
                        call["about"] = list(world.matters)[-1]
                    said = tools.call("request_approval", call)
                    assert said.startswith(KEPT) and said == (
                        f"{KEPT}; it goes to {world.scenario.user.name} if a matter it fits comes up (you will be told)."), said
                    asked.append(task)
                while not world.done:
                    world.advance()
                    tools.settle()
                for task in asked:
                    if task.active:
                        assert task.presented, f"{name}/{persona}/{seed} about={named}: {task.spec.id} never got its request"
                        checked += 1
    assert checked > 0


SOFA = {"message": "The check-out inspection now clashes with the sofa delivery on Friday: may I move the "
                   "Loftwell delivery (LW-204877) to Saturday 18 April 08:00-12:00?",
        "actions": [{"tool": "reschedule_delivery", "args": {"retailer": "Loftwell", "order_id": "LW-204877",
                                                             "new_date": "2026-04-18", "new_slot": "08:00-12:00"}}]}


def _step(env, tool, **arguments):
    return env.step(json.dumps({"tool": tool, "arguments": arguments}))[0]


def test_round19_the_sofa_request_under_the_check_out_notice_waits_for_the_sofa():
    """Round 19 (apartment_move / reviewer / 1006): at D4 06:40 the check-out moved onto the sofa
    delivery; the player asked to move the sofa under that notice and was told "calls for none of
    these actions now"; the sofa's own matter came at 07:00. Now the request waits, and at 07:00
    it is the sofa's: Sam answers it, and the reschedule can be carried out."""
    env = ProactivityTextEnv("apartment_move", "reviewer")
    env.reset(seed=1006)
    world = env.world
    while world.now < parse_at("D4 06:40"):
        _step(env, "wait")
    sofa = world.by_id["t04_sofa_reschedule"]
    assert not sofa.active
    said = _step(env, "request_approval", **SOFA, about=list(world.matters)[-1])
    assert said.startswith(KEPT), said
    seen = _step(env, "wait")
    assert sofa.active and re.search(r"Your request of D4 .* now counts for m\d+", seen), seen
    assert world.policy.answers.get(sofa.spec.id) == "approve"
    done = _step(env, "reschedule_delivery", **SOFA["actions"][0]["args"])
    assert done.startswith("Done: reschedule_delivery") and sofa.executed, done


def test_round19_the_rent_payment_asked_under_the_energy_bill_is_kept_for_the_rent():
    """Round 19 (household_finances / planner / 1007): the rent, known from the rent notice on D1,
    was asked for under the energy bill's matter; the request was taken as the energy bill's. A
    request naming a matter whose action it gives other arguments for is kept for the matter it
    fits (the rent, Sat 17:45); one with the energy bill's own arguments under another matter is
    the energy bill's."""
    world, tools = _world("household_finances", "planner", 1007)
    world.advance()
    energy = world.by_id["t01_energy_bill"]
    rent = world.by_id["t10_rent"]
    said = tools.call("request_approval", {
        "message": "Rent goes up to £960 from 1 February: may I pay Harbour Lettings the new rent?",
        "actions": [{"tool": "pay_bill", "args": dict(rent.spec.action.args)}], "about": world.matter_of(energy).id})
    assert said.startswith(KEPT) and not energy.presented, said
    while len(world.matters) < 2:
        world.advance()
        tools.settle()
    other = next(m for m in world.matters.values() if energy.index not in m.tasks)
    said = tools.call("request_approval", {"message": "Pay the energy bill?", "about": other.id,  # an open matter's action
                                           "actions": [{"tool": "pay_bill", "args": dict(energy.spec.action.args)}]})
    energy_matter = world.matter_of(energy).id  # it goes to the matter whose action it is (round 24)
    assert f"under {energy_matter} (the matter whose action it is, not {other.id})" in said, said
    asked = sum(e["type"] == "present" and e.get("task") == energy.spec.id for e in world.log)
    while not rent.active:
        world.advance()
        tools.settle()
    assert rent.presented and asked == sum(e["type"] == "present" and e.get("task") == energy.spec.id for e in world.log)


class _EarlyOracle(TextOracleAgent):
    """The text oracle, which also asks to move the sofa at D4 06:40, before its matter comes up."""

    def reset(self, env, seed):
        super().reset(env, seed)
        self.asked, self.seen = False, ""

    def act(self, obs, info):
        self.seen += obs if isinstance(obs, str) else ""
        w = self.world
        if not self.asked and w.now >= parse_at("D4 06:40") and not w.by_id["t04_sofa_reschedule"].active:
            self.asked = True
            return json.dumps({"tool": "request_approval", "arguments": {**SOFA, "about": list(w.matters)[-1]}})
        return super().act(obs, info)


@pytest.mark.parametrize("persona", ["reviewer", "planner"])
def test_asking_before_the_matter_comes_up_scores_as_asking_when_it_does(persona):
    """Where the rule in force wants the user asked (booking: approve), a request made before the
    sofa's matter came up counts as that matter's request: TC, TA and the depth alignment (TR-D)
    are the text oracle's, which asks when it comes up."""
    waits = play(TextOracleAgent(), "apartment_move", persona, 1006)["scores"]
    early = _EarlyOracle()
    asked = play(early, "apartment_move", persona, 1006)["scores"]
    assert early.asked and "now counts for" in early.seen
    assert {k: asked[k] for k in ("TC", "TA", "TR_D", "J")} == {k: waits[k] for k in ("TC", "TA", "TR_D", "J")}


# ------------------------------------------------------------------ notes without about
def _own_sentences(s, task) -> list[tuple[str | None, str]]:
    """The task's fact sentences that cite one of its facts and nothing of another task's, with their source."""
    others = {n for t in s.tasks if t.id != task.id for n in _needles(t)}
    return [(f.source, p) for f in (*task.facts, *task.constraints.must_include)
            for p in re.split(r"(?<=[.;])\s+", f.text)
            if any(mentions(p, n) for n in f.needles()) and not any(mentions(p, n) for n in others)]


@pytest.mark.parametrize("name", shipped_names())
def test_a_note_without_about_goes_to_its_own_task_or_waits(name):
    """Class sweep: at every decision point, for each task (up, still to come or over), a note of
    at least two of its own fact sentences the agent can have read (their source is visible), alone
    and with a fact of another open task whose records it does not build on (round 19's rent
    note cited the energy bill's balance), filed without about, goes to that task or waits —
    never to another task."""
    tried = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            world, tools = _world(name, persona, seed)
            own = {t.id: _own_sentences(world.scenario, t) for t in world.scenario.tasks}
            world.advance()
            while not world.done:
                tools.settle()
                for t in world.scenario.tasks:
                    seen = [p for src, p in own[t.id] if src is None or src in world.store.visible]
                    if len(seen) < 2:
                        continue
                    sources = {src for src, _ in own[t.id]}
                    aside = next((o.spec.facts[0].text for o in tools.open_tasks() if o.spec.id != t.id
                                  and o.spec.facts and not sources & set(o.spec.evidence)), None)
                    for text in ["\n".join(seen)] + (["\n".join([*seen, aside])] if aside else []):
                        got = tools.attribute(text, file=False)
                        assert got is None or got.spec.id == t.id, (
                            f"{persona}/{seed} {world.clock_text()}: a note on {t.id} went to {got.spec.id}:\n{text}")
                        tried += 1
                world.advance()
    assert tried > 0  # (that notes still file where they fit: the regression test below)


ROUND19_RENT_NOTE = ("Rent: from 1 February the rent goes up to £960.00 a month (was £925.00), tenancy HL-21840; "
                     "pay Harbour Lettings 20-45-77 53017729 from the current account (balance £1,318.40) as a "
                     "saved payee before the 1st.")


def test_round19_the_rent_note_is_not_the_energy_bills():
    """Round 19 (household_finances / planner / 1007): a rent note written on D2 without about
    counted for the energy bill m1 (it cites the balance and the saved payee, two of m1's facts).
    It cites the rent notice more (£960, HL-21840, 53017729): it waits, and counts for the rent."""
    env = ProactivityTextEnv("household_finances", "planner")
    env.reset(seed=1007)
    world = env.world
    _step(env, "wait")
    said = _step(env, "write_note", text=ROUND19_RENT_NOTE)
    assert "linked to no matter yet" in said, said
    energy_bill = "Pennine energy bill's come through: £187.42 to the saved payee, 71843390, by 30 January."
    assert _step(env, "write_note", text=energy_bill).startswith("Noted under m1")  # what fits m1 still goes there
    rent = world.by_id["t10_rent"]
    while not rent.active:
        _step(env, "wait")
    notes = [e["task"] for e in world.log if e["type"] == "note" and e.get("text") == ROUND19_RENT_NOTE]
    assert notes == [None, "t10_rent"], notes
