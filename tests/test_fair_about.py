"""What a call is about is what the agent said (blind play rounds 21–22): a call that names a
matter with ``about`` is filed under that matter and stays there — never moved later to another
— and where that matter concerns several things (one message that raised two), the call goes to
the one among them that it fits: the action it names, its arguments, its words.

Round 22, apartment_move / operator / 1017: Sam's D6 12:00 message (m16 there) picked the
broadband and asked for the council-tax form; four requests for the form, two `about: m16`, were
"kept: fits no open matter", the execute was then unauthorised and the form never went out.
Round 22, household_finances / reviewer / 1015: a note sent `about: m5` ("Noted under m5.") later
"now counts for m6"; notes under m7 moved to m10; a message `about: m8` came back "Delivered
under m15"."""

import re

import pytest

from noninterference import text_world
from proactive_env.sim import ToolError
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1000, 1001)
CASES = [(name, persona) for name in shipped_names() for persona in PERSONAS]
_COUNTS = re.compile(r"Your (note|message|request|postponement) of (.+?) \(\"(.*?)\"\) now counts (also )?for (m\d+)")
_UNDER = re.compile(r"\bunder (m\d+)\b")


_world = text_world


def _call(tools, name, **args):
    try:
        return tools.call(name, args)
    except ToolError as refused:
        return f"Error: {refused}"


def _credited(world, since: int) -> str | None:
    """The task the first crediting entry logged since ``since`` names (a note, a showing, a
    postponement, an execute): what the call counted for."""
    return next((e["task"] for e in world.log[since:] if e["type"] in ("note", "present", "defer", "execute")
                 and e.get("task")), None)


def _facts(task) -> str:
    return " ".join(f.text for f in (*task.spec.facts, *task.spec.constraints.must_include))


def _some_args(task, others) -> dict:
    """The task's action arguments as an agent that got some of them off might give them: half the
    compared ones (all of them where another task of the matter acts with the same tool, so that
    the arguments are what tells the two apart)."""
    action = task.spec.action
    args = dict(action.args)
    if any(o.spec.action and o.spec.action.tool == action.tool for o in others):
        return args
    compared = [k for k in args if k not in action.free_text]
    return {k: v for i, (k, v) in enumerate(args.items()) if k not in compared or 2 * compared.index(k) < len(compared)}


@pytest.mark.parametrize("name,persona", CASES)
def test_a_call_naming_a_matter_of_several_things_goes_to_the_one_it_fits(name, persona):
    """Class sweep over every pair and three seeds: wherever an event raises a matter concerning
    more than one task, a note, a message and a postponement naming that matter and stating one
    task's facts, and an approval request naming that task's action (with some of its arguments
    off), each count for that task — none is kept for later or given to the other."""
    for seed in SEEDS:
        world, tools = _world(name, persona, seed)
        seen = 0
        while not world.done:
            world.advance()
            if world.done:
                break
            tools.settle()
            fresh = list(world.matters.values())[seen:]
            seen = len(world.matters)
            for matter in [m for m in fresh if len(m.tasks) > 1]:
                tasks = [world.tasks[i] for i in matter.tasks]
                for task in [t for t in tasks if t.active and not t.closed]:
                    others = [o for o in tasks if o is not task]
                    where = f"{name}/{persona}/{seed} {matter.id} {task.spec.id}"
                    calls = [("request_approval", {"message": f"May I {task.spec.action.tool.replace('_', ' ')}?",
                                                   "actions": [{"tool": task.spec.action.tool,
                                                                "args": _some_args(task, others)}]})
                             ] if task.spec.action and not task.executed else []
                    if _facts(task):
                        calls += [("write_note", {"text": _facts(task)}), ("message_user", {"text": _facts(task)}),
                                  ("defer_task", {"what": _facts(task), "plan": "pick it up after the other thing"})]
                    for tool, args in calls:
                        since = len(world.log)
                        said = _call(tools, tool, **args, about=matter.id)
                        assert _credited(world, since) == task.spec.id, f"{where} {tool}: {said}"
                        assert _UNDER.search(said)[1] == matter.id, f"{where} {tool}: {said}"


def _spotted_probes(world, tools, calls: list, done: set) -> None:
    """One decision point of the filing script: every call names a matter the agent was shown.
    Each new matter gets a note in the words of what it brought; a need no matter concerns yet
    (one the agent could spot) gets a note and a message stating its facts under the latest
    matter, and every action still to come a request with its own arguments under the first."""
    named = [m for m in world.matters.values() if not m.own]
    for matter in named:
        if matter.id in done:
            continue
        done.add(matter.id)
        words = " ".join([matter.title, *(world.store.view(r).title for r in matter.records if r in world.store.visible)])
        calls.append(("write_note", {"text": f"[{matter.id}] {words}", "about": matter.id}))
    if not named:
        return
    for task in world.tasks:
        if task.active and not task.closed and world.matter_of(task) is None and task.spec.id not in done and _facts(task):
            done.add(task.spec.id)
            for tool in ("write_note", "message_user"):
                calls.append((tool, {"text": f"[{task.spec.id}] {_facts(task)}", "about": named[-1].id}))
        if not task.triggered and task.spec.action and f"ask {task.spec.id}" not in done:
            done.add(f"ask {task.spec.id}")
            calls.append(("request_approval", {"message": f"[{task.spec.id}] May I {task.spec.action.tool}?",
                                               "actions": [{"tool": task.spec.action.tool,
                                                            "args": dict(task.spec.action.args)}],
                                               "about": named[0].id}))


@pytest.mark.parametrize("name,persona", CASES)
def test_a_call_naming_a_matter_is_never_filed_under_another(name, persona):
    """Class sweep over every pair and three seeds, on a script whose every call names a matter
    (notes under notices, needs spotted under the latest matter, requests for work still to come):
    each reply files it under the matter named, whatever it counts for is concerned by that
    matter, and every later "now counts for" on it (the trajectory replayed) names that matter."""
    for seed in SEEDS:
        world, tools = _world(name, persona, seed)
        done: set = set()
        made: dict[tuple[str, str], str] = {}  # (clock, headline) -> the matter named
        credited: list[tuple[str, str, str]] = []  # (matter named, task it counted for, call)
        while not world.done:
            world.advance()
            if world.done:
                break
            tools.settle()
            calls: list = []
            _spotted_probes(world, tools, calls, done)
            for tool, args in calls:
                since = len(world.log)
                said = _call(tools, tool, **args)
                text = args.get("text") or args.get("message")
                made[(world.clock_text(), " ".join(text.split())[:60])] = args["about"]
                under = _UNDER.search(said)
                assert under is None or under[1] == args["about"], f"{name}/{persona}/{seed} {tool} {args}: {said}"
                task = _credited(world, since)
                if task is not None:
                    credited.append((args["about"], task, f"{tool} {text[:60]}: {said}"))
        for line in world.inbox:
            hit = _COUNTS.search(line)
            if hit and not hit[4]:  # ("also": a second thing a note covers, not where it is filed)
                key = next((k for k in made if k[0] == hit[2] and hit[3].startswith(k[1][:40])), None)
                if key is not None:
                    assert hit[5] == made[key], f"{name}/{persona}/{seed}: filed under {made[key]}, then: {line}"
        for about, task, call in credited:
            assert world.by_id[task].index in world.matters[about].tasks, f"{name}/{persona}/{seed} {call}"


def test_the_council_tax_form_asked_under_the_message_that_raised_it_is_asked():
    """Round 22 (apartment_move / operator / 1017): a request for the form under the message that
    raised it with the broadband, its details partly off, was kept as fitting no open matter."""
    world, tools = _world("apartment_move", "operator", 1017)
    form = world.by_id["t10_council_tax"]
    while not form.active:
        world.advance()
        tools.settle()
    matter = world.matter_of(form)
    assert len(matter.tasks) == 2
    said = _call(tools, "request_approval", message="May I submit the moving-within-Manchester form?", about=matter.id,
                 actions=[{"tool": "submit_address_change", "args": {
                     "new_address": "Apartment 5.04, Cotton Works, 21 Jersey Street, Manchester M4 6JG",
                     "notices": [{"organisation": "Manchester City Council", "account_ref": "80417729",
                                  "form": "moving within Manchester"}]}}])
    assert said.startswith(f"Request under {matter.id} ") and form.approval is not None, said


def test_the_dispute_follow_up_noted_under_the_banks_notice_stays_under_it():
    """Round 22 (household_finances / reviewer / 1015): the dispute follow-up noted `about: m5`
    (the bank's notice, "Noted under m5.") later "now counts for m6", a matter of the agent's own,
    so that what it sent about m5 afterwards counted for nothing (t05, TC 20). Now the follow-up
    that comes up joins m5: the note counts for it under m5, and so does the later message."""
    world, tools = _world("household_finances", "reviewer", 1015)
    charge, follow_up = world.by_id["t02_duplicate_charge"], world.by_id["t05_dispute_followup"]
    notice = None
    while not follow_up.active:
        world.advance()
        tools.settle()
        if charge.active and not (charge.executed or charge.closed):  # the dispute is raised, as the player did
            action = charge.spec.action
            if charge.approval is None:
                _call(tools, "request_approval", message="May I dispute the duplicate charge?", about=charge.spec.id,
                      actions=[{"tool": action.tool, "args": dict(action.args)}])
            if charge.approval == "approve":
                _call(tools, action.tool, **action.args, about=charge.spec.id)
        if notice is None and (notice := next((m for m in world.matters.values() if "DSP-558103" in m.title), None)):
            said = _call(tools, "write_note", about=notice.id, text=(
                "Dispute DSP-558103 is open and the bank has put the £64.35 back as a temporary credit; Greenleaf "
                "has 10 working days to respond and Chris has nothing to do. Tell Chris this evening."))
            assert said == f"Noted under {notice.id}.", said
    tools.settle()
    assert f"now counts for {notice.id}." in world.inbox[-2] + world.inbox[-1], world.inbox[-3:]
    assert follow_up.index in notice.tasks and follow_up.started
    since = len(world.log)
    said = _call(tools, "message_user", about=notice.id, text=(
        "The bank opened dispute DSP-558103 and put £64.35 back as a temporary credit; Greenleaf has 10 working "
        "days to respond, nothing for you to do."))
    assert said.startswith(f"Delivered under {notice.id}.") and _credited(world, since) == follow_up.spec.id, said


@pytest.mark.parametrize("name,persona", CASES)
def test_needs_spotted_under_one_notice_each_get_their_own_notes(name, persona):
    """Class sweep: where two needs no matter concerns yet are open, a note stating each one's
    facts under the same notice counts for that need — the first need joining the notice never
    takes the second's notes."""
    for seed in SEEDS:
        world, tools = _world(name, persona, seed)
        while not world.done:
            world.advance()
            if world.done:
                break
            tools.settle()
            spotted = [t for t in tools.open_tasks() if world.matter_of(t) is None and _facts(t)]
            notices = [m for m in world.matters.values() if not m.tasks and not m.own]
            if len(spotted) < 2 or not notices:
                continue
            for task in spotted[:2]:
                since = len(world.log)
                said = _call(tools, "write_note", text=_facts(task), about=notices[-1].id)
                assert _credited(world, since) == task.spec.id, f"{name}/{persona}/{seed} {task.spec.id}: {said}"
