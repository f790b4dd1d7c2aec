"""Behaviour cloning: a policy imitates an agent's actions in a Minari dataset (``proactivity-gym
dataset``), with the env's action mask applied to its logits in training and in play. The policy
is the slot network of ``slot_policy.py`` (``--policy slots``, the default: the network
MaskablePPO trains) or an MLP over the flattened observation (``--policy mlp``).

    proactivity-gym dataset --agents oracle --scenarios all --seeds 0-49 --out proactivity/oracle-v0
    proactivity-gym train --algo bc --dataset proactivity/oracle-v0 --out runs/bc
    proactivity-gym train --algo bc --dataset proactivity/oracle-v0 --eval-scenarios monitor --out runs/bc  # best epoch by play
    proactivity-gym eval --agents bc:runs/bc/bc.pt --seed 1000 --seeds 3

The MLP's input is the observation flattened as ``MaskedDictObservation`` flattens it (every part
but the mask, in a fixed order), so the code follows the env's spaces whatever their sizes.
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

from .slot_policy import SlotNetwork, SlotPolicyConfig

FEATURES = PARTS[:-1]  # everything but the action mask, as MaskedDictObservation flattens it
MODEL = "bc.pt"
POLICIES = ("slots", "mlp")


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
    policy: str = "slots"
    """slots: the slot network of slot_policy.py (what MaskablePPO trains); mlp: an MLP over the flat observation"""
    net_arch: str = "256,256"
    """the mlp policy's hidden layer sizes"""
    validation: float = 0.1
    """fraction of episodes held out to report accuracy on"""
    seed: int = 0
    torch_threads: int = 1
    """torch CPU threads (more than one made training slower on a shared 2-core machine)"""
    eval_scenarios: str = ""
    """comma-separated scenarios to play (three personas, validation seeds 900 on) every --eval-every
    epochs, keeping as bc.pt the epoch of the best mean J (bc-last.pt: the last epoch); each must be
    a scenario of the dataset, so a held-out scenario is never selected on. Empty: bc.pt is the last epoch"""
    eval_every: int = 2
    """epochs between those evaluations (also one after the last epoch)"""
    eval_episodes: int = 1
    """validation seeds per scenario and persona at each evaluation"""
    exclude_scenarios: str = ""
    """comma-separated scenarios of the dataset whose episodes are left out of training, to name in
    --eval-scenarios: leave-one-scenario-out model selection, where the epoch is chosen on how the
    policy plays a scenario it never saw (the nine's own validation seeds saturate and cannot tell
    epochs apart) while the test scenario stays outside the dataset"""
    epochs_from: str = ""
    """the bc.json of an earlier run (e.g. a leave-one-scenario-out one): train for its best_epoch
    epochs instead of --epochs, so a choice made there is carried to the full dataset in one command"""


class BCPolicy(nn.Module):
    """An MLP over the flattened observation."""

    def __init__(self, n_inputs: int, n_actions: int, hidden: list[int]):
        super().__init__()
        layers, width = [], n_inputs
        for size in hidden:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.net = nn.Sequential(*layers, nn.Linear(width, n_actions))

    def forward(self, obs: dict[str, torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
        """Logits with masked actions at -inf-like values, so they are never chosen nor trained on."""
        return self.net(torch.cat([obs[p] for p in FEATURES], dim=-1)).masked_fill(mask == 0, -1e9)


class SlotBCPolicy(nn.Module):
    """The slot network's action logits, masked the same way."""

    def __init__(self, config: SlotPolicyConfig):
        super().__init__()
        self.net = SlotNetwork(config)

    def forward(self, obs: dict[str, torch.Tensor], mask: torch.Tensor) -> torch.Tensor:
        return self.net(obs)[0].masked_fill(mask == 0, -1e9)


def build_policy(saved: dict) -> nn.Module:
    """The untrained policy a saved (or about to be saved) description asks for."""
    if saved.get("policy", "mlp") == "slots":
        return SlotBCPolicy(SlotPolicyConfig(**saved["config"]))
    return BCPolicy(saved["n_inputs"], saved["n_actions"], saved["hidden"])


def parts(observations: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every part but the mask, each flattened per step, as float32 (one step or a stack)."""
    lead = observations[FEATURES[0]].shape[:-1]
    return {p: observations[p].reshape(*lead, -1).astype(np.float32) for p in FEATURES}


def flat_features(observations: dict[str, np.ndarray]) -> np.ndarray:
    """Each part flattened per step and concatenated (works on one step or a stack of steps)."""
    return np.concatenate(list(parts(observations).values()), axis=-1)


def names(option: str) -> list[str]:
    """A comma-separated option's names."""
    return [s.strip() for s in option.split(",") if s.strip()]


def load_steps(args: Args) -> tuple[list[tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]], int, set[str]]:
    """Per episode (observation parts, masks, actions) of the step the action was taken in, but
    for the scenarios ``--exclude-scenarios`` leaves out; n_actions; and the scenarios the
    agent's episodes in the dataset played (episode metadata 'scenario'), excluded ones included."""
    import minari

    dataset = minari.load_dataset(args.dataset)
    metadata = list(dataset.storage.get_episode_metadata(range(dataset.total_episodes)))
    excluded = set(names(args.exclude_scenarios))
    episodes, scenarios = [], set()
    for episode, meta in zip(dataset.iterate_episodes(), metadata, strict=True):
        if args.agent and meta.get("agent") != args.agent:
            continue
        scenarios.add(meta.get("scenario"))
        if meta.get("scenario") in excluded:
            continue
        steps = len(episode.actions)
        obs = {p: episode.observations[p][:steps] for p in PARTS}
        episodes.append((parts(obs), obs["action_mask"].astype(np.float32), episode.actions.astype(np.int64)))
    if excluded - scenarios:
        raise ValueError(f"--exclude-scenarios {args.exclude_scenarios}: {', '.join(sorted(excluded - scenarios))} "
                         f"is not in the dataset {args.dataset} (it plays {', '.join(sorted(scenarios))})")
    if not episodes:
        raise ValueError(f"{args.dataset}: no episode of agent {args.agent!r} (episode metadata 'agent')"
                         + (f" outside --exclude-scenarios {args.exclude_scenarios}" if scenarios else ""))
    return episodes, int(dataset.action_space.n), scenarios


def validation_scenarios(args: Args, trained_on: set[str]) -> list[str]:
    """The scenarios ``--eval-scenarios`` names, each one the dataset's episodes played: selecting
    an epoch on a scenario outside the dataset would tune the policy on its test scenario. (One
    the dataset holds but ``--exclude-scenarios`` leaves out of training is a validation scenario
    the policy never saw: leave-one-scenario-out selection.)"""
    chosen = names(args.eval_scenarios)
    unseen = [s for s in chosen if s not in trained_on]
    if unseen:
        raise ValueError(f"--eval-scenarios {args.eval_scenarios}: {', '.join(unseen)} is not in the dataset "
                         f"{args.dataset} (it plays {', '.join(sorted(trained_on))}); the best epoch would be "
                         "chosen on a scenario it never trained on. Validate on scenarios it trained on, or "
                         "on ones it holds that --exclude-scenarios leaves out of training")
    return chosen


def epochs_to_train(args: Args) -> int:
    """--epochs, or the best epoch an earlier run recorded in its bc.json (--epochs-from)."""
    if not args.epochs_from:
        return args.epochs
    path = Path(args.epochs_from)
    if not path.is_file():
        raise ValueError(f"--epochs-from {path}: no such file (the bc.json of an earlier `train --algo bc`)")
    best = json.loads(path.read_text(encoding="utf-8")).get("best_epoch")
    if not isinstance(best, int) or best < 1:
        raise ValueError(f"--epochs-from {path}: no best_epoch in it (the bc.json of an earlier `train --algo bc`)")
    return best


def validation_j(policy: nn.Module, scenarios: list[str], episodes: int) -> float:
    """Mean J of the policy's play on the validation seeds (900 on) of ``scenarios`` × personas."""
    from .training import evaluate_policy, validation_start

    policy.eval()
    try:
        return evaluate_policy(BCAgent(policy), scenarios, episodes, validation_start(episodes))["overall"]["J"]
    finally:
        policy.train()


def train(args: Args) -> Path:
    if args.data_path:
        os.environ["MINARI_DATASETS_PATH"] = str(Path(args.data_path).resolve())
    torch.set_num_threads(args.torch_threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    if args.policy not in POLICIES:
        raise ValueError(f"policy: expected one of {list(POLICIES)}, got {args.policy!r}")
    n_epochs = epochs_to_train(args)
    episodes, n_actions, in_dataset = load_steps(args)
    scenarios = validation_scenarios(args, in_dataset)
    order = rng.permutation(len(episodes))
    n_valid = int(len(episodes) * args.validation) if len(episodes) > 1 else 0
    x, mask, y = stack(episodes, order[n_valid:])
    validation = stack(episodes, order[:n_valid]) if n_valid else None

    hidden = [int(n) for n in args.net_arch.split(",")]
    description = ({"policy": "slots", "config": dataclasses.asdict(SlotPolicyConfig())} if args.policy == "slots" else
                   {"policy": "mlp", "n_inputs": sum(v.shape[1] for v in x.values()), "n_actions": n_actions,
                    "hidden": hidden})
    policy = build_policy(description)
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.learning_rate)
    generator = torch.Generator().manual_seed(args.seed)
    history, best = [], (-np.inf, None)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for epoch in range(n_epochs):
        total = 0.0
        for batch in torch.randperm(len(y), generator=generator).split(args.batch_size):
            loss = nn.functional.cross_entropy(policy(take(x, batch), mask[batch]), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
        history.append({"epoch": epoch + 1, "loss": total / len(y), "train_accuracy": accuracy(policy, x, mask, y),
                        "validation_accuracy": accuracy(policy, *validation) if validation else None})
        if scenarios and ((epoch + 1) % args.eval_every == 0 or epoch + 1 == n_epochs):
            history[-1]["validation_J"] = validation_j(policy, scenarios, args.eval_episodes)
            if history[-1]["validation_J"] > best[0]:
                best = (history[-1]["validation_J"], epoch + 1)
                torch.save({"state_dict": policy.state_dict(), **description}, out / MODEL)
        valid, played = history[-1]["validation_accuracy"], history[-1].get("validation_J")
        print(f"[bc] epoch {epoch + 1}: loss {history[-1]['loss']:.4f}, accuracy {history[-1]['train_accuracy']:.3f}"
              + (f", validation accuracy {valid:.3f}" if valid is not None else "")
              + (f", validation J {played:.3f}" if played is not None else ""), flush=True)
    path = out / MODEL
    torch.save({"state_dict": policy.state_dict(), **description}, out / "bc-last.pt" if scenarios else path)
    (out / "bc.json").write_text(json.dumps({"args": dataclasses.asdict(args), "steps": len(y),
                                             "episodes": len(episodes), "epochs": n_epochs,
                                             "best_epoch": best[1] or n_epochs,
                                             "history": history}, indent=1))
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


def stack(episodes: list, ids) -> tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor]:
    """The steps of the episodes ``ids`` as tensors: (observation parts, masks, actions)."""
    obs = {p: torch.as_tensor(np.concatenate([episodes[i][0][p] for i in ids])) for p in FEATURES}
    return obs, *(torch.as_tensor(np.concatenate([episodes[i][k] for i in ids])) for k in (1, 2))


def take(obs: dict[str, torch.Tensor], index: torch.Tensor) -> dict[str, torch.Tensor]:
    return {p: v[index] for p, v in obs.items()}


@torch.no_grad()
def accuracy(policy: nn.Module, x: dict[str, torch.Tensor], mask: torch.Tensor, y: torch.Tensor) -> float:
    hits = sum(int((policy(take(x, b), mask[b]).argmax(dim=1) == y[b]).sum()) for b in torch.arange(len(y)).split(4096))
    return hits / len(y)


class BCAgent:
    """Plays a saved BC policy: the most likely valid action."""

    def __init__(self, policy: nn.Module, name: str = "bc"):
        self.policy, self.name = policy.eval(), name

    def reset(self, env: Any, seed: int) -> None:
        pass

    @torch.no_grad()
    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> int:
        x = {p: torch.as_tensor(v)[None] for p, v in parts(obs).items()}
        mask = torch.as_tensor(obs["action_mask"].astype(np.float32))[None]
        return int(self.policy(x, mask).argmax(dim=1)[0])


def load_bc_agent(spec: str) -> BCAgent:
    """``bc:PATH`` → the policy saved by ``proactivity-gym train --algo bc`` (``bc.pt``)."""
    path = Path(spec.split(":", 1)[1])
    if not path.is_file():
        raise ValueError(f"{spec}: no saved BC policy at {path}")
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
        policy = build_policy(saved)
        policy.load_state_dict(saved["state_dict"])
    except (RuntimeError, KeyError, TypeError, EOFError, pickle.UnpicklingError) as exc:  # EOF: an empty file
        raise ValueError(f"{spec}: {path} is not a BC policy saved by `proactivity-gym train --algo bc` ({exc})") from None
    return BCAgent(policy, name=spec)
