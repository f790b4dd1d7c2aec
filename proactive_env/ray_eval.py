"""``eval --ray``: each (agent, scenario, persona, seed) run is a Ray task.

The episode is played on a Ray worker and its trajectory comes back to the driver, which writes
it exactly as a local evaluation does (same files, same results.json, same resume): workers need
the package installed and, for ``sb3:``/``rllib:`` agents, the model path readable, but no shared
output folder.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .evaluate import RunKey, play


def _play_run(make_agent: Callable[[str], object], key: RunKey, text_options: dict | None) -> dict:
    import proactive_env  # noqa: F401  (registers the env ids in the worker process)

    return play(make_agent(key.agent), key.scenario, key.persona, key.seed, text_options)


@contextmanager
def ray_session(address: str | None, num_cpus: int | None = None) -> Iterator[int]:
    """Connect to the cluster at ``address``, or start a local Ray with ``num_cpus`` (default: all
    cores) and stop it afterwards. Yields the number of CPUs Ray offers, the runs worth keeping
    in flight."""
    import ray

    if address in (None, "", "local"):
        ray.init(num_cpus=num_cpus or os.cpu_count(), include_dashboard=False, log_to_driver=False,
                 configure_logging=False, object_store_memory=256 * 2**20)  # trajectories are small
    else:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    try:
        yield max(1, int(ray.cluster_resources().get("CPU", 1)))
    finally:
        ray.shutdown()


def ray_player(make_agent: Callable[[str], object], text_options: dict | None = None) -> Callable[[RunKey], dict]:
    """A ``player`` for ``evaluate``: plays the run as a Ray task (1 CPU) and waits for its
    trajectory. ``make_agent`` must pickle (a module-level function or a ``functools.partial``)."""
    import ray

    task = ray.remote(num_cpus=1, max_retries=0)(_play_run)
    factory = ray.put(make_agent)

    def player(key: RunKey) -> dict:
        return ray.get(task.remote(factory, key, text_options))

    return player


def agent_factory(make_agent: Callable[..., object], llm_options: dict) -> Callable[[str], object]:
    return functools.partial(make_agent, **llm_options)
