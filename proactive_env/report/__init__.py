"""Reading results: the report over eval folders (`proactivity-gym report`) and the episode view
(`proactivity-gym show`). A layer above ``envs`` and ``scoring``, beside the CLI."""

from .build import build_report
from .episode import write_episode

__all__ = ["build_report", "write_episode"]
