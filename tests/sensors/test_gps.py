"""The GPS: geodetic position around the origin and NED velocity, worked out by hand."""

from __future__ import annotations

import math

import numpy as np

from nexus.sensors import Gps
from tests.sensors.conftest import G, ORIGIN, base_pose, place, ring, rotate, sample, vec

#: WGS-84 semi-major axis [m] and first eccentricity squared.
A = 6378137.0
E2 = (1.0 / 298.257223563) * (2.0 - 1.0 / 298.257223563)


def radii(latitude_deg: float) -> tuple[float, float]:
    """Meridian (M) and prime-vertical (N) radii of curvature at a latitude [m]."""
    s = math.sin(math.radians(latitude_deg))
    w = math.sqrt(1.0 - E2 * s * s)
    return A * (1.0 - E2) / w**3, A / w


def test_gps_1_km_north_moves_latitude_by_the_meridian_arc(void_vehicle):
    # 1 km north of the origin: Δφ = 1000 m / (M + h) rad, M ≈ 6,367 km at 47.4° N, so
    # Δφ ≈ 0.0089985° (the curvature of the meridian changes this by under 1 mm over 1 km).
    # The antenna sits 0.1 m behind the body origin, and the body's x points east at yaw 0:
    # it is 0.1 m west, so Δλ·(N + h)·cos φ = -0.1 m.
    mount = (-0.1, 0.0, 0.12)
    gps = Gps("/test/gps", plant=void_vehicle.plant, noise=False, rate=0.0, mount=mount)
    loop = ring(void_vehicle, [gps])
    place(void_vehicle, (0.0, 1000.0, 20.0))
    loop.tick()
    position, rotation = base_pose(loop)
    antenna = position + rotate(rotation, mount)  # [m, ENU]
    latitude0, longitude0, altitude0 = ORIGIN
    m, n = radii(latitude0)
    fix = sample(loop, "gps")
    north_m = math.radians(fix.latitude - latitude0) * (m + altitude0)
    east_m = math.radians(fix.longitude - longitude0) * (n + altitude0) * math.cos(math.radians(latitude0))
    assert abs(north_m - antenna[1]) < 0.1
    assert abs(north_m - 1000.0) < 0.1
    assert abs(east_m - antenna[0]) < 0.01
    # The altitude is the origin's plus the height above the NED origin, as the barometer sees it.
    assert abs(fix.altitude - (altitude0 + antenna[2])) < 1e-4


def test_gps_reports_ned_velocity_and_a_3d_fix(void_vehicle):
    # Launched at (3, 4, 0) m/s ENU (3 east, 4 north), after one tick of free fall:
    # v_NED = (4, 3, +g·dt) = (4, 3, 0.0392) m/s.
    gps = Gps("/test/gps", plant=void_vehicle.plant, noise=False, rate=0.0, satellites=12)
    loop = ring(void_vehicle, [gps])
    place(void_vehicle, (0.0, 0.0, 50.0), velocity=(3.0, 4.0, 0.0))
    loop.tick()
    fix = sample(loop, "gps")
    np.testing.assert_allclose(vec(fix.velocity), (4.0, 3.0, G * 0.004), atol=1e-4)
    assert fix.fix_type == 3
    assert fix.satellites == 12
    # eph and epv: white noise and drift combined, √(0.02² + 0.3²) and √(0.04² + 0.5²) by default.
    assert abs(fix.eph - math.hypot(0.02, 0.3)) < 1e-6
    assert abs(fix.epv - math.hypot(0.04, 0.5)) < 1e-6


def test_offset_antenna_on_a_spinning_body_adds_omega_cross_r(void_vehicle):
    # The vehicle file's antenna sits at (-0.1, 0, 0.12) FLU (vehicles/astro_max_base.usda, Gps
    # nexus:mountOffset); the COM is at (0, 0, -0.011), so r = (-0.1, 0, 0.131) m in the body.
    # The body spins at ω = (0, 0, 2) rad/s about up from heading east (yaw 0), so at time t its
    # yaw is ψ = 2t and r = (-0.1·cos ψ, -0.1·sin ψ, 0.131) m ENU.
    # ω × r = (ω_y r_z - ω_z r_y, ω_z r_x - ω_x r_z, 0) = (0.2·sin ψ, -0.2·cos ψ, 0) m/s ENU,
    # which is (-0.2·cos ψ, 0.2·sin ψ, 0) NED (north = ENU y, east = ENU x, down = -ENU z):
    # at ψ = 0 the antenna, west of the axis, swings south at 0.2 m/s.
    # A second receiver at the COM reads the COM velocity alone: free fall, (0, 0, g·t) NED.
    spin = 2.0
    antenna = Gps("/test/antenna", plant=void_vehicle.plant, noise=False, rate=0.0, mount=(-0.1, 0.0, 0.12))
    centred = Gps("/test/centred", plant=void_vehicle.plant, noise=False, rate=0.0, mount=(0.0, 0.0, -0.011))
    loop = ring(void_vehicle, [antenna, centred])
    place(void_vehicle, (0.0, 0.0, 50.0), angular_velocity=(0.0, 0.0, spin))
    for _ in range(25):  # 0.1 s: the body turns 0.2 rad
        loop.tick()
        fix, centre = sample(loop, "gps", antenna.name), sample(loop, "gps", centred.name)
        psi = spin * fix.time
        np.testing.assert_allclose(vec(centre.velocity), (0.0, 0.0, G * fix.time), atol=1e-4)
        np.testing.assert_allclose(vec(fix.velocity) - vec(centre.velocity),
                                   (-0.2 * math.cos(psi), 0.2 * math.sin(psi), 0.0), atol=1e-4)
