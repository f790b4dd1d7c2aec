"""Behaviour cloning on a Minari dataset of the oracle: it fits the oracle's actions, saves,
reloads as ``bc:PATH`` and plays only valid actions."""

import json

import numpy as np
import pytest

minari = pytest.importorskip("minari")
torch = pytest.importorskip("torch")

from proactive_env.baselines import make_agent  # noqa: E402
from proactive_env.baselines.bc import Args, load_bc_agent, train  # noqa: E402
from proactive_env.cli import main  # noqa: E402
from proactive_env.evaluate import play  # noqa: E402
from proactive_env.spec import PERSONAS  # noqa: E402

NAME = "proactivity/oracle-test-v0"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("bc")
    data = str(root / "datasets")
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("MINARI_DATASETS_PATH", data)
    assert main(["dataset", "--agents", "oracle,random", "--scenarios", "monitor", "--seeds", "0-5",
                 "--data-path", data, "--out", NAME]) == 0
    path = train(Args(dataset=NAME, data_path=data, out=str(root / "bc"), epochs=40, net_arch="128,128"))
    yield path, json.loads((path.parent / "bc.json").read_text())
    monkeypatch.undo()


def test_bc_fits_the_oracle_actions(trained):
    path, report = trained
    history = report["history"]
    assert report["episodes"] == len(PERSONAS) * 6  # the oracle's episodes only, not random's
    assert history[-1]["loss"] < history[0]["loss"] / 2
    # Far better than always playing the oracle's most frequent action: at least half its errors gone.
    dataset = minari.load_dataset(NAME)
    actions = np.concatenate([e.actions for e, m in zip(dataset.iterate_episodes(), dataset.storage.get_episode_metadata(
        range(dataset.total_episodes)), strict=True) if m["agent"] == "oracle"])
    majority = np.bincount(actions).max() / len(actions)
    assert history[-1]["train_accuracy"] > majority + (1 - majority) / 2
    assert (path.parent / "learning_curve.png").stat().st_size > 0


def test_bc_agent_plays_valid_actions_and_is_deterministic(trained):
    path, _ = trained
    agent = make_agent(f"bc:{path}")
    for persona in PERSONAS:
        seen = []

        class Checking:
            name = agent.name

            def reset(self, env, seed):
                agent.reset(env, seed)

            def act(self, obs, info):
                action = agent.act(obs, info)
                seen.append(bool(obs["action_mask"][action]))
                return action

        first = play(Checking(), "monitor", persona, 1000)
        again = play(load_bc_agent(f"bc:{path}"), "monitor", persona, 1000)
        assert first["actions"] == again["actions"] and all(seen)
        assert 0.0 <= first["scores"]["J"] <= 1.0


def test_bad_bc_inputs_are_clear_errors(trained, tmp_path):
    path, report = trained
    with pytest.raises(ValueError, match="no saved BC policy"):
        make_agent(f"bc:{tmp_path / 'none.pt'}")
    (tmp_path / "junk.pt").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="not a BC policy"):
        make_agent(f"bc:{tmp_path / 'junk.pt'}")
    data = report["args"]["data_path"]
    with pytest.raises(ValueError, match="no episode of agent 'nobody'"):
        train(Args(dataset=NAME, data_path=data, agent="nobody", out=str(tmp_path / "x"), epochs=1))
    assert np.isfinite(report["history"][-1]["loss"])


def test_bc_keeps_the_epoch_that_plays_best_and_never_selects_on_a_scenario_it_did_not_train_on(trained, tmp_path):
    """With --eval-scenarios, bc.pt is the epoch of the best validation J (played on seeds 900 on,
    never the test split) and bc-last.pt the last; a scenario outside the dataset is refused, naming
    the option and the scenario, before anything trains."""
    path, report = trained
    data = report["args"]["data_path"]
    with pytest.raises(ValueError, match="--eval-scenarios monitor,experiments: experiments is not in the dataset"):
        train(Args(dataset=NAME, data_path=data, out=str(tmp_path / "refused"), epochs=1,
                   eval_scenarios="monitor,experiments"))
    assert not (tmp_path / "refused").exists()
    out = tmp_path / "selected"
    train(Args(dataset=NAME, data_path=data, out=str(out), epochs=3, eval_every=1, eval_scenarios="monitor",
               policy="mlp", net_arch="64"))
    saved = json.loads((out / "bc.json").read_text())
    played = [h["validation_J"] for h in saved["history"]]
    assert len(played) == 3 and saved["best_epoch"] == 1 + played.index(max(played))
    from proactive_env.baselines.training import evaluate_policy

    best, last = (evaluate_policy(load_bc_agent(f"bc:{out / name}"), ["monitor"], 1, 900)["overall"]["J"]
                  for name in ("bc.pt", "bc-last.pt"))
    assert (best, last) == (pytest.approx(max(played)), pytest.approx(played[-1]))


@pytest.fixture(scope="module")
def two_scenarios(tmp_path_factory):
    """A dataset of the oracle on two scenarios, to leave one out."""
    root = tmp_path_factory.mktemp("bc-two")
    data = str(root / "datasets")
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("MINARI_DATASETS_PATH", data)
    assert main(["dataset", "--agents", "oracle", "--scenarios", "monitor,experiments", "--seeds", "0-1",
                 "--data-path", data, "--out", "proactivity/oracle-two-v0"]) == 0
    yield data
    monkeypatch.undo()


def test_bc_chooses_its_epochs_on_a_scenario_left_out_of_training_and_carries_the_choice(two_scenarios, tmp_path):
    """--exclude-scenarios drops a dataset scenario's episodes from training so --eval-scenarios can
    choose the epoch on play of a scenario the policy never saw (leave-one-scenario-out); a
    scenario outside the dataset is still refused for both. --epochs-from trains, on the whole
    dataset, as many epochs as that run's best_epoch."""
    common = dict(dataset="proactivity/oracle-two-v0", data_path=two_scenarios, policy="mlp", net_arch="64")
    with pytest.raises(ValueError, match="--exclude-scenarios pottery_studio: pottery_studio is not in the dataset"):
        train(Args(**common, out=str(tmp_path / "typo"), epochs=1, exclude_scenarios="pottery_studio"))
    with pytest.raises(ValueError, match="--eval-scenarios job_applications: job_applications is not in the dataset"):
        train(Args(**common, out=str(tmp_path / "unseen"), epochs=1, exclude_scenarios="experiments",
                   eval_scenarios="job_applications"))
    with pytest.raises(ValueError, match="outside --exclude-scenarios"):
        train(Args(**common, out=str(tmp_path / "empty"), epochs=1, exclude_scenarios="monitor,experiments"))
    select = tmp_path / "select"
    train(Args(**common, out=str(select), epochs=3, eval_every=1, exclude_scenarios="experiments",
               eval_scenarios="experiments"))
    chosen = json.loads((select / "bc.json").read_text())
    assert chosen["episodes"] == len(PERSONAS) * 2  # monitor's episodes only: experiments was left out
    played = [h["validation_J"] for h in chosen["history"]]
    assert len(played) == 3 and chosen["best_epoch"] == 1 + played.index(max(played))
    carried = tmp_path / "carried"
    train(Args(**common, out=str(carried), epochs=99, epochs_from=str(select / "bc.json")))
    final = json.loads((carried / "bc.json").read_text())
    assert final["episodes"] == len(PERSONAS) * 2 * 2  # both scenarios
    assert len(final["history"]) == final["epochs"] == chosen["best_epoch"]
    with pytest.raises(ValueError, match="--epochs-from .*: no such file"):
        train(Args(**common, out=str(tmp_path / "none"), epochs_from=str(tmp_path / "missing.json")))
