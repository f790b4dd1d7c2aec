"""Proactivity-Gym: environments for proactive assistants, scored on task capability,
temporal allocation and trust (3T).

Importing the package registers every ``Proactivity-<Scenario>-v0`` and
``Proactivity-<Scenario>-<Persona>-v0`` id with Gymnasium.
"""

from .envs import ProactivityEnv, env_ids, register_all
from .sim import TrustModel
from .spec import ScenarioError, load_scenario

__version__ = "0.1.0"
__all__ = ["ProactivityEnv", "ScenarioError", "TrustModel", "env_ids", "load_scenario", "__version__"]

register_all()
