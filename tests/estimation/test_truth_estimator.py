"""The truth estimator: the plant's own body state, rewritten in NED/FRD."""

import math

import newton
import numpy as np
import pytest
import warp as wp
from pxr import Sdf, Usd

from nexus.runtime.assembly import PrimContext, assemble
from nexus.core import Loop
from nexus.core.errors import BuildError
from nexus.runtime.assembly import build_component
from nexus.estimation import TruthEstimator
from nexus.plant.frames import attitude_ned_frd_np, enu_to_ned_np, flu_to_frd_np, quat_to_matrix_np
from nexus.plant.loading import open_stage

ORIGIN_ENU = np.array([0.5, -1.0, 0.3])
# 30° about the ENU axis (1, 2, 3)/|…|: a pose with roll, pitch and yaw in it.
AXIS = np.array([1.0, 2.0, 3.0]) / np.linalg.norm([1.0, 2.0, 3.0])
ROTATION_ENU = np.array([*(AXIS * math.sin(math.radians(15))), math.cos(math.radians(15))])


@pytest.fixture(scope="module")
def vehicle():
    return assemble("astro_max_base", "empty", controller="hold", estimator="truth")


def without_estimator(vehicle):
    """The assembled ring less the vehicle's own estimator, which each test replaces."""
    return [c for c in vehicle.components if not isinstance(c, TruthEstimator)]


def place(plant, position, rotation, linear, angular):
    """Plant.reset puts the base at ``position``; then turn it and spin it (free joint: position, quat; linear, angular)."""
    plant.reset(base_position=position, base_velocity=linear)
    q = plant.state.joint_q.numpy()
    q[plant._base_coord + 3 : plant._base_coord + 7] = rotation
    qd = plant.state.joint_qd.numpy()
    qd[plant._base_dof + 3 : plant._base_dof + 6] = angular
    plant.state.joint_q.assign(q)
    plant.state.joint_qd.assign(qd)
    newton.eval_fk(plant.model, plant.state.joint_q, plant.state.joint_qd, plant.state)
    plant.ned_origin.assign(np.asarray([ORIGIN_ENU], dtype=np.float32))


def estimate_of(vehicle, body):
    estimator = TruthEstimator("/vehicle/estimator", vehicle.plant.ned_origin, body=body)
    loop = Loop([*without_estimator(vehicle), estimator], device="cpu", mode="eager").build()
    place(vehicle.plant, [1.0, 2.0, 3.0], ROTATION_ENU, [0.4, -0.2, 0.1], [0.3, -0.5, 0.7])
    loop.run_kinds(("state", "estimate"))
    label = body.rsplit("/", 1)[-1]
    return loop.output("estimate").numpy()[0], loop.output(f"body/{label}").numpy()[0]


def test_base_estimate_is_truth_in_ned_and_frd(vehicle):
    estimate, truth = estimate_of(vehicle, vehicle.plant.base_path)
    # Base at ENU (1, 2, 3), origin at (0.5, −1, 0.3): 0.5 east, 3 north, 2.7 up = NED (3, 0.5, −2.7).
    np.testing.assert_allclose(estimate["position"], [3.0, 0.5, -2.7], atol=1e-5)

    pose = truth["pose"]
    np.testing.assert_allclose(pose[3:], ROTATION_ENU, atol=1e-6)
    np.testing.assert_allclose(estimate["attitude"], attitude_ned_frd_np(pose[3:]), atol=1e-6)

    rotation = quat_to_matrix_np(pose[3:])
    omega = truth["angular_velocity"].astype(np.float64)
    # The body origin's velocity: the centre of mass's, less ω × (R·com).
    origin_velocity = truth["velocity"] - np.cross(omega, rotation @ truth["com"])
    np.testing.assert_allclose(estimate["velocity"], enu_to_ned_np(origin_velocity), atol=1e-5)
    np.testing.assert_allclose(estimate["rates"], flu_to_frd_np(rotation.T @ omega), atol=1e-5)
    assert np.linalg.norm(omega) > 0.5  # the test spins the body


def test_a_connection_to_a_rotor_publishes_that_rotor(vehicle):
    estimate, truth = estimate_of(vehicle, "/vehicle/body/rotor_1")
    expected = enu_to_ned_np(truth["pose"][:3] - ORIGIN_ENU)
    np.testing.assert_allclose(estimate["position"], expected, atol=1e-5)
    base, _ = estimate_of(vehicle, vehicle.plant.base_path)
    assert np.linalg.norm(estimate["position"] - base["position"]) > 0.4  # a rotor, not the base


def test_rate_below_the_tick_updates_on_its_due_ticks(vehicle):
    # 50 Hz on a 250 Hz tick: a new estimate every 5th tick, stamped 0.02 s apart.
    estimator = TruthEstimator("/vehicle/estimator", vehicle.plant.ned_origin, body=vehicle.plant.base_path, rate=50.0)
    loop = Loop([*without_estimator(vehicle), estimator], device="cpu", mode="captured").build()
    vehicle.plant.reset()
    loop.run_kinds(("state", "estimate"))
    stamps = []
    for _ in range(12):
        loop.tick()
        stamps.append(float(loop.output("estimate").numpy()[0]["time"]))
    assert stamps == pytest.approx([0.0] * 4 + [0.02] * 5 + [0.04] * 3)


def test_builder_takes_the_prim_connection_and_rejects_a_non_body(vehicle):
    stage = open_stage(vehicle.plant.vehicle_path)
    ctx = PrimContext(vehicle.plant, stage, vehicle.plant.vehicle_path, len(vehicle.plant.rotors))
    built = build_component("NexusTruthEstimatorAPI", stage.GetPrimAtPath("/vehicle/estimator"), ctx)
    assert built.connections == {"pose": "/vehicle/body/base"}
    assert built.name == "/vehicle/estimator"
    prim = stage.GetPrimAtPath("/vehicle/estimator")
    # Edit the stage's own session layer: the file's layer is shared by every stage open on
    # it in this process (USD's layer registry), and an edit there would leak into later tests.
    with Usd.EditContext(stage, stage.GetSessionLayer()):
        prim.GetRelationship("nexus:inputs:pose").SetTargets(["/vehicle/esc_1"])
    with pytest.raises(BuildError, match="/vehicle/estimator.*esc_1.*not a rigid body"):
        build_component("NexusTruthEstimatorAPI", prim, ctx)


def test_negative_rate_fails_naming_the_file_the_estimator_and_the_attribute(vehicle):
    stage = open_stage(vehicle.plant.vehicle_path)
    ctx = PrimContext(vehicle.plant, stage, vehicle.plant.vehicle_path, len(vehicle.plant.rotors))
    prim = stage.GetPrimAtPath("/vehicle/estimator")
    with Usd.EditContext(stage, stage.GetSessionLayer()):
        prim.CreateAttribute("nexus:rate", Sdf.ValueTypeNames.Float).Set(-1.0)  # the shipped EKF prim has none
    with pytest.raises(BuildError) as error:
        build_component("NexusTruthEstimatorAPI", prim, ctx)
    assert str(error.value) == (f"{vehicle.plant.vehicle_path}: estimator prim /vehicle/estimator: nexus:rate is -1 Hz; "
                                "it must be >= 0 (Updates per second; 0 updates every tick)")


def test_a_connection_naming_two_prims_is_refused_naming_both(vehicle):
    stage = open_stage(vehicle.plant.vehicle_path)
    ctx = PrimContext(vehicle.plant, stage, vehicle.plant.vehicle_path, len(vehicle.plant.rotors))
    prim = stage.GetPrimAtPath("/vehicle/estimator")
    with Usd.EditContext(stage, stage.GetSessionLayer()):
        prim.GetRelationship("nexus:inputs:pose").SetTargets(["/vehicle/body/base", "/vehicle/body/rotor_1"])
    with pytest.raises(BuildError) as error:
        build_component("NexusTruthEstimatorAPI", prim, ctx)
    assert str(error.value) == (f"{vehicle.plant.vehicle_path}: estimator prim /vehicle/estimator: nexus:inputs:pose names "
                                "2 prims (/vehicle/body/base, /vehicle/body/rotor_1); name the one writer to read")
