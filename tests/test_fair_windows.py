"""A start time is right anywhere the user would accept it (issue #20, item 3), over all 30 pairs
and seeds 0, 1000, 1001.

The principle (``Action.windows``, ``spec.meaning.Window``): a scenario declares, for a time
argument where a range serves the user, the span the records give (the ablation may begin anywhere
in the free half-night that it still ends in, 01:30 to 02:00); every judgement of an action's
arguments — execution's, attribution's, an approval's — takes any time inside it, on the right
day, and none outside. A time with no window is compared as the reference states it. The
validator checks each window is stated by the records before the deadline, holds the reference,
and is judged by TA alike throughout."""

from __future__ import annotations

import copy
import datetime
import functools
import json
import re

import pytest
import yaml
from gymnasium.utils import seeding

from proactive_env.baselines import TextOracleAgent
from proactive_env.evaluate import play
from proactive_env.sim.tools import args_problem, record_names
from proactive_env.spec import PERSONAS, ScenarioError, load_scenario, parse_scenario, shipped_names, variant
from proactive_env.spec.loader import scenario_dir
from proactive_env.spec.meaning import leaves, when
from runs import episode

SEEDS = (0, 1000, 1001)
PAIRS = [(s, p) for s in shipped_names() for p in PERSONAS]


def _variant(name: str, persona: str, seed: int):
    base = load_scenario(name)
    rng, _ = seeding.np_random(seed)
    return variant.apply(base, variant.draw(base, persona, rng))


def _windowed(s) -> list[tuple[str, str]]:
    return [(t.id, key) for t in s.tasks if t.action for key in t.action.windows]


def _moved(value: str, minutes: int) -> str:
    """``value`` (a date and time, or a time of day) ``minutes`` later, in the same form."""
    stated = when(value)
    clock = stated.minutes[0] + minutes
    if stated.month is None:
        return f"{clock // 60:02d}:{clock % 60:02d}"
    moment = datetime.datetime(stated.year, stated.month, stated.day) + datetime.timedelta(minutes=clock)
    return moment.strftime("%Y-%m-%dT%H:%M")


def _span(window) -> int:
    return round((_minutes(window.latest) - _minutes(window.earliest)))


def _minutes(value: str) -> int:
    stated = when(value)
    day = datetime.date(stated.year, stated.month, stated.day).toordinal() if stated.month else 0
    return day * 24 * 60 + stated.minutes[0]


def _probes(window) -> tuple[list[str], list[str]]:
    """Times the user takes (both ends and the middle) and times they do not (a minute outside)."""
    inside = [window.earliest, window.latest, _moved(window.earliest, _span(window) // 2)]
    return inside, [_moved(window.earliest, -1), _moved(window.latest, 1)]


class WindowOracle(TextOracleAgent):
    """The text oracle, giving one windowed argument of one task as ``value`` wherever it states
    the action (its request for approval and its call); it notes the call's result."""

    def __init__(self, task: str, key: str, value: str):
        self.task, self.key, self.value = task, key, value
        self.name = f"text-oracle+{key}={value}"

    def reset(self, env, seed: int) -> None:
        super().reset(env, seed)
        self.action = next(t.action for t in env.world.scenario.tasks if t.id == self.task)
        self.result: str | None = None
        self.calling = False

    def act(self, obs: str, info: dict) -> str:
        if self.calling:
            self.result, self.calling = obs, False
        call = json.loads(super().act(obs, info))
        args = call["arguments"]
        if call["tool"] == self.action.tool and args.get(self.key) == self.action.args[self.key]:
            args[self.key], self.calling = self.value, True
        for item in args.get("actions") or []:
            if item.get("tool") == self.action.tool and (item.get("args") or {}).get(self.key) is not None:
                item["args"] = {**item["args"], self.key: self.value}
        return json.dumps(call)


def _called(name: str, persona: str, seed: int, task: str, key: str, value: str, whole: bool) -> tuple[str, dict | None]:
    """The oracle's call with ``value`` and its result; with ``whole`` the episode played out (its
    trajectory), else stopped at the result."""
    agent = WindowOracle(task, key, value)
    if whole:
        run = play(agent, name, persona, seed)
        return agent.result or "", run
    env, obs = episode(agent, name, persona, seed, stop=lambda agent, obs: agent.calling)
    if agent.calling:  # stopped at the call's result
        agent.result = obs
    env.close()
    return agent.result or "", None


@functools.lru_cache(maxsize=None)
def _reference(name: str, persona: str, seed: int) -> dict:
    return play(TextOracleAgent(), name, persona, seed)


def _windowed_cases():
    for name, persona in PAIRS:
        for seed in SEEDS:
            s = _variant(name, persona, seed)
            for task, key in _windowed(s):
                yield name, persona, seed, s, task, key


def test_a_start_anywhere_in_its_window_executes_and_is_judged_as_the_reference_start():
    """Both ends and the middle of every window: the oracle's call with that time executes, and the
    run scores TA, TR-D and J as the oracle's own (the start is judged as the reference start)."""
    seen = 0
    for name, persona, seed, s, task, key in _windowed_cases():
        window = next(t for t in s.tasks if t.id == task).action.windows[key]
        reference = _reference(name, persona, seed)
        for value in _probes(window)[0]:
            result, run = _called(name, persona, seed, task, key, value, whole=True)
            case = (name, persona, seed, task, key, value, result)
            assert result.startswith("Done:"), case
            done = [e for e in run["log"] if e["type"] == "execute" and e.get("task") == task and e["ok"]]
            assert [e["args"][key] for e in done] == [value], case
            for metric in ("TA", "TR_D", "J"):
                assert run["scores"][metric] == pytest.approx(reference["scores"][metric], abs=1e-9), (case, metric)
            seen += 1
    assert seen >= 27  # no vacuous pass: experiments' ablation start, 3 personas x 3 seeds x 3 times


def test_a_minute_outside_either_end_of_a_window_is_refused():
    seen = 0
    for name, persona, seed, s, task, key in _windowed_cases():
        window = next(t for t in s.tasks if t.id == task).action.windows[key]
        for value in _probes(window)[1]:
            result, _ = _called(name, persona, seed, task, key, value, whole=False)
            assert result.startswith("Error:") and key in result, (name, persona, seed, task, key, value, result)
            seen += 1
    assert seen >= 18


_CLOCK = re.compile(r"\d{2}:\d{2}")


def _shifted(value, minutes: int):
    """Copies of ``value`` with one time in it (a leaf that is a time) moved by ``minutes``: (path, copy)."""
    if isinstance(value, dict):
        for k, v in value.items():
            for path, moved in _shifted(v, minutes):
                yield f"{k}.{path}".rstrip("."), {**value, k: moved}
    elif isinstance(value, list):
        for j, v in enumerate(value):
            for path, moved in _shifted(v, minutes):
                yield f"[{j}].{path}".rstrip("."), [*value[:j], moved, *value[j + 1:]]
    elif isinstance(value, str) and (stated := when(value)) is not None and stated.minutes is not None:
        clock = _CLOCK.search(value)
        if clock:
            hour, minute = divmod(int(clock[0][:2]) * 60 + int(clock[0][3:]) + minutes, 60)
            yield "", f"{value[:clock.start()]}{hour % 24:02d}:{minute:02d}{value[clock.end():]}"


def _times(action) -> int:
    """How many time values the action compares without a window."""
    return sum(1 for k, v in action.args.items() if k not in action.free_text and k not in action.windows
               for _, leaf in leaves(v) if isinstance(leaf, str) and (w := when(leaf)) is not None and w.minutes)


@pytest.mark.parametrize("name", shipped_names())
def test_a_time_without_a_window_is_compared_as_the_reference_states_it(name):
    """Every compared time value with no window (flights, offered appointment and delivery slots,
    a booked half-night, deadlines, reminders asked for), every persona and seed: the reference is
    taken, a minute either way is refused naming the argument."""
    moved = expected = 0
    for persona in PERSONAS:
        for seed in SEEDS:
            s = _variant(name, persona, seed)
            names, params = record_names(s), {t.name: t.params for t in s.tools}
            for action in (t.action for t in s.tasks if t.action is not None):
                judge = functools.partial(args_problem, action.compared, free_text=action.free_text,
                                          params=params[action.tool], names=names)
                assert judge(dict(action.args)) is None
                expected += 2 * _times(action)
                for key, value in action.args.items():
                    if key in action.free_text or key in action.windows:
                        continue
                    for minutes in (-1, 1):
                        for path, other in _shifted(value, minutes):
                            problem = judge({**action.args, key: other})
                            assert problem is not None and key in problem, (name, persona, seed, key, path, other)
                            moved += 1
    assert moved == expected


# ------------------------------------------------------------------ the validator
def _experiments() -> dict:
    return yaml.safe_load((scenario_dir() / "experiments.yaml").read_text())


def _ablation(data: dict) -> dict:
    return next(t for t in data["tasks"] if t["id"] == "t06_ablation_queue")


def test_the_validator_refuses_a_window_the_records_do_not_give():
    data = _experiments()
    _ablation(data)["action"]["windows"]["begin"]["latest"] = "2026-04-16T02:30"  # no record says 02:30
    with pytest.raises(ScenarioError, match=r"t06_ablation_queue\]\.action\.windows\.begin.*02:30"):
        parse_scenario(data)


def test_the_validator_refuses_a_window_without_its_reference():
    data = _experiments()
    _ablation(data)["action"]["windows"]["begin"] = {"earliest": "2026-04-16T02:00", "latest": "2026-04-16T08:30"}
    with pytest.raises(ScenarioError, match=r"windows\.begin: a window holding the reference"):
        parse_scenario(data)


def test_the_validator_refuses_a_window_ta_would_judge_two_ways():
    """A start window reaching back into Tuesday night's clash (ta2, until Wed 02:00) would make
    one start a postponement and another the competing run: TA must judge the window alike."""
    data = _experiments()
    window = _ablation(data)["action"]["windows"]["begin"]
    window["earliest"] = "2026-04-15T01:30"  # a day earlier: inside ta2's window; both times on record
    with pytest.raises(ScenarioError, match=r"windows\.begin: a window TA judges alike throughout"):
        parse_scenario(data)


def test_the_validator_refuses_a_window_on_a_free_text_or_missing_argument():
    data = copy.deepcopy(_experiments())
    _ablation(data)["action"]["windows"]["job_name"] = {"earliest": "01:30", "latest": "02:00"}
    with pytest.raises(ScenarioError, match=r"windows\.job_name: a window on a compared string argument"):
        parse_scenario(data)


def test_a_window_takes_one_time_inside_on_the_right_day_in_any_usual_form():
    from proactive_env.spec.meaning import Window, same_value

    night = Window("2026-04-16T01:30", "2026-04-16T01:30", "2026-04-16T02:00")
    for given in ("2026-04-16T01:45", "16 Apr 01:45", "Thu 16 April 1:45am", "2026-04-16 02:00"):
        assert same_value(night, given), given
    for given in ("01:45", "2026-04-15T01:45", "Wed 16 Apr 01:45", "2026-04-16T01:30-02:00", "2027-04-16T01:45",
                  "2026-04-16T02:01", 90, None):
        assert not same_value(night, given), given
    evening = Window("20:00", "20:00", "21:00")  # a time of day: with a date argument beside it
    assert all(same_value(evening, g) for g in ("20:00", "8:30pm", "21:00"))
    assert not any(same_value(evening, g) for g in ("19:59", "21:01", "20:00-21:00"))
