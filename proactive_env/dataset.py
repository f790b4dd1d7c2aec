"""``proactivity-gym dataset``: episodes of agents as a Minari dataset, for offline RL and
behaviour cloning.

Each step stores the env's own Dict observation (its ``action_mask`` included), the action, the
reward, termination and truncation; each episode's metadata holds the run's agent, scenario,
persona and seed, and its 3T scores (TC, TA, TR_D, TR_J, J, continuation) from the benchmark's
scorer, the same numbers ``eval`` reports. Only training seeds (< 1000) are recorded unless
``allow_test_seeds``, so that a model trained on the dataset can be tested on seeds it never saw.

Datasets are local: written under ``MINARI_DATASETS_PATH`` (default ``~/.minari/datasets``) and
read back with ``minari.load_dataset(NAME)``; nothing is uploaded or downloaded.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable

from .envs.registration import SUITE_ID
from .evaluate import make_env

TEST_SEEDS_FROM = 1000  # DESIGN §3: seeds < 1000 train, >= 1000 test
SCORES = ("TC", "TA", "TR_D", "TR_J", "J", "continuation")


def parse_seeds(text: str) -> list[int]:
    """``"0-99"``, ``"0,5,7"`` or a mix (``"0-9,20"``) → the seeds, in order, without repeats."""
    seeds: list[int] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        first, _, last = part.partition("-")
        try:
            span = range(int(first), int(last) + 1) if last else [int(first)]
        except ValueError:
            raise ValueError(f"--seeds: expected numbers or ranges like 0-99, got {part!r}") from None
        seeds += [s for s in span if s not in seeds]
    if not seeds:
        raise ValueError(f"--seeds: no seed in {text!r}")
    return seeds


def check_seeds(seeds: Iterable[int], allow_test_seeds: bool) -> None:
    test = [s for s in seeds if s >= TEST_SEEDS_FROM]
    if test and not allow_test_seeds:
        raise ValueError(f"--seeds: {test[:5]} are test seeds (>= {TEST_SEEDS_FROM}); datasets hold training "
                         "seeds only unless --allow-test-seeds is given")


def write_dataset(dataset_id: str, agents: list[str], scenarios: list[str], personas: list[str],
                  seeds: list[int], make_agent: Callable[[str], object], allow_test_seeds: bool = False):
    """Play every (agent, scenario, persona, seed) and write the episodes as the Minari dataset
    ``dataset_id`` (e.g. ``proactivity/oracle-v0``); returns the ``MinariDataset``. Episodes go to
    disk one (agent, scenario, persona) block at a time, so memory stays small."""
    import minari

    check_seeds(seeds, allow_test_seeds)
    if dataset_id in minari.list_local_datasets():
        raise ValueError(f"--out: a local Minari dataset {dataset_id!r} exists already "
                         f"(remove it with: minari delete {dataset_id})")
    dataset, metadata = None, []
    for agent_name in agents:
        agent = make_agent(agent_name)
        if getattr(agent, "face", "structured") != "structured":
            raise ValueError(f"--agents: {agent_name} plays the text face; datasets record the structured face")
        for scenario in scenarios:
            for persona in personas:
                env = make_env(scenario, persona)
                buffers = []
                for seed in seeds:
                    buffer, meta = _record_episode(env, agent, agent_name, scenario, persona, seed, len(metadata))
                    buffers.append(buffer)
                    metadata.append(meta)
                if dataset is None:
                    with warnings.catch_warnings():  # Minari asks for author, email, code link
                        warnings.filterwarnings("ignore", message="`(author|code_permalink)")
                        dataset = minari.create_dataset_from_buffers(
                            dataset_id, buffers, env=env, eval_env=SUITE_ID, algorithm_name=",".join(agents),
                            requirements=["proactivity-gym"], data_format="hdf5",
                            description=_description(agents, scenarios, personas, seeds))
                else:
                    dataset.storage.update_episodes(buffers)
                env.close()
    dataset.storage.update_episode_metadata(metadata, episode_indices=range(len(metadata)))
    return minari.load_dataset(dataset_id)


def _record_episode(env, agent, agent_name: str, scenario: str, persona: str, seed: int, episode_id: int):
    """One episode as a Minari ``EpisodeBuffer`` (observations T+1, the rest T) and its metadata."""
    from minari.data_collector import EpisodeBuffer

    obs, info = env.reset(seed=seed)
    agent.reset(env.unwrapped, seed)
    observations = {key: [value] for key, value in obs.items()}
    actions, rewards, terminations, truncations = [], [], [], []
    terminated = truncated = False
    while not (terminated or truncated):
        action = int(agent.act(obs, info))
        obs, reward, terminated, truncated, info = env.step(action)
        for key, value in obs.items():
            observations[key].append(value)
        actions.append(action)
        rewards.append(float(reward))
        terminations.append(bool(terminated))
        truncations.append(bool(truncated))
    buffer = EpisodeBuffer(id=episode_id, seed=seed, observations=observations, actions=actions, rewards=rewards,
                           terminations=terminations, truncations=truncations)
    scores = env.unwrapped.trajectory(agent=agent_name)["scores"]
    return buffer, {"agent": agent_name, "scenario": scenario, "persona": persona, "seed": seed,
                    **{m: float(scores[m]) for m in SCORES}}


def _description(agents: list[str], scenarios: list[str], personas: list[str], seeds: list[int]) -> str:
    return (f"Proactivity-Gym episodes of {', '.join(agents)} on {', '.join(scenarios)} ({', '.join(personas)}; "
            f"{len(seeds)} seeds from {seeds[0]}). Observations are the structured face's Dict, action_mask "
            "included; each episode's metadata holds its agent, scenario, persona, seed and 3T scores.")
