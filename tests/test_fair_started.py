"""What follows a compute run waits for the run (issue #20.5, blind round 29: experiments /
reviewer / 1037), over every pair and seeds 0, 1000, 1001.

The player wrote a note on the calibration matter at D2 08:30 and reserved its 45-minute run for
D3 04:30; the run's result file (``when: {task: t14_calibration, state: started, after: 45}``)
appeared at D2 21:45, seven hours before the run, because the note had reached the task's
``started`` and the file was timed from the note. A note on work that needs compute runs nothing
("nothing runs until you reserve it"), so it takes the task up (``World.take_up``: it counts as
prepared) without starting it; ``started`` is reached when a run is reserved, timed from the run's
start (``World.allocate``), or when the structured face starts it.

Each play is the text oracle until a task whose work needs compute, and that something waits on to
start, comes up; then a note on it, and only waiting to the end of the run: nothing that waits for
its start may appear. Then the same with the run reserved at the first free start: what waits
appears, and not before the run's start plus its ``after``."""

from __future__ import annotations

import json

import pytest

from proactive_env.baselines.oracle import TextOracleAgent
from proactive_env.evaluate import make_env
from proactive_env.spec import PERSONAS, load_scenario, shipped_names

SEEDS = (0, 1000, 1001)


def _waiting_on_start(scenario) -> dict[str, list[tuple[str, int]]]:
    """Per task whose work needs compute: the records and events that wait for it to start, with
    their ``after`` minutes."""
    out: dict[str, list[tuple[str, int]]] = {}
    compute = {t.id for t in scenario.tasks if t.work.resource is not None}
    for item in [*scenario.records, *scenario.events]:
        when = item.when
        if when is not None and when.task in compute and when.state == "started":
            out.setdefault(when.task, []).append((item.id, when.after))
    return out


PLAYS = [(name, persona, seed, task)
         for name in shipped_names()
         for task in sorted(_waiting_on_start(load_scenario(name)))
         for persona in PERSONAS for seed in SEEDS]


def _appeared(world, ids: set[str]) -> dict[str, int]:
    return {e["id"]: e["t"] for e in world.log if e["type"] in ("record", "event") and e.get("id") in ids}


def _up_to(name: str, persona: str, seed: int, task_id: str):
    """The text oracle's play until ``task_id`` has come up (None: it never does, or it closed)."""
    env = make_env(name, persona, "text")
    obs, info = env.reset(seed=seed)
    agent = TextOracleAgent()
    agent.reset(env.unwrapped, seed)
    world = env.unwrapped.world
    task = world.by_id[task_id]
    while not world.done and not task.active:
        obs, _, _, _, info = env.step(agent.act(obs, info))
    return env if task.active and not task.closed else None


def _call(env, tool: str, **arguments) -> str:
    obs, *_ = env.step(json.dumps({"tool": tool, "arguments": arguments}))
    return obs


def _untouched(name: str, persona: str, seed: int, task_id: str):
    """The text oracle's play up to ``task_id`` coming up, not yet taken up (else the test is
    skipped): the env, its world, the task, what waits for its start (with delays) and what of
    that had appeared already."""
    env = _up_to(name, persona, seed, task_id)
    if env is None:
        pytest.skip(f"{task_id} does not come up on this play")
    world = env.unwrapped.world
    task = world.by_id[task_id]
    if task.started:
        pytest.skip(f"the oracle took {task_id} up in the minute it came up")
    waiting = dict(_waiting_on_start(world.scenario)[task_id])
    return env, world, task, waiting, set(_appeared(world, set(waiting)))


def test_the_sweep_reaches_compute_tasks_with_results():
    assert PLAYS, "no task whose results wait for its compute run: the sweep cannot fail"
    assert {p[0] for p in PLAYS} >= {"experiments"}


@pytest.mark.parametrize("name,persona,seed,task_id", PLAYS)
def test_a_note_starts_no_run(name, persona, seed, task_id):
    env, world, task, waiting, before = _untouched(name, persona, seed, task_id)
    reply = _call(env, "write_note", about=task_id, text=f"Working on {task.spec.title}.")
    assert "nothing runs until you reserve it" in reply, reply
    assert task.started, "a note on compute work still takes the task up (prepared)"
    while not world.done:
        _call(env, "wait")
    late = {k: v for k, v in _appeared(world, set(waiting)).items() if k not in before}
    assert not late, f"{task_id}: a note ran no compute, yet what follows its run appeared: {late}"


@pytest.mark.parametrize("name,persona,seed,task_id", PLAYS)
def test_what_follows_a_reserved_run_waits_for_its_start(name, persona, seed, task_id):
    env, world, task, waiting, before = _untouched(name, persona, seed, task_id)
    _call(env, "write_note", about=task_id, text=f"Working on {task.spec.title}.")
    slot = world.free_window(task)
    if slot is None or world.needs_run_ok(task):
        pytest.skip(f"{task_id}: no free run before its deadline, or its run needs an OK")
    reply = _call(env, "allocate_resource", about=task_id, what=task.spec.title,
                  resource=task.spec.work.resource, start=world.clock_text(slot[0]))
    start = world.reservation(task)
    assert start is not None, reply
    while not world.done:
        _call(env, "wait")
    appeared = {k: v for k, v in _appeared(world, set(waiting)).items() if k not in before}
    assert appeared, f"{task_id}: its run was reserved, yet nothing that waits for it appeared"
    early = {k: v for k, v in appeared.items() if v < start[0] + waiting[k]}
    assert not early, f"{task_id}: run reserved from {start[0]}, yet appeared before it had run: {early}"


def _structured_up_to(name: str, persona: str, seed: int, task_id: str):
    """The structured oracle's play until ``task_id`` has come up (None: it never does, or closed)."""
    from proactive_env.baselines import make_agent
    from proactive_env.envs.structured import ProactivityEnv

    env = ProactivityEnv(name, persona=persona)
    obs, info = env.reset(seed=seed)
    agent = make_agent("oracle")
    agent.reset(env, seed)
    task = env.world.by_id[task_id]
    while not env.world.done and not task.active:
        obs, _, _, _, info = env.step(agent.act(obs, info))
    return env if task.active and not task.closed and not task.started else None


@pytest.mark.parametrize("name,persona,seed,task_id", PLAYS)
def test_a_start_whose_run_is_refused_starts_nothing_that_follows(name, persona, seed, task_id):
    """The structured face's START runs compute work now; where the run needs the user's OK and has
    none it is refused, and what follows the run must not come either (it did: START reached
    ``started`` before the run was asked for)."""
    from proactive_env.sim import Verb

    env = _structured_up_to(name, persona, seed, task_id)
    if env is None:
        pytest.skip(f"{task_id} does not come up untouched on this play")
    world = env.world
    task = world.by_id[task_id]
    waiting = dict(_waiting_on_start(world.scenario)[task_id])
    before = set(_appeared(world, set(waiting)))
    refused = world.needs_run_ok(task)
    if not world.valid_verbs(task)[Verb.START]:
        pytest.skip(f"START is not valid on {task_id} here")
    world.act(Verb.START, task.index)
    start = world.now
    while not world.done:
        env.step(0)
    appeared = {k: v for k, v in _appeared(world, set(waiting)).items() if k not in before}
    if refused:
        assert not appeared, f"{task_id}: its run was refused, yet what follows it appeared: {appeared}"
    else:
        assert appeared and all(v >= start + waiting[k] for k, v in appeared.items()), appeared
