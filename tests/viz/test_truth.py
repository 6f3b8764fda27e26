"""The report's truth in the sensors' frames, against values worked out by hand.

Frames (docs/sensors.md): world ENU, body FLU in the record; NED and FRD for
sensors and the estimate; quaternions (x, y, z, w).
"""

import math

import numpy as np
import pytest

from nexus.viz import truth as t

LEVEL = np.array([[0.0, 0.0, 0.0, 1.0]])  # body FLU axes = world ENU axes: nose east
NOSE_NORTH = np.array([[0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4)]])  # +90° about up


def euler(q):
    return t.euler_zyx(t.ned_frd_from_enu_flu(t.rotation_matrices(q)))[0]


def test_level_nose_east_is_yaw_plus_90_deg():
    # FLU x along ENU x (east): heading east = +90° in NED, wings level.
    assert euler(LEVEL) == pytest.approx([0.0, 0.0, math.pi / 2], abs=1e-12)


def test_turning_left_90_deg_in_enu_points_the_nose_north_yaw_0():
    # +90° about ENU up (counter-clockwise seen from above) turns the nose from east to north: yaw 0.
    assert euler(NOSE_NORTH) == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)


def test_right_wing_down_is_positive_roll():
    # Nose east; +30° about FLU x (forward) lifts the left wing (FLU y) = right wing down: roll +30° in FRD.
    half = math.radians(30) / 2
    assert euler(np.array([[math.sin(half), 0.0, 0.0, math.cos(half)]])) == pytest.approx(
        [math.radians(30), 0.0, math.pi / 2], abs=1e-12)


def test_resting_level_imu_reads_minus_g_on_z_and_no_rate():
    zeros = np.zeros((1, 3))
    force, rate = t.imu_truth(t.rotation_matrices(LEVEL), zeros, zeros, zeros, zeros, (0.0, 0.0, 0.02))
    assert force[0] == pytest.approx([0.0, 0.0, -9.80665], abs=1e-12)  # f = FRD(0 - (0, 0, -g)) = (0, 0, -g)
    assert rate[0] == pytest.approx([0.0, 0.0, 0.0], abs=1e-15)


def test_spinning_imu_feels_the_centripetal_acceleration_and_the_rate_in_frd():
    # ω = 2 rad/s about up, mount 0.1 m forward of the centre of mass: ω²r = 0.4 m/s² towards the axis (FRD −x);
    # the yaw rate about FLU +z is −2 rad/s about FRD z (z points down).
    omega = np.array([[0.0, 0.0, 2.0]])
    zeros = np.zeros((1, 3))
    force, rate = t.imu_truth(t.rotation_matrices(LEVEL), zeros, zeros, omega, zeros, (0.1, 0.0, 0.0))
    assert force[0] == pytest.approx([-0.4, 0.0, -9.80665], abs=1e-12)
    assert rate[0] == pytest.approx([0.0, 0.0, -2.0], abs=1e-12)


def test_level_magnetometer_nose_east_reads_east_forward_and_north_left():
    # docs/sensors.md: level at heading ψ, B = (Bn cos ψ + Be sin ψ, −Bn sin ψ + Be cos ψ, Bd); ψ = 90°.
    field = t.mag_truth(t.rotation_matrices(LEVEL), np.array([2.0e-5, 1.0e-6, 4.0e-5]))
    assert field[0] == pytest.approx([1.0e-6, -2.0e-5, 4.0e-5], abs=1e-18)


def test_baro_altitude_per_pascal_at_488_m_is_one_over_rho_g():
    # ISA at 488 m: T = 288.15 − 0.0065·488 = 284.978 K, p = 101325·(T/288.15)^5.25588 = 95598.3 Pa,
    # ρ = p/(287.053·T) = 1.16863 kg/m³, so |dh/dp| = 1/(ρ·g) = 1/(1.16863·9.80665) = 0.087257 m/Pa.
    assert t.altitude_per_pascal(488.0) == pytest.approx(0.087257, rel=2e-4)
    assert t.pressure_altitude_from_pressure(t.isa_pressure(488.0)) == pytest.approx(488.0, abs=1e-6)


def test_one_arc_second_north_and_east_of_px4_home_in_metres():
    # WGS-84 at 47.397742°, 488 m: meridian radius M = a(1−e²)/(1−e² sin²φ)^1.5 = 6370064.3 m, so one arc second
    # of latitude is (M + 488)·π/648000 = 30.8853 m; prime vertical N = a/√(1−e² sin²φ), one arc second of
    # longitude is (N + 488)·cos φ·π/648000 = 20.9710 m.
    origin = {"latitude": 47.397742, "longitude": 8.545594, "altitude": 488.0}
    ned = t.geodetic_to_ned([47.397742 + 1 / 3600, 47.397742], [8.545594, 8.545594 + 1 / 3600], [488.0, 490.5], origin)
    assert ned[0] == pytest.approx([30.8853, 0.0, 0.0], abs=1e-3)
    assert ned[1] == pytest.approx([0.0, 20.9710, -2.5], abs=1e-3)


def test_position_ned_is_relative_to_the_settled_origin():
    # ENU (1, 2, 3.3) from an origin at (0, 0, 0.3): 2 m north, 1 m east, 3 m up = (2, 1, −3) NED.
    assert t.position_ned(np.array([[1.0, 2.0, 3.3]]), np.array([0.0, 0.0, 0.3]))[0] == pytest.approx([2.0, 1.0, -3.0])
