"""Registration of every scenario and scenario–persona pair (the one place ids are made)."""

from __future__ import annotations

import gymnasium as gym

from ..spec import PERSONAS, shipped_names

ENTRY_POINT = "proactive_env.envs.structured:ProactivityEnv"
TEXT_ENTRY_POINT = "proactive_env.envs.text:ProactivityTextEnv"
SUITE_ID = "Proactivity-Suite-v0"
MAX_EPISODE_STEPS = 2000


def env_name(scenario: str) -> str:
    """``"monitor"`` → ``"Monitor"``, ``"gpu_experiments"`` → ``"GpuExperiments"``."""
    return "".join(part.capitalize() for part in scenario.split("_"))


def env_ids() -> list[str]:
    ids = []
    for scenario in shipped_names():
        ids.append(f"Proactivity-{env_name(scenario)}-v0")
        ids += [f"Proactivity-{env_name(scenario)}-{p.capitalize()}-v0" for p in PERSONAS]
    return ids


def text_env_ids() -> list[str]:
    """The text/tool face of every scenario (persona by kwarg or drawn per episode)."""
    return [f"Proactivity-{env_name(s)}-Text-v0" for s in shipped_names()]


def register_all() -> None:
    gym.register(SUITE_ID, entry_point="proactive_env.envs.suite:SuiteEnv", kwargs={"scenarios": "all"},
                 max_episode_steps=MAX_EPISODE_STEPS)
    for scenario in shipped_names():
        name = env_name(scenario)
        gym.register(f"Proactivity-{name}-Text-v0", entry_point=TEXT_ENTRY_POINT, kwargs={"scenario": scenario},
                     max_episode_steps=MAX_EPISODE_STEPS)
        gym.register(f"Proactivity-{name}-v0", entry_point=ENTRY_POINT,
                     kwargs={"scenario": scenario}, max_episode_steps=MAX_EPISODE_STEPS)
        for persona in PERSONAS:
            gym.register(f"Proactivity-{name}-{persona.capitalize()}-v0", entry_point=ENTRY_POINT,
                         kwargs={"scenario": scenario, "persona": persona}, max_episode_steps=MAX_EPISODE_STEPS)
