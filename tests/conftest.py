import copy

import pytest
import yaml

from proactive_env.spec import load_scenario
from proactive_env.spec.loader import scenario_dir

pytest_plugins = ["openai_server"]  # the loopback OpenAI-compatible server fixture


@pytest.fixture
def monitor_data():
    """The shipped Monitor Purchase scenario as plain YAML data, to mutate."""
    return copy.deepcopy(yaml.safe_load((scenario_dir() / "monitor.yaml").read_text()))


@pytest.fixture(scope="session")
def monitor():
    return load_scenario("monitor")
