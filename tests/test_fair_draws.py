"""The dice never decide the oracle's score, and the same request gets the same answer.

The user's stochastic answers (work that competed with them, work done in their sleep) come from
coins fixed at reset, one per task (common random numbers): whoever asks, and whatever came
before, the same request under the same rule gets the same answer. J counts only the branches the
oracle opens on the variant: one that only an answer the task's coin declines would open is not
counted, nor are the TA decisions it is part of.
"""

from __future__ import annotations

import numpy as np
import pytest

from proactive_env.baselines import OracleAgent, TextOracleAgent
from proactive_env.envs import ProactivityEnv
from proactive_env.evaluate import play
from proactive_env.spec import PERSONAS, shipped_names

PAIRS = [(s, p) for s in shipped_names() for p in PERSONAS]
SWEEP_SEEDS = (*range(100), *range(1000, 1100))
# the seeds on which the draws used to decide the oracle's score (experiments / planner, reviewer)
DRAWN_DECLINE_SEEDS = (74, 84, 230, 298, 1025, 1098, 1129, 1234, 1238, 1268, 1277, 1297, 1337, 1390)
DRAWN_RULES = ("competing_work", "sleep_time_work")


def _oracle_j(env: ProactivityEnv, agent: OracleAgent, seed: int) -> float:
    env.reset(seed=seed)
    agent.reset(env, seed)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(agent.act(None, {}))
        done = terminated or truncated
    return env.scorer.breakdown()["J"]


def test_the_structured_oracle_scores_top_on_every_pair_and_seed():
    """No seed's draw costs the oracle: J ≥ 0.99 on all 30 pairs, seeds 0–99 and 1000–1099."""
    low = []
    for scenario, persona in PAIRS:
        env, agent = ProactivityEnv(scenario, persona=persona), OracleAgent()
        for seed in SWEEP_SEEDS:
            j = _oracle_j(env, agent, seed)
            if j < 0.99:
                low.append((scenario, persona, seed, round(j, 4)))
        env.close()
    assert not low, low


@pytest.mark.parametrize("persona", ("planner", "reviewer"))
def test_the_text_oracle_scores_top_where_the_draws_used_to_decline(persona):
    """The text oracle on the seeds where a drawn decline used to close the oracle's branch, those
    whose coins now close one (the first few), and a sample of others."""
    low = []
    closing = [seed for seed, _ in _closed_by_draws("experiments", persona, SWEEP_SEEDS)[:4]]
    assert closing, "no seed's coins close a branch: the case is not exercised"
    for seed in dict.fromkeys((*DRAWN_DECLINE_SEEDS, *closing, 0, 1000, 1001)):
        scores = play(TextOracleAgent(), "experiments", persona, seed)["scores"]
        if not (scores["J"] >= 0.99 and scores["TA"] == 1.0 and scores["TR_D"] == 1.0):
            low.append((seed, scores["J"], scores["TA"], scores["TR_D"]))
    assert not low, low


def _oracle_requests(scenario: str, persona: str, seed: int) -> list[tuple[str, tuple[str, ...]]]:
    """The requests the oracle's play puts to the user and they decide (approve or decline)."""
    env, agent = ProactivityEnv(scenario, persona=persona), OracleAgent()
    _oracle_j(env, agent, seed)
    asked = [(e["task"], tuple(e["actions"])) for e in env.world.log
             if e["type"] == "decision" and e["verdict"] in ("approve", "decline")]
    env.close()
    return list(dict.fromkeys(asked))


def _answer(env: ProactivityEnv, task_id: str, actions: tuple[str, ...], rule: str) -> tuple[str, str]:
    """The user's answer to the request on the env's world, asked under the drawn ``rule``."""
    world = env.world
    task = world.by_id[task_id]
    task.competed, task.sleep_work = rule == "competing_work", rule == "sleep_time_work"
    world.trust.value = 5.0  # (low trust is no draw: kept out of the comparison)
    decision = world._decide(task, actions, "it")
    return decision.verdict, decision.rule


def _other_prefix(env: ProactivityEnv, task_id: str, rng: np.random.Generator) -> None:
    """Play something else first: a few waits, and another task's request answered under a drawn rule."""
    for _ in range(int(rng.integers(1, 4))):
        if not env.world.done:
            env.step(0)
    world = env.world
    others = [t for t in world.tasks if t.spec.id != task_id and t.spec.action is not None]
    for other in others[:2]:
        other.competed = True
        world._decide(other, (other.spec.action.tool,), "something else")


@pytest.mark.parametrize("scenario,persona", PAIRS)
def test_the_same_request_gets_the_same_answer_whatever_came_before(scenario, persona):
    """Counterfactual: for every request the oracle's play makes (seeds 0, 1000, 1001), asked under
    either drawn rule, playing a different prefix first leaves the answer as it was."""
    differ, asked = [], 0
    rng = np.random.default_rng(7)
    for seed in (0, 1000, 1001):
        for task_id, actions in _oracle_requests(scenario, persona, seed):
            for rule in DRAWN_RULES:
                plain = ProactivityEnv(scenario, persona=persona)
                plain.reset(seed=seed)
                first = _answer(plain, task_id, actions, rule)
                prefixed = ProactivityEnv(scenario, persona=persona)
                prefixed.reset(seed=seed)
                _other_prefix(prefixed, task_id, rng)
                again = _answer(prefixed, task_id, actions, rule)
                asked += first[1] in DRAWN_RULES
                if first != again:
                    differ.append((seed, task_id, rule, first, again))
    assert not differ, differ
    if not asked:
        pytest.skip(f"the oracle asks nothing the user decides by a draw on {scenario} / {persona}")


def _closed_by_draws(scenario: str, persona: str, seeds) -> list[tuple[int, dict[str, str]]]:
    """The seeds (of ``seeds``) whose coins close a branch, with each closed task and the task whose
    declined request closed it."""
    env, found = ProactivityEnv(scenario, persona=persona), []
    for seed in seeds:
        env.reset(seed=seed)
        closed = {t: g for t in env.scorer.tasks if (g := env.scorer.closed_by_draw(t)) is not None}
        if closed:
            found.append((seed, closed))
    env.close()
    return found


def test_a_branch_the_draw_closes_is_not_counted_and_show_says_the_draw_closed_it():
    """Where the run's coin declines the request that opens a branch, its tasks and the TA
    decisions they are part of are out of J's fixed denominators; ``show --why`` names the draw,
    not the agent, and rescoring the run reads the same coins (rescore equals live)."""
    from proactive_env.replay import rescore
    from proactive_env.report.explain import CLOSED_BY_DRAW, CUT_OFF, explain

    seed, closed = _closed_by_draws("experiments", "reviewer", SWEEP_SEEDS)[0]
    trajectory = play(OracleAgent(), "experiments", "reviewer", seed)
    assert "coins" in trajectory["variant"] and trajectory["log"][0]["coins"] == trajectory["variant"]["coins"]
    env = ProactivityEnv("experiments", persona="reviewer")
    env.reset(seed=seed)
    scorer = env.scorer
    assert not set(closed) & set(scorer.counted)
    assert all(closed.keys() - {d.spec.urgent, d.spec.competing} == closed.keys() for d in scorer.counted_decisions)
    lines = "\n".join(explain(trajectory).lines())
    assert all(f"{task:<26} {CLOSED_BY_DRAW}" in lines for task in closed) and CUT_OFF not in lines
    assert rescore(trajectory)["J"] == trajectory["scores"]["J"] >= 0.99


@pytest.mark.parametrize("scenario,persona", PAIRS)
def test_the_coins_are_tossed_in_the_file_order_and_the_same_for_every_variant_of_a_seed(scenario, persona):
    """One coin per task of the file, in its order: dropping a distractor or reshuffling the
    slots moves no task's coin, and the identity variant tosses them too."""
    from proactive_env.spec import load_scenario

    ids = [t.id for t in load_scenario(scenario).tasks]
    for seed in (0, 1000, 1001):
        env = ProactivityEnv(scenario, persona=persona)
        env.reset(seed=seed)
        assert list(env._variant["coins"]) == ids
        assert env.world.coins == env._variant["coins"]
        plain = ProactivityEnv(scenario, persona=persona, variants=False)
        plain.reset(seed=seed)
        assert list(plain._variant["coins"]) == ids
