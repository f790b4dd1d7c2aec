"""Baseline agents: scripted (random, noop, always-suggest, always-execute, policy-follower) and
the privileged oracle, on the structured face and (``text-`` names) on the text face."""

from . import adversaries
from .base import Agent, action_index
from .oracle import OracleAgent, TextOracleAgent
from .scripted import AlwaysExecuteAgent, AlwaysSuggestAgent, NoopAgent, PolicyFollowerAgent, RandomAgent
from .text_scripted import TEXT_BASELINES, TextScriptedAgent
from .probe_adversaries import PROBE_ADVERSARIES
from .repetition_adversaries import REPETITION_ADVERSARIES
from .timing_adversaries import TIMING_ADVERSARIES

SCRIPTED = {cls.name: cls for cls in (OracleAgent, RandomAgent, NoopAgent, AlwaysSuggestAgent,
                                       AlwaysExecuteAgent, PolicyFollowerAgent)}
TEXT_SCRIPTED = {TextOracleAgent.name: TextOracleAgent, **TEXT_BASELINES}
ADVERSARIES = {cls.name: cls for cls in adversaries.STRUCTURED + adversaries.TEXT}


def canonical_agent(spec: str) -> str:
    """An agent spec as the evaluator files it: ``openai/MODEL`` (Inspect's and LiteLLM's
    PROVIDER/MODEL form) is ``openai:MODEL``; another provider is refused with where to run it."""
    provider, _, model = spec.partition("/")
    if ":" in spec or not model or provider in SCRIPTED or provider in TEXT_SCRIPTED:
        return spec
    if provider == "openai":
        return f"openai:{model}"
    raise ValueError(f"agent {spec!r}: the built-in evaluator speaks OpenAI-compatible endpoints: openai:MODEL "
                     f"(or openai/MODEL) with --base-url; other providers through Inspect: "
                     f"inspect eval proactive_env/proactivity --model {spec}")


def make_agent(spec: str, trust_model_files: bool = False, **llm_options) -> Agent:
    """An agent from its name (``oracle``, ``noop``, ``random``, ...), ``sb3:PATH`` (a model
    saved by ``proactivity-gym train``), ``rllib:PATH`` (an RLlib policy folder), ``bc:PATH`` (a behaviour-cloning policy) or ``openai:MODEL`` (an LLM behind an OpenAI-compatible
    endpoint). ``llm_options`` (``base_url``, ``temperature``, ... of ``OpenAIAgent``) apply to
    ``openai:`` agents only, so one set of options serves a mixed list of agents.
    ``trust_model_files`` lets ``sb3:`` and ``rllib:`` unpickle what a model file holds (runs code
    from it; ``rllib:`` folders trained on this machine load without it, see ``trusted.py``)."""
    spec = canonical_agent(spec)
    if spec.startswith("openai:"):
        return _llm_agent(spec.removeprefix("openai:"), llm_options)
    if spec.startswith("sb3:"):
        from .learned import load_agent

        return load_agent(spec, trust=trust_model_files)
    if spec.startswith("bc:"):
        try:
            from .bc import load_bc_agent
        except ImportError as exc:
            raise ValueError(f"{spec}: needs torch ({exc.name} is missing): pip install 'proactivity-gym[minari]'") from None
        return load_bc_agent(spec)
    if spec.startswith("rllib:"):
        from .learned import load_rllib_agent

        return load_rllib_agent(spec, trust=trust_model_files)
    if spec in TEXT_SCRIPTED:
        return TEXT_SCRIPTED[spec]()
    if spec in ADVERSARIES:
        return ADVERSARIES[spec]()
    if spec in TIMING_ADVERSARIES:
        return TIMING_ADVERSARIES[spec]()
    if spec in REPETITION_ADVERSARIES:
        return REPETITION_ADVERSARIES[spec]()
    if spec in PROBE_ADVERSARIES:
        return PROBE_ADVERSARIES[spec]()
    if spec not in SCRIPTED:
        raise ValueError(f"unknown agent {spec!r}; expected one of {sorted(SCRIPTED | TEXT_SCRIPTED | ADVERSARIES | TIMING_ADVERSARIES | REPETITION_ADVERSARIES | PROBE_ADVERSARIES)}, "
                         "sb3:PATH, rllib:PATH, bc:PATH or openai:MODEL")
    return SCRIPTED[spec]()


def _llm_agent(model: str, options: dict) -> Agent:
    if not model:
        raise ValueError("openai:MODEL: expected a model name after 'openai:'")
    try:
        from .llm import OpenAIAgent

        return OpenAIAgent(model, **options)
    except ImportError as exc:
        raise ValueError(f"openai:{model}: {exc}") from None


__all__ = ["ADVERSARIES", "PROBE_ADVERSARIES", "REPETITION_ADVERSARIES", "TIMING_ADVERSARIES", "SCRIPTED", "TEXT_SCRIPTED", "TextOracleAgent", "Agent", "AlwaysExecuteAgent", "AlwaysSuggestAgent", "NoopAgent", "OracleAgent",
           "PolicyFollowerAgent", "RandomAgent", "TextScriptedAgent", "action_index", "make_agent"]
