"""The wrong pick of a clash costs more than not picking (suite 0.8.0), over every pair, seeds 0, 1000,
1001 and every counted TA decision.

A rule that ignores judgement — the nearer deadline first, the one that came up with it postponed —
is right on the decisions where the nearer deadline is the urgent one and wrong on the others. If
deferring a decision's urgent task inside its window cost no more than the lost decision, the wrong
pick would cost exactly what not choosing costs (the policy-follower's score), and the rule would gain
wherever it happens to be right, free. So deferring a decision's urgent task is a needless
postponement, inside its window as before it (``RunScorer._defer``): the decision is lost and the
postponement costs one more, unless it resolves a clash of its own (the task is the competing side
of another decision in view, or run then it would overlap the user's use of its compute).

Each play is the oracle with one decision's roles swapped: inside that window it defers the urgent
task (once) and works the competing one instead of holding it."""

from __future__ import annotations

import functools

import pytest

from proactive_env.baselines.oracle import OracleAgent
from proactive_env.evaluate import play
from proactive_env.sim import Verb
from proactive_env.spec import PERSONAS, load_scenario, shipped_names

SEEDS = (0, 1000, 1001)


class SwappedPick(OracleAgent):
    """The oracle, with decision ``decision``'s pick swapped: it defers the urgent task inside the
    window and leaves the competing one to be worked."""

    def __init__(self, decision: str):
        self.decision = decision
        self.name = f"oracle-swapped-{decision}"

    def reset(self, env, seed: int) -> None:
        super().reset(env, seed)
        self.deferred_at: int | None = None
        self.spec = next(d for d in self.world.scenario.ta_decisions if d.id == self.decision)

    def holding(self, t):
        d, w = self.spec, self.world
        if t.spec.id == d.competing and w.now < d.end:
            return None  # not held back: the swapped pick works it now
        return super().holding(t)

    def _next(self, t):
        d, w = self.spec, self.world
        if (t.spec.id == d.urgent and self.deferred_at is None and d.start <= w.now < d.end
                and w.valid_verbs(t)[Verb.DEFER]):
            self.deferred_at = w.now
            return Verb.DEFER
        return super()._next(t)


@functools.lru_cache(maxsize=None)
def swapped(scenario: str, persona: str, seed: int, decision: str) -> tuple[dict, int | None, object]:
    """The swapped play's trajectory, when it deferred the urgent task (None: never) and its variant."""
    agent = SwappedPick(decision)
    return play(agent, scenario, persona, seed), agent.deferred_at, agent.world.scenario


def _resolves_a_clash_of_its_own(scenario, decision, at: int) -> bool:
    """Is the urgent task, deferred at ``at``, the competing side of another decision then open
    (deferring it may resolve that one), or compute work whose run then would overlap the user's use?"""
    from proactive_env.sim.schedule import Schedule

    d = next(x for x in scenario.ta_decisions if x.id == decision)
    task = next(t for t in scenario.tasks if t.id == d.urgent)
    other = any(x.competing == d.urgent and x.id != decision and at < x.end for x in scenario.ta_decisions)
    work = task.work
    busy = work.resource is not None and not Schedule.of(scenario).resource_free(
        work.resource, at, at + work.minutes * work.units)
    return other or busy


@pytest.mark.parametrize("scenario", shipped_names())
def test_deferring_the_urgent_task_of_a_clash_costs_more_than_the_decision(scenario):
    base = load_scenario(scenario)
    swaps = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            for d in base.ta_decisions:
                run, at, variant = swapped(scenario, persona, seed, d.id)
                scores = run["scores"]
                decisions = {x["id"]: x for x in scores["ta_decisions"]}
                if at is None or d.id not in decisions:  # never open in its window, or not counted here
                    continue
                swaps += 1
                mine = decisions[d.id]
                assert not (mine["now"] and mine["later"]), (persona, seed, d.id, mine)
                if d.urgent in scores["needless_postponements"]:
                    n = len(decisions)
                    assert scores["TA"] <= max(0.0, (n - 2) / n) + 1e-9, (persona, seed, d.id, scores["TA"])
                else:
                    assert _resolves_a_clash_of_its_own(variant, d.id, at), (persona, seed, d.id, at)
    assert swaps, scenario
