"""The slot policy (baselines/slot_policy.py): permuting the task slots permutes its logits, its
masked distribution and ``predict`` never pick a masked action, it trains with MaskablePPO and
reloads as ``sb3:PATH``, and a space it was not built for is a clear error."""

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

import proactive_env  # noqa: E402,F401
from proactive_env.baselines import make_agent  # noqa: E402
from proactive_env.baselines import train_maskable_ppo  # noqa: E402
from proactive_env.baselines.slot_policy import (N_TASK, SlotActorCriticPolicy, SlotNetwork,  # noqa: E402
                                                 SlotPolicyConfig)
from proactive_env.baselines.training import parse_args  # noqa: E402
from proactive_env.envs.structured import MAX_TASKS, N_VERBS  # noqa: E402
from proactive_env.evaluate import play  # noqa: E402
from proactive_env.spec import PERSONAS  # noqa: E402

SMALL = ["--timesteps", "1024", "--n-steps", "512", "--batch-size", "256", "--n-epochs", "2", "--eval-freq", "1024",
         "--eval-episodes", "1", "--checkpoint-freq", "1024", "--n-envs", "1", "--no-progress-bar",
         "--d-model", "32", "--n-layers", "1"]


def observations(scenarios=("monitor", "experiments", "meal_planning"), steps=40, seed=0) -> list[dict]:
    """Real observations from random valid play, several per scenario and persona."""
    rng, seen = np.random.default_rng(seed), []
    for i, scenario in enumerate(scenarios):
        for persona in PERSONAS:
            env = gym.make(f"Proactivity-{''.join(w.capitalize() for w in scenario.split('_'))}-v0", persona=persona)
            obs, _ = env.reset(seed=100 + i)
            for t in range(steps):
                if t % 8 == 0:
                    seen.append(obs)
                obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
                if terminated or truncated:
                    break
    return seen


def batch(obs_list: list[dict]) -> dict:
    return {k: torch.as_tensor(np.stack([o[k] for o in obs_list])).float() for k in obs_list[0]}


def permute_slots(obs: dict, order: np.ndarray) -> dict:
    """The same observation with slot i holding what slot order[i] held (its row and its mask entries)."""
    out = dict(obs)
    out["tasks"] = obs["tasks"].reshape(MAX_TASKS, N_TASK)[order].ravel()
    verbs = obs["action_mask"][1:].reshape(N_VERBS, MAX_TASKS)[:, order]
    out["action_mask"] = np.concatenate([obs["action_mask"][:1], verbs.ravel()])
    return out


def permuted_logits(logits: torch.Tensor, order: np.ndarray) -> torch.Tensor:
    verbs = logits[:, 1:].reshape(-1, N_VERBS, MAX_TASKS)[:, :, order]
    return torch.cat([logits[:, :1], verbs.reshape(len(logits), -1)], dim=1)


@pytest.fixture(scope="module")
def real_obs():
    return observations()


@pytest.fixture(scope="module")
def sb3_policy():
    env = gym.make("Proactivity-Monitor-v0")
    model = MaskablePPO(SlotActorCriticPolicy, env, n_steps=64, batch_size=64, device="cpu", seed=0,
                        policy_kwargs=SlotPolicyConfig(d_model=32).policy_kwargs())
    return model


def test_permuting_the_slots_permutes_the_logits(real_obs):
    torch.manual_seed(0)
    network = SlotNetwork(SlotPolicyConfig(d_model=32)).eval()
    for layer in (network.heads.verb[-1], network.heads.noop[-1]):  # logits of order 1, not the 0.01-gain start
        layer.reset_parameters()
    rng = np.random.default_rng(1)
    with torch.no_grad():
        logits, value = network(batch(real_obs))
        for _ in range(5):
            order = rng.permutation(MAX_TASKS)
            moved_logits, moved_value = network(batch([permute_slots(o, order) for o in real_obs]))
            torch.testing.assert_close(moved_logits, permuted_logits(logits, order), atol=1e-4, rtol=1e-4)
            torch.testing.assert_close(moved_value, value, atol=1e-4, rtol=1e-4)
    # Not trivially true: the used slots get different logits, and a slot's logits depend on the
    # other slots (attention), so a permutation that forgets to move a row would be caught.
    used = batch(real_obs)["tasks"].reshape(len(real_obs), MAX_TASKS, N_TASK)[..., 0] > 0.5
    start = logits[:, 1:1 + MAX_TASKS]
    assert (start[used].std() > 0.05) and used.sum(1).min() >= 2
    alone = {k: v.clone() for k, v in batch(real_obs[:1]).items()}
    tasks = alone["tasks"].reshape(MAX_TASKS, N_TASK)
    first, other = np.flatnonzero(used[0].numpy())[:2]
    tasks[other] = 0.0  # remove one other task: the first slot's logits change
    with torch.no_grad():
        assert not torch.allclose(network(alone)[0][0, 1 + first], logits[0, 1 + first])


def test_the_sb3_policy_is_equivariant_too(real_obs, sb3_policy):
    policy = sb3_policy.policy.eval()
    for layer in (policy.mlp_extractor.heads.verb[-1], policy.mlp_extractor.heads.noop[-1]):
        layer.reset_parameters()
    order = np.random.default_rng(2).permutation(MAX_TASKS)
    with torch.no_grad():
        logits = policy.get_distribution(batch(real_obs)).distribution.logits
        moved = policy.get_distribution(batch([permute_slots(o, order) for o in real_obs])).distribution.logits
        values = policy.predict_values(batch(real_obs))
        moved_values = policy.predict_values(batch([permute_slots(o, order) for o in real_obs]))
    torch.testing.assert_close(moved, permuted_logits(logits, order), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(moved_values, values, atol=1e-4, rtol=1e-4)


def test_predict_and_the_distribution_respect_the_mask(real_obs, sb3_policy):
    policy = sb3_policy.policy
    masks = np.stack([o["action_mask"] for o in real_obs]).astype(bool)
    assert (~masks).any(axis=1).all()  # every observation masks something
    with torch.no_grad():
        distribution = policy.get_distribution(batch(real_obs), action_masks=masks)
        probs = distribution.distribution.probs.numpy()
    assert np.all(probs[~masks] == 0.0) and np.allclose(probs.sum(1), 1.0, atol=1e-5)
    for deterministic in (True, False):
        for obs, mask in zip(real_obs, masks):
            for _ in range(3):
                action, _ = sb3_policy.predict(obs, deterministic=deterministic, action_masks=mask)
                assert mask[int(action)]
        stacked = {k: np.stack([o[k] for o in real_obs]) for k in real_obs[0]}
        actions, _ = sb3_policy.predict(stacked, deterministic=deterministic, action_masks=masks)
        assert masks[np.arange(len(masks)), actions].all()


def test_trains_with_maskable_ppo_saves_and_reloads(tmp_path):
    out = tmp_path / "slots"
    path = train_maskable_ppo.train(parse_args(train_maskable_ppo.Args, SMALL + ["--out", str(out)]))
    assert (out / "eval.csv").read_text().splitlines()[1].startswith("0,")
    trained = MaskablePPO.load(path, device="cpu")
    assert isinstance(trained.policy, SlotActorCriticPolicy) and trained.policy.slot_config.d_model == 32
    agent = make_agent(f"sb3:{path}")  # the safe loader: no unpickling, the slot policy from agent.json
    assert isinstance(agent.model.policy, SlotActorCriticPolicy)
    record = play(agent, "monitor", "planner", 1000)
    same = play(make_agent(f"sb3:{path}"), "monitor", "planner", 1000)
    assert record["actions"] == same["actions"] and 0.0 <= record["scores"]["J"] <= 1.0
    obs, _ = gym.make("Proactivity-Monitor-v0").reset(seed=5)
    batch_obs = {k: torch.as_tensor(v)[None] for k, v in obs.items()}
    with torch.no_grad():  # the reloaded weights are the trained ones
        torch.testing.assert_close(agent.model.policy.get_distribution(batch_obs).distribution.logits,
                                   trained.policy.get_distribution(batch_obs).distribution.logits)


def test_spaces_it_was_not_built_for_are_clear_errors():
    flat = gym.make("Proactivity-Monitor-v0")
    with pytest.raises(ValueError, match="Dict observation"):
        MaskablePPO(SlotActorCriticPolicy, gym.wrappers.FlattenObservation(flat), device="cpu")
    with pytest.raises(ValueError, match="--policy"):
        train_maskable_ppo.policy_class("transformer")
