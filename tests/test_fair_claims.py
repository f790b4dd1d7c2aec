"""The world does what its texts say (issue #20, blind round 20).

A record, event or tool description that says what the world does by itself, or what an action
does, is a promise the engine must keep. Round 20 (experiments / operator / 1009): the night-slot
sheet said "a job attached to a booking starts automatically at 21:00" and ``book_gpu_slot`` was
"optionally with a job that starts in it"; the player booked the free half-night with the ablation
attached, no job ever ran, and t06 (a separate ``launch_job``) failed.

Whether a sentence is true of the engine is not decidable from its words, so the class is made
checkable as an authoring rule (docs/scenarios.md §10, "The world does what its texts say") and
a reviewed checklist: a detector finds every sentence that makes such a claim — automation words
(*automatically*, *will be sent*, *we'll*, *renews*, *released*, *holds … until*) and any execute
tool's text naming another execute tool's effect — and each must be reviewed in
``tests/world_claims.yaml`` with how the engine keeps it; each way is then checked on the spec.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import re
from collections.abc import Iterator

import pytest
import yaml

from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.spec import load_scenario, shipped_names
from proactive_env.spec.models import Scenario

CHECKLIST = pathlib.Path(__file__).with_name("world_claims.yaml")

# Words that say the world does something by itself, or that an action does more than its name
# (and the future passive, "will be removed", "will be ready": what will happen without the agent).
_CLAIM = re.compile(
    r"\b(?:automatic(?:ally)?|auto-\w+|by itself|on its own|optionally with"
    r"|will (?:be )?(?:sent|charged|renewed|released|cancelled|confirmed|booked|notified|emailed|posted|paid"
    r"|delivered|collected|added|refunded|run|started|start)"
    r"|we['’]ll \w+|we will \w+|renews?|(?:is|are|gets?) (?:released|sent|charged|renewed|cancelled)"
    r"|released (?:to|at|on)|starts? (?:in|at) it|starts? automatically|runs? by itself"
    r"|(?:and|also) (?:sends?|books?|starts?|launches?|notif\w+|adds?|charges?|orders?|pays?|reminds?)"
    r"|notified|reminds?|holds? .{0,30}?until|until the .{0,20}?cut-off"
    r"|will (?:not )?be \w+|goes out|goes to the waitlist|starts? at \d\d:\d\d on)\b", re.I)
_NEGATION = re.compile(r"\b(?:not|no|never|nothing|none|don't|doesn't|won't|isn't)\b", re.I)
KINDS = ("event", "deadline", "action", "denies", "outside", "own")


@dataclasses.dataclass(frozen=True)
class Claim:
    where: str  # record:<id>, record:<id>@<version>, event:<id>, tool:<name>, tool:<name>.<param>
    sentence: str
    marker: str


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", " ".join(str(text).split())) if s]


def _texts(scenario: Scenario) -> Iterator[tuple[str, str]]:
    """Every text the agent can be shown that speaks of what the world or an action does."""
    for record in scenario.records:
        yield f"record:{record.id}", record.text
        for i, version in enumerate(record.versions):
            if version.text:
                yield f"record:{record.id}@{i}", version.text
    for event in scenario.events:
        yield f"event:{event.id}", event.text
    for tool in scenario.tools:
        yield f"tool:{tool.name}", tool.description
        for name, param in tool.params.items():
            if param.description:
                yield f"tool:{tool.name}.{name}", param.description


def _effect_nouns(scenario: Scenario) -> dict[str, re.Pattern]:
    """Each execute tool's effect as words ("job" for launch_job, "hotel booking" for book_hotel)."""
    return {t.name: re.compile(rf"\b{re.escape(t.creates.replace('_', ' '))}s?\b", re.I)
            for t in scenario.tools if t.depth == "execute" and t.creates}


def found_claims(scenario: Scenario) -> list[Claim]:
    """The sentences of ``scenario`` that claim what the world or an action does."""
    effects = _effect_nouns(scenario)
    claims = []
    for where, text in _texts(scenario):
        tool = where.split(":", 1)[1].split(".")[0] if where.startswith("tool:") else None
        for sentence in _sentences(text or ""):
            marker = _CLAIM.search(sentence)
            if marker:
                claims.append(Claim(where, sentence, marker.group(0)))
                continue
            if tool in effects:  # an execute tool's text naming another execute tool's effect
                other = next((name for name, noun in effects.items() if name != tool and noun.search(sentence)), None)
                if other:
                    claims.append(Claim(where, sentence, f"{other}'s effect"))
    return claims


_DOES = r"(?:starts?|runs|launch(?:es)?|sends?|places?|books?|pays?|orders?|submits?|creates?|schedules?|queues?)"


def _says_it_does(sentence: str, noun: str) -> bool:
    """Does the sentence say, without a negation, that something does ``noun``'s effect: a doing
    verb with the noun as its object ("starts a job") or the noun's own doing ("a job that starts")?"""
    words = re.escape(noun)
    object_of = re.search(rf"\b{_DOES}\b(?:\W+\w+){{0,3}}?\W+{words}s?\b", sentence, re.I)
    subject_of = re.search(rf"\b{words}s?\W+(?:that|which)\W+(?:\w+\W+)?{_DOES}\b", sentence, re.I)
    return bool(object_of or subject_of) and not _NEGATION.search(sentence)


def claims_of_another_tasks_action(scenario: Scenario) -> list[str]:
    """Execute tools whose text says they do the effect of another task's scored action (a tool
    making the same kind of thing is not another's)."""
    tools = {t.name: t for t in scenario.tools}
    out = []
    for task in scenario.tasks:
        scored = tools.get(task.action.tool) if task.action else None
        if scored is None or not scored.creates:
            continue
        noun = scored.creates.replace("_", " ")
        for tool in scenario.tools:
            if tool.depth != "execute" or tool.name == scored.name or tool.creates == scored.creates:
                continue
            texts = [tool.description] + [p.description for p in tool.params.values() if p.description]
            out += [f"{tool.name}: {s!r} claims {task.id}'s {scored.name}" for text in texts
                    for s in _sentences(text) if _says_it_does(s, noun)]
    return out


def _checklist() -> dict[str, list[dict]]:
    return yaml.safe_load(CHECKLIST.read_text(encoding="utf-8"))


def _entry_for(entries: list[dict], claim: Claim) -> list[dict]:
    return [e for e in entries if e["where"] == claim.where and e["says"].lower() in claim.sentence.lower()]


SCENARIOS = shipped_names()


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_claim_about_what_the_world_does_is_reviewed(name):
    """A sentence saying what the world or an action does, added anywhere, fails here until it is
    reviewed in tests/world_claims.yaml with how the engine keeps it."""
    entries = _checklist().get(name, [])
    unreviewed = [c for c in found_claims(load_scenario(name)) if len(_entry_for(entries, c)) != 1]
    assert not unreviewed, "\n".join(
        f"{name} {c.where} [{c.marker}]: {c.sentence!r} — review it in {CHECKLIST.name} (exactly one entry)"
        for c in unreviewed)


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_checklist_has_no_stale_entry(name):
    claims = found_claims(load_scenario(name))
    stale = [e for e in _checklist().get(name, []) if not any(_entry_for([e], c) for c in claims)]
    assert not stale, f"{name}: entries that match no claim any more: {stale}"


@pytest.mark.parametrize("name", SCENARIOS)
def test_no_tool_says_it_does_what_another_tasks_scored_action_does(name):
    """For each task's scored action, no other execute tool's text says it does that action's
    effect: the scorer would refuse the tool the text offers (round 20's "book_gpu_slot …
    optionally with a job that starts in it" beside t06's launch_job)."""
    assert not claims_of_another_tasks_action(load_scenario(name))


def _minute(scenario: Scenario, at: str) -> int:
    day, clock = at.split()
    hours, minutes = clock.split(":")
    return (int(day[1:]) - 1) * 1440 + int(hours) * 60 + int(minutes)


def _kept(scenario: Scenario, entry: dict, claim: Claim) -> str:
    """Why the entry does not keep the claim ('' when it does)."""
    tasks = {t.id: t for t in scenario.tasks}
    kind = entry["kept"]
    if kind not in KINDS:
        return f"kept: {kind!r} is not one of {KINDS}"
    if kind == "event":
        known = {e.id for e in scenario.events} | {r.id for r in scenario.records}
        missing = [i for i in entry.get("by", []) if i not in known]
        return f"no event or record {missing}" if missing or not entry.get("by") else ""
    if kind in ("deadline", "action") and entry.get("task") not in tasks:
        return f"no task {entry.get('task')!r}"
    if kind == "deadline":
        # The scorer closes the task no later than the time the text names, and not much earlier:
        # a careful player acting on the text's time is neither failed nor credited after it.
        at = _minute(scenario, entry["at"])
        deadline = tasks[entry["task"]].deadline
        return "" if 0 <= at - deadline <= 180 else f"deadline {deadline} is not within 3 h before {entry['at']}"
    if kind == "action":
        action = tasks[entry["task"]].action
        tool = entry.get("tool")
        if action is None or action.tool != tool:
            return f"{entry['task']}'s scored action is not {tool}"
        if claim.where.startswith("tool:") and claim.where[5:].split(".")[0] != tool:
            return f"{claim.where} credits {tool}, not itself"
        return ""
    if kind == "denies":
        return "" if _NEGATION.search(claim.sentence) else "the sentence denies nothing"
    return "" if entry.get("why") else "say why"


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_reviewed_claim_is_kept_the_way_its_entry_says(name):
    scenario = load_scenario(name)
    entries = _checklist().get(name, [])
    wrong = [f"{c.where} {c.sentence!r}: {why}" for c in found_claims(scenario) for e in _entry_for(entries, c)
             if (why := _kept(scenario, e, c))]
    assert not wrong, "\n".join(wrong)


def test_the_detector_finds_the_round_20_claims():
    """The two sentences round 20 trusted would be caught (kept from a copy, as they were)."""
    scenario = load_scenario("experiments")
    sheet = next(r for r in scenario.records if r.id == "booking_sheet")
    book = next(t for t in scenario.tools if t.name == "book_gpu_slot")
    old = scenario.model_copy(update={
        "records": [sheet.model_copy(update={"text": "Slot 21:00–08:30; a job attached to a booking starts "
                                                     "automatically at 21:00."})],
        "events": [],
        "tools": [book.model_copy(update={"description": "Book a free night slot on the lab's night-slot sheet "
                                                         "for Dana, optionally with a job that starts in it."}),
                  next(t for t in scenario.tools if t.name == "launch_job")]})
    found = {(c.where, c.marker.lower()) for c in found_claims(old)}
    assert ("record:booking_sheet", "starts automatically") in found
    assert ("tool:book_gpu_slot", "optionally with") in found
    assert ("book_gpu_slot: \"Book a free night slot on the lab's night-slot sheet for Dana, optionally with a job "
            "that starts in it.\" claims t06_ablation_queue's launch_job") in claims_of_another_tasks_action(old)


def _step(env, tool, **arguments):
    return env.step(json.dumps({"tool": tool, "arguments": arguments}))[0]


def test_round_20_a_booking_with_the_ablation_attached_runs_nothing_and_says_so():
    """Round 20, call 66, as played: book_gpu_slot {"node": "apl-gpu02", "gpus": "4-7", "night":
    "2026-04-15", "slot": "01:30-08:30", "job": "scripts/run_ablation.sh", "note": ...}. The booking
    is done and runs nothing; what the agent reads says so; the ablation still needs launch_job."""
    env = ProactivityTextEnv("experiments", "operator")
    env.reset(seed=1009)
    world = env.world
    booking, ablation = world.by_id["t08_book_wednesday"], world.by_id["t06_ablation_queue"]
    seen = []
    while not (booking.active and ablation.active):
        seen.append(_step(env, "wait"))
    result = _step(env, "book_gpu_slot", node="apl-gpu02", gpus="4-7", night="2026-04-15", slot="01:30-08:30",
                   job="scripts/run_ablation.sh",
                   note="Dana: KD/TMA ablation eval on ImageNet-C (no-KD, no-TMA, neither; eval.batch_size=128), "
                        "~6.5 h, for Thu 1:1")
    assert result.startswith("Done: book_gpu_slot") and booking.executed and not ablation.executed
    while "NS-0415-G2B" not in seen[-1] and len(seen) < 200:  # the sheet's confirmation
        seen.append(_step(env, "wait"))
    seen.append(_step(env, "read_record", record_id="booking_sheet"))
    text = " ".join(seen)
    assert "starts no job" in text and "runs nothing by itself" in text
    assert not re.search(r"starts automatically|starts in it", text)
    described = {t.name: t.description for t in load_scenario("experiments").tools}["book_gpu_slot"]
    assert "starts nothing" in described and "launch_job" in described
    assert _step(env, "launch_job", **ablation.spec.action.args).startswith("Done: launch_job")
    assert ablation.executed


def test_registration_is_open_until_the_time_the_records_give():
    """The fee page and the acceptance email say the early bird and the author deadline end at
    23:59 EDT on Wednesday 10 June (04:59 UK): an operator who registers at 23:30 UK that night is
    on time. The task used to close at 21:00 UK, 8 hours before the records' deadline."""
    env = ProactivityTextEnv("conference_trip", "operator")
    env.reset(seed=0)
    world = env.world
    registration = world.by_id["t02_registration"]
    late_evening = 2 * 1440 + 23 * 60 + 30  # D3 23:30 UK = 18:30 EDT
    assert _step(env, "schedule_followup", at="D3 23:30").startswith("Follow-up set")
    while world.now < late_evening:
        _step(env, "wait")
    assert world.now == late_evening and registration.active and not registration.closed
    result = _step(env, "submit_registration", **registration.spec.action.args)
    assert result.startswith("Done: submit_registration") and registration.executed
