"""Gymnasium wrappers for Proactivity-Gym envs (imported as ``proactive_env.wrappers``)."""

from .observation import FlattenObservation, MaskedDictObservation, TextObservation
from .recording import RecordTrajectory
from .reward import DepthShaping, RewardWeights, weighted_j

__all__ = ["DepthShaping", "FlattenObservation", "MaskedDictObservation", "RecordTrajectory", "RewardWeights", "TextObservation",
           "weighted_j"]
