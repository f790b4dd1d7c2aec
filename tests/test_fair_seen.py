"""A postponement counts only for a clash the agent could see (issue #20 TA class 2), over every
pair and seeds 0, 1000, 1001, for every TA decision of the scenario.

"Could see" is one test for both faces and for a postponement inside the window as before it
(``RunScorer._clash``): the agent had read a record that shows the clash (``shown_by``: the user's
calendar, the compute's usage) and seen the urgent demand. Two tasks that arrive together are not a
clash seen. On the text face the agent reads with ``read_record``; on the structured face every
verb looks at its task's records, and ``defer`` also at the calendars it times the task against.

Each play is the text oracle with its reads of the records that show a clash left out: it defers
the competing side as it does, having read only what its other work made it read."""

from __future__ import annotations

import functools

import pytest

from proactive_env.baselines.oracle import TextOracleAgent
from proactive_env.evaluate import play
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1000, 1001)


class _Unread(TextOracleAgent):
    """The text oracle, deferring competing work without first reading what shows its clash."""

    name = "text-oracle-deferring-unread"

    def _clash_reads(self, t):
        return []


@functools.lru_cache(maxsize=None)
def _played(scenario: str, persona: str, seed: int, agent: type = _Unread):
    a = agent()
    scores = play(a, scenario, persona, seed)["scores"]
    return scores, a.world.log


def _seen_when_deferred(log: list[dict], decision) -> bool | None:
    """Had a record that shows the decision's clash been read when its competing task was first
    deferred? (None: never deferred.)"""
    read = set()
    for e in log:
        if e["type"] == "read":
            read.add(e["record"])
        elif e["type"] == "defer" and e["task"] == decision.competing:
            return bool(read & set(decision.shown_by))
    return None


@pytest.mark.parametrize("scenario", shipped_names())
def test_a_deferral_before_the_clash_was_seen_is_not_later(scenario):
    """Every counted decision whose competing task the play deferred before any record showing the
    clash was read: not `later` (and needless, unless running the work then would have overlapped
    the user's own use of its compute). Where one had been read, it is won, as the oracle wins it."""
    from proactive_env.spec import load_scenario

    decisions = {d.id: d for d in load_scenario(scenario).ta_decisions}
    unseen = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            scores, log = _played(scenario, persona, seed)
            for d in scores["ta_decisions"]:
                seen = _seen_when_deferred(log, decisions[d["id"]])
                if seen is None or d["nothing_to_postpone"]:
                    continue
                if seen:
                    assert d["now"] and d["later"], (persona, seed, d["id"])
                    continue
                unseen += 1
                assert not d["later"], (persona, seed, d["id"])
    if scenario == "medications":  # ta2: the dental recall arrives with the GP request, before any look at the diary
        assert unseen >= len(SEEDS)


@pytest.mark.parametrize("scenario", shipped_names())
def test_the_oracles_read_the_clash_before_they_defer_and_stay_top(scenario):
    """The oracles' plays read what shows each clash before postponing (the text oracle by
    ``read_record``, the structured one through ``defer``): every decision won, nothing needless."""
    from proactive_env.baselines.oracle import OracleAgent

    for persona in PERSONAS:
        for seed in SEEDS:
            for agent in (TextOracleAgent, OracleAgent):
                scores, _ = _played(scenario, persona, seed, agent)
                assert scores["TA"] == 1.0 and not scores["needless_postponements"], (agent.name, persona, seed)
