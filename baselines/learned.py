"""Learned agents: a Stable-Baselines3 / sb3-contrib model playing like any other agent.

A saved SB3 model is a zip whose ``data`` entry may hold pickled Python objects, and unpickling
runs whatever code the file's author put there. So a model is loaded without unpickling anything:
every pickled entry is replaced (SB3's ``custom_objects``) by what this package knows it must be —
the policy class of the algorithm, the env's own spaces, placeholders for the training-only state
(schedules, buffers, the last observation) — and the weights are read with ``torch.load(...,
weights_only=True)`` as SB3 does. A file with any other pickled entry is refused unless the caller
trusts it (``trust=True``; ``proactivity-gym eval --trust-model-files``): only for files you made.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from proactive_env.wrappers.observation import PARTS

from .trusted import trusted

ALGOS = ("maskable-ppo", "ppo", "dqn")
OBSERVATIONS = ("dict", "flat")
POLICIES = ("slots", "mlp")
CONFIG = "agent.json"
# Pickled entries of a saved model that only training uses: replaced by nothing.
TRAINING_ONLY = ("_last_obs", "_last_episode_starts", "_last_original_obs", "ep_info_buffer", "ep_success_buffer",
                 "rollout_buffer_class", "replay_buffer_class", "rollout_buffer_kwargs", "replay_buffer_kwargs")
MAX_DATA_BYTES = 16 * 2**20


def _algorithm(algo: str):
    if algo == "maskable-ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    if algo == "ppo":
        from stable_baselines3 import PPO

        return PPO
    if algo == "dqn":
        from stable_baselines3 import DQN

        return DQN
    raise ValueError(f"unknown algorithm {algo!r}; expected one of {ALGOS}")


def pickled_entries(path: str | Path) -> list[str]:
    """Names of the entries of a saved model's ``data`` that SB3 would unpickle."""
    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("data")
            if info.file_size > MAX_DATA_BYTES:
                raise ValueError(f"{path}: data: expected at most {MAX_DATA_BYTES} bytes, got {info.file_size}")
            data = json.loads(archive.read(info).decode("utf-8"))
    except (OSError, KeyError, zipfile.BadZipFile, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: expected a model saved by SB3 (a zip with a JSON 'data' entry): {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: data: expected a JSON object")
    return [key for key, value in data.items() if isinstance(value, dict) and ":serialized:" in value]


def _policy_class(algo: str, observation: str, policy: str):
    """The policy class a model was trained with: ``policy`` ``"slots"`` (MaskablePPO's slot
    policy) or ``"mlp"`` (SB3's MultiInputPolicy / MlpPolicy)."""
    if policy == "slots":
        if algo != "maskable-ppo" or observation != "dict":
            raise ValueError(f"policy 'slots' is trained with maskable-ppo on the dict observation, not {algo}/{observation}")
        from .slot_policy import SlotActorCriticPolicy

        return SlotActorCriticPolicy
    if policy != "mlp":
        raise ValueError(f"policy: expected one of {list(POLICIES)}, got {policy!r}")
    return _algorithm(algo).policy_aliases["MultiInputPolicy" if observation == "dict" else "MlpPolicy"]


def safe_objects(algo: str, observation: str, pickled: list[str], spaces: tuple, policy: str = "mlp") -> dict[str, Any]:
    """Replacements for every pickled entry, or ValueError naming those that have none."""
    observation_space, action_space = spaces
    constant = lambda _: 0.0  # noqa: E731  (schedules are used by training only)
    known = {"policy_class": _policy_class(algo, observation, policy),
             "observation_space": observation_space, "action_space": action_space,
             "lr_schedule": constant, "clip_range": constant, "clip_range_vf": None,
             "exploration_schedule": constant, "train_freq": (1, "step"),
             **{key: None for key in TRAINING_ONLY}}
    unknown = [key for key in pickled if key not in known]
    if unknown:
        raise ValueError(f"the model file holds pickled entries {unknown} that cannot be replaced safely, and "
                         "unpickling them would run code from the file; load it only if you made it: "
                         "--trust-model-files (trust=True)")
    return {key: known[key] for key in pickled}


def load_model(algo: str, path: str | Path, observation: str = "dict", trust: bool = False, policy: str = "mlp"):
    """The model at ``path``, loaded without running code from the file (unless ``trust``)."""
    cls = _algorithm(algo)
    if trust:
        return cls.load(path, device="cpu", custom_objects={"policy_class": _policy_class(algo, observation, policy)})
    from proactive_env.baselines.training import make_single_env

    env = make_single_env("Proactivity-Monitor-v0", observation == "flat")
    spaces = (env.observation_space, env.action_space)
    env.close()
    return cls.load(path, device="cpu", custom_objects=safe_objects(algo, observation, pickled_entries(path), spaces,
                                                                           policy))


class PolicyAgent:
    """Plays a trained model. ``observation`` is ``"dict"`` (the env's own observation, for
    ``MultiInputPolicy``) or ``"flat"`` (``FlattenObservation``, for ``MlpPolicy``)."""

    def __init__(self, model, algo: str, observation: str, name: str = "sb3", model_sha256: str | None = None):
        self.model, self.algo, self.observation, self.name = model, algo, observation, name
        self.model_sha256 = model_sha256

    def settings(self) -> dict:
        return {"algo": self.algo, "observation": self.observation, "model_sha256": self.model_sha256}

    def reset(self, env: Any, seed: int) -> None:
        pass

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        x = np.concatenate([obs[p] for p in PARTS], dtype=np.float32) if self.observation == "flat" else obs
        if self.algo == "maskable-ppo":
            action, _ = self.model.predict(x, deterministic=True, action_masks=obs["action_mask"].astype(bool))
        else:
            action, _ = self.model.predict(x, deterministic=True)
        return int(action)


def load_agent(spec: str, trust: bool = False) -> PolicyAgent:
    """``sb3:PATH`` → the model saved at PATH (a ``.zip``; its ``agent.json`` beside it says how
    it was trained), loaded without running code from the file unless ``trust``."""
    path = Path(spec.split(":", 1)[1])
    config_path = path.parent / CONFIG
    if not path.is_file():
        raise ValueError(f"{spec}: no saved model at {path}")
    if not config_path.is_file():
        raise ValueError(f"{spec}: expected {config_path} (written by `proactivity-gym train`) beside the model")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{config_path}: expected the JSON written by `proactivity-gym train`: {exc}") from None
    algo = config.get("algo") if isinstance(config, dict) else None
    observation = config.get("observation", "dict") if isinstance(config, dict) else None
    if algo not in ALGOS:
        raise ValueError(f"{config_path}: algo: expected one of {list(ALGOS)}, got {algo!r}")
    if observation not in OBSERVATIONS:
        raise ValueError(f"{config_path}: observation: expected one of {list(OBSERVATIONS)}, got {observation!r}")
    policy = config.get("policy", "mlp")  # runs saved before the slot policy have no "policy": mlp
    if policy not in POLICIES:
        raise ValueError(f"{config_path}: policy: expected one of {list(POLICIES)}, got {policy!r}")
    try:
        model = load_model(algo, path, observation, trust, policy)
    except ValueError as exc:
        raise ValueError(f"{spec}: {exc}") from None
    except Exception as exc:  # a damaged zip, weights of another shape, ...
        raise ValueError(f"{spec}: cannot load the model ({type(exc).__name__}: {' '.join(str(exc).split())[:300]})") from None
    return PolicyAgent(model, algo, observation, name=spec, model_sha256=hashlib.sha256(path.read_bytes()).hexdigest())


class RLlibAgent:
    """Plays an RLlib RL module trained on the masked-dict observation (``MaskedPPOTorchRLModule``):
    the most likely valid action."""

    def __init__(self, module, name: str = "rllib"):
        self.module, self.name = module, name
        self.masker = None

    def reset(self, env: Any, seed: int) -> None:
        from proactive_env.wrappers import MaskedDictObservation

        self.masker = MaskedDictObservation(env)  # a converter only; it never steps the env

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        import torch
        from ray.rllib.core.columns import Columns

        masked = self.masker.observation(obs)
        batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in masked.items()}}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        return int(torch.argmax(logits[0]))


def load_rllib_agent(spec: str, trust: bool = False) -> RLlibAgent:
    """``rllib:PATH`` → the RL module at PATH: ``policy/`` or ``best_policy/`` written by
    ``proactivity-gym train --algo rllib-ppo``, or an algorithm checkpoint with one module.
    RLlib checkpoints are pickles: a folder not trained on this machine (``trusted.py``) loads
    only with ``trust``."""
    path = Path(spec.split(":", 1)[1]).resolve()
    if not path.is_dir():
        raise ValueError(f"{spec}: no saved RLlib policy at {path}")
    if not trust and not trusted(path):
        raise ValueError(f"{spec}: an RLlib checkpoint is unpickled, which runs code from its files, and {path} was "
                         "not trained on this machine (or changed since); pass --trust-model-files if you trust it")
    modules = path / "learner_group" / "learner" / "rl_module"
    if modules.is_dir():
        found = sorted(p for p in modules.iterdir() if p.is_dir())
        if len(found) != 1:
            raise ValueError(f"{spec}: expected one RL module under {modules}, found {[p.name for p in found]}")
        path = found[0]
    try:
        from ray.rllib.core.rl_module.rl_module import RLModule
    except ImportError as exc:
        raise ValueError(f"{spec}: needs the rllib extra ({exc.name} is missing): "
                         "pip install 'proactivity-gym[rllib]'") from None
    try:
        module = RLModule.from_checkpoint(str(path))
    except (FileNotFoundError, ValueError, KeyError) as exc:
        raise ValueError(f"{spec}: {path} is not an RLlib RL module checkpoint ({exc})") from None
    return RLlibAgent(module, name=spec)
