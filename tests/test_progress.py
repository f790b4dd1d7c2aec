"""`train` says how it is going by default: steps, steps/s and the latest evaluation's J."""

import io

import pytest

pytest.importorskip("stable_baselines3")

from proactive_env.baselines.progress import ProgressLog  # noqa: E402


class Scorer:
    def __init__(self):
        self.rows, self.best = [], -1.0


def test_a_line_after_each_evaluation_with_the_latest_j():
    scorer, out = Scorer(), io.StringIO()
    log = ProgressLog(10_000, scorer, every=None, stream=out)
    log.num_timesteps = 0
    log._on_training_start()
    log.num_timesteps = 2_000
    log._on_step()  # no evaluation yet, no timer: silent
    assert out.getvalue().count("\n") == 1 and "started" in out.getvalue()
    scorer.rows.append({"timesteps": 2_000, "overall/J": 0.4123})
    scorer.best = 0.4123
    log._on_step()
    last = out.getvalue().splitlines()[-1]
    assert "2,000/10,000 steps (20%)" in last and "steps/s" in last and "latest eval J 0.412 at 2,000" in last
    log.num_timesteps = 10_000
    log._on_training_end()
    assert out.getvalue().splitlines()[-1].endswith("— done")


def test_a_line_every_interval_without_a_progress_bar():
    scorer, out = Scorer(), io.StringIO()
    log = ProgressLog(100, scorer, every=0.0, stream=out)
    log.num_timesteps = 0
    log._on_training_start()
    for step in range(1, 4):
        log.num_timesteps = step
        log._on_step()
    assert out.getvalue().count("train: ") == 4
