"""The world: clock, records and tools, resources, tasks, the user simulator and trust."""

from .outcome import TAOutcome, TaskOutcome
from .pool import SharedPool
from .schedule import Schedule
from .tools import GENERIC_TOOLS, ToolError, parse_when, tool_schemas
from .trust import TrustModel
from .user import Decision
from .world import TaskState, Verb, World, compose_artifact

__all__ = ["GENERIC_TOOLS", "ToolError", "parse_when", "tool_schemas", "Decision", "Schedule", "SharedPool", "TAOutcome", "TaskOutcome", "TaskState", "TrustModel", "Verb", "World",
           "compose_artifact"]
