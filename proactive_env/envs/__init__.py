"""The faces of the world: the structured Gymnasium env and its registration."""

from .registration import env_ids, env_name, register_all
from .structured import ACTION_TABLE, N_ACTIONS, VERBS, ProactivityEnv

__all__ = ["ACTION_TABLE", "N_ACTIONS", "VERBS", "ProactivityEnv", "env_ids", "env_name", "register_all"]
