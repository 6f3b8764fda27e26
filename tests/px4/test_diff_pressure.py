"""HIL_SENSOR's diff_pressure, decoded from what the scripted PX4 received, against a value worked out by hand.

The Astro Max is placed 20 m up in the void scene (geodetic origin 488 m), facing east (yaw 0: its x axis
is east), moving east at 10 m/s in still air, with a noise-free airspeed sensor at its body origin, and
flies one 4 ms tick (free fall changes only the vertical velocity).
"""

from __future__ import annotations

import pytest

from nexus.sensors import Airspeed, Barometer, Gps, Imu, Magnetometer
from tests.px4.test_messages import fly_one_tick, vehicle  # noqa: F401  (the module-scoped vehicle fixture)

DIFF_PRESSURE_BIT = 0x400  # HIL_SENSOR_UPDATED_DIFF_PRESSURE (MAVLink common.xml)


def sensors(vehicle, *extra):
    return [Imu("/test/imu", noise=False, rate=0.0), Magnetometer("/test/mag", plant=vehicle.plant, noise=False, rate=0.0),
            Barometer("/test/baro", plant=vehicle.plant, noise=False, rate=0.0),
            Gps("/test/gps", plant=vehicle.plant, noise=False, rate=0.0), *extra]


def test_diff_pressure_is_half_rho_v_squared_in_hpa_with_its_bit(vehicle):  # noqa: F811
    airspeed = Airspeed("/test/airspeed", plant=vehicle.plant, noise=False, rate=0.0)
    peer = fly_one_tick(vehicle, sensors(vehicle, airspeed), position=(0.0, 0.0, 20.0), velocity=(10.0, 0.0, 0.0))
    message = peer.of_type("HIL_SENSOR")[0]
    # ISA at h = 488 + 20 = 508 m: T = 288.15 - 0.0065·508 = 284.848 K, p = 101325·(284.848/288.15)^5.25588
    # = 95369.3 Pa, rho = 95369.3 / (287.05287·284.848) = 1.166362 kg/m^3; q = ½·1.166362·10² = 58.3181 Pa
    # = 0.583181 hPa.
    assert message.diff_pressure == pytest.approx(0.583181, abs=2e-5)
    assert message.fields_updated & DIFF_PRESSURE_BIT


def test_without_an_airspeed_sensor_diff_pressure_is_zero_and_its_bit_clear(vehicle):  # noqa: F811
    peer = fly_one_tick(vehicle, sensors(vehicle), position=(0.0, 0.0, 20.0), velocity=(10.0, 0.0, 0.0))
    message = peer.of_type("HIL_SENSOR")[0]
    assert message.diff_pressure == 0.0
    assert not message.fields_updated & DIFF_PRESSURE_BIT
    assert message.fields_updated == 0x1FFF & ~DIFF_PRESSURE_BIT  # every other group is new on the first tick
