"""Facts in executed work (issue #20, blind-play round 18): what the executed action's arguments
state — the work the agent did through a domain tool — is the agent's own content without being
restated in prose; an argument copied from a record still counts for nothing."""

import json

import pytest

from proactive_env.baselines import TextOracleAgent
from proactive_env.evaluate import play
from proactive_env.scoring.judge import TaskWork, action_words, copying, facts_stated, substantive
from proactive_env.spec import load_scenario


class _Silent(TextOracleAgent):
    """The text oracle, except that on the named tasks its notes and messages say nothing: their
    work is only the domain tool it executes (round 18: the practice set, the flashcards)."""

    def __init__(self, silent):
        super().__init__()
        self.silent = set(silent)

    def act(self, obs, info):
        call = json.loads(super().act(obs, info))
        args = call["arguments"]
        if call["tool"] in ("write_note", "message_user") and args.get("about") in self.silent:
            args["text"] = "Working on this now."
        return json.dumps(call)


def _task(trajectory, task_id):
    return next(t for t in trajectory["scores"]["tasks"] if t["task"] == task_id)


@pytest.mark.parametrize("task_id", ["t12_practice_set"])
def test_work_done_through_a_domain_tool_states_its_facts_without_prose(task_id):
    """Round 18 (exam_prep / operator / 1003): executed tasks scored outputs 50 and no semantics,
    because a fact counted only in the agent's prose. The practice set saved with its questions
    states them. (Round 18's flashcards, t05, were re-authored in suite 0.6.0 into a set made
    with Jamie in review mode, whose facts are the session's, not the saved notebook's.)"""
    trajectory = play(_Silent({task_id}), "exam_prep", "operator", 1003)
    scored = _task(trajectory, task_id)
    assert scored["components"]["outputs"] == 1.0 and scored["components"]["semantics"] > 0, scored


def test_copied_arguments_state_nothing_and_never_make_the_prose_look_copied():
    s = load_scenario("exam_prep")
    task = next(t for t in s.tasks if t.id == "t12_practice_set")
    records = [f"{r.title}\n{r.text}" for r in s.records]
    pasted = {"title": "Practice set", "content": [r.text for r in s.records if r.id in task.evidence]}
    line = f"save_study_plan({json.dumps(pasted, sort_keys=True, ensure_ascii=False)})"
    own = copying(line, records).own_text
    work = TaskWork(task.id, line, own, tuple(task.evidence), 1, 1, False, True, 0, 0)
    assert not facts_stated(task, work) and not substantive(task, work)
    prose = "\n".join(f.text for f in task.facts)
    both = copying(f"{prose}\n{line}", records).own_text
    assert all(f.text.split()[0] in both for f in task.facts)  # the prose stays the agent's own beside a pasted argument


def test_action_words_read_each_argument_and_each_entry_as_a_sentence():
    line = 'place_grocery_order({"items": [{"item": "Limes 3-pack", "price_usd": 1.5}], "total_usd": 76.93, "voucher": "SPRING10"})'
    assert action_words(line).split("\n") == ["Limes 3-pack, $1.50", "$76.93", "SPRING10"]
    assert action_words("a note, not a call") == ""
