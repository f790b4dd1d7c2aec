"""What the world does on the agent's behalf is judged at the time the agent did it (blind round 28,
apartment_move / reviewer / 1035), over every pair and seeds 0, 1000, 1001.

The text face keeps a request for an action no open matter calls for ("Request kept: ...") and puts
it to the user when a task that calls for it comes up (``TextTools.settle``): the request never
tells the agent of a task still hidden. When that happens is the world's doing — the task's trigger
— not the agent's: a request made days before cannot compete in a clash that opened after it was
made. So the released request's ``present`` entry carries when the agent made it (``made``), and
every judgement that reads when something was put to the user reads that time
(``scoring.metrics._agents_time``, as a claimed message is judged when it was sent and a kept
postponement when it was written): it is not the competing side reaching the clash inside a window
that opened since, nor, symmetrically, the urgent side handled inside one. What the agent does
itself after the release (an execute inside the window) stays its own act at its own time.

The sweep: the text oracle, and the same oracle asking, at the very start of the episode, for the
action of each TA decision's competing task — and, for the symmetric rule, its urgent task — as it
will later ask for it (the same message, tool and arguments, no ``about``): the requests no open
matter calls for yet are kept and released when their tasks come up (179 over the sweep, 50 of them
competing tasks', 42 into a clash window of theirs that opened since). No TA decision's verdict may move. On the code before (a released request judged
at its release) 31 plays in five scenarios lose a decision the oracle wins, all on the competing
side: e.g. apartment_move / reviewer / 0 loses ta3_council_tax_before_football, whose competing
internet booking comes up at the window's start and is released into it.
"""

from __future__ import annotations

import functools
import json

import pytest

from proactive_env.baselines.oracle import TextOracleAgent
from proactive_env.evaluate import play
from proactive_env.replay import scenario_of
from proactive_env.report.explain import explain
from proactive_env.scoring import RunScorer, score_log
from proactive_env.sim.world import RUN_TOOL, headline
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1000, 1001)
KEPT = "Request kept: it fits no open matter"


class _Recording(TextOracleAgent):
    """The text oracle, noting the approval requests it makes for either side of any TA decision
    (each task's first one; a request for a run only is no action to keep)."""

    def reset(self, env, seed: int) -> None:
        super().reset(env, seed)
        self.sides = {t for d in self.world.scenario.ta_decisions for t in (d.competing, d.urgent)}
        self.asked: dict[str, dict] = {}

    def act(self, obs: str, info: dict) -> str:
        call = json.loads(super().act(obs, info))
        args = call["arguments"]
        if (call["tool"] == "request_approval" and args.get("about") in self.sides
                and all(a["tool"] != RUN_TOOL for a in args["actions"])):
            self.asked.setdefault(args["about"], {k: v for k, v in args.items() if k != "about"})
        return json.dumps(call)


class _AskedEarly(TextOracleAgent):
    """The text oracle, first making ``requests`` (the oracle's own later requests for the tasks of
    TA decisions, without ``about``), one call each, before anything else — for the tasks not come up yet
    (one already open would take its request live, then: the agent's own act, not the world's);
    notes each reply."""

    name = "text-oracle+requests-at-start"

    def __init__(self, requests: tuple[str, ...]):
        self.requests = requests

    def reset(self, env, seed: int) -> None:
        super().reset(env, seed)
        asked = [json.loads(r) for r in self.requests]
        self.queue = [args for task, args in asked if not self.world.by_id[task].active]
        self.replies: list[tuple[dict, str, int]] = []  # (arguments, reply, minute made)
        self._last: dict | None = None

    def act(self, obs: str, info: dict) -> str:
        if self._last is not None:
            self.replies.append((self._last, obs, self.world.now))
            self._last = None
        if self.queue:
            self._last = self.queue.pop(0)
            return json.dumps({"tool": "request_approval", "arguments": self._last})
        return super().act(obs, info)


@functools.lru_cache(maxsize=None)
def _oracle(scenario: str, persona: str, seed: int) -> tuple[dict, tuple[str, ...]]:
    """The oracle's scores, and its requests for the tasks of TA decisions (as JSON: [task id, the
    request's arguments, ``about`` left out])."""
    agent = _Recording()
    scores = play(agent, scenario, persona, seed)["scores"]
    return scores, tuple(json.dumps([task, a], sort_keys=True) for task, a in agent.asked.items())


def _asked_early(scenario: str, persona: str, seed: int, requests: tuple[str, ...]) -> tuple[dict, tuple[int, int, int]]:
    """The early-asking play: its trajectory, and (how many requests were kept, how many of those
    the world released — "Your request of ... now counts for ..." —, how many it released to a
    competing task inside one of its clash windows that opened after the request was made)."""
    agent = _AskedEarly(requests)
    trajectory = play(agent, scenario, persona, seed)
    kept = [(args, at) for args, reply, at in agent.replies if KEPT in reply]
    world = agent.world
    inbox = "\n".join(world.inbox)
    released = sum(f"Your request of {world.clock_text(at)} (\"{headline(args['message'], 60)}\") now counts for"
                   in inbox for args, at in kept)
    into = sum(any(d.competing == e["task"] and e["made"] < d.start <= e["t"] < d.end for d in world.scenario.ta_decisions)
               for e in trajectory["log"] if e["type"] == "present" and "made" in e)
    return trajectory, (len(kept), released, into)


def _verdicts(scores: dict) -> dict[str, tuple]:
    return {d["id"]: (d["now"], d["later"], d["nothing_to_postpone"], d["eligible"], d["continuation"])
            for d in scores["ta_decisions"]}


def _won(scores: dict) -> set[str]:
    return {d["id"] for d in scores["ta_decisions"] if d["eligible"] and d["now"] and (d["later"] or d["nothing_to_postpone"])}


@pytest.mark.parametrize("scenario", shipped_names())
def test_a_request_the_world_releases_is_judged_when_it_was_made(scenario):
    """Every persona and seed: the oracle asking for its TA decisions' tasks' actions at the start —
    kept, then released by the world when each task comes up, inside a clash window or not — wins
    every TA decision the oracle wins, and no decision's verdict moves; each such play rescored from
    its log gives the live J. Somewhere in the suite the sweep releases requests (asserted over
    the suite in ``test_the_sweep_releases_requests``)."""
    for persona in PERSONAS:
        for seed in SEEDS:
            scores, requests = _oracle(scenario, persona, seed)
            if not requests:
                continue
            trajectory, _RELEASED[(scenario, persona, seed)] = _asked_early(scenario, persona, seed, requests)
            early = trajectory["scores"]
            at = (scenario, persona, seed)
            assert _won(scores) <= _won(early), (at, _won(scores) - _won(early))
            assert _verdicts(early) == _verdicts(scores), at
            rescored = score_log(scenario_of(trajectory), persona, trajectory["log"])
            assert rescored["J"] == pytest.approx(early["J"], abs=1e-12), at


_RELEASED: dict[tuple[str, str, int], tuple[int, int, int]] = {}  # (kept, released, into a window)


def test_the_sweep_releases_requests():
    """The sweep exercises the class: over the suite, requests were kept and the world released
    them (counted from what the agent was told), some to a competing task inside a clash window
    that opened after they were made. Runs after the sweep (or plays it itself)."""
    for scenario in shipped_names():
        for persona in PERSONAS:
            for seed in SEEDS:
                if (scenario, persona, seed) in _RELEASED:
                    continue
                requests = _oracle(scenario, persona, seed)[1]
                if requests:
                    _RELEASED[(scenario, persona, seed)] = _asked_early(scenario, persona, seed, requests)[1]
    kept, released, into = (sum(counts) for counts in zip(*_RELEASED.values()))
    assert kept > 0 and released > 0 and into > 0, (kept, released, into)


# ------------------------------------------------------------------ round 28, as played
def _ta3_read(scenario, log: list[dict]):
    """ta3 as the scorer holds it after reading ``log``."""
    scorer = RunScorer(scenario, "reviewer")
    scorer.feed(log)
    return next(d for d in scorer.decisions if d.spec.id == "ta3_council_tax_before_football")


def _ta3(scores: dict) -> dict:
    return next(d for d in scores["ta_decisions"] if d["id"] == "ta3_council_tax_before_football")


def test_round28_the_internet_request_released_into_the_council_tax_clash():
    """Blind round 28, apartment_move / reviewer / 1035, replayed call for call. The internet
    booking request the player made on Thursday (D4 20:30) was kept until Sam's Saturday 12:00
    message raised its matter — the minute the council-tax clash (ta3, D6 12:00–12:30, over Sam's
    time) opened — and the world put it to Sam then; Sam approved, and the player executed the
    booking at once, at 12:00. The release is now the player's request of Thursday: it does not
    compete in ta3. ta3 stays lost, on the player's own acts: the execute inside the window reached
    what the clash shares (the user's time), and the booking was never put after the clash (later
    ✗). J is unchanged by this rule (0.6247: 0.6224 as played, plus a fact a keyword with a word inside
    it states since round 29's fix); ``show --why`` names the minute the competing side reached it. The same log with the booking deferred at 12:00 to 12:35 and
    executed then wins ta3 (J 0.7359; 0.7335 before round 29's keyword fix), which it could not before: the release alone lost it."""
    from runs import played_case

    env = played_case("blind28-apartment_move-reviewer-1035")
    log = env.world.log
    sat_noon = 5 * 1440 + 12 * 60
    released = next(e for e in log if e["type"] == "present" and e["task"] == "t11_internet_booking")
    booked = next(e for e in log if e["type"] == "execute" and e["task"] == "t11_internet_booking")
    assert released["t"] == booked["t"] == sat_noon and released["made"] == 3 * 1440 + 20 * 60 + 30
    trajectory = env.trajectory(agent="blind-28")
    scores = trajectory["scores"]
    assert (_ta3(scores)["now"], _ta3(scores)["later"]) == (True, False)
    assert scores["J"] == pytest.approx(0.6247, abs=5e-5)
    scenario = scenario_of(trajectory)
    assert score_log(scenario, "reviewer", log)["J"] == pytest.approx(scores["J"], abs=1e-12)
    why = next(d for d in explain(trajectory).decisions if d.decision == "ta3_council_tax_before_football").reason
    assert why.endswith("(put to the user, or run on the resource: from D6 (Sat 18 Apr) 12:00)"), why
    assert _ta3_read(scenario, log).reached == [sat_noon]  # the execute: without it, the release reaches nothing
    assert not _ta3_read(scenario, [e for e in log if e is not booked]).competed

    after = [e for e in log if e is not booked]  # the booking put after the clash, as the agent could have
    after.insert(log.index(booked), {"type": "defer", "task": booked["task"], "until": sat_noon + 35,
                                     "plan": "Book it after the council tax.", "t": sat_noon})
    after.insert(next(i for i, e in enumerate(after) if e["t"] >= sat_noon + 35), dict(booked, t=sat_noon + 35))
    deferred = score_log(scenario, "reviewer", after)
    assert _ta3(deferred)["later"] and deferred["J"] == pytest.approx(0.7359, abs=5e-5)
    as_released = [{k: v for k, v in e.items() if k != "made"} for e in after]  # judged at its release
    assert not _ta3(score_log(scenario, "reviewer", as_released))["later"]
