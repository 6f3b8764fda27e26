"""Estimators: what writes the ``estimate`` (a :class:`~nexus.core.types.PoseTwist`) each tick."""

from nexus.estimation.truth import TruthEstimator, build_truth_estimator

__all__ = ["TruthEstimator", "build_truth_estimator"]
