"""Scenario specification: typed models, YAML loading, semantic validation, JSON Schema."""

from .expand import resource_use, resource_use_labelled, user_busy, weekly_spans
from . import variant
from .loader import ScenarioError, json_schema, load_file, load_scenario, parse_scenario, shipped_names
from .models import PERSONAS, RULES, Depth, Scenario, Task
from .timeline import format_at, parse_at
from .validate import MAX_CATEGORIES, MAX_TASKS, PUT_TO_USER, contested, reachable_states, rule_at, rules_of, through_user, trigger_minute

# Version of the shipped scenario suite; results and trajectories record it (docs/suite-changelog.md).
SUITE_VERSION = "0.10.0"

__all__ = [
    "SUITE_VERSION", "PERSONAS", "PUT_TO_USER", "RULES", "MAX_CATEGORIES", "MAX_TASKS", "Depth", "Scenario", "ScenarioError", "Task",
    "contested", "format_at", "json_schema", "load_file", "load_scenario", "parse_at", "parse_scenario", "reachable_states",
    "resource_use", "resource_use_labelled", "rule_at", "rules_of", "shipped_names", "through_user", "trigger_minute", "user_busy", "variant", "weekly_spans",
]
