"""The barometer against the ISA troposphere, worked out by hand."""

from __future__ import annotations

import numpy as np

from nexus.sensors import Barometer
from tests.sensors.conftest import ORIGIN, base_pose, place, ring, rotate, sample


def isa(altitude: float) -> tuple[float, float]:
    """ISA troposphere: T = 288.15 - 0.0065·h [K], p = 101325·(T/288.15)^5.25588 [Pa]."""
    temperature = 288.15 - 0.0065 * altitude
    return temperature, 101325.0 * (temperature / 288.15) ** 5.25588


def test_baro_100_m_above_origin_matches_isa(void_vehicle):
    # The vehicle starts 100 m above the NED origin (here the world origin) and falls for one tick
    # (0.16 mm); the sensor's height is read back from the published pose:
    #   h = 488 m + z_base + (R·mount)_z ≈ 588.02 m  ->  T ≈ 284.328 K, p ≈ 94,494 Pa.
    mount = (0.0, 0.0, 0.02)
    baro = Barometer("/test/baro", plant=void_vehicle.plant, noise=False, rate=0.0, mount=mount)
    loop = ring(void_vehicle, [baro])
    place(void_vehicle, (0.0, 0.0, 100.0))
    loop.tick()
    position, rotation = base_pose(loop)
    altitude = ORIGIN[2] + position[2] + rotate(rotation, mount)[2]
    assert abs(altitude - 588.02) < 0.01
    temperature, pressure = isa(altitude)
    measured = sample(loop, "baro")
    assert abs(measured.pressure - pressure) < 0.1  # [Pa]
    assert abs(measured.temperature - temperature) < 1e-3  # [K]
    # Without noise the pressure altitude is the altitude itself.
    assert abs(measured.pressure_altitude - altitude) < 0.02  # [m]


def test_baro_pressure_falls_about_12_pa_per_metre(void_vehicle):
    # dp/dh = -p·5.25588·0.0065/T ≈ -95,490·0.0341632/284.91 ≈ -11.45 Pa/m at 498 m:
    # two barometers 1 m apart differ by it.
    low = Barometer("/test/baro_low", plant=void_vehicle.plant, noise=False, rate=0.0, mount=(0.0, 0.0, 0.0))
    high = Barometer("/test/baro_high", plant=void_vehicle.plant, noise=False, rate=0.0, mount=(0.0, 0.0, 1.0))
    loop = ring(void_vehicle, [low, high])
    place(void_vehicle, (0.0, 0.0, 10.0))
    loop.tick()
    difference = sample(loop, "baro", high.name).pressure - sample(loop, "baro", low.name).pressure
    expected = isa(ORIGIN[2] + 11.0)[1] - isa(ORIGIN[2] + 10.0)[1]
    assert abs(difference - expected) < 0.02
    assert np.isclose(expected, -11.45, atol=0.01)
