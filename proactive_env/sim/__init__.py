"""The world: clock, records and tools, resources and work, tasks, the user simulator and trust."""

from .policy import RULE_DEPTH, PolicyState
from .pool import SharedPool
from .records import RecordStore, View
from .schedule import Schedule
from .tools import GENERIC_TOOLS, TextTools, ToolError, parse_when, tool_schemas
from .trust import TrustModel
from .user import Decision, declines_sleep_time_work
from .world import FeedbackEvent, TaskState, Verb, World

__all__ = ["GENERIC_TOOLS", "RULE_DEPTH", "Decision", "FeedbackEvent", "PolicyState", "RecordStore", "Schedule",
           "SharedPool", "TaskState", "TextTools", "ToolError", "TrustModel", "Verb", "View", "World",
           "declines_sleep_time_work", "parse_when", "tool_schemas"]
