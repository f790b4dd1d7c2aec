"""The faces of the world: the structured Gymnasium env and its registration."""

from .registration import SUITE_ID, env_ids, env_name, register_all, text_env_ids
from .structured import ACTION_TABLE, N_ACTIONS, VERBS, ProactivityEnv
from .suite import SuiteEnv
from .text import ProactivityTextEnv, parse_call

__all__ = ["ACTION_TABLE", "N_ACTIONS", "SUITE_ID", "VERBS", "ProactivityEnv", "ProactivityTextEnv", "SuiteEnv", "env_ids",
           "env_name", "parse_call", "register_all", "text_env_ids"]
