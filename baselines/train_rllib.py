"""PPO on RLlib's new API stack, with action masking.

    proactivity-gym train --algo rllib-ppo --env Proactivity-Monitor-v0 --timesteps 200000 --num-env-runners 2
    proactivity-gym train --algo rllib-ppo --env proactivity_multi_v0 --env-kwargs '{"pool_capacity": 1}'
    proactivity-gym eval --agents rllib:runs/train/policy

The env comes from Ray's registry (``rllib_env.register_rllib_envs``): a gym id in the masked-dict
layout, or ``proactivity_multi_v0`` (the PettingZoo env; every assistant plays one shared policy).
Without ``--ray-address`` a local Ray is started and stopped here. Every ``eval_freq`` env steps
the current policy is scored by the benchmark's own scorer, exactly as the SB3 trainers do
(``eval.csv``, TensorBoard under ``tb/``, ``learning_curve.png``); ``policy/`` is the final RL
module, ``best_policy/`` the best by mean J, ``checkpoint/`` the whole algorithm (to resume).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
from pathlib import Path

import ray  # noqa: F401  (a clear ImportError, and so the rllib-extra hint, when Ray is missing)

from .trusted import remember
from .training import CommonArgs, evaluate_policy, validation_start, net_arch, plot_learning_curve, save_config

ALGO = "rllib-ppo"
SHARED_POLICY = "shared_policy"


@dataclasses.dataclass
class Args(CommonArgs):
    """RLlib PPO (new API stack) with action masking; any gym id of the package or proactivity_multi_v0."""

    out: str = "runs/rllib"
    """output folder: policy/, best_policy/, checkpoint/, checkpoints/, agent.json, eval.csv, learning_curve.png, tb/"""
    n_envs: int = 16
    """envs per env runner (stepped as one vector in that process; 16, as MaskablePPO's recipe)"""
    vec_env: str = "dummy"
    """(not used here: RLlib steps an env runner's envs as one vector in its own process)"""
    reward_shaping: bool = False
    """the env's potential-based shaping (the return is still J); evaluation never shapes"""
    num_env_runners: int = 0
    """env-runner actors sampling in parallel (0: sample in the driver process)"""
    ray_address: str = ""
    """a running Ray cluster (e.g. 'auto' or 'ray://head:10001'); empty: start a local Ray"""
    # MaskablePPO's recipe (train_maskable_ppo.py), carried over: a 2,048-step rollout (16 envs x
    # 128), minibatches of 512, 5 epochs, the same learning rate, discount, GAE and entropy bonus
    train_batch_size: int = 2048
    """env steps per training iteration"""
    minibatch_size: int = 512
    num_epochs: int = 5
    learning_rate: float = 3e-4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    ent_coef: float = 0.005
    policy: str = "slots"
    """slots: the slot network (baselines/slot_policy.py, SlotPPOTorchRLModule); mlp: PPO's default module (--net-arch)"""
    d_model: int = 32
    """slot policy: width of the slot embeddings (MaskablePPO's recipe: 32, one layer)"""
    n_layers: int = 1
    """slot policy: self-attention layers across slots"""
    ff_dim: int = 64
    """slot policy: hidden width of each attention layer's feed-forward block"""
    head_hidden: int = 32
    """slot policy: hidden width of the verb, NOOP and value heads"""
    net_arch: str = "256,256"
    """mlp policy: hidden layer sizes"""


def build_config(args: Args):
    """The PPOConfig for ``args`` (single- or multi-agent by the env name)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from .rllib_env import MULTI_AGENT_ID
    from .rllib_module import MaskedPPOTorchRLModule, SlotPPOTorchRLModule
    from .slot_policy import SlotPolicyConfig

    if args.policy == "slots":
        module = RLModuleSpec(module_class=SlotPPOTorchRLModule,
                              model_config=SlotPolicyConfig(d_model=args.d_model, n_layers=args.n_layers, ff_dim=args.ff_dim,
                                                           head_hidden=args.head_hidden).policy_kwargs())
    elif args.policy == "mlp":
        module = RLModuleSpec(module_class=MaskedPPOTorchRLModule,
                              model_config={"fcnet_hiddens": net_arch(args.net_arch), "fcnet_activation": "tanh"})
    else:
        raise ValueError(f"--policy: expected one of ['slots', 'mlp'], got {args.policy!r}")
    config = (
        PPOConfig()
        .environment(args.env, env_config={"reward_shaping": args.reward_shaping,
                                           **(json.loads(args.env_kwargs) if args.env_kwargs else {})})
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.n_envs)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=args.train_batch_size, minibatch_size=args.minibatch_size,
                  num_epochs=args.num_epochs, lr=args.learning_rate, gamma=args.gamma, lambda_=args.gae_lambda,
                  entropy_coeff=args.ent_coef)
        .debugging(seed=args.seed)
    )
    if args.env == MULTI_AGENT_ID:
        config = config.multi_agent(policies={SHARED_POLICY}, policy_mapping_fn=lambda agent_id, *a, **k: SHARED_POLICY)
        return config.rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED_POLICY: module}))
    return config.rl_module(rl_module_spec=module)


def start_ray(address: str, num_env_runners: int) -> None:
    """Connect to ``address`` or start a small local Ray: one CPU for the driver (which also
    learns) and one per env runner, no dashboard."""
    import ray

    if address:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    else:
        ray.init(num_cpus=max(os.cpu_count() or 1, num_env_runners + 1), include_dashboard=False,
                 object_store_memory=256 * 2**20, log_to_driver=False, configure_logging=False)


def train(args: Args) -> Path:
    import ray
    from torch.utils.tensorboard import SummaryWriter

    from .learned import RLlibAgent
    from .rllib_env import MULTI_AGENT_ID, register_rllib_envs

    out = Path(args.out).resolve()
    save_config(args, ALGO, "masked-dict", args.policy)
    start_ray(args.ray_address, args.num_env_runners)
    try:
        register_rllib_envs()
        algo = build_config(args).build_algo()
        module_id = SHARED_POLICY if args.env == MULTI_AGENT_ID else "default_policy"
        scenarios = [s.strip() for s in args.eval_scenarios.split(",") if s.strip()]
        writer, rows, best = SummaryWriter(str(out / "tb")), [], float("-inf")
        steps, next_eval, next_checkpoint = 0, 0, args.checkpoint_freq
        while True:
            if steps >= next_eval or steps >= args.timesteps:  # at step 0, every eval_freq steps, at the end
                module = algo.get_module(module_id)
                rows.append(_evaluate(RLlibAgent(module), scenarios, args, steps, writer))
                _write_csv(rows, out / "eval.csv")
                if rows[-1]["overall/J"] > best:
                    best = rows[-1]["overall/J"]
                    module.save_to_path(str(out / "best_policy"))
                next_eval = steps + args.eval_freq
            if steps >= args.timesteps:
                break
            result = algo.train()
            steps = _env_steps(result)
            _log_training(writer, result, steps)
            if args.progress_bar:
                print(f"[rllib-ppo] {steps} env steps, return {_episode_return(result):.3f}", flush=True)
            if steps >= next_checkpoint:
                algo.save_to_path(str(out / "checkpoints" / f"step_{steps}"))
                next_checkpoint += args.checkpoint_freq
        algo.save_to_path(str(out / "checkpoint"))
        algo.get_module(module_id).save_to_path(str(out / "policy"))
        for folder in ("policy", "best_policy", "checkpoint"):  # written here: they load without a trust flag
            if (out / folder).is_dir():
                remember(out / folder)
        writer.close()
        algo.stop()
    finally:
        ray.shutdown()
    plot_learning_curve(rows, out / "learning_curve.png", f"{ALGO} on {args.env}")
    return out / "policy"


def _env_steps(result: dict) -> int:
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    return int(result.get(ENV_RUNNER_RESULTS, {}).get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0))


def _episode_return(result: dict) -> float:
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN

    return float(result.get(ENV_RUNNER_RESULTS, {}).get(EPISODE_RETURN_MEAN, float("nan")))


def _log_training(writer, result: dict, steps: int) -> None:
    from ray.rllib.utils.metrics import LEARNER_RESULTS

    writer.add_scalar("rollout/ep_rew_mean", _episode_return(result), steps)
    for module_id, stats in result.get(LEARNER_RESULTS, {}).items():
        for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss"):
            if key in stats:
                writer.add_scalar(f"train/{module_id}/{key}", float(stats[key]), steps)


def _evaluate(agent, scenarios: list[str], args: Args, steps: int, writer) -> dict:
    """The scorer-based evaluation of the SB3 trainers (same seeds, same metrics, same row)."""
    result = evaluate_policy(agent, scenarios, args.eval_episodes, validation_start(args.eval_episodes))
    row = {"timesteps": steps}
    for group, scores in result.items():
        for metric, value in scores.items():
            writer.add_scalar(f"eval/{group}/{metric}", value, steps)
            row[f"{group}/{metric}"] = value
    return row


def _write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[-1]))
        writer.writeheader()
        writer.writerows(rows)
