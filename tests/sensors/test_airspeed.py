"""The airspeed sensor and the barometer's dynamic-pressure error, against numbers worked out by hand.

At sea level (ISA) the air's density is 101325 / (287.05287 · 288.15) = 1.225 kg/m^3, so 10 m/s of
air along the body's forward axis is a differential pressure of 1/2 · 1.225 · 10² = 61.25 Pa.
The body is published by hand (:class:`KnownBody`), and so is the wind (:class:`KnownWind`, in the
force slot where the wind field writes it); the plant the sensors read their altitude from is a
stand-in whose geodetic origin is at sea level, so the body's height is its altitude.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import warp as wp

from nexus.core import BuildError, Component, Loop, Stage, Write
from nexus.plant.assets import with_base_prims
from nexus.runtime.assembly import assemble
from nexus.sensors import Airspeed, Barometer
from tests.sensors.conftest import KnownBody, sample

PRIM = "/vehicle/body/base/Airspeed"
#: 1/2 rho u² for 10 m/s at sea level [Pa].
Q10 = 61.25


def sea_level_plant() -> SimpleNamespace:
    """What the sensors read of the plant: the NED origin (the world origin) and the geodetic origin's altitude."""
    return SimpleNamespace(ned_origin=wp.zeros(1, dtype=wp.vec3, device="cpu"), origin=SimpleNamespace(altitude=0.0))


@wp.kernel
def write_wind(value: wp.vec3, out: wp.array(dtype=wp.vec3)):
    out[0] = value


class KnownWind(Component):
    """Writes ``wind`` [m/s, world ENU] as the wind field would, with a value the test states."""

    def __init__(self, wind):
        super().__init__("/test/known_wind")
        self.value = wp.vec3(*wind)

    def stages(self) -> list[Stage]:
        return [Stage("wind", "force", self._run, writes=(Write("wind", wp.vec3, (1,)),))]

    def _run(self, io) -> None:
        wp.launch(write_wind, 1, inputs=[self.value], outputs=[io["wind"]], device=io.device)


def airspeed(**kw) -> Airspeed:
    kw.setdefault("noise", False)
    kw.setdefault("rate", 0.0)
    return Airspeed(PRIM, plant=sea_level_plant(), **kw)


def read(sensors, *, wind=None, seed: int = 0, ticks: int = 1, signal: str = "airspeed", **motion):
    """The last sample of ``signal`` after ``ticks`` ticks of a hand-published body (at sea level unless
    ``position`` says otherwise) and, with ``wind``, a hand-published wind."""
    motion.setdefault("position", (0.0, 0.0, 0.0))
    motion.setdefault("com", (0.0, 0.0, 0.0))
    parts = [KnownBody(**motion), *([KnownWind(wind)] if wind is not None else []), *sensors]
    loop = Loop(parts, device="cpu", seed=seed).build()
    for _ in range(ticks):
        loop.tick()
    return sample(loop, signal)


def test_flying_forward_at_10_m_s_in_still_air_reads_61_25_pa():
    # Yaw 0: the body's x axis is east; 10 m/s east, no wind stage (still air): u = 10 m/s.
    got = read([airspeed()], velocity=(10.0, 0.0, 0.0))
    assert got.airspeed == pytest.approx(10.0, abs=1e-6)
    assert got.differential_pressure == pytest.approx(Q10, abs=1e-3)


@pytest.mark.parametrize("velocity, wind, pressure", [
    ((0.0, 0.0, 0.0), (-10.0, 0.0, 0.0), Q10),  # hovering in 10 m/s of headwind: the same 61.25 Pa
    ((0.0, 0.0, 0.0), (10.0, 0.0, 0.0), -Q10),  # air from behind: the pitot reads negative
    ((10.0, 0.0, 0.0), (10.0, 0.0, 0.0), 0.0),  # flying with a 10 m/s tailwind: no relative air
    ((5.0, 0.0, 0.0), (-5.0, 3.0, 4.0), Q10),  # only the forward part counts: u = 5 + 5 = 10 m/s
])
def test_the_relative_air_is_the_wind_less_the_vehicle_velocity(velocity, wind, pressure):
    got = read([airspeed()], velocity=velocity, wind=wind)
    assert got.differential_pressure == pytest.approx(pressure, abs=1e-3)


def test_the_forward_axis_turns_with_the_body():
    # Yawed 90 degrees (ENU, counter-clockwise from above): the body's x axis points north. 10 m/s east
    # is across it and reads 0; 10 m/s north is 61.25 Pa.
    assert read([airspeed()], yaw=math.pi / 2, velocity=(10.0, 0.0, 0.0)).differential_pressure == pytest.approx(0.0, abs=1e-3)
    assert read([airspeed()], yaw=math.pi / 2, velocity=(0.0, 10.0, 0.0)).differential_pressure == pytest.approx(Q10, abs=1e-3)


def test_a_mount_off_the_centre_of_mass_feels_the_rotation():
    # Turning at 2 rad/s about up with the sensor 0.5 m to the left (+y) of the centre of mass:
    # omega x r = (0, 0, 2) x (0, 0.5, 0) = (-1, 0, 0) m/s: the mount moves backwards at 1 m/s, so the
    # air comes from behind at u = -1 m/s: q = -1/2 · 1.225 · 1 = -0.6125 Pa.
    got = read([airspeed(mount=(0.0, 0.5, 0.0))], angular_velocity=(0.0, 0.0, 2.0))
    assert got.differential_pressure == pytest.approx(-0.6125, abs=1e-4)


def test_density_falls_with_altitude_as_isa():
    # 1000 m up: T = 288.15 - 6.5 = 281.65 K, p = 101325 (281.65 / 288.15)^5.25588 = 89874.6 Pa,
    # rho = 89874.6 / (287.05287 · 281.65) = 1.11164 kg/m^3: 10 m/s reads 55.582 Pa.
    got = read([airspeed()], position=(0.0, 0.0, 1000.0), velocity=(10.0, 0.0, 0.0))
    assert got.differential_pressure == pytest.approx(55.582, abs=2e-3)


def test_offset_is_added_with_noise_on_and_left_out_without():
    assert read([airspeed(noise=True, noise_sigma=0.0, offset=5.0)], velocity=(10.0, 0.0, 0.0)).differential_pressure \
        == pytest.approx(Q10 + 5.0, abs=1e-3)
    assert read([airspeed(noise=False, offset=5.0)], velocity=(10.0, 0.0, 0.0)).differential_pressure \
        == pytest.approx(Q10, abs=1e-3)


def test_noise_has_the_authored_sigma_and_zero_mean():
    sensor = airspeed(noise=True, noise_sigma=2.0)
    loop = Loop([KnownBody(position=(0.0, 0.0, 0.0), velocity=(10.0, 0.0, 0.0)), sensor], device="cpu", seed=5).build()
    values = []
    for _ in range(3000):
        loop.tick()
        values.append(float(sample(loop, "airspeed").differential_pressure))
    values = np.array(values)
    # 3000 draws: the sample sigma within 5 % of 2 Pa, the mean within 4 sigma / sqrt(n) of 61.25 Pa.
    assert values.std() == pytest.approx(2.0, rel=0.05)
    assert abs(values.mean() - Q10) < 4 * 2.0 / math.sqrt(3000)


def test_samples_at_its_rate():
    # 50 Hz on a 250 Hz tick: the first sample on the first tick (4 ms), then every 5th tick.
    sensor = airspeed(rate=50.0)
    loop = Loop([KnownBody(velocity=(10.0, 0.0, 0.0)), sensor], device="cpu").build()
    stamps = []
    for _ in range(11):
        loop.tick()
        stamps.append(float(sample(loop, "airspeed").time))
    assert stamps == pytest.approx([0.004] * 5 + [0.024] * 5 + [0.044])


# -- the barometer's error from the dynamic pressure ------------------------------------------------

def baro(**kw) -> Barometer:
    return Barometer("/test/baro", plant=sea_level_plant(), noise=False, rate=0.0, **kw)


def test_baro_adds_its_coefficient_times_the_dynamic_pressure():
    # At sea level, 10 m/s of relative air in any direction (6 across, 8 up): |a|² = 100, 1/2 rho |a|² = 61.25 Pa;
    # C = 0.5 adds 30.625 Pa to 101325 Pa.
    got = read([baro(dynamic_pressure_coefficient=0.5)], wind=(0.0, 6.0, 8.0), signal="baro")
    assert got.pressure == pytest.approx(101325.0 + 30.625, abs=0.01)


def test_baro_without_a_coefficient_reads_the_static_pressure_whatever_the_wind():
    got = read([baro()], wind=(0.0, 6.0, 8.0), velocity=(20.0, 0.0, 0.0), signal="baro")
    assert got.pressure == pytest.approx(101325.0, abs=0.01)


# -- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("prim, message", [
    ('def Xform "Airspeed" (prepend apiSchemas = ["NexusAirspeedAPI"])\n{\n    float nexus:rate = -10\n}',
     "sensor prim /vehicle/body/base/Airspeed: nexus:rate is -10 Hz; it must be >= 0"),
    ('def Xform "Airspeed" (prepend apiSchemas = ["NexusAirspeedAPI"])\n{\n    float nexus:noiseSigma = -1\n}',
     "sensor prim /vehicle/body/base/Airspeed: nexus:noiseSigma is -1 Pa; it must be >= 0"),
    ('def Xform "Baro2" (prepend apiSchemas = ["NexusBarometerAPI"])\n{\n    float nexus:dynamicPressureCoefficient = -0.2\n}',
     "sensor prim /vehicle/body/base/Baro2: nexus:dynamicPressureCoefficient is -0.2; it must be >= 0"),
])
def test_a_bad_attribute_is_one_line_naming_the_file_the_prim_and_the_attribute(tmp_path, prim, message):
    path = with_base_prims(tmp_path / "bad.usda", prim)
    with pytest.raises(BuildError) as caught:
        assemble(path, "empty", controller="hold")
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith(str(path))
    assert message in text
