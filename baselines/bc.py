"""Behaviour cloning: an MLP imitates an agent's actions in a Minari dataset (``proactivity-gym
dataset``), with the env's action mask applied to its logits in training and in play.

    proactivity-gym dataset --agents oracle --scenarios all --seeds 0-49 --out proactivity/oracle-v0
    proactivity-gym train --algo bc --dataset proactivity/oracle-v0 --out runs/bc
    proactivity-gym eval --agents bc:runs/bc/bc.pt --seed 1000 --seeds 3

The input is the observation flattened as ``MaskedDictObservation`` flattens it (every part but
the mask, in a fixed order), so the code follows the env's spaces whatever their sizes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from proactive_env.wrappers.observation import PARTS

FEATURES = PARTS[:-1]  # everything but the action mask, as MaskedDictObservation flattens it
MODEL = "bc.pt"


@dataclasses.dataclass
class Args:
    """Behaviour cloning on a local Minari dataset."""

    dataset: str = "proactivity/oracle-v0"
    """a local Minari dataset id (written by `proactivity-gym dataset`)"""
    data_path: str = ""
    """where datasets live (default: $MINARI_DATASETS_PATH or ~/.minari/datasets)"""
    agent: str = "oracle"
    """imitate the episodes of this agent (episode metadata 'agent'); empty: every episode"""
    out: str = "runs/bc"
    epochs: int = 30
    batch_size: int = 512
    learning_rate: float = 1e-3
    net_arch: str = "256,256"
    validation: float = 0.1
    """fraction of episodes held out to report accuracy on"""
    seed: int = 0


class BCPolicy(nn.Module):
    def __init__(self, n_inputs: int, n_actions: int, hidden: list[int]):
        super().__init__()
        layers, width = [], n_inputs
        for size in hidden:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.net = nn.Sequential(*layers, nn.Linear(width, n_actions))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Logits with masked actions at -inf-like values, so they are never chosen nor trained on."""
        return self.net(x).masked_fill(mask == 0, -1e9)


def flat_features(observations: dict[str, np.ndarray]) -> np.ndarray:
    """Each part flattened per step and concatenated (works on one step or a stack of steps)."""
    lead = observations[FEATURES[0]].shape[:-1]
    return np.concatenate([observations[p].reshape(*lead, -1) for p in FEATURES], axis=-1).astype(np.float32)


def load_steps(args: Args) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], int]:
    """Per episode (features, masks, actions) of the step the action was taken in; and n_actions."""
    import minari

    dataset = minari.load_dataset(args.dataset)
    metadata = list(dataset.storage.get_episode_metadata(range(dataset.total_episodes)))
    episodes = []
    for episode, meta in zip(dataset.iterate_episodes(), metadata, strict=True):
        if args.agent and meta.get("agent") != args.agent:
            continue
        steps = len(episode.actions)
        obs = {p: episode.observations[p][:steps] for p in PARTS}
        episodes.append((flat_features(obs), obs["action_mask"].astype(np.float32), episode.actions.astype(np.int64)))
    if not episodes:
        raise ValueError(f"{args.dataset}: no episode of agent {args.agent!r} (episode metadata 'agent')")
    return episodes, int(dataset.action_space.n)


def train(args: Args) -> Path:
    if args.data_path:
        os.environ["MINARI_DATASETS_PATH"] = str(Path(args.data_path).resolve())
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    episodes, n_actions = load_steps(args)
    order = rng.permutation(len(episodes))
    n_valid = int(len(episodes) * args.validation) if len(episodes) > 1 else 0
    stack = lambda ids: [torch.as_tensor(np.concatenate([episodes[i][k] for i in ids])) for k in range(3)]  # noqa: E731
    x, mask, y = stack(order[n_valid:])
    validation = stack(order[:n_valid]) if n_valid else None

    hidden = [int(n) for n in args.net_arch.split(",")]
    policy = BCPolicy(x.shape[1], n_actions, hidden)
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.learning_rate)
    generator = torch.Generator().manual_seed(args.seed)
    history = []
    for epoch in range(args.epochs):
        total = 0.0
        for batch in torch.randperm(len(y), generator=generator).split(args.batch_size):
            loss = nn.functional.cross_entropy(policy(x[batch], mask[batch]), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
        history.append({"epoch": epoch + 1, "loss": total / len(y), "train_accuracy": accuracy(policy, x, mask, y),
                        "validation_accuracy": accuracy(policy, *validation) if validation else None})
        valid = history[-1]["validation_accuracy"]
        print(f"[bc] epoch {epoch + 1}: loss {history[-1]['loss']:.4f}, accuracy {history[-1]['train_accuracy']:.3f}"
              + (f", validation accuracy {valid:.3f}" if valid is not None else ""), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / MODEL
    torch.save({"state_dict": policy.state_dict(), "n_inputs": x.shape[1], "n_actions": n_actions,
                "hidden": hidden}, path)
    (out / "bc.json").write_text(json.dumps({"args": dataclasses.asdict(args), "steps": len(y),
                                             "episodes": len(episodes), "history": history}, indent=1))
    plot_training(history, out / "learning_curve.png", f"behaviour cloning on {args.dataset}")
    return path


def plot_training(history: list[dict], path: Path, title: str) -> None:
    """Loss and action accuracy (training and held-out episodes) per epoch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = [h["epoch"] for h in history]
    fig, (loss_ax, acc_ax) = plt.subplots(1, 2, figsize=(9, 3.5))
    loss_ax.plot(epochs, [h["loss"] for h in history], marker="o")
    loss_ax.set(xlabel="epoch", ylabel="cross-entropy", title="loss")
    acc_ax.plot(epochs, [h["train_accuracy"] for h in history], marker="o", label="training episodes")
    if history[0]["validation_accuracy"] is not None:
        acc_ax.plot(epochs, [h["validation_accuracy"] for h in history], marker="o", label="held-out episodes")
    acc_ax.set(xlabel="epoch", ylabel="accuracy", ylim=(0, 1.02), title="action accuracy")
    acc_ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


@torch.no_grad()
def accuracy(policy: BCPolicy, x: torch.Tensor, mask: torch.Tensor, y: torch.Tensor) -> float:
    return float((policy(x, mask).argmax(dim=1) == y).float().mean())


class BCAgent:
    """Plays a saved BC policy: the most likely valid action."""

    def __init__(self, policy: BCPolicy, name: str = "bc"):
        self.policy, self.name = policy.eval(), name

    def reset(self, env: Any, seed: int) -> None:
        pass

    @torch.no_grad()
    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        x = torch.as_tensor(flat_features(obs))[None]
        mask = torch.as_tensor(obs["action_mask"].astype(np.float32))[None]
        return int(self.policy(x, mask).argmax(dim=1)[0])


def load_bc_agent(spec: str) -> BCAgent:
    """``bc:PATH`` → the policy saved by ``proactivity-gym train --algo bc`` (``bc.pt``)."""
    path = Path(spec.split(":", 1)[1])
    if not path.is_file():
        raise ValueError(f"{spec}: no saved BC policy at {path}")
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
        policy = BCPolicy(saved["n_inputs"], saved["n_actions"], saved["hidden"])
        policy.load_state_dict(saved["state_dict"])
    except (RuntimeError, KeyError, TypeError, EOFError, pickle.UnpicklingError) as exc:  # EOF: an empty file
        raise ValueError(f"{spec}: {path} is not a BC policy saved by `proactivity-gym train --algo bc` ({exc})") from None
    return BCAgent(policy, name=spec)
