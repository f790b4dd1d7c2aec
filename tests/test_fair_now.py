"""Urgent work done before its decision's window opens serves it (issue #20, blind round 25).

Round 25 (monitor / operator / 1024, docs/blind-sessions/blind25-monitor-operator-1024.session.json):
the player set a follow-up that brought the purchase review forward to D2 07:00 (its trigger's
``earliest``) and placed the order then; the decision's window opens at 08:30 (the sale ends at
12:00, Jordan is in the design review 09:15–12:00). "now" counted only work inside the window, so
the decision was lost for serving the urgent task sooner. Now (``RunScorer._attend``/``_work``):
substantive work on the urgent task by the window's end serves it, from when the task came up;
only work inside the window tells whether the competing task needed postponing (a competing task
that comes up inside it must still be put after the clash), unless the urgent task is finished
when the window opens: then nothing clashes with it there (``RunScorer._open_windows``).

The sweep plays the text oracle with a follow-up at every urgent task's ``earliest`` (set at the
first call), over every pair and seeds 0, 1000, 1001: wherever the urgent task got work before its
window opened, the decision's "now" holds.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from proactive_env.baselines.oracle import TextOracleAgent
from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.evaluate import play
from proactive_env.spec import PERSONAS, format_at, shipped_names

SEEDS = (0, 1000, 1001)
SESSIONS = Path(__file__).resolve().parents[1] / "docs" / "blind-sessions"
WORK = ("work", "present", "execute")


class EarlyOracle(TextOracleAgent):
    """The text oracle, first setting a follow-up at each urgent task's ``earliest`` that falls
    before its decision's window (the agent's own follow-up brings the task forward to it)."""

    name = "text-oracle+early-urgent"

    def reset(self, env, seed: int) -> None:
        super().reset(env, seed)
        self._early: list[int] | None = None

    def act(self, obs: str, info: dict) -> str:
        if self._early is None:
            tasks = {t.spec.id: t.spec for t in self.world.tasks}
            self._early = sorted({tasks[d.urgent].trigger.earliest for d in self.world.scenario.ta_decisions
                                  if d.urgent in tasks and tasks[d.urgent].trigger.earliest is not None
                                  and tasks[d.urgent].trigger.earliest < d.start})
        if self._early:
            at = format_at(self._early.pop(0))
            return json.dumps({"tool": "schedule_followup", "arguments": {"at": at, "note": "see what is due"}})
        return super().act(obs, info)


@functools.lru_cache(maxsize=None)
def _early_play(scenario: str, persona: str, seed: int) -> dict:
    return play(EarlyOracle(), scenario, persona, seed)


def _served_early(run: dict, decision) -> bool:
    """Did the urgent task get work in the run before the decision's window opened?"""
    return any(e.get("task") == decision.urgent and e["type"] in WORK and e.get("start", e["t"]) < decision.start
               for e in run["log"])


@pytest.mark.parametrize("scenario", shipped_names())
def test_urgent_work_done_before_the_window_opens_serves_the_decision(scenario):
    from proactive_env.spec import load_scenario

    decisions = {d.id: d for d in load_scenario(scenario).ta_decisions}
    early = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            run = _early_play(scenario, persona, seed)
            for d in run["scores"]["ta_decisions"]:
                if _served_early(run, decisions[d["id"]]):
                    early += 1
                    assert d["now"], (scenario, persona, seed, d)
    if scenario in ("monitor", "meal_planning"):  # their urgent tasks declare an `earliest` before the window
        assert early, f"{scenario}: no urgent task was served before its window"


def test_round_25s_order_placed_before_the_design_review_window_is_now():
    """The exact calls: the follow-up brought t06 forward to D2 07:00 and the order was placed then;
    the CarePlus offer (08:15) was deferred to after the review. ta1 is won (J 0.833 → 0.944)."""
    session = json.loads((SESSIONS / "blind25-monitor-operator-1024.session.json").read_text())
    env = ProactivityTextEnv(session["scenario"], persona=session["persona"])
    env.reset(seed=session["seed"])
    for call in session["calls"]:
        env.step(call)
    scores = env.trajectory(agent="blind25")["scores"]
    ta1 = next(d for d in scores["ta_decisions"] if d["id"] == "ta1_purchase_before_warranty")
    assert ta1["now"] and ta1["later"], ta1
    assert scores["J"] > 0.94, scores["J"]
