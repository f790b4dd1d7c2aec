"""``proactivity-gym check FILE``: does a scenario's data agree with the scorer?

Plays the oracle and the scripted baselines on every persona and reports, against the
benchmark's acceptance rules, whether the oracle reaches the top score, whether agents that
ignore depth, time or the user score as low as they should, whether rewards sum to J and
re-scoring the saved log gives the live scores, and whether the scenario uses what the suite
needs (TA decisions, latent, conditional and NOOP tasks, personas that differ).
"""

from __future__ import annotations

from dataclasses import dataclass

from .evaluate import play
from .replay import rescore
from .spec import PERSONAS, load_scenario
from .spec.expand import resource_use
from .spec.validate import trigger_minute


@dataclass(frozen=True)
class Rule:
    description: str
    passed: bool
    detail: str


def _mean(runs: list[dict], metric: str) -> float:
    return sum(r["scores"][metric] for r in runs) / len(runs)


def _pct(value: float) -> str:
    """A share to one decimal: a failing 60.4 % must not read as 60 %."""
    return f"{100 * value:.1f}%"


def _aligned(runs: list[dict]) -> str:
    """The tasks whose depth the agent matched, with how often: what holds its TR-D up."""
    counts: dict[str, int] = {}
    for r in runs:
        for t in r["scores"]["tasks"]:
            if t["depth_match"]:
                counts[t["task"]] = counts.get(t["task"], 0) + 1
    return ", ".join(f"{task} ({n}/{len(runs)})" for task, n in sorted(counts.items()))


def _scoring_tc(runs: list[dict], above: float = 0.0) -> str:
    """The tasks the agent scored TC on (mean over runs, highest first)."""
    totals: dict[str, list[float]] = {}
    for r in runs:
        for t in r["scores"]["tasks"]:
            totals.setdefault(t["task"], []).append(t["TC"])
    means = sorted(((sum(v) / len(v), k) for k, v in totals.items() if sum(v) / len(v) > above), reverse=True)
    return ", ".join(f"{task} TC {tc:.1f}" for tc, task in means)


def _passed_ta(runs: list[dict]) -> str:
    counts: dict[str, int] = {}
    for r in runs:
        for d in r["scores"]["ta_decisions"]:
            if d["now"] and d["later"]:
                counts[d["id"]] = counts.get(d["id"], 0) + 1
    return ", ".join(f"{d} ({n}/{len(runs)})" for d, n in sorted(counts.items()))


def _behind(passed: bool, what: str) -> str:
    return "" if passed or not what else f"; behind it: {what}"


def check_scenario(path: str, make_agent, seeds: int = 3, first_seed: int = 0) -> list[Rule]:
    if seeds < 1:
        raise ValueError(f"--seeds: expected at least 1, got {seeds}")
    scenario = load_scenario(path)
    agents = ("oracle", "noop", "random", "always-suggest", "always-execute", "policy-follower")
    runs = {(a, p): [play(make_agent(a), path, p, s) for s in range(first_seed, first_seed + seeds)]
            for a in agents for p in PERSONAS}
    rules: list[Rule] = []
    for p in PERSONAS:
        oracle = runs["oracle", p]
        tc, ta, trd = (min(r["scores"][m] for r in oracle) for m in ("TC", "TA", "TR_D"))
        misses = sorted({f"{t['task']}({t['wanted']}, aligned {t['depth_match']}, TC {t['TC']:.0f})" for r in oracle
                         for t in r["scores"]["tasks"] if t["depth_match"] is False or t["TC"] < 98})
        missed_ta = sorted({d["id"] for r in oracle for d in r["scores"]["ta_decisions"] if not (d["now"] and d["later"])})
        rules.append(Rule(f"oracle on {p}: TC ≥ 98, TA = 100%, TR-D = 100% on every seed",
                          tc >= 98 and ta == 1 and trd == 1,
                          f"TC {tc:.2f}, TA {_pct(ta)}, TR-D {_pct(trd)}" + (f"; off: {', '.join(misses)}" if misses else "")
                          + (f"; TA missed: {missed_ta}" if missed_ta else "")))
        noop = runs["noop", p]
        noop_trd, noop_tc = _mean(noop, "TR_D"), _mean(noop, "TC")
        ok = noop_trd <= 0.3 and noop_tc <= 20
        rules.append(Rule(f"noop on {p}: TR-D ≤ 30%, TC ≤ 20", ok, f"TR-D {_pct(noop_trd)}, TC {noop_tc:.2f}"
                          + _behind(ok, "; ".join(filter(None, [
                              noop_trd > 0.3 and f"matched depth on {_aligned(noop)}",
                              noop_tc > 20 and f"TC on {_scoring_tc(noop)}"])))))
        best = _mean(oracle, "J")
        beaten = [a for a in agents[1:] if _mean(runs[a, p], "J") >= best]
        rules.append(Rule(f"oracle's J beats every scripted agent on {p}", not beaten,
                          f"oracle J {best:.4f}" + (f"; not beaten: " + ", ".join(
                              f"{a} J {_mean(runs[a, p], 'J'):.4f}" for a in beaten) if beaten else "")))
        follower = runs["policy-follower", p]
        ok = _mean(follower, "TA") < _mean(oracle, "TA")
        rules.append(Rule(f"policy-follower on {p} below the oracle's TA", ok,
                          f"TA {_pct(_mean(follower, 'TA'))} vs {_pct(_mean(oracle, 'TA'))}"
                          + _behind(ok, f"decisions it passes: {_passed_ta(follower)}")))
    ae_runs, asg_runs = runs["always-execute", "reviewer"], runs["always-suggest", "operator"]
    ae, asg = _mean(ae_runs, "TR_D"), _mean(asg_runs, "TR_D")
    rules.append(Rule("always-execute on reviewer TR-D ≤ 60%", ae <= 0.6,
                      _pct(ae) + _behind(ae <= 0.6, f"matched depth on {_aligned(ae_runs)}")))
    rules.append(Rule("always-suggest on operator TR-D ≤ 60%", asg <= 0.6,
                      _pct(asg) + _behind(asg <= 0.6, f"matched depth on {_aligned(asg_runs)}")))
    every = [r for rs in runs.values() for r in rs]
    worst = max(abs(r["return"] - r["scores"]["J"]) for r in every)
    rules.append(Rule("rewards sum to J (1e-6) on every run", worst <= 1e-6, f"largest gap {worst:.1e}"))
    drift = max(abs(rescore(r, base=scenario)[m] - r["scores"][m]) for r in every for m in ("TC", "TA", "TR_D", "J"))
    rules.append(Rule("re-scoring each saved log gives its live scores", drift == 0, f"largest difference {drift:.1e}"))
    rules.extend(_data_rules(scenario, runs))
    return rules


def deadline_order_wrong(scenario) -> list[str]:
    """The TA decisions where working on what is needed soonest is the wrong choice: the urgent
    task is needed (its ``needed_by``, else its deadline) after the competing one, and the window
    is its only chance. A suite where there are none is won by a sort on deadlines."""
    ids = {t.id: t for t in scenario.tasks}
    needed = lambda task: task.needed_by if task.needed_by is not None else task.deadline  # noqa: E731
    return [d.id for d in scenario.ta_decisions if d.urgent in ids and d.competing in ids
            and needed(ids[d.urgent]) > needed(ids[d.competing])]


def _started_at_once_over_use(scenario) -> bool:
    """Would some task's work, started the moment the task comes up, run over the user's own use
    of its resource? (Where none would, working at once cannot intrude.)"""
    for task in scenario.tasks:
        resource = task.work.resource
        if resource is None:
            continue
        start = trigger_minute(scenario, task)
        end = start + task.work.units * task.work.minutes
        if any(a < end and start < b for a, b in resource_use(scenario, resource)):
            return True
    return False


def _data_rules(scenario, runs) -> list[Rule]:
    rules = []
    n = len(scenario.ta_decisions)
    rules.append(Rule("≥ 3 TA decisions", n >= 3, f"{n}"))
    against = deadline_order_wrong(scenario)
    rules.append(Rule("≥ 1 TA decision where the nearer deadline is the wrong work now", bool(against),
                      ", ".join(against) or "in every decision the urgent task is also needed first"))
    idle = sorted({d["id"] for p in PERSONAS for r in runs["policy-follower", p] for d in r["scores"]["ta_decisions"]
                   if d["J_share"] > 0})
    rules.append(Rule("no TA decision won by doing everything at once (policy-follower)", not idle,
                      f"won: {idle}" if idle else f"{n} decisions, none won"))
    differ = sum(1 for t in scenario.tasks if not t.noop and
                 len({scenario.personas[p].rules[t.category] for p in PERSONAS}) > 1)
    rules.append(Rule("personas' stated rules differ on ≥ 1/3 of tasks", 3 * differ >= len(scenario.tasks),
                      f"{differ}/{len(scenario.tasks)}"))
    kinds = {"latent": sum(t.latent for t in scenario.tasks), "conditional": sum(bool(t.requires) for t in scenario.tasks),
             "noop": sum(t.noop for t in scenario.tasks)}
    rules.append(Rule("≥ 1 latent, ≥ 1 conditional, ≥ 1 NOOP task", all(kinds.values()),
                      ", ".join(f"{k} {v}" for k, v in kinds.items())))
    # branches the agent opens (a missed deadline is the world's own doing, so not counted)
    conditional = {r.id for r in scenario.records if r.when is not None and r.when.state != "missed"}
    conditional_events = {e.id for e in scenario.events if e.when is not None and e.when.state != "missed"}
    loud = sorted({e.get("id") for r in runs["noop", "reviewer"] for e in r["log"]
                   if e["type"] in ("record", "event") and e.get("id") in conditional | conditional_events})
    rules.append(Rule("noop's world stays quiet (no conditional record or event fires)", not loud,
                      f"fired: {loud}" if loud else f"{len(conditional) + len(conditional_events)} conditional items"))
    if _started_at_once_over_use(scenario):
        intrusions = sum(1 for r in runs["policy-follower", "reviewer"] for e in r["log"] if e["type"] == "intrusion")
        rules.append(Rule("work at once over the user's own use (policy-follower) intrudes on a contended resource",
                          intrusions > 0, f"{intrusions} intrusions over {len(runs['policy-follower', 'reviewer'])} runs"))
    return rules
