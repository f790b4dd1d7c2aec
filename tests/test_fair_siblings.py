"""A note under a matter goes to the open work it fits, never to a finished sibling (blind round 26,
exam_prep/planner/1030: "t04's note was filed to a sibling task that had already finished").

One matter (a message or notification) can raise several tasks. A call naming it with ``about``
stays under it and goes to the task there its words fit (``TextTools.attribute``); a task whose
work is over (all its units done, and as deep as the user wants it) receives it only where no task
of the matter with work left fits it at all. Swept over every pair and seeds 0, 1000, 1001: the
text oracle plays until a matter that raised two or more tasks has one finished and another with
work left; then a note under that matter in the oracle's words for the open sibling, and one that
also recaps the finished sibling's facts (a careful player's summary), both count for the open one.
"""

from __future__ import annotations

import functools
import json

import pytest

from proactive_env.baselines.oracle import TextOracleAgent, work_text
from proactive_env.evaluate import play
from proactive_env.replay import scenario_of
from proactive_env.scoring import score_log
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1000, 1001)


def _over(world, t) -> bool:
    """Is the task's work over: every unit done, and as deep as the user wants it?"""
    return t.units_done >= t.spec.work.units and not t.running and world.reached_wanted(t)


def _forms(open_task, finished) -> dict[str, str]:
    """The notes probed for the open sibling: the oracle's own, and one that recaps the finished
    sibling's facts too (it shares more of the finished one's words than of its own)."""
    recap = " ".join(f.text for f in finished.spec.facts)
    return {"own": work_text(open_task), "recap": f"{work_text(open_task)}\nAlready done: {recap}"}


class _SiblingNotes(TextOracleAgent):
    """The text oracle; the first time a matter that raised two or more tasks has one whose work is
    over and one with work left, it writes the probe notes under that matter (its id, as the agent
    sees it) and records which task each counted for."""

    name = "text-oracle-sibling-notes"

    def reset(self, env, seed: int) -> None:
        super().reset(env, seed)
        self.probed: set[str] = set()
        self.cases: list[dict] = []
        self.queued: list[tuple[dict, dict]] = []

    def act(self, obs, info):
        w = self.world
        if self.queued:
            call, case = self.queued.pop(0)
            since = len(w.log)
            case["since"] = since
            self.cases.append(case)
            return json.dumps(call)
        if not self.pending:
            for m in list(w.matters.values()):
                if m.own or m.id in self.probed or len(m.tasks) < 2:
                    continue
                tasks = [w.tasks[i] for i in m.tasks if w.tasks[i].active and not w.tasks[i].closed]
                finished = [t for t in tasks if _over(w, t)]
                left = [t for t in tasks if not _over(w, t)]
                if not finished or not left:
                    continue
                self.probed.add(m.id)
                for o in left:
                    for form, text in _forms(o, finished[0]).items():
                        for about in ({"about": m.id}, {}):
                            self.queued.append(({"tool": "write_note", "arguments": {"text": text, **about}},
                                                {"matter": m.id, "open": o.spec.id, "finished": finished[0].spec.id,
                                                 "form": form, "about": bool(about)}))
            if self.queued:
                return self.act(obs, info)
        return super().act(obs, info)


@functools.lru_cache(maxsize=None)
def _played(scenario: str, persona: str, seed: int) -> list[dict]:
    """Each probe: the matter, the open and finished siblings, the note's form, and the task the
    world's log filed the note for."""
    agent = _SiblingNotes()
    trajectory = play(agent, scenario, persona, seed)
    log = agent.world.log
    rescored = score_log(scenario_of(trajectory), persona, log)["J"]
    assert rescored == pytest.approx(trajectory["scores"]["J"], abs=1e-12), (scenario, persona, seed)  # rescore = live
    out = []
    for case in agent.cases:
        note = next(e for e in log[case["since"]:] if e["type"] == "note")
        out.append({**case, "filed": note.get("task")})
    return out


def _sweep() -> list[tuple]:
    return [(scenario, persona, seed, case) for scenario in shipped_names() for persona in PERSONAS
            for seed in SEEDS for case in _played(scenario, persona, seed)]


def test_a_note_under_a_matter_goes_to_its_open_sibling():
    """Class sweep: every probe's note under the matter counts for the sibling with work left,
    never the finished one. On the old code the careful summary's note (``recap``) went to the
    finished sibling in 45 of 81 probes (exam_prep's t04 note to t05 among them, round 26's case):
    where it shared more of that one's words, or as many and that one was due first."""
    cases = [c for c in _sweep() if c[3]["about"]]
    wrong = [c for c in cases if c[3]["filed"] != c[3]["open"]]
    assert cases and {c[3]["form"] for c in cases} == {"own", "recap"}
    assert not wrong, f"{len(wrong)} of {len(cases)}: {wrong[:5]}"


def test_without_about_a_recap_of_finished_work_does_not_out_fit_the_open_one():
    """The same notes without ``about`` go to the matter their words fit best: where the oracle's
    own note for the open sibling is placed there, the one that also recaps the finished sibling's
    facts is too (the finished one's sentences are left out of the judgement, as a ``besides``'s
    are). On the old code 45 of those 72 went to the finished sibling. (Where the oracle's own words
    do not place the open sibling without ``about`` at all — household_finances t15: they name too
    little that only it has, ``RAISED_CLAIM`` — nothing with work left fits, and the finished
    sibling may take the recap, the follow-up the rule allows.)"""
    played = {(s, p, seed, c["matter"], c["open"], c["form"]): c["filed"]
              for s, p, seed, c in _sweep() if not c["about"]}
    placed = [k for k, filed in played.items() if k[-1] == "own" and filed == k[4]]
    wrong = [k for k in placed if played[(*k[:-1], "recap")] != k[4]]
    assert placed
    assert not wrong, f"{len(wrong)} of {len(placed)}: {wrong[:5]}"
