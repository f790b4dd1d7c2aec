"""Proactivity-Gym: environments for proactive assistants, scored on task capability,
temporal allocation and trust (3T).

Importing the package registers every ``Proactivity-<Scenario>-v0`` and
``Proactivity-<Scenario>-<Persona>-v0`` id with Gymnasium.
"""

import sys as _sys

if _sys.argv and _sys.argv[0].endswith("proactivity-gym"):
    # The console script: a Ctrl-C while the package is still importing (before the CLI's own
    # handler exists) ends the command quietly, as the CLI would, instead of a traceback.
    import signal as _signal

    _signal.signal(_signal.SIGINT, lambda *_: _sys.exit(130))

from .envs import ProactivityEnv, env_ids, register_all  # noqa: E402
from .sim import TrustModel  # noqa: E402
from .spec import ScenarioError, load_scenario  # noqa: E402

__version__ = "0.1.0"
__all__ = ["ProactivityEnv", "ScenarioError", "TrustModel", "env_ids", "load_scenario", "__version__"]

register_all()
