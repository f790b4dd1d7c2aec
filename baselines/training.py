"""What the training scripts share: vector envs, evaluation by the benchmark's own scorer,
checkpoints, the saved agent config and the learning-curve plot."""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import functools
import inspect
import json
import textwrap
import time
import typing
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback, CallbackList, CheckpointCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

import proactive_env  # noqa: F401  (registers the ids in worker processes too)
from proactive_env.evaluate import play
from proactive_env.envs.registration import SUITE_ID
from proactive_env.spec import PERSONAS
from proactive_env.wrappers import FlattenObservation

from .learned import CONFIG, PolicyAgent

EVAL_METRICS = ("TC", "TA", "TR_D", "TR_J", "J", "continuation")  # on the data scale of scoring.UNITS
REFERENCE_AGENTS = ("oracle", "policy-follower")  # drawn as reference lines on the learning curve, with
# the best structured adversary and, when given, a BC policy
CURRICULUM_STAGES = ("fixed-seed", "persona", "sampled", "suite")
VEC_ENVS = {"dummy": DummyVecEnv, "subproc": SubprocVecEnv}
# Model selection (the learning curve, best_model.zip) plays the last hundred training seeds;
# seeds ≥ 1000 are the test split (DESIGN §3) and are never played while training or selecting.
VALIDATION_SEEDS = range(900, 1000)


@dataclasses.dataclass
class CommonArgs:
    env: str = "Proactivity-Monitor-v0"
    """training env id (persona sampled per episode unless the id names one)"""
    env_kwargs: str = ""
    """JSON keyword arguments for the env, e.g. '{"exclude": "monitor"}' with Proactivity-Suite-v0"""
    timesteps: int = 200_000
    """environment steps to train for"""
    seed: int = 0
    """seeds the envs and the model (evaluation during training plays the validation seeds 900–999)"""
    out: str = "runs/train"
    """output folder: model.zip, best_model.zip, agent.json, eval.csv, learning_curve.png, tb/, checkpoints/"""
    n_envs: int = 16
    """parallel envs, stepped together so the policy's forward pass is batched over them"""
    vec_env: str = "dummy"
    """dummy: every env in this process, one after another (DummyVecEnv); subproc: one process per
    env (SubprocVecEnv). An env step (~0.1 ms) is far cheaper than the policy, so on a few cores
    one process with a batched forward beats subprocesses"""
    reward_shaping: bool = True
    """the env's potential-based shaping (early credit at the action, undone by the potential:
    the return is still J); evaluation never shapes"""
    eval_scenarios: str = "monitor"
    """comma-separated scenarios the periodic evaluation plays (all three personas each); it picks
    best_model.zip, so none may be a scenario the training env holds out (--env-kwargs 'exclude')"""
    eval_freq: int = 20_000
    """environment steps between evaluations with the benchmark's scorer (also one at step 0 and at the end)"""
    eval_episodes: int = 3
    """episodes per scenario and persona at each evaluation"""
    checkpoint_freq: int = 50_000
    """environment steps between checkpoints under OUT/checkpoints"""
    progress_bar: bool = True
    """show a progress bar (tqdm and rich)"""
    torch_threads: int = 1
    """torch CPU threads; these policies are small, and on a shared machine more threads than one
    made MaskablePPO 6x slower (10 against 64 env steps/s with other jobs running)"""
    curriculum: str = ""
    """comma-separated stages, each for an equal share of the timesteps: fixed-seed (one seed and
    persona), persona (that persona, every variant), sampled (the env as given), suite (every
    scenario but the held-out ones of --env-kwargs 'exclude'); empty: the env as given throughout"""
    curriculum_persona: str = "planner"
    """the persona of the fixed-seed and persona stages"""
    reference_bc: str = ""
    """a BC policy (bc.pt from `train --algo bc`) to draw as a reference line beside the oracle,
    the policy-follower and the best structured adversary"""


@dataclasses.dataclass
class PPOArgs(CommonArgs):
    """Hyperparameters PPO and MaskablePPO share."""

    learning_rate: float = 3e-4
    """Adam learning rate"""
    n_steps: int = 128
    """rollout length per env (a rollout is n_steps × n_envs steps: 2,048 at the defaults)"""
    batch_size: int = 512
    """minibatch size"""
    n_epochs: int = 5
    """optimisation epochs per rollout"""
    gamma: float = 0.995
    """discount factor"""
    gae_lambda: float = 0.95
    """GAE λ"""
    ent_coef: float = 0.005
    """entropy bonus coefficient"""
    net_arch: str = "256,256"
    """hidden layer sizes of the policy and value networks, comma-separated (the mlp policy)"""

    def model_kwargs(self) -> dict:
        """Keyword arguments of the SB3 constructor."""
        return {"learning_rate": self.learning_rate, "n_steps": self.n_steps, "batch_size": self.batch_size,
                "n_epochs": self.n_epochs, "gamma": self.gamma, "gae_lambda": self.gae_lambda,
                "ent_coef": self.ent_coef, "policy_kwargs": self.policy_kwargs(),
                "tensorboard_log": str(Path(self.out) / "tb"), "seed": self.seed, "device": "cpu", "verbose": 0}

    def policy_kwargs(self) -> dict:
        return {"net_arch": net_arch(self.net_arch)}


def net_arch(text: str) -> list[int]:
    return [int(n) for n in text.split(",")]


def field_docs(cls) -> dict[str, str]:
    """The docstring under each field of a dataclass (and of its bases), as ``{name: text}``."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body
        for node, after in zip(body, body[1:]):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
                docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def add_arguments(parser: argparse.ArgumentParser, cls) -> None:
    """One ``--option`` per field of the dataclass ``cls``: its type, its default, its docstring as
    help; booleans as ``--flag`` / ``--no-flag``."""
    docs = field_docs(cls)
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        flag = f"--{field.name.replace('_', '-')}"
        kind = hints.get(field.name, type(field.default))
        help_text = docs.get(field.name) or field.name.replace("_", " ")
        if kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=field.default, help=help_text)
        else:
            parser.add_argument(flag, type=kind, default=field.default, metavar=kind.__name__.upper(), help=help_text)


def parse_args(cls, argv: list[str] | None = None):
    """A dataclass of arguments from the command line (``--field value``, ``--flag/--no-flag``)."""
    parser = argparse.ArgumentParser(description=cls.__doc__)
    add_arguments(parser, cls)
    return cls(**vars(parser.parse_args(argv)))


def make_envs(args: CommonArgs, flat: bool):
    # A module-level factory: subprocess workers unpickle it by reference, importing this module
    # and so registering the ids before gym.make runs there.
    if args.vec_env not in VEC_ENVS:
        raise ValueError(f"--vec-env: expected one of {list(VEC_ENVS)}, got {args.vec_env!r}")
    vec_cls = VEC_ENVS[args.vec_env] if args.n_envs > 1 else DummyVecEnv
    kwargs = {"reward_shaping": args.reward_shaping, **(json.loads(args.env_kwargs) if args.env_kwargs else {})}
    stages = curriculum_stages(args.curriculum)
    if stages:
        factory = functools.partial(make_curriculum_env, args.env, flat, kwargs, args.curriculum_persona, args.seed)
    else:
        factory = functools.partial(make_single_env, args.env, flat, kwargs)
    return make_vec_env(factory, n_envs=args.n_envs, seed=args.seed, vec_env_cls=vec_cls)


def curriculum_stages(text: str) -> list[str]:
    stages = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in stages if s not in CURRICULUM_STAGES]
    if unknown:
        raise ValueError(f"--curriculum: unknown stage(s) {unknown}; expected a comma-separated list of {list(CURRICULUM_STAGES)}")
    return stages


class CurriculumEnv(gym.Env):
    """The training env of one curriculum stage (``set_stage``): ``fixed-seed`` replays one seed
    with one persona, ``persona`` draws every variant for that persona, ``sampled`` is the env
    as given, ``suite`` plays every shipped scenario but those ``env_kwargs`` exclude. Spaces are
    the same in every stage, so one policy trains through all of them."""

    def __init__(self, env_id: str, flat: bool, kwargs: dict, persona: str, seed: int):
        if persona not in PERSONAS:
            raise ValueError(f"--curriculum-persona: expected one of {PERSONAS}, got {persona!r}")
        self.env_id, self.flat, self.kwargs, self.persona, self.seed = env_id, flat, kwargs, persona, seed
        self.envs: dict[str, gym.Env] = {}
        self.stage = "sampled"
        self.current = self._env("sampled")
        self.observation_space, self.action_space = self.current.observation_space, self.current.action_space

    def _env(self, stage: str) -> gym.Env:
        key = {"fixed-seed": "persona"}.get(stage, stage)
        if key not in self.envs:
            if key == "suite":
                suite_kwargs = {k: v for k, v in self.kwargs.items() if k in ("exclude", "weights", "reward_shaping")}
                self.envs[key] = make_single_env(SUITE_ID, self.flat, suite_kwargs)
            else:  # a suite's own keywords (what to exclude) are for the suite stage only
                own = self.kwargs if self.env_id == SUITE_ID else {k: v for k, v in self.kwargs.items()
                                                                    if k not in ("scenarios", "exclude")}
                persona = {"persona": self.persona} if key == "persona" else {}
                self.envs[key] = make_single_env(self.env_id, self.flat, {**own, **persona})
        return self.envs[key]

    def set_stage(self, stage: str) -> None:
        """Play ``stage`` from the next episode on (the episode under way ends where it is)."""
        self.stage = stage

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.current = self._env(self.stage)
        if self.stage == "fixed-seed":
            seed = self.seed
        return self.current.reset(seed=seed, options=options)

    def step(self, action):
        return self.current.step(action)

    def action_masks(self) -> np.ndarray:
        return self.current.unwrapped.action_masks()

    def close(self) -> None:
        for env in self.envs.values():
            env.close()


def make_curriculum_env(env_id: str, flat: bool, kwargs: dict, persona: str, seed: int) -> gym.Env:
    return CurriculumEnv(env_id, flat, kwargs, persona, seed)


class CurriculumCallback(BaseCallback):
    """Moves every training env to the next curriculum stage at equal shares of the timesteps."""

    def __init__(self, stages: list[str], timesteps: int):
        super().__init__()
        self.stages, self.timesteps, self.index = stages, timesteps, -1

    def _on_training_start(self) -> None:
        self._advance()

    def _on_step(self) -> bool:
        if self.num_timesteps >= (self.index + 1) * self.timesteps / len(self.stages) and self.index < len(self.stages) - 1:
            self._advance()
        return True

    def _advance(self) -> None:
        self.index += 1
        self.training_env.env_method("set_stage", self.stages[self.index])
        self.logger.record("curriculum/stage", self.index)


def validation_start(episodes: int) -> int:
    """The first of ``episodes`` validation seeds (``VALIDATION_SEEDS``)."""
    if not 1 <= episodes <= len(VALIDATION_SEEDS):
        raise ValueError(f"--eval-episodes: expected 1–{len(VALIDATION_SEEDS)} (the validation seeds "
                         f"{VALIDATION_SEEDS.start}–{VALIDATION_SEEDS.stop - 1}), got {episodes}")
    return VALIDATION_SEEDS.start


def evaluate_policy(agent, scenarios: list[str], episodes: int, first_seed: int) -> dict:
    """Mean scores per persona and overall, on seeds the training never used."""
    per_persona = {}
    for persona in PERSONAS:
        runs = [play(agent, s, persona, first_seed + i) for s in scenarios for i in range(episodes)]
        per_persona[persona] = {m: float(np.mean([r["scores"][m] for r in runs])) for m in EVAL_METRICS}
    overall = {m: float(np.mean([v[m] for v in per_persona.values()])) for m in EVAL_METRICS}
    return {"overall": overall, **per_persona}


class ScoreEvalCallback(BaseCallback):
    """Every ``eval_freq`` steps: play the current policy deterministically on the evaluation
    scenarios × personas and log TC, TA, TR-D, TR-J and J (TensorBoard and ``eval.csv``); keep
    the best model by mean J."""

    def __init__(self, args: CommonArgs, algo: str, observation: str):
        super().__init__()
        self.args, self.algo, self.observation = args, algo, observation
        self.out = Path(args.out)
        self.scenarios = [s.strip() for s in args.eval_scenarios.split(",") if s.strip()]
        self.best = -np.inf
        self.started = time.perf_counter()
        self.rows: list[dict] = []
        self.references: dict = {}

    def _on_step(self) -> bool:
        if self.n_calls % max(1, self.args.eval_freq // self.args.n_envs) == 0:
            self.evaluate()
        return True

    def _on_training_start(self) -> None:
        self.started = time.perf_counter()
        self.references = reference_scores(self.scenarios, self.args.eval_episodes, self.first_seed,
                                           self.args.reference_bc)
        (self.out / "reference.json").write_text(json.dumps(self.references, indent=1))
        self.evaluate()  # the untrained policy: the curve's step-0 point

    def _on_training_end(self) -> None:
        self.evaluate()

    @property
    def first_seed(self) -> int:
        return validation_start(self.args.eval_episodes)

    def evaluate(self) -> dict:
        if self.rows and self.rows[-1]["timesteps"] == self.num_timesteps:
            return self.rows[-1]
        agent = PolicyAgent(self.model, self.algo, self.observation)
        result = evaluate_policy(agent, self.scenarios, self.args.eval_episodes, self.first_seed)
        row = {"timesteps": self.num_timesteps}
        for group, scores in result.items():
            for metric, value in scores.items():
                self.logger.record(f"eval/{group}/{metric}", value)
                row[f"{group}/{metric}"] = value
        row["wall_s"] = round(time.perf_counter() - self.started, 1)  # since training began, evaluations included
        self.rows.append(row)
        self._write_csv()
        if result["overall"]["J"] > self.best:
            self.best = result["overall"]["J"]
            self.model.save(self.out / "best_model.zip")
        return row

    def _write_csv(self) -> None:
        with open(self.out / "eval.csv", "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(self.rows[-1]))
            writer.writeheader()
            writer.writerows(self.rows)


def callbacks(args: CommonArgs, algo: str, observation: str) -> tuple[CallbackList, ScoreEvalCallback]:
    scorer = ScoreEvalCallback(args, algo, observation)
    checkpoints = CheckpointCallback(max(1, args.checkpoint_freq // args.n_envs), str(Path(args.out) / "checkpoints"),
                                     name_prefix=algo)
    from .progress import EVERY, ProgressLog  # talkative by default; with a bar, only after evaluations

    progress = ProgressLog(args.timesteps, scorer, every=None if args.progress_bar else EVERY)
    stages = curriculum_stages(args.curriculum)
    curriculum = [CurriculumCallback(stages, args.timesteps)] if stages else []
    return CallbackList([*curriculum, checkpoints, scorer, progress]), scorer


def held_out_scenarios(env_id: str, env_kwargs: str) -> list[str]:
    """The shipped scenarios the training env (``env_id`` with the JSON ``env_kwargs``) is kept
    from: those its ``exclude`` names (the suite env's, or a curriculum's suite stage) and, for the
    suite env, those its ``scenarios`` leaves out."""
    from proactive_env.envs.suite import _names
    from proactive_env.spec import shipped_names

    kwargs = json.loads(env_kwargs) if env_kwargs else {}
    held_out = set(_names("exclude", kwargs.get("exclude", "")))
    scenarios = kwargs.get("scenarios", "all")
    if env_id == SUITE_ID and scenarios != "all":
        held_out |= set(shipped_names()) - set(_names("scenarios", scenarios))
    return sorted(held_out)


def check_no_tuning_on_held_out(args: CommonArgs) -> None:
    """Refuse an evaluation during training (which picks ``best_model.zip``) on a scenario the
    training env holds out: choosing the model there would tune on the test scenario."""
    evaluated = [s.strip() for s in args.eval_scenarios.split(",") if s.strip()]
    tuned_on = [s for s in evaluated if s in held_out_scenarios(args.env, args.env_kwargs)]
    if tuned_on:
        raise ValueError(f"--eval-scenarios {args.eval_scenarios}: {', '.join(tuned_on)} is held out of training "
                         f"(--env-kwargs {args.env_kwargs}); the best model would be chosen on it. Validate on "
                         "scenarios the training env plays, e.g. --eval-scenarios with some of the others")


def save_config(args, algo: str, observation: str, policy: str = "mlp") -> None:
    """The start of every training run: the check that it does not select on a held-out
    scenario, torch's threads, and the run's configuration on disk."""
    check_no_tuning_on_held_out(args)
    torch.set_num_threads(args.torch_threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config = {"algo": algo, "observation": observation, "policy": policy, "args": dataclasses.asdict(args)}
    (out / "checkpoints").mkdir(exist_ok=True)
    for folder in (out, out / "checkpoints"):  # a checkpoint loads as `sb3:` like the final model
        (folder / CONFIG).write_text(json.dumps(config, indent=1))


def reference_scores(scenarios: list[str], episodes: int, first_seed: int, bc: str = "") -> dict:
    """The reference agents' scores on the evaluation's own scenarios, personas and seeds: the
    oracle, the policy-follower, the structured adversary with the best mean J (as
    ``"best adversary"``, its name under ``"name"``) and, if ``bc`` names a saved BC policy, ``"bc"``."""
    from . import adversaries
    from .oracle import OracleAgent
    from .scripted import PolicyFollowerAgent

    agents = {"oracle": OracleAgent(), "policy-follower": PolicyFollowerAgent()}
    scores = {name: evaluate_policy(agents[name], scenarios, episodes, first_seed) for name in REFERENCE_AGENTS}
    rivals = {cls.name: evaluate_policy(cls(), scenarios, episodes, first_seed) for cls in adversaries.STRUCTURED}
    best = max(rivals, key=lambda name: rivals[name]["overall"]["J"])
    scores["best adversary"] = {"name": best, **rivals[best]}
    if bc:
        from .bc import load_bc_agent

        scores["bc"] = evaluate_policy(load_bc_agent(f"bc:{bc}"), scenarios, episodes, first_seed)
    return scores


CURVE_METRICS = (("J", "J (0–1)", (0, 1.02)), ("TC", "TC (0–100)", (0, 102)), ("TA", "TA (fraction)", (0, 1.02)),
                 ("TR_D", "TR-D (fraction)", (0, 1.02)), ("TR_J", "TR-J (1–5)", (1, 5.05)))


def plot_learning_curve(rows: list[dict], path: Path, title: str, references: dict | None = None) -> None:
    """Every metric (rows) overall and per persona (columns) against training steps, from the
    untrained policy at step 0; the oracle, the policy-follower, the best structured adversary
    and (when evaluated) BC as reference lines."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    references = references or {}
    groups = ("overall", *PERSONAS)
    steps = [r["timesteps"] for r in rows]
    fig = Figure(figsize=(3.2 * len(groups) + 1, 2.0 * len(CURVE_METRICS) + 1))
    axes = fig.subplots(len(CURVE_METRICS), len(groups), sharex=True, squeeze=False)
    styles = {"oracle": ("#2ca02c", "--"), "policy-follower": ("#7f7f7f", ":"), "bc": ("#9467bd", "-."),
              "best adversary": ("#d62728", ":")}
    for i, (metric, label, limits) in enumerate(CURVE_METRICS):
        for j, group in enumerate(groups):
            ax = axes[i][j]
            ax.plot(steps, [r.get(f"{group}/{metric}", np.nan) for r in rows], marker="o", ms=3.5, color="#1f77b4",
                    label="policy")
            for name, (colour, style) in styles.items():
                reference = references.get(name, {})
                value = reference.get(group, {}).get(metric)
                if value is not None:
                    named = f"{name} ({reference['name']})" if "name" in reference else name
                    ax.axhline(value, color=colour, ls=style, lw=1.2, label=named)
            ax.set_ylim(*limits)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
            if i == 0:
                ax.set_title(group, fontsize=9)
            if j == 0:
                ax.set_ylabel(label, fontsize=8)
            if i == len(CURVE_METRICS) - 1:
                ax.set_xlabel("training steps", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=110)


def finish(model, args, scorer: ScoreEvalCallback, algo: str) -> Path:
    out = Path(args.out)
    path = out / "model.zip"
    model.save(path)
    plot_learning_curve(scorer.rows, out / "learning_curve.png", f"{algo} on {args.env} — evaluated on "
                        f"{args.eval_scenarios}, {args.eval_episodes} episode(s) per persona", scorer.references)
    return path


def make_single_env(env_id: str, flat: bool, kwargs: dict | None = None) -> gym.Env:
    try:
        env = gym.make(env_id, **(kwargs or {}))
    except TypeError as exc:  # an argument the env does not take
        raise ValueError(f"--env-kwargs {json.dumps(kwargs)}: {env_id} does not take them ({exc})") from None
    return FlattenObservation(env) if flat else env
