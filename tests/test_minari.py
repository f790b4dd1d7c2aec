"""``proactivity-gym dataset``: a Minari dataset that ``minari.load_dataset`` reads back, whose
steps replay in the env and whose per-episode metadata holds the scorer's 3T scores."""

import gymnasium as gym
import numpy as np
import pytest

minari = pytest.importorskip("minari")

from proactive_env.baselines import make_agent  # noqa: E402
from proactive_env.cli import main  # noqa: E402
from proactive_env.dataset import parse_seeds  # noqa: E402
from proactive_env.evaluate import make_env, play  # noqa: E402
from proactive_env.spec import PERSONAS  # noqa: E402

NAME = "proactivity/test-v0"


@pytest.fixture
def datasets(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    return tmp_path


def test_dataset_round_trips_through_minari(datasets, capsys):
    assert main(["dataset", "--agents", "oracle,policy-follower", "--scenarios", "monitor,experiments",
                 "--seeds", "0-1", "--out", NAME]) == 0
    assert "24 episodes" in capsys.readouterr().out  # 2 agents x 2 scenarios x 3 personas x 2 seeds
    dataset = minari.load_dataset(NAME)
    assert dataset.total_episodes == 2 * 2 * len(PERSONAS) * 2
    assert dataset.observation_space == gym.make("Proactivity-Monitor-v0").observation_space
    metadata = list(dataset.storage.get_episode_metadata(range(dataset.total_episodes)))
    assert {(m["agent"], m["scenario"], m["persona"], int(m["seed"])) for m in metadata} == {
        (a, s, p, seed) for a in ("oracle", "policy-follower") for s in ("monitor", "experiments")
        for p in PERSONAS for seed in (0, 1)}
    for episode, meta in zip(dataset.iterate_episodes(), metadata, strict=True):
        if int(meta["seed"]) != 1:
            continue
        # The scores are the scorer's, as eval reports them.
        scores = play(make_agent(meta["agent"]), meta["scenario"], meta["persona"], 1)["scores"]
        assert {m: meta[m] for m in ("TC", "TA", "TR_D", "TR_J", "J")} == pytest.approx(
            {m: scores[m] for m in ("TC", "TA", "TR_D", "TR_J", "J")})
        assert episode.rewards.sum() == pytest.approx(meta["J"], abs=1e-6)
        # Every action was allowed by the stored mask, and the actions replay to the stored observations.
        assert episode.observations["action_mask"][np.arange(len(episode.actions)), episode.actions].all()
        env = make_env(meta["scenario"], meta["persona"])
        obs, _ = env.reset(seed=1)
        for t, action in enumerate(episode.actions):
            obs, *_ = env.step(int(action))
        for key, value in obs.items():
            np.testing.assert_array_equal(value, episode.observations[key][len(episode.actions)])
        assert episode.terminations[-1] or episode.truncations[-1]


def test_test_seeds_are_refused_unless_asked_for(datasets, capsys):
    assert main(["dataset", "--scenarios", "monitor", "--seeds", "998-1001", "--out", NAME]) == 2
    assert "test seeds" in capsys.readouterr().err
    assert main(["dataset", "--scenarios", "monitor", "--personas", "planner", "--seeds", "1000",
                 "--allow-test-seeds", "--out", NAME]) == 0
    assert minari.load_dataset(NAME).total_episodes == 1
    assert main(["dataset", "--scenarios", "monitor", "--seeds", "0", "--out", NAME]) == 2
    assert "exists already" in capsys.readouterr().err


def test_bad_arguments_are_clear_errors(datasets, capsys):
    assert main(["dataset", "--scenarios", "nowhere", "--seeds", "0", "--out", NAME]) == 2
    assert "'nowhere': expected a scenario name" in capsys.readouterr().err
    assert main(["dataset", "--agents", "openai:m", "--scenarios", "monitor", "--seeds", "0", "--out", NAME]) == 2
    assert "text face" in capsys.readouterr().err
    with pytest.raises(ValueError, match="--seeds"):
        parse_seeds("a-b")
    assert parse_seeds("0-2,7,1") == [0, 1, 2, 7]
