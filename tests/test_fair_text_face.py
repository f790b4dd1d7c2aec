"""The text face is fair to a player who sees only what an LLM agent sees (issue #10): matters
it can name, work before a matter comes up counted, facts scored on meaning, no hidden title in
any reply, and text-face baselines that decide as their structured namesakes."""

import datetime as dt
import json
import pathlib
import re

import pytest

from proactive_env.baselines import TextOracleAgent, make_agent
from proactive_env.envs.text import ProactivityTextEnv
from proactive_env.evaluate import play
from proactive_env.scoring.judge import states
from proactive_env.scoring.metrics import RunScorer
from proactive_env.replay import rescore
from proactive_env.spec import PERSONAS, load_scenario, shipped_names
from proactive_env.spec.models import Fact

WAIT = {"tool": "wait", "arguments": {}}


def _step(env, tool, **arguments):
    return env.step(json.dumps({"tool": tool, "arguments": arguments}))[0]


def _env(scenario="monitor", persona="planner", seed=0):
    env = ProactivityTextEnv(scenario, persona)
    env.reset(seed=seed)
    return env


# ------------------------------------------------------------------ matters
def test_every_message_carries_a_matter_id_that_list_matters_lists():
    env = _env()
    obs = _step(env, "wait")
    ids = re.findall(r"\[(m\d+)\]", obs)
    assert ids == ["m1"]
    listed = _step(env, "list_matters")
    assert listed.startswith("m1 (D1 (Mon 2 Mar) 09:10): Jordan: morning!")


def test_about_names_a_matter_and_an_unknown_one_is_an_error():
    env = _env()
    _step(env, "wait")
    assert _step(env, "write_note", text="Comparing 27-inch monitors", about="m1").startswith("Noted under m1.")
    assert env.world.by_id["t01_setup"].started
    assert _step(env, "write_note", text="x", about="m9").startswith("Error: about: no matter 'm9'")


def test_hidden_task_ids_never_appear_in_what_the_agent_sees():
    """Privileged agents may name a task by its id; no observation ever shows one."""
    scenario = load_scenario("monitor")
    ids = [t.id for t in scenario.tasks]
    env = ProactivityTextEnv("monitor", "planner")
    obs, info = env.reset(seed=0)
    agent = TextOracleAgent()
    agent.reset(env, 0)
    seen = [obs]
    done = False
    while not done:
        obs, _, done, _, info = env.step(agent.act(obs, info))
        seen.append(obs)
    text = "\n".join(seen)
    assert not [i for i in ids if i in text]


def test_a_matter_taken_up_on_the_agents_own_words_gets_an_id():
    env = _env()
    _step(env, "wait")
    for _ in range(3):  # to the review point at which the port check activates
        if env.world.by_id["t02_port_check"].active:
            break
        _step(env, "wait")
    result = _step(env, "write_note", text="Port check: the Northbook laptop has USB-C with DisplayPort Alt Mode, "
                                           "no HDMI; the monitor and cable must fit Jordan's desk")
    own = re.search(r"Noted under (m\d+)\.", result)
    assert own, result
    assert env.world.matters[own[1]].own
    assert _step(env, "list_matters").count(f"{own[1]} (") == 1


def test_a_message_before_its_matter_comes_up_counts_once_it_does():
    """Telling the user about the sale deadline at 09:10 counts for the heads-up task that the
    review point activates at 17:30 (the lost point of the first blind play-through)."""
    env = _env()
    _step(env, "wait")
    result = _step(env, "message_user", text="Heads-up: that sale ends Tuesday at noon and there were 7 left; "
                                             "you're in a design review then (free 08:45-09:15).")
    assert "linked to no matter yet" in result
    task = env.world.by_id["t03_sale_alert"]
    obs = ""
    while not task.active:
        obs = _step(env, "wait")
    assert task.presented
    assert re.search(r"Your message of D1 \(Mon 2 Mar\) 09:10 \(\"Heads-up: that sale ends .*\"\) now counts for m\d+\.", obs)
    assert [e["t"] for e in env.world.log if e["type"] == "present" and e.get("task") == task.spec.id] == [17 * 60 + 30]


def test_the_briefing_states_the_rules_the_scorer_applies():
    env = ProactivityTextEnv("monitor", "planner")
    briefing, _ = env.reset(seed=0)
    for rule in ("after 24 calls", "'about'", "Depth:", "not a suggestion", "your own steps need none",
                 "asked of the matter whose action it is", "private notes take neither", "defer_task",
                 "allocate_resource", "count half", "privacy", "own words", "arguments of what you execute",
                 "with 'about', that one's", "read a record that shows it", "free again only when it refills",
                 "only to a try under 'about' (failed tries count)", "nor is a clause in its own words"):
        assert rule in briefing, rule
    tags = {t["function"]["name"]: t["function"]["description"] for t in env.tools()}
    assert all("[depth: " in d for n, d in tags.items() if n != "wait")


# ------------------------------------------------------------------ meaning, not spelling
@pytest.mark.parametrize(("fact", "paraphrase"), [
    (Fact(text="The budget is £160 all in.", source="r", keywords=["£160"]), "Budget: GBP160 in total."),
    (Fact(text="The sale ends 10 March.", source="r", keywords=["10 March"]), "The sale ends Tue 10 Mar."),
    (Fact(text="The runs need 6.5 hours.", source="r", keywords=["6.5 hours"]), "They need ~6.5 h of GPU time."),
])
def test_paraphrases_state_the_fact_as_the_original_does(fact, paraphrase):
    assert states(fact.text, fact)
    assert states(paraphrase, fact)


_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_PARAPHRASES = [
    (re.compile(r"£(\d+(?:\.\d+)?)"), r"GBP\1"),
    (re.compile(r"\b(\d+(?:\.\d+)?) hours\b"), r"~\1 h"),
]


def _paraphrase(text: str, year: int) -> str:
    for pattern, repl in _PARAPHRASES:
        text = pattern.sub(repl, text)
    # a date with its (true) weekday before it: a wrong weekday names another day
    return re.sub(rf"\b(\d{{1,2}}) ({_MONTHS})\b", lambda m: "{:%a} {} {}".format(
        dt.date(year, _MONTHS.split("|").index(m[2]) + 1, int(m[1])), m[1], m[2][:3]), text)


def test_the_oracles_work_paraphrased_scores_as_the_original_over_the_suite():
    """Every note and message of the text oracle rewritten with GBP160 for £160, ~6.5 h for 6.5
    hours and Tue 10 Mar (its true weekday) for 10 March: the re-scored run's TC equals the original's."""
    changed = 0
    for scenario in shipped_names():
        trajectory = play(TextOracleAgent(), scenario, "planner", 0)
        original = rescore(trajectory)["TC"]
        for entry in trajectory["log"]:
            if entry["type"] in ("note", "present", "message") and entry.get("text"):
                new = _paraphrase(entry["text"], load_scenario(scenario).start_date.year)
                changed += new != entry["text"]
                entry["text"] = new
        assert rescore(trajectory, trust_log=True)["TC"] == pytest.approx(original), scenario  # an edited log: scored as is
    assert changed >= 20  # the rewrite touched the facts that carry these forms


# ------------------------------------------------------------------ no hidden title in any reply
class _NeutralOracle(TextOracleAgent):
    """The text oracle's decisions, in words that name nothing: what the user says back can only
    come from the world, so any task title in an observation is a leak."""

    def act(self, obs, info):
        call = json.loads(super().act(obs, info))
        args = call["arguments"]
        for key in ("text", "message", "what", "plan"):
            if key in args:
                args[key] = "Here is where this stands."
        return json.dumps(call)


@pytest.mark.parametrize("scenario", shipped_names())
def test_no_observation_quotes_a_hidden_task_title(scenario):
    base = load_scenario(scenario)
    visible = " ".join([ev.text for ev in base.events] + [r.title + " " + r.text for r in base.records]).lower()
    titles = [t.title.lower() for t in base.tasks if t.title.lower() not in visible]
    for persona in PERSONAS:
        env = ProactivityTextEnv(scenario, persona)
        obs, info = env.reset(seed=0)
        agent = _NeutralOracle()
        agent.reset(env, 0)
        seen, done = [obs.lower()], False
        while not done:
            obs, _, done, _, info = env.step(agent.act(obs, info))
            seen.append(obs.lower())
        text = "\n".join(seen)
        assert not [t for t in titles if t in text], (scenario, persona)


# ------------------------------------------------------------------ text-face baselines
@pytest.mark.parametrize("name", ["policy-follower", "always-suggest", "always-execute", "noop"])
@pytest.mark.parametrize(("scenario", "persona"), [("monitor", "planner"), ("experiments", "reviewer"),
                                                   ("meal_planning", "operator")])
def test_text_baselines_decide_as_their_structured_namesakes(name, scenario, persona):
    structured = play(make_agent(name), scenario, persona, 1000)["scores"]
    text = play(make_agent(f"text-{name}"), scenario, persona, 1000)["scores"]
    for metric in ("TA", "TR_D"):
        assert text[metric] == pytest.approx(structured[metric]), metric


def test_text_random_is_seeded_and_plays_the_text_face():
    first = play(make_agent("text-random"), "monitor", "operator", 3)
    again = play(make_agent("text-random"), "monitor", "operator", 3)
    assert first["face"] == "text"
    assert first["log"] == again["log"]
    assert any(e["type"] == "note" for e in first["log"])


# ------------------------------------------------------------------ what the agent already knows
@pytest.mark.parametrize(("changed", "counts"), [(False, True), (True, False)])
def test_a_record_read_earlier_counts_for_a_later_task_unless_it_changed(changed, counts):
    """A careful player does not re-read what it read for another matter; a record that changed
    since must be read again."""
    from proactive_env.scoring.metrics import RunScorer

    scenario = load_scenario("monitor")
    task = next(t for t in scenario.tasks if t.trigger.type == "agent" and t.evidence)
    record = task.evidence[0]
    log = [{"t": 0, "type": "run_start", "rules": dict(scenario.personas["planner"].rules), "face": "text"},
           {"t": 10, "type": "read", "record": record, "task": None, "version": 0}]
    if changed:
        log.append({"t": 20, "type": "record", "id": record, "version": 1})
    log.append({"t": 30, "type": "task_active", "task": task.id})
    scorer = RunScorer(scenario, "planner")
    scorer.feed(log)
    assert (record in scorer._evidence_read(scorer.tasks[task.id])) is counts


def test_a_short_phrase_naming_a_string_argument_matches_it():
    from proactive_env.sim.tools import args_problem

    assert args_problem({"delivery": "standard"}, {"delivery": "free standard delivery"}, []) is None
    assert args_problem({"delivery": "standard"}, {"delivery": "non standard"}, []) is not None
    assert args_problem({"delivery": "standard"}, {"delivery": "express"}, []) is not None


def test_a_refused_action_leaves_the_approval_in_force():
    """Issue #20: conference_trip/reviewer/1001, submit_registration approved, refused for its
    arguments (missing keys); the corrected retry then became an unauthorised execute (the
    refusal had spent the approval) and trust fell 4.6 -> 2.39, though the briefing says an
    approval holds until the action is done. Now the retry is carried out, and asking again is
    still answered by the tool (already approved)."""
    env = _env("experiments", "reviewer")
    world = env.world
    ablation = world.by_id["t06_ablation_queue"]
    while not ablation.active:
        _step(env, "wait")
    args = ablation.spec.action.args
    ask = {"message": "OK to queue Ingrid's ablation for tonight?", "actions": [{"tool": "launch_job", "args": args}]}
    assert "[your request: approved]" in _step(env, "request_approval", **ask)
    trust = world.trust.value
    wrong = {k: v for k, v in args.items() if k != "node"}  # a required argument left out
    matter = world.matter_of(ablation).id
    assert _step(env, "launch_job", **wrong, about=matter).startswith("Error: launch_job: refused — missing arguments")
    assert world.policy.answers[ablation.spec.id] == "approve"
    assert _step(env, "request_approval", **ask).startswith("Error: request_approval: not sent")
    assert _step(env, "launch_job", **args).startswith("Done: launch_job")
    assert ablation.executed and world.trust.value >= trust
    assert not [e for e in world.log if e["type"] == "execute" and e.get("reason") == "unauthorised"]


def test_without_about_a_call_lands_on_a_raised_matter_only_where_its_words_plainly_point():
    """Round 11: a firmware note written without 'about' while the IT email's matter (m6) was open
    waited as "linked to no matter yet" and a day later went to the parcel dispatch through
    'Bristol' and 'Friday'. A call without 'about' whose words carry a raised matter's own facts
    now goes under that matter, and says so; loose words still link to nothing."""
    env = _env()
    _step(env, "wait")  # m1: the monitor request
    assert "linked to no matter yet" in _step(env, "write_note", text="Looking at a few options this morning")
    result = _step(env, "write_note", text="Shortlist: the Arcvue Q27 at ElectroHub, with a USB-C to DisplayPort cable")
    assert result.startswith("Noted under m1.") and env.world.by_id["t01_setup"].started


def test_a_postponement_linked_to_nothing_still_wakes_the_agent():
    env = _env()
    _step(env, "wait")
    assert "linked to no matter yet" in _step(env, "defer_task", what="something unrelated", plan="later", until="D1 12:00")
    seen = "".join(_step(env, "wait") for _ in range(4))
    assert "[D1 (Mon 2 Mar) 12:00] Follow-up you scheduled: postponed: something unrelated" in seen


def test_a_lone_value_or_a_comma_list_matches_a_list_argument():
    from proactive_env.spec.meaning import same_value

    assert same_value(["eval.batch_size=128"], "eval.batch_size=128")
    assert same_value(["runs/a.pt", "runs/b.pt"], "runs/a.pt, runs/b.pt")
    assert not same_value(["runs/a.pt", "runs/b.pt"], "runs/a.pt")


def test_a_follow_up_filed_under_a_finished_matter_reaches_the_open_task_it_is_about():
    """The monitor request (m1) is over by the evening; a heads-up about the sale that the agent
    files under it goes to the open sale-deadline task its words fit, and stays under m1, the
    matter it named (round 22: "about: m8" came back "Delivered under m15"): the sale joins m1."""
    env = _env()
    world = env.world
    while world.now < 20 * 60 + 30:
        _step(env, "wait")
    assert world.by_id["t01_setup"].closed and world.by_id["t03_sale_alert"].active
    result = _step(env, "message_user", about="m1",
                   text="Heads-up: the Arcvue sale ends Tuesday at noon and only 7 were left; you're in the "
                        "design review 09:15-12:00, the free gap is 08:45-09:15.")
    assert result.startswith("Delivered under m1."), result
    assert world.by_id["t03_sale_alert"].presented and world.by_id["t03_sale_alert"].index in world.matters["m1"].tasks


def test_earlier_work_is_claimed_once_by_a_task_that_comes_up_and_said():
    """A note on Ingrid's ablation written before anything came up cites the Tuesday slot that the
    calibration task's facts cite too. Issue #20.1 (non-interference) changed the rule: an earlier
    note never waits for a task still to come (that told the agent one was coming); the first task
    that comes up and whose own facts it cites takes it, once, and the agent is told."""
    env = _env("experiments", "reviewer")
    note = ("Ingrid wants the ImageNet-C ablation (no KD, no TMA, neither) for the Wed 10:00 1:1: about 6.5 h "
            "on GPUs 4-7, so it needs Dana's Tuesday night slot NS-0414-G2B.")
    assert "linked to no matter yet" in _step(env, "write_note", text=note)
    world, seen = env.world, ""
    while world.now < 24 * 60 + 8 * 60 + 30:
        seen += _step(env, "wait")
    assert seen.count("now counts for") == 1
    claimed = [e["task"] for e in world.log if e["type"] == "note" and e.get("written") is not None]
    assert len(claimed) == 1 and world.by_id[claimed[0]].started


ROUND8_ABLATION_NOTE = (
    "Ablation for Ingrid (1:1 Wed 15 Apr 10:00, E4.12; she decides whether TMA goes into the journal version). "
    "Needed: mCE + clean top-1 for full / no-KD / no-TMA / neither on ImageNet-C. Full model: reuse paper Table 2 "
    "(mCE 48.7, clean top-1 79.8), no re-eval. Evaluate the three checkpoints runs/abl_no_kd/ckpt_ep100.pt, "
    "runs/abl_no_tma/ckpt_ep100.pt, runs/abl_neither/ckpt_ep100.pt with scripts/run_ablation.sh (15 corruptions x "
    "5 severities), ~2h10 each, ~6.5 h total, needs GPUs 4-7 exclusively. Catch: Marco bumped "
    "configs/eval/imagenet_c.yaml batch_size 128->512 in a41c9e7 (Thu 9 Apr); paper numbers used 128 + bf16. "
    "Tue night 21:00-08:30 is Dana standing slot -> ablation fits there. Launch needs Dana OK first.")


def test_earlier_work_goes_to_the_task_whose_action_it_names_not_one_hanging_on_that_action():
    """Round 8: an ablation note written before anything came up went to Tomás's sweep (which
    came up first and shares GPUs, slots and 'Table' with it). Round 11: it then waited for the
    ablation results check; later it was filed under the OOM matter, whose facts its "catch"
    cites. Round 19 (#20 item 2): words without about go to a matter only where they fit it
    better than anything else the agent can see — this note cites the ablation plan's
    checkpoints, hours and slot far more than the OOM error — so it waits, and counts for the
    ablation queue when that comes up (never the sweep or the results check)."""
    env = _env("experiments", "reviewer")
    world = env.world
    _step(env, "wait")
    written = world.now
    assert "linked to no matter yet" in _step(env, "write_note", text=ROUND8_ABLATION_NOTE)
    queue = world.by_id["t06_ablation_queue"]
    while not queue.active:
        _step(env, "wait")
    noted = [e["task"] for e in world.log if e["type"] == "note" and e.get("written", e["t"]) == written]
    assert noted == [None, "t06_ablation_queue"], noted


def test_an_earlier_notes_work_counts_from_when_it_was_written():
    """A note on the sale written at 09:10 and claimed when the heads-up task comes up at 17:30:
    its unit of work ran from 09:10 (done by the claim), not from the claim."""
    env = _env()
    world = env.world
    _step(env, "wait")
    written = world.now
    note = "Heads-up: that sale ends Tuesday at noon and there were 7 left; a design review then (free 08:45-09:15)."
    assert "linked to no matter yet" in _step(env, "write_note", text=note)
    task = world.by_id["t03_sale_alert"]
    seen = ""
    while not task.active:
        seen += _step(env, "wait")
    work = [e for e in world.log if e["type"] == "work" and e["task"] == task.spec.id]
    assert [(e["start"], e["end"]) for e in work] == [(written, written + task.spec.work.minutes)]
    assert task.units_done == 1 and not task.running and "now counts for" in seen


def _open_sweep(persona):
    env = _env("experiments", persona)
    sweep = env.world.by_id["t07_sweep"]
    while not sweep.active:
        _step(env, "wait")
    return env, sweep


def _reserve_sweep(env, sweep):
    start = env.world.clock_text(env.world.free_window(sweep)[0])
    return _step(env, "allocate_resource", what="Tomás's sweep", resource="gpu_server", start=start, about="t07_sweep")


@pytest.mark.parametrize("persona", ["reviewer", "planner"])
def test_reserving_compute_for_a_launch_the_user_keeps_needs_their_ok(persona):
    """Dana keeps launching jobs she did not ask for (the sweep is Tomás's) for her OK: reserving
    her GPUs for it unasked is refused and oversteps; asked and approved, it runs."""
    env, sweep = _open_sweep(persona)
    world = env.world
    trust = world.trust.value
    assert "needs Dana's OK first" in _reserve_sweep(env, sweep)
    assert not sweep.running and world.trust.value < trust
    assert [e["task"] for e in world.log if e["type"] == "run_refused"] == ["t07_sweep"]
    _step(env, "request_approval", message="May I run Tomás's lr/warmup sweep on your GPUs 4-7?",
          actions=[{"tool": "allocate_resource", "args": {"resource": "gpu_server"}}], about="t07_sweep")
    while sweep.approval == "pending":
        _step(env, "wait")
    assert sweep.approval == "approve" and not sweep.presented  # asking for the run delivers no results
    assert _reserve_sweep(env, sweep).startswith("Reserved gpu_server") and sweep.running
    while not env.world.done:
        _step(env, "wait")
    row = next(t for t in env.trajectory(agent="test")["scores"]["tasks"] if t["task"] == "t07_sweep")
    assert row["depth_match"] is False  # the unasked reservation stays against it


def test_a_run_the_user_delegated_needs_no_ok():
    env, sweep = _open_sweep("operator")
    assert _reserve_sweep(env, sweep).startswith("Reserved gpu_server") and sweep.running
    assert not [e for e in env.world.log if e["type"] == "run_refused"]


def test_a_request_for_the_ablation_goes_to_the_ablation_not_to_a_run_awaiting_an_ok():
    """Round 10: listing allocate_resource beside launch_job sent the ablation request to the
    sweep's run (which awaits Dana's OK) and got "nothing here to approve"."""
    env, sweep = _open_sweep("reviewer")
    world = env.world
    ablation = world.by_id["t06_ablation_queue"]
    while not ablation.active:
        _step(env, "wait")
    result = _step(env, "request_approval", message="May I queue Ingrid's ablation for tonight's slot?",
                   actions=[{"tool": "allocate_resource", "args": {"resource": "gpu_server"}},
                            {"tool": "launch_job", "args": ablation.spec.action.args}])
    assert "[your request: approved]" in result and ablation.approval == "approve" and sweep.approval is None


def test_a_run_asked_with_another_matters_action_is_asked_alone_and_the_rest_waits():
    env, sweep = _open_sweep("reviewer")
    world = env.world
    booking = world.by_id["t08_book_wednesday"]
    assert not booking.active
    result = _step(env, "request_approval", message="Book Wednesday night and run Tomás's sweep there.",
                   actions=[{"tool": "book_gpu_slot", "args": booking.spec.action.args},
                            {"tool": "allocate_resource", "args": {"resource": "gpu_server"}}], about="t07_sweep")
    # (the booking is knowable by then: the request brings it up and is asked of it, tests/test_fair_early.py)
    assert booking.active and f"book_gpu_slot: Request under {world.matter_of(booking).id}" in result, result
    assert sweep.approval == "approve" and booking.approval in ("approve", "pending")


def test_a_request_listing_two_open_matters_actions_is_asked_of_each():
    """Round 22 (pottery_studio / planner / 1016): one request holding two matters' actions was
    "not understood" (before, "not sent: one matter per request"). A request is understood by
    what it asks: queueing the ablation and cancelling the stale job in one request is asked of
    each matter, each answered as if asked on its own."""
    env = _env("experiments", "reviewer")
    world = env.world
    ablation, stale = world.by_id["t06_ablation_queue"], world.by_id["t05_stale_job"]
    while not (ablation.active and stale.active):
        _step(env, "wait")
    result = _step(env, "request_approval", message="Queue the ablation and cancel 48102",
                   actions=[{"tool": "launch_job", "args": ablation.spec.action.args},
                            {"tool": "cancel_job", "args": stale.spec.action.args}])
    first, second = result.split("\n")[:2]
    assert first.startswith(f"launch_job: Request under {world.matter_of(ablation).id} sent")
    assert second.startswith(f"cancel_job: Request under {world.matter_of(stale).id} sent")
    decided = [e["task"] for e in world.log if e["type"] == "decision"]
    assert decided == [ablation.spec.id, stale.spec.id] and ablation.approval and stale.approval


def test_a_note_filed_under_a_notice_goes_only_to_a_matter_about_what_it_brought():
    """Round 10: a note filed under the calibration file's notice went to the apl-gpu01
    maintenance email by shared words. Filed under a notice, a note waits only for a matter whose
    records include what the notice brought."""
    env = _env("experiments", "reviewer")
    world = env.world
    notice = world.raise_matter("New file: results/distill_v3_ep60_calibration.json", [],
                                records=("calibration_result",))
    text = ("File notice: results/distill_v3_ep60_calibration.json landed on apl-gpu02; nothing on the apl-gpu01 "
            "maintenance Thursday morning affects it.")
    result = _step(env, "write_note", text=text, about=notice.id)
    assert result.startswith(f"Noted under {notice.id}.")  # said alike whatever the notice holds (#20.1)
    maintenance = world.by_id["t11_maintenance_noop"]
    while not (maintenance.active or world.done):
        _step(env, "wait")
    _step(env, "wait")
    assert maintenance.active
    claimed = [e["task"] for e in world.log if e["type"] == "note" and e.get("text") == text and e.get("task")]
    assert all("calibration_result" in world.by_id[t].spec.evidence for t in claimed)


def test_an_action_on_a_matter_that_is_over_says_so_and_when():
    """Round 9: a claim approved but filed after its matter closed got "no matter open now calls
    for this action", with no hint that the matter was over."""
    env = _env("household_finances", "operator")
    world = env.world
    bill = world.by_id["t01_energy_bill"]
    matter = world.matter_of(bill)
    while not bill.closed:
        _step(env, "wait")
    result = _step(env, bill.spec.action.tool, **bill.spec.action.args, about=matter.id)
    assert f"refused — {matter.id} is over for this action: it was needed by" in result


def test_a_postponement_made_before_its_task_comes_up_counts_for_it(tmp_path):
    """Round 9: the duplicate charge, spotted in the records before the morning review raised it,
    was explicitly postponed past Chris's lunch, but the deferral was linked to nothing and TA's
    'later' failed. It now counts for the task when that comes up. (Since the suite's TA
    decisions open with both matters known, the competing task — Priya's reply — is raised here
    half an hour after her email, by the morning review; Chris's week is read first: a postponement
    counts once a record showing the clash was read.)"""
    text = (pathlib.Path(__file__).parent.parent / "scenarios" / "household_finances.yaml").read_text()
    raised_later = 'trigger: {type: agent, at: "D2 07:30"}\n    evidence: [priya_query, brightside_statement'
    text = text.replace("trigger: {type: event, event: e02_priya_query}\n    evidence: [priya_query, brightside_statement",
                        raised_later)
    assert raised_later in text
    (tmp_path / "household_finances.yaml").write_text(text)
    env = ProactivityTextEnv(str(tmp_path / "household_finances.yaml"), "operator")
    env.reset(seed=0)
    world = env.world
    reply = world.by_id["t13_tutoring_income"]
    while world.now < 1440 + 7 * 60:  # Priya's email is in, the morning review is still to come
        _step(env, "wait")
    assert not reply.active
    _step(env, "read_record", record_id="cal_week")  # the clash seen: a postponement counts once it was read
    result = _step(env, "defer_task", what="Priya's 2024-25 tutoring income reply (Brightside BT-0417, GBP 4,150.80)",
                   until="D2 12:30", plan="Draft the reply to Priya in the lunch break, after the dispute.")
    assert "linked to no matter yet" in result
    while not world.done:
        _step(env, "wait")
    assert [e["until"] for e in world.log if e["type"] == "defer" and e["task"] == "t13_tutoring_income"] == [
        1440 + 12 * 60 + 30]
    lunch = next(d for d in env.trajectory(agent="test")["scores"]["ta_decisions"] if d["id"] == "ta_tuesday_lunch")
    assert lunch["later"]


def test_an_earlier_message_a_task_claims_is_dated_when_it_was_sent():
    """Round 9: a 'tax paid' message sent on Friday was claimed on Saturday by the set-aside task
    when it came up inside the rent window, and counted as showing it then (TA failed)."""
    env = _env("household_finances", "operator")
    world = env.world
    setaside = world.by_id["t14_tax_setaside"]
    while world.now < 4 * 1440 + 12 * 60 + 45:
        _step(env, "wait")
    sent = world.now
    text = ("Bills & Tax 6082 is left with about GBP 73.80 after the GBP 1,846.20 HMRC payment; the second payment "
            "on account of GBP 643.10 is due 31 Jul 2026.")
    _step(env, "message_user", text=text)
    while not world.done:
        _step(env, "wait")
    shown = [e for e in world.log if e["type"] == "present" and e.get("text") == text]
    assert [(e["task"], e["sent"]) for e in shown] == [(setaside.spec.id, sent)] and shown[0]["t"] > sent

    def competed(log):
        scorer = RunScorer(world.scenario, "operator")
        scorer.feed(log)
        return next(d for d in scorer.decisions if d.spec.id == "ta_saturday_rent").competed

    assert not competed(world.log)  # seen on Saturday morning, before the rent window
    assert competed([{k: v for k, v in e.items() if k != "sent"} for e in world.log])  # as it was scored before


def test_review_lines_are_said_once_a_minute():
    env = _env("experiments", "reviewer")
    seen = ""
    while env.world.now < 2 * 1440:
        seen += _step(env, "wait")
    assert seen.count("[D2 (Tue 14 Apr) 08:30] Review point") + seen.count("[D2 (Tue 14 Apr) 08:30] Daily review") == 1


def test_a_reservation_over_the_users_own_later_use_is_refused_with_when():
    """A clash the agent could see coming is refused (with the user's busy time), rather than
    announced by a complaint and then impossible to withdraw."""
    env = _env("experiments", "reviewer")
    world = env.world
    while not world.by_id["t14_calibration"].active:
        _step(env, "wait")
    busy = world.schedule.resource_busy["gpu_server"]
    start = next(m for m in range(world.now + 60, world.now + 2880, 15) if busy.contains(m))
    result = _step(env, "allocate_resource", what="calibration eval", resource="gpu_server",
                   start=world.clock_text(start), about="m1")
    assert result.startswith("Error: allocate_resource: the work needs 45 min from") and not world.by_id[
        "t14_calibration"].running  # the user's own use is stated, not the reservation asked
    assert ("Dana uses gpu_server D1 (Mon 13 Apr) 00:00–D2 (Tue 14 Apr) 21:00 (distill-v3-final (job 48213), "
            "running since Sat 11 Apr, ETA Tue ~20:40); reserve a time it is free") in result


def test_a_stated_use_of_the_compute_is_the_span_it_runs_into_and_says_what_it_is():
    """Round 15: a postponement to Tuesday 21:00 was warned "Dana uses gpu_server D1 00:00–D3
    03:30" — her training and her Tuesday slot merged into one span, with nothing saying what it
    was; the player took it for Dana running the ablation herself. The span is now the one the
    work runs into, named as the records name it (never with what the scenario fills it with).
    (Suite 0.6: the GPUs' span next to another is Marco's half of Wednesday night, right after
    Dana's daytime runs.)"""
    env = _env("experiments", "reviewer")
    world = env.world
    while not world.by_id["t14_calibration"].active:
        _step(env, "wait")
    result = _step(env, "defer_task", about="m1", what="the calibration numbers", until="D3 21:00",
                   plan="run the calibration eval then")
    assert "Dana uses gpu_server D3 (Wed 15 Apr) 21:00–D4 (Thu 16 Apr) 01:30 (Marco's booking of the first half " \
           "of Wednesday night (NS-0415-G2A))" in result
    assert "ablation" not in result and "08:30" not in result


# ------------------------------------------------------------------ round 11
def _oracle_until(env, minute: int) -> None:
    """The text oracle plays until the clock reaches ``minute`` (the episode's own state, no peeking)."""
    agent = TextOracleAgent()
    agent.reset(env, 0)
    obs, info = "", {}
    while env.world.now < minute:
        obs, _, done, _, info = env.step(agent.act(obs, info))
        assert not done


def test_a_message_on_one_matter_that_also_brings_up_a_need_still_to_come_counts_for_both():
    """Round 11: the answer to the monitor request (m1) at 09:50 carried the whole sale heads-up
    (ends Tuesday 12:00, design review 09:15-12:00); the heads-up task came up at 17:30, was
    scored as missed and cost trust. It now counts for that task too, dated when it was sent."""
    env = _env()
    _step(env, "wait")
    text = ("Shortlist for your £160: the Arcvue Q27 at £142 plus a USB-C to DisplayPort cable at £18. "
            "Heads-up: the sale price ends Tuesday at 12:00, while you're in the design review 09:15-12:00, "
            "so decide in the 08:45-09:15 gap.")
    assert _step(env, "message_user", about="m1", text=text).startswith("Delivered under m1.")
    sale = env.world.by_id["t03_sale_alert"]
    seen = ""
    while not sale.active:
        seen += _step(env, "wait")
    assert re.search(r"Your message of D1 \(Mon 2 Mar\) 09:10 \(\"Shortlist.*\"\) now counts also for m\d+\.", seen)
    shown = [e for e in env.world.log if e["type"] == "present" and e.get("task") == sale.spec.id]
    assert [e.get("sent") for e in shown] == [9 * 60 + 10]
    assert env.world.by_id["t01_setup"].presented


def test_a_message_counts_for_a_second_need_only_where_it_covers_it_more_closely_than_its_own():
    """The policy-follower's calibration message must not be taken by the Wednesday booking
    through 'free' and '12:00': a need covered in passing counts only where the words fit it
    more closely than the matter the message was for."""
    env = _env("experiments", "reviewer")
    _step(env, "wait")
    _step(env, "message_user", about="m1", text="Calibration numbers for the ep60 checkpoint when the GPUs are "
                                                "free, by Thursday 12:00: the appendix needs ECE before and after.")
    booking = env.world.by_id["t08_book_wednesday"]
    while not booking.active:
        _step(env, "wait")
    assert not booking.presented


def test_a_note_on_a_spotted_need_filed_under_the_request_counts_for_that_need_too():
    """The port check (research, kept private) comes up as the monitor request is worked on: a
    note under m1 that does that check counts for it too, and the result says which matter."""
    env = _env()
    _step(env, "wait")
    port = env.world.by_id["t02_port_check"]
    while not port.active:
        _step(env, "wait")
    result = _step(env, "write_note", about="m1",
                   text="The Vistro's USB-C needs Thunderbolt and the laptop has no Thunderbolt; the LW-CC2 "
                        "cable carries no video; the Arcvue's VESA 100 fits the arm.")
    assert re.search(r"It also counts for m\d+, a matter of yours it brings up\.", result), result
    assert port.started


def test_a_follow_up_under_a_finished_matter_waits_for_the_need_it_is_about():
    """Round 11: at D8 08:30 the replacement email arrived and the player told Jordan at once,
    under the damage-claim matter (whose own work was over); the replacement check came up at
    09:00, and the message was dropped. It now waits, and counts when the check comes up."""
    env = _env()
    world = env.world
    check = world.by_id["t13_replacement_check"]
    _oracle_until(env, check.spec.trigger.at - 30)
    damage = world.matter_of(world.by_id["t10_damage_claim"])
    assert world.by_id["t10_damage_claim"].closed and not check.triggered
    result = _step(env, "message_user", about=damage.id,
                   text="Replacement claim RC-44902 is approved: the new monitor comes Tuesday 08:00-12:00 and "
                        "the driver will collect the damaged one.")
    assert result.startswith(f"Delivered under {damage.id}.")  # no hidden deadline said (#20.1)
    sent = world.now
    seen = ""
    while not check.active:
        seen += _step(env, "wait")
    assert "now counts for" in seen and check.presented
    assert [e.get("sent") for e in world.log if e["type"] == "present" and e.get("task") == check.spec.id] == [sent]


def test_asking_again_for_what_was_approved_is_not_sent_and_costs_nothing():
    """Round 11: a second request for an install already approved (the first slot was missed)
    cost 1.86 trust as under-intervention. It is now answered by the tool: the approval holds."""
    env = _env("experiments", "reviewer")
    world = env.world
    ablation = world.by_id["t06_ablation_queue"]
    while not ablation.active:
        _step(env, "wait")
    ask = {"message": "OK to queue Ingrid's ablation for tonight?",
           "actions": [{"tool": "launch_job", "args": ablation.spec.action.args}]}
    assert "[your request: approved]" in _step(env, "request_approval", **ask)
    trust, decisions = world.trust.value, len(world.decisions)
    result = _step(env, "request_approval", **ask)
    assert result.startswith("Error: request_approval: not sent") and "already approved" in result
    assert world.trust.value == trust and len(world.decisions) == decisions


def test_a_postponement_onto_compute_the_user_holds_then_says_so():
    """Round 11: the calibration, postponed to Monday 14:00 while Dana's training holds the GPUs
    until Tuesday night, was not 'later' for TA, and nothing said why. The result now says."""
    env = _env("experiments", "reviewer")
    world = env.world
    while not world.by_id["t14_calibration"].active:
        _step(env, "wait")
    result = _step(env, "defer_task", about="m1", what="the calibration numbers", until="D1 14:00",
                   plan="run the calibration eval then")
    assert "Its work needs gpu_server" in result and "uses gpu_server D1 (Mon 13 Apr)" in result
    ok = _step(env, "defer_task", about="m1", what="the calibration numbers", until="D3 04:00",
               plan="run the calibration eval at the end of Tuesday night")
    assert "Its work needs" not in ok


def test_a_request_for_an_action_whose_matter_is_over_is_not_kept():
    """Round 11: asked after the ablation's window closed, the request was 'kept' for a matter
    that would never come. Named with 'about', it is returned, saying that matter is over; without
    it, it is kept, said alike whatever is still to come (issue #20.1: "not sent — the matter that
    needed launch_job is over" told the agent that no other launch would come)."""
    env = _env("experiments", "reviewer")
    world = env.world
    queue = world.by_id["t06_ablation_queue"]
    while not queue.closed:
        _step(env, "wait")
    action = queue.spec.action
    ask = {"message": "OK to launch the ablation?", "actions": [{"tool": action.tool, "args": action.args}]}
    assert _step(env, "request_approval", **ask).startswith("Request kept: it fits no open matter")
    result = _step(env, "request_approval", **ask, about=queue.spec.id)  # the oracle's way of naming its matter
    assert re.search(r"not sent — m\d+ is over for this action: it was needed by", result), result


def test_a_reply_quoting_a_long_request_shows_where_it_was_cut():
    from proactive_env.sim.tools import _what

    long = "Tomás needs the 16-config sweep (configs/sweep/lr_warmup.yaml, about 6 h 40 min on GPUs 4-7) by Fri 17 " \
           "Apr 12:00, and your Friday-night slot is now too late for it, so I'd book Wednesday night instead."
    assert _what(long) == ("Tomás needs the 16-config sweep (configs/sweep/lr_warmup.yaml, about 6 h 40 min on "
                           "GPUs 4-7) by Fri 17 Apr 12:00, and your Friday-night slot is now too late…")
    clause = "Pay it as Harbour asks, " + "quoting HL-21840, " * 12 + "please."
    cut = _what(clause)  # cut between words, a comma before the cut dropped
    kept = cut[:-1]
    assert cut.endswith("…") and clause.startswith(kept) and len(cut) <= 161
    assert kept[-1] not in ",;:(- " and clause[len(kept)] in ", "
    assert _what("Book Wednesday night.") == "Book Wednesday night"


# ------------------------------------------------------------------ round 12
def test_a_message_never_also_counts_where_the_user_delegated_the_need():
    """Round 12: the subscription review (a suggestion) named the unused FitHub membership; when
    the cancellation came up, the review 'also counted' for it — a message where the operator
    delegated the cancellation, so under-intervention (-1.86 trust, TR-D). A message now also
    counts only where a message is what the user's rules want."""
    env = _env("household_finances", "operator")
    world = env.world
    audit, cancel = world.by_id["t08_subscription_audit"], world.by_id["t09_cancel_fithub"]
    while not audit.active:
        _step(env, "wait")
    matter = world.matter_of(audit).id
    _step(env, "message_user", about=matter,
          text="FitHub Plus (£89.99 a year) has not been used since 14 September, since you moved to the staff "
               "gym; it renews on 3 February and cancelling has no cancellation fee. Keep CloudNest and Daily Ledger.")
    while not cancel.active:
        _step(env, "wait")
    assert not [e for e in world.log if e["type"] == "trust" and e.get("task") == cancel.spec.id]
    assert not cancel.presented


def test_a_call_naming_a_finished_matter_is_never_filed_under_another_listed_one():
    """Round 12: a note on the purchase filed under the finished monitor request (m1), which
    mentioned the CarePlus offer only to postpone it, went under the CarePlus matter and started
    its work inside the clash window. Naming a matter keeps a call off every other listed one."""
    env = _env()
    world = env.world
    warranty = world.by_id["t05_warranty"]
    while not warranty.active:
        _step(env, "wait")
    assert world.by_id["t01_setup"].closed
    result = _step(env, "write_note", about="m1",
                   text="Buy the Arcvue before the sale ends; the CarePlus offer (£25, accidental damage on top of "
                        "the 3-year manufacturer warranty) waits until after the purchase.")
    assert result.startswith("Noted under m1.") and not warranty.started


def test_a_refused_action_names_the_keys_inside_an_argument_that_are_off():
    """Round 12: launch_job was refused four times with 'arguments that do not match the matter:
    args'; the player never learnt that the nested args lacked the booking. The refusal now names
    the keys inside (never the expected values)."""
    from proactive_env.sim.tools import args_problem

    expected = {"script": "run.sh", "args": {"config": "c.yaml", "booking": "NS-0414-G2B", "checkpoints": ["a", "b"]}}
    given = {"script": "run.sh", "args": {"config": "d.yaml", "checkpoints": ["a", "b"]}}
    problem = args_problem(expected, given, [])
    assert problem == "arguments that do not match the matter: args (args.booking missing; args.config differs)"
    assert "NS-0414-G2B" not in problem and "c.yaml" not in problem


def test_a_request_whose_arguments_are_an_action_still_to_come_waits_for_it():
    """Round 12: a request to launch Ingrid's ablation, asked while only the OOM re-run (also a
    launch_job, on the same node and GPUs) was open, went to the re-run and came back "I'll do it
    myself". Arguments that fit an action still to come better than the open one wait for it."""
    env = _env("experiments", "reviewer")
    world = env.world
    ablation, oom = world.by_id["t06_ablation_queue"], world.by_id["t01_oom_error"]
    while not oom.active:
        _step(env, "wait")
    result = _step(env, "request_approval", message="OK to queue the ablation for tonight?",
                   actions=[{"tool": "launch_job", "args": ablation.spec.action.args}])
    # (the ablation is knowable by then: the request brings it up and is asked of it, tests/test_fair_early.py)
    assert ablation.active and result.startswith(f"Request under {world.matter_of(ablation).id}") and oom.approval is None
    _step(env, "wait")
    assert ablation.approval == "approve" and oom.approval is None


# ------------------------------------------------------------------ round 13
ROUND13_ABLATION_NOTE = (
    "Ingrid's ablation for the Wed 15 Apr 10:00 1:1: mCE per variant + clean top-1 for full vs no-KD vs no-TMA "
    "vs neither. Three variants to evaluate with scripts/run_ablation.sh: runs/abl_no_kd/ckpt_ep100.pt, "
    "runs/abl_no_tma/ckpt_ep100.pt, runs/abl_neither/ckpt_ep100.pt; ~6.5 h on GPUs 4-7. Training holds them until "
    "Tue ~20:40, so the only window is Dana's Tuesday slot NS-0414-G2B. Blocker: stale pending job 48102 would "
    "grab that slot; the NaN hunt finished in 7c2d9e0, so Dana should cancel it.")
ROUND13_STALE_NOTE = (
    "Stale pending job 48102 dana-debug-0408 on apl-gpu02: Begin Tue 21:00, 12 h limit, left from the NaN hunt "
    "(fixed in 7c2d9e0). Suggest Dana runs scancel 48102 before Tuesday 21:00.")


def test_notes_claimed_together_are_shared_out_one_need_each():
    """Round 13: an ablation note that names the stale job as its blocker, and a note on the stale
    job itself, were both taken by the stale job when both needs came up on Tuesday morning (the
    ablation note cites the job twice), and the stale job's matter was titled with the ablation.
    Notes claimed at the same moment are now shared out, each need its own, and an own matter is
    titled with the sentence that fits it."""
    env = _env("experiments", "reviewer")
    world = env.world
    _step(env, "wait")
    _step(env, "write_note", text=ROUND13_ABLATION_NOTE)
    _step(env, "write_note", text=ROUND13_STALE_NOTE)
    queue, stale = world.by_id["t06_ablation_queue"], world.by_id["t05_stale_job"]
    while not queue.active:
        _step(env, "wait")
    claimed = {e["text"][:20]: e["task"] for e in world.log if e["type"] == "note" and e.get("written") is not None}
    assert claimed == {ROUND13_ABLATION_NOTE[:20]: "t06_ablation_queue", ROUND13_STALE_NOTE[:20]: "t05_stale_job"}
    assert "48102" in world.matter_of(stale).title and "ablation" in world.matter_of(queue).title


def test_a_call_without_about_waits_for_a_need_to_come_that_its_words_fit_as_well():
    """Round 13: a rent note written without 'about' on the first evening ('pay £960 to saved
    payee Harbour Lettings') was filed under the energy bill (m1) through 'saved payee'. Issue #20.1:
    never by what is still to come (that leaked it); a listed matter takes a call without 'about'
    only where its words point at it twice over (two of its own facts, or a fact and three title
    words)."""
    env = _env("household_finances", "operator")
    world = env.world
    energy = world.by_id["t01_energy_bill"]
    while not energy.active:
        _step(env, "wait")
    result = _step(env, "write_note", text="Rent for February, tenancy HL-21840: the rent review raises it from £925 "
                                           "to £960.00 from 1 Feb; the budget sheet still says £925. Plan: pay "
                                           "£960.00 to saved payee Harbour Lettings from current 3318.")
    assert "linked to no matter yet" in result
    assert not [e for e in world.log if e["type"] == "note" and e.get("task") == "t01_energy_bill"]


# ------------------------------------------------------------------ round 14
def test_an_earlier_message_never_counts_where_a_message_is_not_what_the_user_wants():
    """Round 14: an order confirmation sent under the finished purchase matter mentioned the
    Friday delivery while Jordan is in Bristol; two days later the delivery clash came up, with
    delivery changes delegated by then, and the confirmation was taken as a suggestion on it:
    under-intervention (-1.86 trust, TR-D). An earlier message now counts for a need only where a
    message is what the user's rules want."""
    env = _env("household_finances", "operator")
    world = env.world
    cancel = world.by_id["t09_cancel_fithub"]
    _step(env, "wait")
    result = _step(env, "message_user", text="FitHub Plus (£89.99 a year) has not been used since 14 September, "
                                             "since you moved to the staff gym; there is no cancellation fee.")
    assert "linked to no matter yet" in result
    while not cancel.active:
        _step(env, "wait")
    _step(env, "wait")
    assert not cancel.presented
    assert not [e for e in world.log if e["type"] == "trust" and e.get("task") == cancel.spec.id]


def test_a_request_under_the_sweep_listing_its_run_and_the_booking_is_not_split_silently():
    """Round 14: asked under the sweep's matter, a request listing book_gpu_slot and the sweep's
    allocate_resource went to the booking, the run was silently dropped, and the reservation that
    followed was refused as unasked (over-intervention); round 14 returned it (one matter per
    request). Round 22: a request is asked of each matter whose action it lists — the run of the
    sweep it names, the booking of its own — and neither is dropped."""
    env, sweep = _open_sweep("reviewer")
    world = env.world
    booking = world.by_id["t08_book_wednesday"]
    while not booking.active:
        _step(env, "wait")
    matter = world.matter_of(sweep).id
    result = _step(env, "request_approval", about=matter, message="Book Wednesday night and run the sweep there?",
                   actions=[{"tool": "book_gpu_slot", "args": booking.spec.action.args},
                            {"tool": "allocate_resource", "args": {"resource": "gpu_server", "start": "D3 21:00"}}])
    run, book = result.split("\n")[:2]
    assert run.startswith(f"allocate_resource: Request under {matter} sent")
    assert book.startswith(f"book_gpu_slot: Request under {world.matter_of(booking).id} sent")
    assert [e["task"] for e in world.log if e["type"] == "decision"][-2:] == [sweep.spec.id, booking.spec.id]
    assert sweep.approval == booking.approval == "approve"


# ------------------------------------------------------------------ round 15
def test_a_note_and_a_message_on_one_need_both_go_to_it():
    """Round 15: a note and a message on the stale job, written before it came up, were shared
    out as if they were two notes: the note went to the ablation queue (whose matter was then
    titled with the stale job) and the ablation was missed. A note is a need's work and a message
    its delivery: they are shared out only among their own kind."""
    env = _env("experiments", "reviewer")
    world = env.world
    _step(env, "wait")
    _step(env, "write_note", text="Stale pending job 48102 dana-debug-0408 on apl-gpu02: Begin "
                                  "2026-04-14T21:00, 12 h limit, left from the NaN hunt (fixed in 7c2d9e0); it would "
                                  "take Dana's Tuesday night slot tonight.")
    _step(env, "message_user", text="Heads-up: your old debug job 48102 is still pending with Begin Tue 21:00; the "
                                    "NaN hunt is done (7c2d9e0), so you may want to scancel 48102.")
    queue, stale = world.by_id["t06_ablation_queue"], world.by_id["t05_stale_job"]
    while not queue.active:
        _step(env, "wait")
    assert [e["task"] for e in world.log if e["type"] == "note" and e.get("written") is not None] == ["t05_stale_job"]
    assert stale.presented and world.matter_of(queue) is None


def test_a_follow_up_to_a_finished_matter_does_not_wait_past_a_day():
    """Round 15: an order confirmation sent under the finished purchase matter (it mentioned the
    wedding weekend) was taken three days later by the damage claim. A follow-up to a finished
    matter waits for a need that comes up within a day, no longer."""
    env = _env()
    world = env.world
    purchase, damage = world.by_id["t06_purchase_review"], world.by_id["t10_damage_claim"]
    _oracle_until(env, purchase.spec.deadline + 30)
    matter = world.matter_of(purchase).id
    result = _step(env, "message_user", about=matter,
                   text="Order placed and confirmed: ORD-58213, delivery Friday, the day you're in Bristol before "
                        "the wedding weekend.")
    assert result.startswith(f"Delivered under {matter}.")
    sent = world.now
    while not damage.active:
        _step(env, "wait")
    assert sent not in [e.get("sent") for e in world.log if e["type"] == "present" and e.get("task") == damage.spec.id]


# ------------------------------------------------------------------ round 16
def test_a_request_naming_an_action_still_to_come_never_approves_an_open_run():
    """Round 16: a request to launch the ablation (launch_job beside allocate_resource), sent just
    before the ablation came up, was put to Dana as the sweep's run, which awaited her OK: she
    'approved' the sweep. A request naming an action still to come waits for it. (Suite 0.6: the
    ablation now comes up with the sweep; the booking of Wednesday's second half is still to come.)"""
    env, sweep = _open_sweep("reviewer")
    world = env.world
    booking = world.by_id["t08_book_wednesday"]
    assert not booking.triggered
    result = _step(env, "request_approval", message="OK to book the second half of Wednesday night for the ablation?",
                   actions=[{"tool": "book_gpu_slot", "args": booking.spec.action.args},
                            {"tool": "allocate_resource", "args": {"resource": "gpu_server", "start": "D2 23:30"}}])
    # (the booking is knowable by then: the request brings it up and is asked of it, tests/test_fair_early.py)
    assert booking.active and result.startswith(f"Request under {world.matter_of(booking).id}") and sweep.approval is None
    _step(env, "wait")
    assert booking.approval == "approve" and sweep.approval is None


def test_a_reservation_for_work_that_needs_no_compute_says_notes_do_it_alike_for_every_matter():
    """Round 16: asked to reserve the GPUs for the ablation, the tool answered only "no open work
    of that matter runs on gpu_server"; round 17 named the matter's action tool. Issue #20: that
    refusal named the action of a matter found by the words of a call without 'about', and filed
    a matter for it — probing record titles found unannounced matters. The refusal now says the
    general rule, the same for every matter, and a refused call files no matter."""
    env = _env("experiments", "reviewer")
    world = env.world
    ablation = world.by_id["t06_ablation_queue"]
    while not ablation.active:
        _step(env, "wait")
    result = _step(env, "allocate_resource", what="the ablation", resource="gpu_server", start="D2 21:00",
                   about="t06_ablation_queue")
    assert "no open work of that matter runs on gpu_server (work that runs on no compute is done with notes)" in result
    assert "launch_job" not in result
    matters = dict(world.matters)
    _step(env, "allocate_resource", what=ablation.spec.title, resource="gpu_server", start="D2 21:00")
    assert world.matters == matters  # refused: nothing filed


def test_a_key_beside_tool_and_arguments_is_an_error_not_silently_dropped():
    """Round 16: an 'about' put beside 'arguments' (not inside) was silently ignored."""
    env = _env()
    _step(env, "wait")
    obs = env.step(json.dumps({"tool": "write_note", "about": "m1", "arguments": {"text": "Comparing monitors"}}))[0]
    assert obs.startswith("Error: write_note: unexpected 'about' beside 'tool' and 'arguments'")
    assert not env.world.by_id["t01_setup"].started
