"""A call filed by its words goes to a task only when it is mostly about it (issue #20, blind play
round 23, conference_trip / operator / 1019): one shared phrase or quantity claims nothing, and a
matter that brought a record a need rests on can carry that need's work and action.

Round 23: at D1 08:30 a long note on the Weybosset hotel hold, no ``about``, waited; at 10:30 the
ESTA task came up and took it through one clause, "free cancellation until 72 h before arrival"
(its fact: apply "72 hours" before travel), opening a matter titled with that clause. At D2 10:32
the hotel decision noted ``about: m1`` (Priya's trip request, which asked about the hotel) went
to the registration and "also" to the ESTA task again, and ``book_hotel`` about m1 was refused
("m1 calls for no such action now"); the hotel task had come up with Mina's reply (m9)."""

import json
import re

import pytest

from noninterference import text_world
from proactive_env.baselines.oracle import work_text
from proactive_env.sim import ToolError
from proactive_env.sim.tools import _sentences
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1000, 1001)
CASES = [(name, persona) for name in shipped_names() for persona in PERSONAS]
ROUND23 = "blind23-conference_trip-operator-1019"  # its first 58 calls (tests/data)


_world = text_world


def _decision_points(name, persona):
    """Every decision point of the pair's run on each seed, the tools' kept calls settled."""
    for seed in SEEDS:
        world, tools = _world(name, persona, seed)
        while not world.done:
            world.advance()
            if world.done:
                break
            tools.settle()
            yield seed, world, tools


def _quantities(task) -> list[str]:
    """The task's fact needles that are quantities: a number with a unit, a time, a date, an amount."""
    return [n for f in task.spec.facts for n in f.needles() if re.search(r"\d", n) and not re.search(r"[A-Z]{2}-\d", n)]


def _points_at(tools, text):
    return tools.attribute(text, file=False)


@pytest.mark.parametrize("name,persona", CASES)
def test_one_sentence_of_another_task_never_takes_a_note_from_its_own(name, persona):
    """Class sweep over every pair and three seeds, at every decision point: each open task's
    oracle note (its title, facts and codes, no ``about``) that goes to it still goes to it with
    one sentence of another open task's fact appended — both filed now and kept for a task that
    comes up (``settle``'s claims)."""
    probes = 0
    for seed, world, tools in _decision_points(name, persona):
        open_now = [t for t in tools.open_tasks() if t.spec.facts]
        for task in open_now:
            note = work_text(task)
            if _points_at(tools, note) is not task:
                continue
            for other in open_now:
                if other is task:
                    continue
                text = f"{note}\n{other.spec.facts[0].text}"
                where = f"{name}/{persona}/{seed} {world.clock_text()} {task.spec.id} + {other.spec.id}"
                assert _points_at(tools, text) is task, where
                if task.trigger == world.now:  # kept before it came up: it counts for it now
                    claims = tools._claims({"kind": "note", "text": text, "t": world.now - 1}, [task, other])
                    assert max(claims, key=lambda st: st[0])[1] is task, where
                probes += 1
    assert probes > 0


@pytest.mark.parametrize("name,persona", CASES)
def test_a_note_on_a_need_still_to_come_sharing_one_quantity_with_an_open_one_waits(name, persona):
    """Class sweep over every pair and three seeds, at every decision point: a note on a task not
    yet come up (its oracle note) whose sentences name nothing that came up still waits with one
    quantity of an open task (a number with a unit, a time, a date) added — neither filed now
    nor claimed by that task as it comes up."""
    probes = 0
    for seed, world, tools in _decision_points(name, persona):
        hidden = [t for t in world.tasks if not t.triggered and t.spec.facts]
        for other in tools.open_tasks():
            for quantity in _quantities(other)[:2]:
                for task in hidden:
                    note = work_text(task)
                    pointers = tools._pointers(note, other)
                    if len(pointers) < len(_sentences(note)) or any(i is not None for i in pointers):
                        continue  # it names something that came up (a need following from one): not this case
                    text = f"{note}\nAlso: {quantity}."
                    where = f"{name}/{persona}/{seed} {world.clock_text()} {task.spec.id} ~ {other.spec.id} {quantity!r}"
                    assert _points_at(tools, text) is None, where
                    if not tools._claims({"kind": "note", "text": note, "t": world.now - 1}, [other]):
                        assert not tools._claims({"kind": "note", "text": text, "t": world.now - 1}, [other]), where
                    probes += 1
    assert probes > 0


@pytest.mark.parametrize("name,persona", CASES)
def test_a_call_naming_a_matter_that_brought_a_needs_record_goes_to_that_need(name, persona):
    """Class sweep over every pair and three seeds: for every open task and every listed matter
    that brought one of its evidence records (besides the matters that raised it), a note stating
    the task's facts and an execute of its action naming that matter go to the task."""
    probes = 0
    for seed, world, tools in _decision_points(name, persona):
        for task in tools.open_tasks():
            for matter in [m for m in list(world.matters.values()) if set(m.records) & set(task.spec.evidence)
                           and task.index not in m.tasks]:
                if task.closed or not task.active:
                    break
                where = f"{name}/{persona}/{seed} {world.clock_text()} {task.spec.id} about {matter.id}"
                assert task.index in tools.concerns(matter), where
                if task.spec.facts:
                    since = len(world.log)
                    said = tools.call("write_note", {"text": work_text(task), "about": matter.id})
                    got = next((e["task"] for e in world.log[since:] if e["type"] == "note"), None)
                    assert got == task.spec.id and said.startswith(f"Noted under {matter.id}."), f"{where}: {said}"
                    probes += 1
                if task.spec.action and not task.executed:
                    since = len(world.log)
                    try:
                        said = tools.call(task.spec.action.tool, {**task.spec.action.args, "about": matter.id})
                    except ToolError as refused:
                        said = str(refused)
                    got = next((e["task"] for e in world.log[since:] if e["type"] == "execute"), None)
                    assert got == task.spec.id, f"{where}: {said}"
                    probes += 1
    assert probes > 0


def _replay(upto: int):
    from runs import replayed_calls

    return replayed_calls(ROUND23, upto)


def test_round_23_the_hotel_note_waits_for_the_hotel_and_m1_carries_the_booking():
    """Round 23 (conference_trip / operator / 1019), the calls quoted from the session: the hotel
    note of D1 08:30 ("... deposit of $247.47 (first night incl. tax) is charged at once; free
    cancellation until 72 h before arrival. ...") no longer goes to the ESTA task at 10:30 but to
    the hotel task when it comes up (m9, D2 10:32); the hotel decision noted `about: m1` goes to the
    hotel task with no "also" for the ESTA; `book_hotel` about m1 is done under m1."""
    env, calls, said = _replay(58)
    world = env.world
    assert json.loads(calls[16])["arguments"]["text"].startswith("Hotel: the ICDS courtesy hold HH-40716")
    counts = [line for line in world.inbox if "(\"Hotel: the ICDS courtesy hold" in line]
    assert len(counts) == 1 and counts[0].startswith("[D2 (Tue 9 Jun) 10:32]") and "now counts for m9." in counts[0], counts
    esta = world.by_id["t03_esta_check"]
    assert not any("72 h before arrival" in m.title for m in world.matters.values())
    assert json.loads(calls[54])["arguments"]["about"] == "m1"
    assert said[54].startswith("Noted under m1.") and "also counts" not in said[54], said[54]
    notes = [e for e in world.log if e["type"] == "note" and e.get("task") == esta.spec.id]
    assert not any("Weybosset" in e["text"] for e in notes)
    assert json.loads(calls[56])["arguments"] == {
        "hotel": "The Weybosset Hotel", "hold_ref": "HH-40716", "room": "1 King", "check_in": "2026-06-14",
        "check_out": "2026-06-18", "rate_usd": 219, "payment": "Visa ending 2210", "about": "m1"}
    assert said[56].startswith("Done: book_hotel under m1."), said[56]
    assert world.by_id["t06_hotel_hold"].executed
