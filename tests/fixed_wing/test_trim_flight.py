"""The trim is a real equilibrium of the flown model: the Aerosonde started at it holds its speed and height.

The vehicle file is assembled as ``nexus run`` does (its wing, propeller and three control surfaces become force
and command stages beside MuJoCo's step) in a scene with gravity and no ground (tests/data/void.usda, g =
9.80665 m/s²), with the ``hold`` controller holding the trim's surfaces (as servo commands, deflection / travel)
and throttle. It starts 100 m up, flying east level at 25 m/s, pitched to its trimmed angle of attack, surfaces
at their trimmed deflections, and flies 5 s (1,250 ticks of 4 ms) with no controller closing any loop.

Bounds, stated: speed within 0.05 m/s of 25, height within 0.25 m of 100, heading and wings within 0.5°,
drift sideways within 0.25 m (measured on 2026-12-06: 0.0084 m/s, 0.037 m, 0.054 m). A control flight cuts the
throttle from the same start: without the propeller's thrust (and torque, which the trimmed aileron held) the
plane must lose more than 1.5 m/s or 2 m in those 5 s, so the bounds can fail (measured: 19.2 m lost, 19.1 m
off its line). In a steady 5 m/s head wind from the air package's wind field, the same trim flies the same
airspeed: 20 m/s over the ground, at its height (measured: 0.015 m/s, 0.062 m; without the wind the same start
loses 17.7 m).
"""

from __future__ import annotations

import math

import newton
import numpy as np
import pytest

from nexus.aero.control_surfaces import ControlSurface
from nexus.aero.fixed_wing_forces import FixedWingAero
from nexus.aero.propeller_advance import AdvanceRatioPropeller
from nexus.aero.trim import straight_and_level
from nexus.air.wind_field import WindField
from nexus.core import Loop
from nexus.core.ring import placed
from nexus.plant.frames import quat_to_matrix_np
from nexus.runtime.assembly import assemble
from tests.fixed_wing.wing_stage import pitched

VOID = "tests/data/void.usda"
AIRSPEED = 25.0  # [m/s]
HEIGHT = 100.0  # [m]
TICKS = 1250  # 5 s at 250 Hz
HEAD_WIND = 5.0  # [m/s], from the east


@pytest.fixture(scope="module")
def plane():
    vehicle = assemble("aerosonde", VOID, controller="hold")
    part = {type(c): c for c in vehicle.components}
    trim = straight_and_level(part[FixedWingAero].values, part[AdvanceRatioPropeller].values, vehicle.plant.mass,
                              vehicle.plant.gravity, AIRSPEED)
    return vehicle, trim


def fly(vehicle, trim, throttle: float, head_wind: float = 0.0) -> dict:
    """Fly from the trimmed start holding the trim's surfaces and ``throttle``, in a steady wind of ``head_wind``
    [m/s] from the east (the air package's wind field, placed before the force stages as a run places it): every
    25th tick's pose and ground speed."""
    plant = vehicle.plant
    surfaces = {c.role: c for c in vehicle.components if isinstance(c, ControlSurface)}
    row = np.zeros(16)
    for role, deflection in (("aileron", trim.aileron), ("elevator", trim.elevator), ("rudder", trim.rudder)):
        surfaces[role].initial = deflection
        row[surfaces[role].channel] = deflection / surfaces[role].travel
    propeller = next(c for c in vehicle.components if isinstance(c, AdvanceRatioPropeller))
    row[propeller.channel] = throttle
    vehicle.controller.set(row)
    air = [placed(WindField(speed=head_wind, direction=90.0, reference_height=HEIGHT), "air")] if head_wind else []
    loop = Loop([*vehicle.components, *air], device="cpu", mode="captured", seed=0).build()
    plant.reset(base_position=(0.0, 0.0, HEIGHT), base_velocity=(AIRSPEED - head_wind, 0.0, 0.0))
    q = plant.state.joint_q.numpy()
    q[plant.base_coord + 3 : plant.base_coord + 7] = pitched(trim.alpha)
    plant.state.joint_q.assign(q)
    newton.eval_fk(plant.model, plant.state.joint_q, plant.state.joint_qd, plant.state)
    seen = {"position": [], "speed": [], "rotation": []}
    try:
        for tick in range(TICKS):
            loop.tick()
            if tick % 25 == 24:
                pose = plant.state.body_q.numpy()[plant.base].astype(np.float64)
                seen["position"].append(pose[:3])
                seen["rotation"].append(pose[3:7])
                seen["speed"].append(np.linalg.norm(plant.state.body_qd.numpy()[plant.base][:3]))
    finally:
        loop.close()
    return {k: np.array(v) for k, v in seen.items()}


@pytest.fixture(scope="module")
def trimmed(plane):
    return fly(*plane, plane[1].throttle)


@pytest.fixture(scope="module")
def gliding(plane):
    return fly(*plane, 0.0)


@pytest.fixture(scope="module")
def head_wind(plane):
    return fly(*plane, plane[1].throttle, head_wind=HEAD_WIND)


def test_trimmed_aerosonde_keeps_its_speed_and_height_for_five_seconds(trimmed):
    assert np.max(np.abs(trimmed["speed"] - AIRSPEED)) < 0.05
    assert np.max(np.abs(trimmed["position"][:, 2] - HEIGHT)) < 0.25
    # It flew the 5 s east: 125 m at 25 m/s, and held its line.
    assert trimmed["position"][-1, 0] == pytest.approx(125.0, abs=0.5)
    assert np.max(np.abs(trimmed["position"][:, 1])) < 0.25


def test_trimmed_aerosonde_keeps_its_attitude(trimmed, plane):
    _, trim = plane
    for rotation in trimmed["rotation"]:
        nose = quat_to_matrix_np(rotation) @ np.array([1.0, 0.0, 0.0])
        left = quat_to_matrix_np(rotation) @ np.array([0.0, 1.0, 0.0])
        assert math.degrees(abs(math.atan2(nose[1], nose[0]))) < 0.5  # heading east
        assert math.degrees(abs(math.asin(left[2]))) < 0.5  # wings level
        assert math.degrees(abs(math.asin(nose[2]) - trim.alpha)) < 0.5  # pitch at the trim's


def test_without_thrust_the_same_start_loses_speed_or_height(gliding):
    lost_speed = AIRSPEED - gliding["speed"][-1]
    lost_height = HEIGHT - gliding["position"][-1, 2]
    assert lost_speed > 1.5 or lost_height > 2.0


def test_in_a_head_wind_the_same_trim_flies_the_same_airspeed_and_a_slower_ground_speed(head_wind):
    # 25 m/s through air moving 5 m/s west: 20 m/s over the ground, 100 m in 5 s, at the same height.
    assert np.max(np.abs(head_wind["speed"] - (AIRSPEED - HEAD_WIND))) < 0.05
    assert np.max(np.abs(head_wind["position"][:, 2] - HEIGHT)) < 0.25
    assert head_wind["position"][-1, 0] == pytest.approx(100.0, abs=0.5)
