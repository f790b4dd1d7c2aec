"""A shallow rule cannot learn the timing (issue 19): a decision tree of depth ≤ 3, fitted on the
oracle's timing choices per task slot (defer / allocate / hold / go on) from observation features
on training seeds, played on top of the policy-follower, scores TA ≤ 40 % on the test split.
Deeper policies may learn it — that is what the learned baselines are for."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from proactive_env.baselines import OracleAgent
from proactive_env.baselines.scripted import F, open_slots, task_rows
from proactive_env.baselines.timing_adversaries import TimingRule
from proactive_env.evaluate import play
from proactive_env.sim import Verb
from proactive_env.spec import PERSONAS, shipped_names

sklearn_tree = pytest.importorskip("sklearn.tree")

TRAIN_SEEDS, TEST_SEEDS = (0, 1, 2, 3), (1000, 1001)
LABELS = ("go", "hold", "defer", "allocate")


def slot_features(obs: dict[str, np.ndarray], slot: int) -> np.ndarray:
    """What a cheap timing rule looks at, for one open task: its own row (urgency, resource busy,
    state, category), the clock, and where its urgency stands among the open tasks."""
    tasks = task_rows(obs)
    others = [tasks[s, F["urgency"]] for s in open_slots(obs) if s != slot]
    mine = tasks[slot, F["urgency"]]
    relative = [len(others), max(others, default=0.0) - mine, float(all(mine >= o for o in others)),
                sum(o > mine for o in others)]
    return np.concatenate([tasks[slot], obs["clock"], np.asarray(relative, np.float32)])


class _Recorder(OracleAgent):
    """The oracle, noting for every open slot at every step what it does about its timing."""

    def __init__(self, rows: list):
        self.rows = rows

    def act(self, obs, info):
        for slot in open_slots(obs):
            task = self.world.tasks[slot]
            verb = self._next(task)
            label = ("defer" if verb is Verb.DEFER else "allocate" if verb is Verb.ALLOCATE
                     else "hold" if verb is None and self.holding(task) is not None else "go")
            self.rows.append((slot_features(obs, slot), LABELS.index(label)))
        return super().act(obs, info)


@functools.lru_cache(maxsize=1)
def fitted_tree():
    rows: list = []
    for scenario in shipped_names():
        for persona in PERSONAS:
            for seed in TRAIN_SEEDS:
                play(_Recorder(rows), scenario, persona, seed)
    x, y = np.stack([r[0] for r in rows]), np.asarray([r[1] for r in rows])
    return sklearn_tree.DecisionTreeClassifier(max_depth=3, random_state=0).fit(x, y), np.bincount(y, minlength=4)


def _tree_agent(tree) -> TimingRule:
    predict = lambda obs, slot: LABELS[int(tree.predict(slot_features(obs, slot)[None])[0])]  # noqa: E731
    return TimingRule("depth-3-tree", hold=lambda obs, slot: predict(obs, slot) in ("hold", "defer"),
                      allocate=lambda obs, slot: predict(obs, slot) == "allocate")


def test_the_oracle_makes_timing_choices_to_learn_from():
    _, counts = fitted_tree()
    assert counts[LABELS.index("defer")] > 0 and counts[LABELS.index("hold")] > 0 and counts[LABELS.index("go")] > 0


@functools.lru_cache(maxsize=1)
def tree_ta() -> float:
    tree, _ = fitted_tree()
    scores = [play(_tree_agent(tree), s, p, seed)["scores"]["TA"]
              for s in shipped_names() for p in PERSONAS for seed in TEST_SEEDS]
    return sum(scores) / len(scores)


def test_a_depth_3_tree_on_the_oracles_timing_scores_ta_at_most_40_percent_on_the_test_split():
    """Measured 0.419 on suite 0.5.0 (every urgent task also needed first: the tree rediscovered
    hold-while-more-urgent); see the suite changelog for the figure on the current suite."""
    assert tree_ta() <= 0.40
