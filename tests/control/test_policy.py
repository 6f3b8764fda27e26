"""The ONNX policy controller: its build checks against the model's declared layouts, and the shipped model."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from nexus.control.policy import DEFAULT_MODEL, PolicyController
from nexus.core.errors import BuildError

LAYOUT = "position_error_heading:3,velocity_heading:3,tilt_heading:2,rates:3,yaw_error:1"  # 12 values


def _model(path, inputs: int, outputs: int, metadata: dict) -> str:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Gemm", ["observation", "weights", "bias"], ["action"])], "test",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, [1, inputs])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, [1, outputs])],
        [numpy_helper.from_array(np.zeros((inputs, outputs), np.float32), "weights"),
         numpy_helper.from_array(np.full(outputs, 0.5, np.float32), "bias")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, metadata)
    onnx.save(model, str(path))
    return str(path)


def test_missing_model_file_is_a_build_error_naming_it(tmp_path):
    missing = tmp_path / "nope.onnx"
    with pytest.raises(BuildError, match=rf"policy {missing}: no such file; pass --policy FILE.onnx"):
        PolicyController("/vehicle/controller", missing)


def test_observation_width_mismatch_names_the_layout_and_the_model_input(tmp_path):
    path = _model(tmp_path / "m.onnx", 10, 4, {"nexus:observation": LAYOUT, "nexus:action": "controls:4"})
    with pytest.raises(BuildError, match=r"nexus:observation \(.*\) makes 12 values, but the model's input 'observation' takes 10"):
        PolicyController("/vehicle/controller", path)


def test_action_width_mismatch_names_the_layout_and_the_model_output(tmp_path):
    path = _model(tmp_path / "m.onnx", 12, 3, {"nexus:observation": LAYOUT, "nexus:action": "controls:4"})
    with pytest.raises(BuildError, match=r"nexus:action \(controls:4\) names 4 controls, but the model's output 'action' gives 3"):
        PolicyController("/vehicle/controller", path)


@pytest.mark.parametrize("metadata, needle", [
    ({"nexus:action": "controls:4"}, "its metadata has no 'nexus:observation'"),
    ({"nexus:observation": "altitude:1", "nexus:action": "controls:4"}, "nexus:observation names 'altitude', which Nexus does not know"),
    ({"nexus:observation": "rates:2", "nexus:action": "controls:4"}, "gives 'rates' width 2, but the signal's 'rates' has width 3"),
    ({"nexus:observation": "rates:3", "nexus:action": "controls:17"}, "gives 'controls' width 17, but the signal's 'controls' has width 16"),
    # A ctbr action means nothing without its scaling (docs/learning.md): no consumer assumes it.
    ({"nexus:observation": "rates:3", "nexus:action": "ctbr:4", "nexus:ctbr_max_rates": "3,3,1.5"},
     "its metadata has no 'nexus:ctbr_hover_thrust', which scales its ctbr:4 action"),
    ({"nexus:observation": "rates:3", "nexus:action": "ctbr:4", "nexus:ctbr_hover_thrust": "0.45"},
     "its metadata has no 'nexus:ctbr_max_rates', which scales its ctbr:4 action"),
])
def test_bad_layout_metadata_is_a_build_error(tmp_path, metadata, needle):
    path = _model(tmp_path / "m.onnx", 3, 4, metadata)
    with pytest.raises(BuildError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        PolicyController("/vehicle/controller", path)


def test_shipped_policy_holds_hover_near_the_pid_hover_command():
    policy = PolicyController("/vehicle/controller", DEFAULT_MODEL)
    level = SimpleNamespace(position=np.array([0.0, 0.0, -2.0]), velocity=np.zeros(3),
                            attitude=np.array([0.0, 0.0, 0.0, 1.0]), rates=np.zeros(3))
    goal = SimpleNamespace(position=np.array([0.0, 0.0, -2.0]), yaw=0.0)
    controls = policy.act(level, goal)
    # vehicles/astro_max_base.usda: nexus:hoverThrust = 0.572, the PID's hover command; the fit lands within 0.03.
    assert controls.shape == (4,) and np.allclose(controls, 0.572, atol=0.03)
    # A goal 1 m higher asks every rotor for more.
    higher = policy.act(level, SimpleNamespace(position=np.array([0.0, 0.0, -3.0]), yaw=0.0))
    assert (higher > controls + 0.05).all()


def test_shipped_policy_flies_the_short_mission_to_done(capsys):
    from nexus.runtime.flight import build_flight
    from nexus.runtime.config import RunConfig
    from nexus.runtime.startup import start

    # The policy's precision: fly on the true state.
    flight = build_flight(RunConfig(controller="policy", mission="short", estimator="truth"), "cpu")
    start(flight.loop, flight.vehicle.plant)
    estimate = flight.loop.output("estimate")
    done, drift = False, 0.0
    for _ in range(15 * 250):
        done = flight.loop.tick()
        drift = max(drift, float(np.hypot(*estimate.numpy()[0]["position"][:2])))
        if done:
            break
    stats = flight.vehicle.controller.stats()
    with capsys.disabled():
        print(f"\npolicy: short mission done={done} at {flight.loop.sim_time:.2f} s sim, largest drift from above the "
              f"start {drift:.3f} m, inference median {stats['inference_us_median']} us")
    # The PID flies it in 9.1 s (docs/components.md); the imitation lacks the PID's integrators, so allow 12 s.
    assert done and flight.loop.sim_time < 12.0
    assert drift < 0.1  # the mission never leaves the vertical above the start


def test_shipped_policy_follows_the_figure_eight(capsys):
    from tests.control.tracking_flight import fly_tracking

    flight = fly_tracking("policy")
    rms = flight.rms_error_after(5.0 + 8.0)  # after the first lap (scenes/figure_eight.usda: laps start at 5 s)
    with capsys.disabled():
        print(f"\npolicy: figure-eight 2 m / 8 s, RMS position error after the first period {rms:.4f} m")
    assert flight.reason == "done" and rms <= 0.15
