"""Model strings: openai:MODEL for the built-in evaluator, and Inspect's PROVIDER/MODEL form too."""

import pytest

from proactive_env import cli
from proactive_env.baselines import canonical_agent


def test_openai_slash_model_is_the_built_in_openai_agent():
    assert canonical_agent("openai/gpt-4o") == "openai:gpt-4o"
    assert canonical_agent("openai:meta-llama/Llama-3.1-8B") == "openai:meta-llama/Llama-3.1-8B"  # a served name
    assert canonical_agent("sb3:runs/ppo/model.zip") == "sb3:runs/ppo/model.zip"
    assert canonical_agent("oracle") == "oracle"


def test_another_provider_says_where_to_run_it(capsys):
    with pytest.raises(ValueError, match="inspect eval proactive_env/proactivity --model anthropic/claude"):
        canonical_agent("anthropic/claude")
    assert cli.main(["eval", "--agents", "anthropic/claude", "--scenarios", "monitor"]) == 2
    assert "inspect eval" in capsys.readouterr().err
