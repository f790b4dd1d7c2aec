import copy

import pytest
import yaml

from proactive_env.spec import load_scenario
from proactive_env.spec.loader import scenario_dir

pytest_plugins = ["openai_server"]  # the loopback OpenAI-compatible server fixture


@pytest.fixture(scope="session", autouse=True)
def private_model_registry(tmp_path_factory):
    """Models trained by the tests are trusted in a registry of the test session's own, not the
    user's (``baselines/trusted.py``); subprocesses inherit it."""
    import os

    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before


@pytest.fixture
def monitor_data():
    """The shipped Monitor Purchase scenario as plain YAML data, to mutate."""
    return copy.deepcopy(yaml.safe_load((scenario_dir() / "monitor.yaml").read_text()))


@pytest.fixture(scope="session")
def monitor():
    return load_scenario("monitor")
