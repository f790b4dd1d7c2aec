"""No rule that ignores timing, depth or content scores well (issue: a scorer that measures the 3T).

Each adversary in ``baselines/adversaries.py`` embodies one failure class of a scorer that
measures artefacts; each is held below the bounds here on the full suite (10 scenarios × 3
personas; structured adversaries on 3 seeds, text ones on 1 — they are slower and deterministic
in what they exploit)."""

import pytest
from runs import CASES, component_mean, mean, runs, suite_mean

from proactive_env.baselines import ADVERSARIES, SCRIPTED, adversaries, probe_adversaries, repetition_adversaries
from proactive_env.spec import PERSONAS, load_scenario

ONE_SEED = (0,)
TEXT_ADVERSARIES = {"read-everything", "claim-spam", "paste-the-records", "empty-arguments", "broadcast-early",
                    "postpone-early", "piggyback"}
CONTENT_FAMILIES = {cls.name for cls in adversaries.CONTENT}
ROTATING = (0, 1000, 1001)  # content families: pair k on seed ROTATING[k % 3], three seeds over the suite


def test_defer_everything_loses_ta_and_gains_nothing_over_the_policy_follower():
    assert suite_mean("defer-everything", "TA") <= 0.25
    assert suite_mean("defer-everything", "J") <= suite_mean("policy-follower", "J") + 0.05


def test_allocate_everything_loses_ta():
    assert suite_mean("allocate-everything", "TA") <= 0.20


def test_persona_blind_loses_depth_agreement_where_the_persona_delegates():
    """Asking first on everything is what a reviewer wants; the persona-blind rule pays where the
    user delegates (operator) and is far from the oracle over the suite."""
    assert suite_mean("persona-blind", "TR_D", personas=("operator",)) <= 0.65
    assert suite_mean("persona-blind", "TR_D") <= 0.85


def test_ask_on_everything_loses_depth_agreement_on_the_operator():
    assert suite_mean("ask-on-everything", "TR_D", personas=("operator",)) <= 0.70


def test_prepare_only_scores_low_tc():
    assert suite_mean("prepare-only", "TC") <= 60


def test_paste_the_records_scores_low_tc():
    assert suite_mean("paste-the-records", "TC", seeds=ONE_SEED) <= 35


def test_broadcasting_every_record_early_earns_no_credit_from_kept_work():
    """Kept notes and messages are claimed by tasks that come up later: pasting every record to
    the user in advance, linked to nothing, must not buy content or depth."""
    assert suite_mean("broadcast-early", "TC", seeds=ONE_SEED) <= 20
    assert suite_mean("broadcast-early", "J", seeds=ONE_SEED) <= suite_mean("paste-the-records", "J", seeds=ONE_SEED)


def test_postponing_every_record_early_buys_no_temporal_allocation():
    """Postponements kept for matters not yet come up count when they come up: postponing every
    record's subject in advance, on top of the policy-follower, must not buy TA's "later"."""
    assert suite_mean("postpone-early", "TA", seeds=ONE_SEED) <= 0.1
    assert suite_mean("postpone-early", "J", seeds=ONE_SEED) <= suite_mean("text-policy-follower", "J", seeds=ONE_SEED) + 0.02


def test_pasting_the_records_under_every_matter_buys_no_credit_for_needs_nobody_announced():
    """A note or message on one matter also counts for a need nothing announced that it covers
    more closely: pasting every record under each one, on top of the policy-follower, must not
    buy timing or depth."""
    assert suite_mean("piggyback", "TA", seeds=ONE_SEED) <= 0.1
    assert suite_mean("piggyback", "J", seeds=ONE_SEED) <= suite_mean("text-policy-follower", "J", seeds=ONE_SEED) + 0.02


def test_claim_spam_breaks_constraints():
    assert component_mean("claim-spam", "constraints", seeds=ONE_SEED) <= 30


def test_reading_everything_gains_nothing_over_its_non_reading_twin():
    for metric in ("TC", "J"):
        assert suite_mean("read-everything", metric, seeds=ONE_SEED) <= suite_mean("text-oracle", metric, seeds=ONE_SEED)
    # where some record there from the start is needed by nothing (no task's evidence, brought by
    # no message or notification, not the user's calendar, shows no decision's clash: issue #20.7),
    # reading it costs
    for s, p in CASES:
        for r in runs("read-everything", s, p, ONE_SEED):
            if _needed_by_nothing(load_scenario(s)):
                assert r["scores"]["privacy_cost"] > 0, (s, p)


def _needed_by_nothing(s) -> set[str]:
    from proactive_env.spec.variant import _cited

    needed = {r for t in s.tasks for r in _cited(t)} | {r for ev in s.events for r in ev.reveals}
    needed |= {r for d in s.ta_decisions for r in d.shown_by}
    return {r.id for r in s.records if r.id not in needed and not r.kind.startswith("calendar") and r.when is None}


def test_empty_argument_executes_are_refused():
    attempts = [e for s, p in CASES for r in runs("empty-arguments", s, p, ONE_SEED) for e in r["log"]
                if e["type"] == "execute"]
    assert attempts and not any(e["ok"] for e in attempts)
    assert all(e["reason"] for e in attempts)


def _rotating(agent: str, metric: str) -> float:
    values = [r["scores"][metric] for k, (s, p) in enumerate(CASES) for r in runs(agent, s, p, (ROTATING[k % 3],))]
    return sum(values) / len(values)


@pytest.mark.parametrize("family", sorted(CONTENT_FAMILIES))
def test_every_content_family_scores_low_tc_far_below_the_text_oracle(family):
    """A disguised paste (fillers, salads, synonyms, shuffles, interleavings, keyword lists, a
    polite note that says nothing, quoted keyword sentences), on top of the text policy-follower,
    earns no content: no family scores more than 3 TC above ``boilerplate`` (a note of its own that
    states nothing: what the follower's reading, timing and correct actions earn without content),
    TC <= 40 over all 30 pairs, under half the text oracle's, and J < 0.8. (Issue 19 asked TC <= 35;
    since an executed action's arguments count as the agent's work (round 18), the follower's
    correct actions state a few facts: boilerplate measures 33.8, keyword-stuffing 35.7 on suite
    0.6.0.)"""
    tc = _rotating(family, "TC")
    assert tc <= _rotating("boilerplate", "TC") + 3, tc
    assert tc <= 40, tc
    assert tc <= 0.5 * _rotating("text-oracle", "TC")
    assert _rotating(family, "J") < 0.8


@pytest.mark.parametrize("agent", sorted((set(SCRIPTED) | set(ADVERSARIES)) - {"oracle", "read-everything"} - CONTENT_FAMILIES))
def test_no_scripted_non_oracle_agent_reaches_j_0_8(agent):
    """(read-everything is the oracle plus needless reads: it is held to its twin above.)"""
    assert suite_mean(agent, "J", seeds=ONE_SEED if agent in TEXT_ADVERSARIES else None) < 0.8


@pytest.mark.parametrize("persona", PERSONAS)
def test_adversaries_stay_far_below_the_oracle(persona):
    oracle = sum(mean("oracle", s, persona, "J") for s, p in CASES if p == persona)
    for agent in ("defer-everything", "allocate-everything", "persona-blind", "ask-on-everything", "prepare-only"):
        assert sum(mean(agent, s, persona, "J") for s, p in CASES if p == persona) < 0.85 * oracle, agent


# ---------------------------------------------------------------------- repetition (issue #20)
REPETITION_SEEDS = (0, 1000, 1001)


@pytest.mark.parametrize("base", sorted(repetition_adversaries.BASES))
def test_repeating_what_the_user_welcomed_earns_nothing(base):
    """Saying an aligned intervention again (the same message, request or action, k = 1, 2, 4, 8
    more times) shows the user nothing new: on every pair and seed J and TR-J are non-increasing
    in k (the policy-follower and the oracle, structured and text face). Before the world knew a
    repeat, each aligned one after an aligned one added 0.17 to trust: on seeds 0/1000/1001 the
    text policy-follower rose from J 0.6288 / TR-J 4.616 (k = 0) to 0.6339 / 4.753 (k = 8)."""
    ladder = [base, *(f"repeat{k}-{base}" for k in repetition_adversaries.REPEATS)]
    rising = []
    for s, p in CASES:
        for seed in REPETITION_SEEDS:
            scores = [runs(agent, s, p, (seed,))[0]["scores"] for agent in ladder]
            for metric in ("J", "TR_J"):
                values = [sc[metric] for sc in scores]
                if any(b > a + 1e-9 for a, b in zip(values, values[1:])):
                    rising.append((s, p, seed, metric, [round(v, 4) for v in values]))
    assert not rising, rising


# ---------------------------------------------------------------------- probing (issue #20)
PROBE_SEEDS = (0, 1000, 1001)


def _probed(agent: str, scenario: str, persona: str, seed: int) -> tuple[dict, list[dict]]:
    """One run of a probing adversary: its scores and its probes."""
    from proactive_env.baselines import make_agent
    from proactive_env.evaluate import play

    player = make_agent(agent)
    return play(player, scenario, persona, seed)["scores"], player.probes


def test_probing_an_action_with_wrong_arguments_buys_nothing_and_learns_nothing_for_free():
    """``probe-then-correct`` (and its members sending the probes only without ``about``, or only
    with it): before each of the text oracle's executes, the same call once per compared argument
    with that argument changed, then the oracle's own. Over every pair and seeds 0, 1000, 1001:
    (1) it scores no better than the text oracle (J, TC, TA, TR-D, TR-J); (2) a probe the world
    recorded against no task (nothing attempted: the call reached the task by its action alone)
    is refused saying nothing of its arguments — the same reply, at one moment, whichever
    argument was off; (3) a probe recorded against its task is a try, refused naming the
    argument that is off (the feedback a try pays for). Before, (2) failed on every pair with
    an action of two compared arguments or more: the unnamed probes read "arguments that do not
    match the matter: slot_code", "...: items", one per key, each found at no cost."""
    better, said, tries = [], [], 0
    for s, p in CASES:
        for seed in PROBE_SEEDS:
            oracle = runs("text-oracle", s, p, (seed,))[0]["scores"]
            for agent in probe_adversaries.PROBE_ADVERSARIES:
                scores, probes = _probed(agent, s, p, seed)
                for metric in ("J", "TC", "TA", "TR_D", "TR_J"):
                    if scores[metric] > oracle[metric] + 1e-9:
                        better.append((agent, s, p, seed, metric, scores[metric], oracle[metric]))
                free: dict[tuple, set[str]] = {}
                for probe in probes:
                    where = (agent, s, p, seed, probe["task"], probe["named"], probe["at"])
                    assert probe["reply"].startswith("Error:"), (where, probe)  # a changed argument never passes
                    if probe["against"] is None:
                        free.setdefault(where, set()).add(probe["reply"])
                    elif probe["against"] == probe["task"]:
                        tries += 1
                        assert probe["key"] in probe["reply"], (where, probe)
                said += [(where, sorted(replies)) for where, replies in free.items() if len(replies) > 1]
    assert tries > 0
    assert not better, better[:5]
    assert not said, said[:3]
