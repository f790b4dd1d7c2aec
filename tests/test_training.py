"""Real SB3 / sb3-contrib training on small budgets: it runs, saves, reloads and evaluates."""

import json

import pytest

pytest.importorskip("sb3_contrib")

from proactive_env.baselines import make_agent  # noqa: E402
from proactive_env.baselines import train_dqn, train_maskable_ppo, train_ppo  # noqa: E402
from proactive_env.baselines.training import make_single_env, parse_args  # noqa: E402
from proactive_env.evaluate import evaluate, plan  # noqa: E402

SMALL = ["--timesteps", "2048", "--eval-freq", "1024", "--eval-episodes", "1", "--checkpoint-freq", "1024",
         "--no-progress-bar"]


def check_outputs(out, path):
    assert path == out / "model.zip" and path.exists()
    assert (out / "best_model.zip").exists() and (out / "learning_curve.png").stat().st_size > 1000
    rows = (out / "eval.csv").read_text().splitlines()
    assert rows[0].startswith("timesteps,overall/TC") and len(rows) >= 3
    assert list((out / "checkpoints").glob("*.zip"))
    assert list((out / "tb").rglob("events.out.tfevents.*"))
    assert json.loads((out / "agent.json").read_text())["algo"] in ("maskable-ppo", "ppo", "dqn")


def evaluate_saved(path, tmp_path):
    keys = plan([f"sb3:{path}"], ["monitor"], ["operator"], range(2))
    records = evaluate(keys, tmp_path / "eval", make_agent)
    assert len(records) == 2 and all(0.0 <= r["scores"]["J"] <= 1.0 for r in records)


def test_maskable_ppo_in_subprocesses(tmp_path):
    out = tmp_path / "mppo"
    args = parse_args(train_maskable_ppo.Args, SMALL + ["--n-envs", "2", "--n-steps", "512", "--out", str(out)])
    path = train_maskable_ppo.train(args)
    check_outputs(out, path)
    evaluate_saved(path, tmp_path)


def test_ppo_with_flattened_observations(tmp_path):
    out = tmp_path / "ppo"
    args = parse_args(train_ppo.Args, SMALL + ["--n-envs", "1", "--n-steps", "512", "--out", str(out)])
    path = train_ppo.train(args)
    check_outputs(out, path)
    evaluate_saved(path, tmp_path)


def test_dqn(tmp_path):
    out = tmp_path / "dqn"
    args = parse_args(train_dqn.Args, SMALL + ["--learning-starts", "256", "--out", str(out)])
    path = train_dqn.train(args)
    check_outputs(out, path)
    evaluate_saved(path, tmp_path)


def test_suite_env_trains_on_a_held_out_split(tmp_path):
    out = tmp_path / "suite"
    args = parse_args(train_maskable_ppo.Args, SMALL + ["--env", "Proactivity-Suite-v0", "--env-kwargs",
                                                         '{"exclude": "monitor"}', "--eval-scenarios", "monitor",
                                                         "--n-envs", "1", "--n-steps", "512", "--out", str(out)])
    check_outputs(out, train_maskable_ppo.train(args))
    assert "monitor" not in make_single_env("Proactivity-Suite-v0", False, {"exclude": "monitor"}).unwrapped.names
