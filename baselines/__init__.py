"""Baseline agents: scripted (random, noop, always-suggest, always-execute, policy-follower) and
the privileged oracle."""

from .base import Agent, action_index
from .oracle import OracleAgent, TextOracleAgent
from .scripted import AlwaysExecuteAgent, AlwaysSuggestAgent, NoopAgent, PolicyFollowerAgent, RandomAgent

SCRIPTED = {cls.name: cls for cls in (OracleAgent, RandomAgent, NoopAgent, AlwaysSuggestAgent,
                                       AlwaysExecuteAgent, PolicyFollowerAgent)}
TEXT_SCRIPTED = {TextOracleAgent.name: TextOracleAgent}


def make_agent(spec: str) -> Agent:
    """An agent from its name (``oracle``, ``noop``, ``random``, ...) or ``sb3:PATH`` (a model
    saved by ``proactivity-gym train``)."""
    if spec.startswith("sb3:"):
        from .learned import load_agent

        return load_agent(spec)
    if spec in TEXT_SCRIPTED:
        return TEXT_SCRIPTED[spec]()
    if spec not in SCRIPTED:
        raise ValueError(f"unknown agent {spec!r}; expected one of {sorted(SCRIPTED | TEXT_SCRIPTED)} or sb3:PATH")
    return SCRIPTED[spec]()


__all__ = ["SCRIPTED", "TEXT_SCRIPTED", "TextOracleAgent", "Agent", "AlwaysExecuteAgent", "AlwaysSuggestAgent", "NoopAgent", "OracleAgent",
           "PolicyFollowerAgent", "RandomAgent", "action_index", "make_agent"]
