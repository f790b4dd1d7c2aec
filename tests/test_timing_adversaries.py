"""Timing families over the whole suite (issue 19): no rule for *when* to work — by deadline, by
urgency rank, by whether the compute is busy, by postponing to a fixed time — scores well.

Every family of ``baselines/timing_adversaries.py`` plays all 30 pairs: structured ones on three
test seeds, text ones on one (they are slower and play the same decisions). Runs are played once
per session (``runs.py``'s cache)."""

from __future__ import annotations

import pytest
from runs import runs

from proactive_env.baselines.timing_adversaries import STRUCTURED_NAMES, TEXT_NAMES
from proactive_env.spec import PERSONAS, shipped_names

STRUCTURED_SEEDS, TEXT_SEEDS = (1000, 1001, 1002), (1000,)
FOLLOWER = {"structured": "policy-follower", "text": "text-policy-follower"}
FAMILIES = [(n, "structured") for n in STRUCTURED_NAMES] + [(n, "text") for n in TEXT_NAMES]

# Issue 19's bounds, for every family over the whole suite: TA ≤ 25 % and J ≤ the policy-follower's
# + 0.05 (suite 0.8.0: at most TA 0.17 and + 0.049, due-soonest-of-arrivals-0.1, untuned;
# allocate-all-compute TA 0.148, + 0.047).
BOUND_TA, BOUND_GAIN = 0.25, 0.05


def suite(agent: str, face: str, metric: str) -> float:
    seeds = STRUCTURED_SEEDS if face == "structured" else TEXT_SEEDS
    values = [r["scores"][metric] for s in shipped_names() for p in PERSONAS for r in runs(agent, s, p, seeds)]
    return sum(values) / len(values)


@pytest.mark.parametrize("agent, face", FAMILIES)
def test_no_timing_family_reaches_j_0_8(agent, face):
    assert suite(agent, face, "J") < 0.8


@pytest.mark.parametrize("agent, face", FAMILIES)
def test_every_timing_family_within_issue_19_bounds(agent, face):
    assert suite(agent, face, "TA") <= BOUND_TA
    assert suite(agent, face, "J") <= suite(FOLLOWER[face], face, "J") + BOUND_GAIN


def test_the_oracles_pass_every_decision_and_no_decoy_on_the_test_split():
    for agent, seeds in (("oracle", STRUCTURED_SEEDS), ("text-oracle", TEXT_SEEDS)):
        for s in shipped_names():
            for p in PERSONAS:
                for r in runs(agent, s, p, seeds):
                    score = r["scores"]
                    assert score["TA"] == 1.0 and not score["needless_postponements"], (agent, s, p, r["seed"])
                    assert not score["decoys_failed"] and score["TR_D"] == 1.0 and score["TC"] >= 98
