"""Estimators: what writes the ``estimate`` (a :class:`~nexus.estimation.pose_twist.PoseTwist`) each tick."""

from nexus.estimation.pose_twist import PoseTwist
from nexus.estimation.truth import TruthEstimator

__all__ = ["PoseTwist", "TruthEstimator"]
