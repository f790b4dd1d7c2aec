"""``proactivity-gym check FILE``: does a scenario's data agree with the scorer?

Plays the oracle and the scripted baselines on every persona and reports, against the
benchmark's acceptance rules, whether the oracle reaches the top score, whether agents that
ignore depth, time or the user score as low as they should, and whether rewards sum to J.
"""

from __future__ import annotations

from dataclasses import dataclass

from .evaluate import play
from .spec import PERSONAS, Depth, load_scenario


@dataclass(frozen=True)
class Rule:
    description: str
    passed: bool
    detail: str


def _mean(runs: list[dict], metric: str) -> float:
    return sum(r["scores"][metric] for r in runs) / len(runs)


def check_scenario(path: str, make_agent, seeds: int = 3) -> list[Rule]:
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"--seeds: expected at least 1 run per persona, got {seeds!r}")
    scenario = load_scenario(path)
    agents = ("oracle", "noop", "random", "always-suggest", "always-execute", "policy-follower")
    runs = {(a, p): [play(make_agent(a), path, p, s) for s in range(seeds)] for a in agents for p in PERSONAS}
    rules: list[Rule] = []
    for p in PERSONAS:
        oracle = runs["oracle", p]
        tc, ta, trd = (min(r["scores"][m] for r in oracle) for m in ("TC", "TA", "TR_D"))
        misses = sorted({f"{t['task']}({t['chosen']}≠{t['expected']}, TC {t['TC']:.0f})" for r in oracle
                         for t in r["scores"]["tasks"] if not t["depth_match"] or t["TC"] < 95})
        rules.append(Rule(f"oracle on {p}: TC ≥ 95, TA = 100%, TR-D = 100% on every seed",
                          tc >= 95 and ta == 1 and trd == 1,
                          f"TC {tc:.1f}, TA {ta:.0%}, TR-D {trd:.0%}" + (f"; off: {', '.join(misses)}" if misses else "")))
        noop_trd, noop_tc = _mean(runs["noop", p], "TR_D"), _mean(runs["noop", p], "TC")
        rules.append(Rule(f"noop on {p}: TR-D ≤ 30%, TC ≤ 20", noop_trd <= 0.3 and noop_tc <= 20,
                          f"TR-D {noop_trd:.0%}, TC {noop_tc:.1f}"))
        best = _mean(oracle, "J")
        beaten = [a for a in agents[1:] if _mean(runs[a, p], "J") >= best]
        rules.append(Rule(f"oracle's J beats every scripted agent on {p}", not beaten,
                          f"oracle J {best:.3f}" + (f"; not beaten: {beaten}" if beaten else "")))
        follower = runs["policy-follower", p]
        rules.append(Rule(f"policy-follower on {p} below the oracle's TA", _mean(follower, "TA") < _mean(oracle, "TA"),
                          f"TA {_mean(follower, 'TA'):.0%} vs {_mean(oracle, 'TA'):.0%}"))
    follower_trd = sum(_mean(runs["policy-follower", p], "TR_D") for p in PERSONAS) / len(PERSONAS)
    oracle_trd = sum(_mean(runs["oracle", p], "TR_D") for p in PERSONAS) / len(PERSONAS)
    rules.append(Rule("policy-follower below the oracle's TR-D (mean over personas)", follower_trd < oracle_trd,
                      f"{follower_trd:.0%} vs {oracle_trd:.0%}"))
    ae, asg = _mean(runs["always-execute", "reviewer"], "TR_D"), _mean(runs["always-suggest", "operator"], "TR_D")
    rules.append(Rule("always-execute on reviewer TR-D ≤ 60%", ae <= 0.6, f"{ae:.0%}"))
    rules.append(Rule("always-suggest on operator TR-D ≤ 60%", asg <= 0.6, f"{asg:.0%}"))
    worst = max(abs(r["return"] - r["scores"]["J"]) for rs in runs.values() for r in rs)
    rules.append(Rule("rewards sum to J (1e-6) on every run", worst <= 1e-6, f"largest gap {worst:.1e}"))
    differ = sum(1 for t in scenario.tasks if len({Depth.parse(e.depth) for e in t.expect.values()}) > 1)
    rules.append(Rule("personas' expected depths differ on ≥ 1/3 of tasks", 3 * differ >= len(scenario.tasks),
                      f"{differ}/{len(scenario.tasks)}"))
    kinds = {"latent": sum(t.latent for t in scenario.tasks), "conditional": sum(bool(t.requires) for t in scenario.tasks),
             "noop": sum(any(e.depth == "noop" for e in t.expect.values()) for t in scenario.tasks)}
    rules.append(Rule("≥ 1 latent, ≥ 1 conditional, ≥ 1 NOOP task", all(kinds.values()),
                      ", ".join(f"{k} {v}" for k, v in kinds.items())))
    return rules
