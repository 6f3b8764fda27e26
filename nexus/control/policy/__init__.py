"""A learned policy (ONNX in ONNX Runtime, or TorchScript where torch is installed) as a host controller stage."""

from nexus.control.policy.controller import DEFAULT_MODEL, PolicyController, build_policy
from nexus.control.policy.features import ACTIONS, FEATURES, observe

__all__ = ["ACTIONS", "DEFAULT_MODEL", "FEATURES", "PolicyController", "build_policy", "observe"]
