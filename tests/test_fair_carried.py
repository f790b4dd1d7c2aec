"""Facts that finished work shares with open work point at the open work (issue #20, blind round
29), over every pair and seeds 0, 1000, 1001.

A follow-up need often carries the facts of work already done: household_finances / operator /
1038's reply to Priya that HMRC shows the payment cites the payment's reference 4829301756K, which
the finished HMRC payment cites too; conference_trip / reviewer / 1039's check-in reminder names the
passport 145277310 and the ESTA number, which the finished ESTA tasks cite. A fact two tasks share
pointed at neither (``_distinctive``), so the player's draft and reminder reached no task and the
needs were scored missed (trust 4.84 → 2.98 and 5.00 → 3.14). A task whose work is over takes
nothing more, so what it shares with a task that has work left is that task's own; what the
finished task alone cites is still its own (and keeps a recap of it from counting elsewhere).

Both went through the claim of words kept before their need came up (``TextTools.settle``): the
draft had no ``about`` and no task fitted it yet, the reminder was filed under a matter whose own work
was over. Each play is the text oracle until a task comes up with a fact whose every needle is shared
only with tasks whose work is over; a note kept from the minute before, stating that fact, must be
claimed by it, and one stating only what the finished task alone cites must not."""

from __future__ import annotations

import functools
import json

import pytest

from proactive_env.baselines.oracle import TextOracleAgent
from proactive_env.evaluate import make_env
from proactive_env.sim.tools import COMMON_IN, _fact_needles, _score, _title_words, normalise
from proactive_env.spec import PERSONAS, shipped_names

SEEDS = (0, 1000, 1001)
CASES = [(name, persona, seed) for name in shipped_names() for persona in PERSONAS for seed in SEEDS]


def _carried(env):
    """(open task, its fact carried from finished work, a finished task sharing it) where one is
    up now, else None."""
    tools, world = env.unwrapped.toolbox, env.unwrapped.world
    up = [world.tasks[i] for i in world.came_up]
    over = [t for t in up if t.closed or not tools.work_left(t)]
    left = [t for t in up if not t.closed and tools.work_left(t)]
    texts = [normalise(f"{v.title} {v.text}") for v in map(world.store.view, sorted(world.store.visible))]
    everywhere = {n for t in up for f in _fact_needles(t.spec) for n in f if sum(n in x for x in texts) > COMMON_IN}
    for task in left:
        others_left = {n for o in left if o is not task for f in _fact_needles(o.spec) for n in f}
        for fact, needles in zip(task.spec.facts, _fact_needles(task.spec)):
            sharing = [o for o in over if needles & {n for f in _fact_needles(o.spec) for n in f}]
            if sharing and not needles & others_left and needles - everywhere and all(
                    any(n in {m for f in _fact_needles(o.spec) for m in f} for o in sharing) for n in needles) and not any(
                    _recaps(o, task, fact.text) for o in sharing):
                return task, fact, sharing[0]
    return None


def _recaps(finished, task, text: str) -> bool:
    """Does ``text`` also name what only ``finished`` cites (its own facts or title words, beside
    what it shares with ``task``)? Then it is about both, and either may take it."""
    mine = {n for f in _fact_needles(task.spec) for n in f}
    own = [f - mine for f in _fact_needles(finished.spec) if f - mine]
    return _score(own, _title_words(finished.spec) - _title_words(task.spec), text) > 0


@functools.lru_cache(maxsize=None)
def _moment(name: str, persona: str, seed: int) -> tuple[int, str, str, str] | None:
    """The oracle's call count when a task first comes up carrying a fact from finished work, with
    that task, the fact's text and the finished task (None: never on this play)."""
    env = make_env(name, persona, "text")
    obs, info = env.reset(seed=seed)
    agent = TextOracleAgent()
    agent.reset(env.unwrapped, seed)
    calls = 0
    while not env.unwrapped.world.done:
        found = _carried(env)
        if found is not None and found[0].trigger == env.unwrapped.world.now:
            task, fact, finished = found
            return calls, task.spec.id, fact.text, finished.spec.id
        obs, _, _, _, info = env.step(agent.act(obs, info))
        calls += 1
    return None


def _replayed(name: str, persona: str, seed: int, calls: int):
    env = make_env(name, persona, "text")
    obs, info = env.reset(seed=seed)
    agent = TextOracleAgent()
    agent.reset(env.unwrapped, seed)
    for _ in range(calls):
        obs, _, _, _, info = env.step(agent.act(obs, info))
    return env


def _kept_then_settled(env, text: str) -> str | None:
    """A note written the minute before and kept (no ``about``; nothing fitted it then), settled
    now: the task that claims it, if any."""
    tools, world = env.unwrapped.toolbox, env.unwrapped.world
    start = len(world.log)
    tools.earlier.append({"kind": "note", "text": text, "t": world.now - 1})
    tools.settle()
    return next((e["task"] for e in world.log[start:] if e["type"] == "note"), None)


def _at_moment(name: str, persona: str, seed: int):
    """The play replayed to its carried fact's moment (else the test is skipped): the env, the
    open task, the fact's text and the finished task sharing it."""
    moment = _moment(name, persona, seed)
    if moment is None:
        pytest.skip("no fact carried from finished work into open work on this play")
    calls, task_id, fact, finished = moment
    return _replayed(name, persona, seed, calls), task_id, fact, finished


def test_the_sweep_meets_carried_facts():
    met = [c for c in CASES if _moment(*c) is not None]
    assert len(met) >= 20, f"only {len(met)} plays meet a fact finished work carries into open work"
    assert len({c[0] for c in met}) >= 4


@pytest.mark.parametrize("name,persona,seed", CASES)
def test_a_fact_finished_work_carries_points_at_the_open_work(name, persona, seed):
    env, task_id, fact, finished = _at_moment(name, persona, seed)
    assert _kept_then_settled(env, fact) == task_id, f"{fact!r} (shared with {finished}, whose work is over) missed {task_id}"


@pytest.mark.parametrize("name,persona,seed", CASES)
def test_what_only_the_finished_work_cites_stays_its_own(name, persona, seed):
    env, task_id, _, finished = _at_moment(name, persona, seed)
    world = env.unwrapped.world
    spec = world.by_id[finished].spec
    mine = {n for f in _fact_needles(world.by_id[task_id].spec) for n in f}
    own = [f.text for f, needles in zip(spec.facts, _fact_needles(spec)) if needles and not needles & mine]
    if not own:
        pytest.skip(f"everything {finished} cites, {task_id} cites too")
    assert _kept_then_settled(env, " ".join(own)) != task_id


@pytest.mark.parametrize(("stem", "task_id"), [
    ("blind29-household_finances-operator-1038", "t11_tax_confirmation"),  # the draft to Priya, D8 07:00
    ("blind29-conference_trip-reviewer-1039", "t12_checkin_reminder"),  # the check-in heads-up, D5 21:00
])
def test_round_29s_kept_words_reach_the_need_they_carry_facts_into(stem, task_id):
    """Round 29's two cases, their sessions replayed whole: the words kept before the need came up
    now count for it (it is shown to the user, not missed)."""
    from runs import blind_session

    env, calls = blind_session(stem, upto=None)
    world = env.world
    while not world.done:
        env.step('{"tool": "wait", "arguments": {}}')
    shown = [e for e in world.log if e["type"] == "present" and e["task"] == task_id]
    assert shown and not any(e["type"] == "trust" and e["task"] == task_id and e["cause"] == "missed" for e in world.log)
