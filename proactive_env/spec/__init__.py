"""Scenario specification: typed models, YAML loading, semantic validation, JSON Schema."""

from .loader import ScenarioError, json_schema, load_file, load_scenario, parse_scenario, shipped_names
from .models import PERSONAS, Depth, Scenario, Task
from .timeline import format_at, parse_at
from .validate import MAX_TASKS, trigger_minute

# Version of the shipped scenario suite; results and trajectories record it.
SUITE_VERSION = "0.1.0"

__all__ = [
    "SUITE_VERSION", "PERSONAS", "MAX_TASKS", "Depth", "Scenario", "ScenarioError", "Task", "format_at", "json_schema",
    "load_file", "load_scenario", "parse_at", "parse_scenario", "shipped_names", "trigger_minute",
]
