"""The advance-ratio propeller's stage against McLain's propulsion model worked by hand (Aerosonde's numbers).

rho 1.2682 kg/m³, D = 20 in = 0.508 m, K_V = K_Q = 60/(2π·145) = 0.0658568 V·s/rad, R = 0.042 Ω, i0 = 1.5 A,
V_max = 12·3.7 = 44.4 V; C_T(J) = 0.09357 − 0.06044 J − 0.1079 J², C_Q(J) = 0.00523 + 0.00497 J − 0.01664 J².
Ω solves a·Ω² + b·Ω + c = 0, a = ρD⁵C_Q0/(2π)² = 5.683924e-6, b = ρD⁴C_Q1·Va/(2π) + K_Q·K_V/R,
c = ρD³C_Q2·Va² − K_Q·V_in/R + K_Q·i0; n = Ω/2π, J = Va/(n·D), T = ρn²D⁴C_T(J), Q = ρn²D⁵C_Q(J).

    Va = 0, δt = 1:       b = 0.1032660, c = −69.52170, Ω = 649.9758 rad/s, J = 0,      T = 84.56953 N, Q = 2.401279 N·m
    Va = 25, δt = 1:      b = 0.1049362, c = −71.25077, Ω = 655.7031 rad/s, J = 0.471573, T = 37.77948 N, Q = 1.809847 N·m
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

from nexus.aero.propeller_advance import ADVANCE_RATIO_PROPELLER_SPEC, add_propeller_thrust, propeller_model
from nexus.plant.loading import open_stage
from nexus.schemas.reader import read_prim
from tests.fixed_wing.wing_stage import AEROSONDE


@pytest.fixture(scope="module")
def propeller():
    stage = open_stage(AEROSONDE)
    return read_prim(stage.GetPrimAtPath("/vehicle/body/base/Propeller"), ADVANCE_RATIO_PROPELLER_SPEC, AEROSONDE)


def propeller_wrench(values, *, velocity, throttle, wind=(0.0, 0.0, 0.0), rotation=(0.0, 0.0, 0.0, 1.0)):
    """(force [N], moment [N·m]) the stage adds to a body moving at ``velocity`` in ``wind`` (world ENU)."""
    controls = np.zeros((1, 16), dtype=np.float32)
    controls[0, values["channel"]] = throttle
    body_f = wp.zeros(1, dtype=wp.spatial_vector, device="cpu")
    wp.launch(add_propeller_thrust, 1, inputs=[
        wp.array([wp.vec3(*wind)], dtype=wp.vec3, device="cpu"), wp.array(controls, dtype=wp.float32, device="cpu"),
        wp.array([wp.transform(wp.vec3(0.0, 0.0, 100.0), wp.quat(*rotation))], dtype=wp.transform, device="cpu"),
        wp.array([wp.spatial_vector(*velocity, 0.0, 0.0, 0.0)], dtype=wp.spatial_vector, device="cpu"),
        0, 1, int(values["channel"]), propeller_model(values)], outputs=[body_f], device="cpu")
    f = body_f.numpy()[0].astype(np.float64)
    return f[:3], f[3:]


def test_static_thrust_and_torque_at_full_throttle(propeller):
    force, moment = propeller_wrench(propeller, velocity=(0.0, 0.0, 0.0), throttle=1.0)
    # Thrust along the nose (+x), the propeller's reaction torque −spin·Q about it (spin +1).
    np.testing.assert_allclose(force, [84.56953, 0.0, 0.0], rtol=2e-5, atol=1e-5)
    np.testing.assert_allclose(moment, [-2.401279, 0.0, 0.0], rtol=2e-5, atol=1e-5)


def test_thrust_falls_with_the_advance_ratio_at_25_m_s(propeller):
    force, moment = propeller_wrench(propeller, velocity=(25.0, 0.0, 0.0), throttle=1.0)
    np.testing.assert_allclose(force, [37.77948, 0.0, 0.0], rtol=5e-5, atol=1e-5)
    np.testing.assert_allclose(moment, [-1.809847, 0.0, 0.0], rtol=5e-5, atol=1e-5)


def test_a_head_wind_is_airspeed_to_the_propeller(propeller):
    # At rest in a 25 m/s head wind the propeller sees the same 25 m/s as flying through still air.
    blown, _ = propeller_wrench(propeller, velocity=(0.0, 0.0, 0.0), wind=(-25.0, 0.0, 0.0), throttle=1.0)
    assert blown[0] == pytest.approx(37.77948, rel=5e-5)


def test_thrust_turns_with_the_body_and_stops_with_the_throttle(propeller):
    yaw = (0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4))  # nose north
    force, _ = propeller_wrench(propeller, velocity=(0.0, 0.0, 0.0), throttle=1.0, rotation=yaw)
    np.testing.assert_allclose(force, [0.0, 84.56953, 0.0], rtol=2e-5, atol=1e-4)
    # Throttle 0 at rest: the motor's no-load current leaves no positive speed (c = K_Q·i0 > 0): no thrust.
    still, still_m = propeller_wrench(propeller, velocity=(0.0, 0.0, 0.0), throttle=0.0)
    assert np.all(still == 0.0) and np.all(still_m == 0.0)
