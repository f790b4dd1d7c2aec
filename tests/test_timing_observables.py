"""No single observed feature separates U from C (DESIGN §5 "Judgement, not deadline order"; issue
#20 TA class 4), measured over every counted TA decision × persona × seed (0, 1000, 1001).

Each rule is a timing-adversary family's feature (baselines/timing_adversaries.py), read off the
two tasks as an agent sees them when the clash is in view: which is due soonest (the ``urgency``
column: needed-by, else the deadline — defer-until-urgent, hold-while-more-urgent,
defer-all-but-most-urgent), which came up first or last (newcomer-waits), which is the bigger or
smaller job (bigger-job-first), which needs compute (compute-first), which the user must see
(the persona's wanted depth is suggest or deeper), and due soonest among tasks that came up at
the same minute (due-soonest-of-arrivals). A rule *picks* the task it would work on now; on a tie
it picks neither. Its separation is |share picking U − share picking C|: a rule that always picks
C separates as well as one that always picks U. The current figures are held as bounds
(``BOUNDS``): data changes may lower them, never raise them."""

from __future__ import annotations

import functools
from collections.abc import Callable

from gymnasium.utils import seeding

from proactive_env.sim import PolicyState
from proactive_env.spec import Depth, PERSONAS, contested, load_scenario, shipped_names, variant
from proactive_env.spec.validate import trigger_minute

SEEDS = (0, 1000, 1001)


def _due(s, t) -> int:
    return t.needed_by if t.needed_by is not None else t.deadline


def _size(s, t) -> int:
    return t.work.units * t.work.minutes


# rule → the key it works on now (the task with the smaller key); ``together``: only where both came up at once
RULES: dict[str, tuple[Callable, bool]] = {
    "due-soonest": (_due, False),
    "arrived-first": (lambda s, t: trigger_minute(s, t), False),
    "arrived-last": (lambda s, t: -trigger_minute(s, t), False),
    "shortest-job": (_size, False),
    "bigger-job": (lambda s, t: -_size(s, t), False),
    "needs-compute": (lambda s, t: 0 if t.work.resource else 1, False),
    "no-compute": (lambda s, t: 1 if t.work.resource else 0, False),
    "due-soonest-of-arrivals": (_due, True),
}


@functools.lru_cache(maxsize=None)
def _cases() -> tuple[tuple[str, str, int, object, object, object, dict], ...]:
    """(scenario, persona, seed, variant, decision, policy, tasks) for every counted decision."""
    out = []
    for name in shipped_names():
        base = load_scenario(name)
        for persona in PERSONAS:
            for seed in SEEDS:
                rng, _ = seeding.np_random(seed)
                drawn = variant.draw(base, persona, rng)
                s = variant.apply(base, drawn)
                tasks = {t.id: t for t in s.tasks}
                policy = PolicyState(dict(drawn["rules"]))
                for d in s.ta_decisions:
                    if contested(s, d, persona, drawn["rules"]):
                        out.append((name, persona, seed, s, d, policy, tasks))
    return tuple(out)


def _user_key(policy, persona):
    return lambda s, t: 0 if policy.wanted(t, persona) >= Depth.SUGGEST else 1


def picks(rule: str) -> dict[str, float | int | list]:
    """The rule's figures: decisions it applies to, share picking U, picking C, the separation,
    and the decisions where it picks U."""
    n = u = c = 0
    right = []
    for name, persona, seed, s, d, policy, tasks in _cases():
        key, together = (_user_key(policy, persona), False) if rule == "needs-user" else RULES[rule]
        urgent, competing = tasks[d.urgent], tasks[d.competing]
        if together and trigger_minute(s, urgent) != trigger_minute(s, competing):
            continue
        n += 1
        ku, kc = key(s, urgent), key(s, competing)
        u += ku < kc
        c += kc < ku
        if ku < kc:
            right.append(f"{name}/{d.id}")
    return {"n": n, "U": u / n if n else 0.0, "C": c / n if n else 0.0,
            "separation": abs(u - c) / n if n else 0.0, "picks_U": sorted(set(right))}


NAMES = (*RULES, "needs-user")
# the figures of suite 0.8.0 + this change (rounded up): separation |U − C| may not grow
BOUNDS: dict[str, float] = {
    "due-soonest": 0.059, "arrived-first": 0.205, "arrived-last": 0.205, "shortest-job": 0.047, "bigger-job": 0.047,
    "needs-compute": 0.050, "no-compute": 0.050, "due-soonest-of-arrivals": 0.203, "needs-user": 0.030,
}


def test_no_observed_feature_separates_urgent_from_competing():
    for rule in NAMES:
        f = picks(rule)
        assert f["n"] > 0, rule
        assert f["separation"] <= BOUNDS[rule] + 1e-9, (rule, f)


if __name__ == "__main__":
    for rule in NAMES:
        f = picks(rule)
        print(f"{rule:26s} n={f['n']:3d} U={f['U']:.3f} C={f['C']:.3f} sep={f['separation']:.3f}")
    print("due-soonest-of-arrivals picks U in:", picks("due-soonest-of-arrivals")["picks_U"])
