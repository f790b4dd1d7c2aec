"""RLlib (new API stack): the env from Ray's registry, the action-masking module, two PPO
iterations single- and multi-agent, the saved policy played as ``rllib:PATH``. Runs in the venv
that has the rllib extra (``.venv-rllib``, made by scripts/setup.sh); skipped elsewhere."""

import csv

import gymnasium as gym
import numpy as np
import pytest

ray = pytest.importorskip("ray")
torch = pytest.importorskip("torch")

from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # noqa: E402

from proactive_env.baselines import make_agent  # noqa: E402
from proactive_env.baselines.rllib_env import MULTI_AGENT_ID, MaskedMultiAgentEnv, register_rllib_envs  # noqa: E402
from proactive_env.baselines.rllib_module import MaskedPPOTorchRLModule, SlotPPOTorchRLModule  # noqa: E402
from proactive_env.cli import main  # noqa: E402
from proactive_env.evaluate import play  # noqa: E402
from proactive_env.spec import PERSONAS  # noqa: E402
from proactive_env.wrappers import MaskedDictObservation  # noqa: E402

# one env (with the default 16 a 200-step batch comes out as 16 × 13 = 208 steps)
SMALL = ["--n-envs", "1", "--train-batch-size", "200", "--minibatch-size", "100", "--num-epochs", "2", "--timesteps", "400",
         "--eval-freq", "200", "--eval-episodes", "1", "--checkpoint-freq", "400", "--no-progress-bar"]


@pytest.fixture
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 * 2**20, log_to_driver=False)
    yield
    ray.shutdown()


def test_envs_come_from_rays_registry_in_the_masked_layout(local_ray):
    from ray.tune.registry import ENV_CREATOR, _global_registry

    names = register_rllib_envs()
    assert "Proactivity-Monitor-v0" in names and MULTI_AGENT_ID in names
    env = _global_registry.get(ENV_CREATOR, "Proactivity-Monitor-Operator-v0")({})
    obs, _ = env.reset(seed=0)
    assert set(obs) == {"observations", "action_mask"} and env.observation_space.contains(obs)
    multi = _global_registry.get(ENV_CREATOR, MULTI_AGENT_ID)({"pool_capacity": 1})
    observations, _ = multi.reset(seed=0)
    assert set(observations) == set(multi.possible_agents)
    assert all(multi.observation_spaces[a].contains(o) for a, o in observations.items())


def test_multi_agent_env_plays_to_the_end_with_masked_actions():
    env = MaskedMultiAgentEnv({})
    observations, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(5000):
        actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in observations.items()}
        observations, _, terminateds, _, _ = env.step(actions)
        if terminateds["__all__"]:
            break
    assert terminateds["__all__"] and not env.agents


@pytest.mark.parametrize("module_class, model_config", [(SlotPPOTorchRLModule, {"d_model": 32, "n_layers": 1}),
                                                         (MaskedPPOTorchRLModule, {"fcnet_hiddens": [32]})])
def test_masking_module_never_chooses_a_masked_action(module_class, model_config):
    env = MaskedDictObservation(gym.make("Proactivity-Monitor-Planner-v0"))
    module = RLModuleSpec(module_class=module_class, observation_space=env.observation_space,
                          action_space=env.action_space, model_config=model_config).build()
    obs, _ = env.reset(seed=0)
    batch = {k: torch.as_tensor(np.repeat(v[None], 64, axis=0)) for k, v in obs.items()}
    for forward in (module.forward_inference, module.forward_exploration):
        logits = forward({Columns.OBS: dict(batch)})[Columns.ACTION_DIST_INPUTS]
        sampled = torch.distributions.Categorical(logits=logits).sample().numpy()
        assert obs["action_mask"][sampled].all()
    values = module.compute_values({Columns.OBS: dict(batch)})
    assert values.shape == (64,)
    with pytest.raises(ValueError, match="action_mask"):
        RLModuleSpec(module_class=module_class, observation_space=gym.make("Proactivity-Monitor-v0").observation_space,
                     action_space=env.action_space).build()


class MaskChecking:
    """Plays ``agent`` and notes whether each action it chose was valid."""

    def __init__(self, agent):
        self.agent, self.name, self.valid = agent, agent.name, []

    def reset(self, env, seed):
        self.agent.reset(env, seed)

    def act(self, obs, info):
        action = self.agent.act(obs, info)
        self.valid.append(bool(obs["action_mask"][action]))
        return action


def _plays_validly(spec: str) -> None:
    agent = MaskChecking(make_agent(spec))
    for persona in PERSONAS:
        trajectory = play(agent, "monitor", persona, seed=1000)
        assert 0.0 <= trajectory["scores"]["J"] <= 1.0
    assert agent.valid and all(agent.valid)


def test_two_ppo_iterations_on_monitor_then_rllib_agent(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--algo", "rllib-ppo", "--env", "Proactivity-Monitor-v0", "--out", str(out), *SMALL]) == 0
    assert f"rllib:{out / 'policy'}" in capsys.readouterr().out
    rows = list(csv.DictReader(open(out / "eval.csv")))
    assert [int(r["timesteps"]) for r in rows] == [0, 200, 400]  # before training, then two iterations
    assert {"overall/J", "reviewer/TA", "operator/TR_D"} <= set(rows[0])
    assert (out / "learning_curve.png").stat().st_size > 0
    assert any((out / "tb").iterdir())
    assert (out / "checkpoint" / "learner_group").is_dir() and (out / "checkpoints" / "step_400").is_dir()
    assert not ray.is_initialized()  # the command stopped the Ray it started
    _plays_validly(f"rllib:{out / 'policy'}")
    _plays_validly(f"rllib:{out / 'checkpoint'}")  # an algorithm checkpoint with one module works too
    # The reloaded policy is the trained one: the same scores as the final periodic evaluation.
    from proactive_env.baselines.training import VALIDATION_SEEDS, evaluate_policy

    again = evaluate_policy(make_agent(f"rllib:{out / 'policy'}"), ["monitor"], 1, VALIDATION_SEEDS.start)
    assert again["overall"]["J"] == pytest.approx(float(rows[-1]["overall/J"]))
    _refuses_untrusted_copies(out / "policy", tmp_path / "downloaded")


def _refuses_untrusted_copies(policy, copied):
    """A checkpoint is a pickle: one changed since training here (or copied in from elsewhere) is
    refused without --trust-model-files; the same files as trained here load as they are."""
    import shutil

    shutil.copytree(policy, copied)
    (copied / "extra.pkl").write_bytes(b"cos\nsystem\n(S'echo owned'\ntR.")
    with pytest.raises(ValueError, match="trust-model-files"):
        make_agent(f"rllib:{copied}")
    make_agent(f"rllib:{copied}", trust_model_files=True)  # vouched for: loads (the extra file is never read)
    (copied / "extra.pkl").unlink()
    make_agent(f"rllib:{copied}")


def test_multi_agent_env_trains_one_shared_policy(tmp_path):
    out = tmp_path / "multi"
    assert main(["train", "--algo", "rllib-ppo", "--env", MULTI_AGENT_ID, "--num-env-runners", "1",
                 "--env-kwargs", '{"scenarios": "experiments,job_applications", "pool_capacity": 1}',
                 "--out", str(out), *SMALL]) == 0
    modules = out / "checkpoint" / "learner_group" / "learner" / "rl_module"
    assert sorted(p.name for p in modules.iterdir() if p.is_dir()) == ["shared_policy"]
    assert len(list(csv.DictReader(open(out / "eval.csv")))) == 3
    _plays_validly(f"rllib:{out / 'policy'}")


def test_bad_rllib_path_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="no saved RLlib policy"):
        make_agent(f"rllib:{tmp_path / 'missing'}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="not an RLlib RL module checkpoint"):
        make_agent(f"rllib:{tmp_path / 'empty'}", trust_model_files=True)

