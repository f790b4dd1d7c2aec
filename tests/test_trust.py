"""The trust model against the human-study calibration (paper §5.3)."""

import pytest

from proactive_env import TrustModel
from proactive_env.sim.trust import INITIAL
from proactive_env.spec import shipped_names


def run(sequence: str, over: bool = False) -> list[float]:
    model = TrustModel()
    values = [model.value]
    for step in sequence:
        model.update(step == "A", over_intervention=over and step == "M")
        values.append(model.value)
    return values


def test_starts_at_study_level():
    assert TrustModel().value == pytest.approx(4.43)
    assert INITIAL == pytest.approx(4.43)


@pytest.mark.parametrize("sequence, expected, tol", [
    ("AM", -1.86, 0.15), ("MA", 1.27, 0.15), ("AA", 0.17, 0.10), ("MM", -0.44, 0.10)])
def test_transition_changes(sequence, expected, tol):
    values = run(sequence)
    assert values[2] - values[1] == pytest.approx(expected, abs=tol)


def test_ama_recovers_only_partly():
    values = run("AMA")
    assert values[-1] == pytest.approx(3.43, abs=0.15)
    assert values[-1] < values[1]  # below where it started although the last one is aligned


def test_losses_exceed_gains_and_over_intervention_hurts_more():
    assert abs(run("AM")[2] - run("AM")[1]) > run("MA")[2] - run("MA")[1]
    assert run("AM", over=True)[2] < run("AM")[2]


def test_bounded():
    assert min(run("M" * 20)) >= 1.0
    assert max(run("A" * 50)) <= 5.0


@pytest.mark.parametrize("scenario", shipped_names())
def test_a_decline_says_which_rule_decided_it(scenario):
    """Round 24 (job_applications/planner): three requests for the Lumen application came back
    "nope, not that one" — declined for low trust, worded as the persona's scripted refusal, so the
    player rewrote a correct request. Every declining rule now says itself in the reply's tag, in
    every scenario's wording; an approval under a rule that may decline still reads approved."""
    from noninterference import text_world
    from proactive_env.sim.user import Decision

    world, _ = text_world(scenario, "planner", 0)
    task = world.tasks[0].spec.id
    said = {rule: world.reply_text(Decision(task, ("x",), "decline", rule, 0, 2.0, 2.0), "x")
            for rule in ("persona_declines", "low_trust", "competing_work", "sleep_time_work")}
    assert "trust in you is low" in said["low_trust"] and "competed" in said["competing_work"]
    assert "sleep time" in said["sleep_time_work"] and "answer to this one is no" in said["persona_declines"]
    assert len(set(said.values())) == 4 and all("[your request: declined" in text for text in said.values())
    approved = world.reply_text(Decision(task, ("x",), "approve", "competing_work", 0, 4.0, 4.0), "x")
    assert approved.endswith("[your request: approved]")


# ---------------------------------------------------------------------- repeats (issue #20)
def _first_welcome(name: str, persona: str, seed: int):
    """The pair's text-face world at the first moment an open task would take a message as
    aligned, with that task (None if none ever does)."""
    from noninterference import text_world

    from proactive_env.spec import Depth

    world, _ = text_world(name, persona, seed)
    while not world.done:
        world.advance()
        for task in world.tasks:
            if task.active and not task.closed and not task.executed and world.policy.aligned(task.spec, Depth.SUGGEST)[0]:
                return world, task
    return world, None


def _trust_entries(world) -> list[dict]:
    return [e for e in world.log if e["type"] == "trust"]


@pytest.mark.parametrize("seed", (0, 1000, 1001))
def test_a_message_said_again_with_nothing_new_moves_no_trust(seed):
    """On every pair: a welcome message sent again, however reworded, is a repeat (marked in the
    log, no trust reaction, so no A→A gain); once the agent has read something new for it the
    next one is a new intervention again."""
    from proactive_env.spec import PERSONAS, shipped_names

    checked = 0
    for name in shipped_names():
        for persona in PERSONAS:
            world, task = _first_welcome(name, persona, seed)
            if task is None:
                continue
            world.present(task, "Here is what I found.", request=False)
            reactions = len(_trust_entries(world))
            for text in ("Here is what I found.", "Again: here is what I found!", "Reminder."):
                world.present(task, text, request=False)
                assert world.log[-1]["type"] == "present" and world.log[-1].get("repeat"), (name, persona)
            assert len(_trust_entries(world)) == reactions, (name, persona)
            unread = [r for r in world.store.visible if r not in task.read]
            if unread:
                world.read(unread[0], task)
                world.present(task, "Here is what I found, with one more record.", request=False)
                assert not world.log[-2 if world.log[-1]["type"] == "trust" else -1].get("repeat")
                assert len(_trust_entries(world)) == reactions + 1, (name, persona)
            checked += 1
    assert checked >= 20


@pytest.mark.parametrize("scenario", shipped_names())
def test_asking_again_redraws_no_answer_but_low_trust_is_decided_afresh(scenario):
    """The same request again with nothing new gets the drawn answer already given (competing
    work: asking until yes is no way to a yes), while a rule that draws nothing is decided anew:
    a low-trust decline does not stick once trust is back."""
    from noninterference import text_world

    world, _ = text_world(scenario, "planner", 1000)
    asking = [t for t in world.tasks if t.spec.action and world.policy.rule(t.spec) not in ("execute", "prepare", "suggest")]
    if not asking:
        pytest.skip("no task asks the planner first")
    task, tool = asking[0], (asking[0].spec.action.tool,)
    task.competed = True
    drawn = {world._decide(task, tool, "x").verdict for _ in range(12)}
    assert len(drawn) == 1
    world.trust.value = 1.5
    assert world._decide(task, tool, "x").rule == "low_trust"
    world.trust.value = 4.5
    assert world._decide(task, tool, "x").rule == "competing_work"
