"""Real SB3 / sb3-contrib training on small budgets: it runs, saves, reloads and evaluates."""

import json

import pytest

pytest.importorskip("sb3_contrib")

from proactive_env.baselines import make_agent  # noqa: E402
from proactive_env.baselines import train_dqn, train_maskable_ppo, train_ppo  # noqa: E402
from proactive_env.baselines.training import (VEC_ENVS, CurriculumEnv, curriculum_stages, make_envs, make_single_env,  # noqa: E402
                                              parse_args)
from proactive_env.evaluate import evaluate, plan  # noqa: E402

SMALL = ["--timesteps", "2048", "--eval-freq", "1024", "--eval-episodes", "1", "--checkpoint-freq", "1024",
         "--no-progress-bar"]


def check_outputs(out, path):
    assert path == out / "model.zip" and path.exists()
    assert (out / "best_model.zip").exists() and (out / "learning_curve.png").stat().st_size > 1000
    rows = (out / "eval.csv").read_text().splitlines()
    assert rows[0].startswith("timesteps,overall/TC") and len(rows) >= 4
    assert rows[1].startswith("0,")  # the untrained policy: the curve's first point
    assert "reviewer/TR_J" in rows[0] and "operator/continuation" in rows[0]
    reference = json.loads((out / "reference.json").read_text())
    assert reference["oracle"]["overall"]["J"] > reference["policy-follower"]["overall"]["J"]
    assert list((out / "checkpoints").glob("*.zip"))
    assert list((out / "tb").rglob("events.out.tfevents.*"))
    assert json.loads((out / "agent.json").read_text())["algo"] in ("maskable-ppo", "ppo", "dqn")


def evaluate_saved(path, tmp_path):
    keys = plan([f"sb3:{path}"], ["monitor"], ["operator"], range(2))
    records = evaluate(keys, tmp_path / "eval", make_agent)
    assert len(records) == 2 and all(0.0 <= r["scores"]["J"] <= 1.0 for r in records)


def test_maskable_ppo_in_subprocesses(tmp_path):
    out = tmp_path / "mppo"
    args = parse_args(train_maskable_ppo.Args, SMALL + ["--n-envs", "2", "--vec-env", "subproc", "--n-steps", "512",
                                                         "--out", str(out)])
    path = train_maskable_ppo.train(args)
    check_outputs(out, path)
    evaluate_saved(path, tmp_path)
    checkpoint = sorted((out / "checkpoints").glob("*.zip"))[0]  # plays as `sb3:` like the final model
    evaluate_saved(checkpoint, tmp_path / "checkpoint")


def test_the_default_envs_step_in_one_process_with_the_shaping_on():
    """The recipe's default: 16 envs in this process (one batched forward for all of them), each
    shaped; --no-reward-shaping and --vec-env change that, and an unknown --vec-env is refused."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    envs = make_envs(parse_args(train_maskable_ppo.Args, []), flat=False)
    assert isinstance(envs, DummyVecEnv) and envs.num_envs == 16
    assert envs.get_attr("reward_shaping") == [True] * 16
    plain = make_envs(parse_args(train_maskable_ppo.Args, ["--n-envs", "2", "--no-reward-shaping"]), flat=False)
    assert plain.get_attr("reward_shaping") == [False, False]
    with pytest.raises(ValueError, match="--vec-env: expected one of"):
        make_envs(parse_args(train_maskable_ppo.Args, ["--vec-env", "threads"]), flat=False)
    assert VEC_ENVS["subproc"] is SubprocVecEnv


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
                                                         '{"exclude": "monitor"}', "--eval-scenarios", "experiments",
                                                         "--policy", "mlp", "--n-envs", "1", "--n-steps", "512",
                                                         "--out", str(out)])
    check_outputs(out, train_maskable_ppo.train(args))
    assert json.loads((out / "agent.json").read_text())["policy"] == "mlp"
    assert "monitor" not in make_single_env("Proactivity-Suite-v0", False, {"exclude": "monitor"}).unwrapped.names


def test_curriculum_stages_change_what_the_env_plays(tmp_path):
    env = CurriculumEnv("Proactivity-Monitor-v0", False, {"exclude": "monitor"}, "operator", seed=7)
    env.set_stage("fixed-seed")
    assert env.current is env.envs["sampled"]  # the episode under way is not cut: the stage starts at reset
    first = env.reset(seed=1)[1]
    variant = env.current.unwrapped._variant
    again = env.reset(seed=2)[1]
    assert first["persona"] == again["persona"] == "operator"
    assert env.current.unwrapped._variant == variant  # the curriculum's seed, whatever seed reset is given
    env.set_stage("persona")
    env.reset(seed=3)
    assert env.current.unwrapped.persona == "operator" and env.current.unwrapped._variant != variant
    env.set_stage("suite")
    played = {env.reset(seed=i)[1]["scenario"] for i in range(8)}
    assert "monitor" not in played and len(played) > 1 and env.action_masks().any()
    with pytest.raises(ValueError, match="unknown stage"):
        curriculum_stages("fixed-seed,everything")
    out = tmp_path / "curriculum"
    args = parse_args(train_maskable_ppo.Args, SMALL + ["--curriculum", "fixed-seed,persona,sampled", "--policy", "mlp",
                                                         "--n-envs", "2", "--n-steps", "256", "--out", str(out)])
    check_outputs(out, train_maskable_ppo.train(args))


@pytest.mark.parametrize("trainer", [train_maskable_ppo, train_ppo, train_dqn])
@pytest.mark.parametrize("env, env_kwargs", [("Proactivity-Suite-v0", '{"exclude": "monitor"}'),
                                             ("Proactivity-Suite-v0", '{"scenarios": "experiments,medications"}'),
                                             ("Proactivity-Experiments-v0", '{"exclude": ["monitor"]}')])
def test_no_trainer_selects_its_model_on_a_held_out_scenario(tmp_path, trainer, env, env_kwargs):
    """The evaluation during training keeps best_model.zip: a scenario the training env holds out
    (its own exclude, a curriculum's suite stage's, or left out of the suite's scenarios) is refused
    there, naming the option and the scenario, before anything trains or is written."""
    out = tmp_path / "run"
    args = parse_args(trainer.Args, SMALL + ["--env", env, "--env-kwargs", env_kwargs,
                                             "--eval-scenarios", "experiments,monitor", "--out", str(out)])
    with pytest.raises(ValueError, match=r"--eval-scenarios experiments,monitor: monitor is held out of training"):
        trainer.train(args)
    assert not out.exists()


def test_the_holdout_recipes_validate_on_what_they_train_on():
    """Every recorded training recipe with a held-out scenario (bench/training_results.py, the
    README's commands) keeps it out of the evaluation that picks its model."""
    import shlex
    import sys
    from pathlib import Path

    from test_readme_figures import _load

    module = _load("training_results", Path(__file__).resolve().parents[1] / "bench" / "training_results.py")
    sys.modules.pop("training_results")
    held_out_runs = [run for run in module.RUNS.values() if run.held_out]
    assert held_out_runs
    for run in held_out_runs:
        for command, _ in run.commands:
            words = shlex.split(command)
            if "--eval-scenarios" in words:
                evaluated = words[words.index("--eval-scenarios") + 1].split(",")
                assert run.held_out not in evaluated and len(evaluated) >= 1, command
