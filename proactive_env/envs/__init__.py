"""The faces of the world: the structured Gymnasium env and its registration."""

from .registration import SUITE_ID, env_ids, env_name, register_all
from .structured import ACTION_TABLE, N_ACTIONS, VERBS, ProactivityEnv
from .suite import SuiteEnv

__all__ = ["ACTION_TABLE", "N_ACTIONS", "SUITE_ID", "VERBS", "ProactivityEnv", "SuiteEnv", "env_ids", "env_name",
           "register_all"]
