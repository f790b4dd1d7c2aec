"""Gymnasium wrappers for Proactivity-Gym envs (imported as ``proactive_env.wrappers``)."""

from .observation import (SLOT_RULE_FEATURES, FlattenObservation, MaskedDictObservation, SlotRules, TextObservation,
                          slot_rules)
from .recording import RecordTrajectory
from .reward import DepthShaping, RewardWeights, weighted_j

__all__ = ["SLOT_RULE_FEATURES", "DepthShaping", "FlattenObservation", "MaskedDictObservation", "RecordTrajectory",
           "RewardWeights", "SlotRules", "TextObservation", "slot_rules", "weighted_j"]
