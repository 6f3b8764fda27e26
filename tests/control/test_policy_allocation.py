"""A policy whose action is a collective and torques (``thrust_torque:4``), mixed by the vehicle's allocation."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from nexus.control.allocation import Allocation
from nexus.control.policy import PolicyController
from nexus.core.errors import BuildError
from nexus.plant.rotor_geometry import RotorGeometry, effectiveness

LAYOUT = "rates:3"
#: PX4's hexarotor X at 0.275 m, unit rotors (tests/control/test_allocation.py works its mix by hand).
HEXA = [(0.0, 0.275, -1), (0.0, -0.275, +1), (0.238157, -0.1375, -1), (-0.238157, 0.1375, +1),
        (0.238157, 0.1375, +1), (-0.238157, -0.1375, -1)]


def constant_model(path, inputs: int, action: list[float], metadata: dict) -> str:
    """An ONNX model that answers ``action`` whatever it observes."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Gemm", ["observation", "weights", "bias"], ["action"])], "test",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, [1, inputs])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, [1, len(action)])],
        [numpy_helper.from_array(np.zeros((inputs, len(action)), np.float32), "weights"),
         numpy_helper.from_array(np.asarray(action, np.float32), "bias")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, metadata)
    onnx.save(model, str(path))
    return str(path)


def hexa_policy(tmp_path, action):
    path = constant_model(tmp_path / "m.onnx", 3, action, {"nexus:observation": LAYOUT, "nexus:action": "thrust_torque:4"})
    geometry = [RotorGeometry(channel=i, index=i, joint_path=f"/j{i}", position=(x, y, 0.0), axis=(0.0, 0.0, -1.0),
                              yaw_moment=0.016 * spin, max_thrust=1.0) for i, (x, y, spin) in enumerate(HEXA)]
    policy = PolicyController("/vehicle/controller", path, allocation=Allocation.from_matrix(effectiveness(geometry)),
                              thrust_model_factor=0.0)
    policy.prepare(SimpleNamespace(dt=0.004, worlds=2, device="cpu"))
    return policy


def test_a_thrust_and_roll_action_is_mixed_over_six_rotors(tmp_path):
    # Collective 0.4, roll 0.1: the hexa-X roll column (−0.5, 0.5, 0.25, −0.25, −0.25, 0.25) times 0.1 added to
    # 0.4 (thrust model factor 0: command = thrust fraction). A disarmed world gets zeros.
    policy = hexa_policy(tmp_path, [0.4, 0.1, 0.0, 0.0])
    estimate = SimpleNamespace(position=np.zeros(3), velocity=np.zeros(3), attitude=np.array([0.0, 0.0, 0.0, 1.0]),
                               rates=np.zeros(3))
    action = policy.act(estimate, SimpleNamespace(position=np.zeros(3), yaw=0.0))
    np.testing.assert_allclose(action, [0.4, 0.1, 0.0, 0.0], atol=1e-7)
    rows = policy.controls_for(np.stack([action, action]), np.array([1, 0]))
    np.testing.assert_allclose(rows[0, :6], [0.35, 0.45, 0.425, 0.375, 0.375, 0.425], atol=1e-6)
    assert rows[0, 6:].tolist() == [0.0] * 10 and rows[1].tolist() == [0.0] * 16


def test_thrust_torque_takes_four_values_and_stands_alone(tmp_path):
    path = constant_model(tmp_path / "a.onnx", 3, [0.4, 0.0, 0.0], {"nexus:observation": LAYOUT, "nexus:action": "thrust_torque:3"})
    with pytest.raises(BuildError, match=r"gives 'thrust_torque' width 3, but the signal's 'thrust_torque' has width 4"):
        PolicyController("/vehicle/controller", path)
    path = constant_model(tmp_path / "b.onnx", 3, [0.4] * 6,
                          {"nexus:observation": LAYOUT, "nexus:action": "thrust_torque:4,controls:2"})
    with pytest.raises(BuildError, match=r"mixes thrust_torque with other actions"):
        PolicyController("/vehicle/controller", path)
