"""Noise: its size, its freshness on every replay of a captured graph, and its streams.

The vehicle file's own sensors (``vehicles/astro_max_base.usda``, as assembled)
run beside noiseless twins (copies with ``noise`` off and another prim name), so
their difference is the noise alone, whatever the physics does. The expected
sizes are written here as literals with their source, never read from the code
under test.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from nexus.sensors import Barometer, Gps, Imu, Magnetometer
from nexus.runtime.startup import start
from tests.sensors.conftest import ORIGIN, ring

TICKS = 10_000
#: Tick [s] of the default 250 Hz loop.
TICK_S = 0.004
#: One gauss is 1e-4 tesla (the CGS unit of magnetic flux density: 1 G = 1e-4 T).
TESLA_PER_GAUSS = 1.0e-4
# White noise per sample, and the GPS drift, as the vehicle file sets them. Authored in
# vehicles/astro_max_base.usda: IMU accel 0.00637 m/s², gyro 0.0008726646 rad/s (0.05 °/s),
# baro 3 Pa, which are PX4's Gazebo (gz) sensor defaults. Not authored there, so the schema's
# fallbacks (nexus/schemas/generatedSchema.usda) apply: mag 0.005 gauss per axis (PX4 Gazebo's
# magnetometer noise), GPS white 0.02 m horizontal, 0.04 m vertical, 0.05 m/s velocity, drift
# 0.3 m horizontal, 0.5 m vertical with a 60 s correlation time.
ACCEL_SIGMA = 0.00637  # [m/s²]
GYRO_SIGMA = 0.0008726646  # [rad/s]
MAG_SIGMA = 0.005 * TESLA_PER_GAUSS  # [T] = 5e-7 T
BARO_SIGMA = 3.0  # [Pa]
GPS_H, GPS_V, GPS_VELOCITY = 0.02, 0.04, 0.05  # [m], [m], [m/s]
DRIFT_H, DRIFT_V, DRIFT_TAU = 0.3, 0.5, 60.0  # [m], [m], [s]
#: The file's GPS samples at 10 Hz; between two samples the drift keeps φ = exp(-0.1 s / 60 s).
PHI = math.exp(-0.1 / DRIFT_TAU)


def step_sigma(white: float, drift: float) -> float:
    """Spread of the change between two GPS samples 0.1 s apart [m].

    Position error e = w + d: white w, and drift d ← φ·d + σ_d·√(1 - φ²)·n, stationary from its
    first draw. Δe = Δw + (φ - 1)·d + σ_d·√(1 - φ²)·n, so Var Δe = 2σ_w² + (1 - φ)²σ_d² +
    (1 - φ²)σ_d² = 2σ_w² + 2(1 - φ)σ_d².
    """
    return math.sqrt(2 * white**2 + 2 * (1 - PHI) * drift**2)


def own(vehicle, kind):
    """The vehicle file's sensor of type ``kind``."""
    (found,) = [c for c in vehicle.components if isinstance(c, kind)]
    return found


def twin(sensor, name: str, *, noise: bool):
    """A copy of ``sensor`` under another prim name (so other noise streams), noise on or off."""
    other = copy.copy(sensor)
    other.name, other.noise, other.connections = name, noise, dict(sensor.connections)
    return other


@pytest.fixture(scope="module")
def noise(ground_vehicle) -> dict[str, np.ndarray]:
    """10,000 captured ticks (40 s) of the differences noisy - quiet, resting on the ground.

    Each sensor keeps the vehicle file's rate (IMU 250 Hz, mag 100, baro 50, GPS 10), so the
    samples are 10,000, 4,000, 2,000 and 400; a row is kept when its sample time is new.
    """
    sensors = {kind: own(ground_vehicle, kind) for kind in (Imu, Magnetometer, Barometer, Gps)}
    parts = [*sensors.values(), twin(sensors[Imu], "/second/imu", noise=True)]
    parts += [twin(sensor, f"/quiet/{kind.signal}", noise=False) for kind, sensor in sensors.items()]
    loop = ring(ground_vehicle, parts, seed=7)
    ground_vehicle.plant.reset()
    start(loop, ground_vehicle.plant)
    buffers = {part.name: loop.output(part.signal, part.name) for part in parts}
    rows = {name: [] for name in buffers}
    for _ in range(TICKS):
        loop.tick()
        for name, buffer in buffers.items():
            row = buffer.numpy().copy()[0]  # numpy() is a view on the CPU
            if not rows[name] or row["time"] != rows[name][-1]["time"]:
                rows[name].append(row)

    def field(prim, key):
        return np.array([np.asarray(row[key], dtype=np.float64) for row in rows[prim]])

    def diff(kind, key):
        return field(sensors[kind].name, key) - field(f"/quiet/{kind.signal}", key)

    latitude = math.radians(ORIGIN[0])
    e2 = 0.00669437999014  # WGS-84 first eccentricity squared
    m_radius = 6378137.0 * (1 - e2) / (1 - e2 * math.sin(latitude) ** 2) ** 1.5
    n_radius = 6378137.0 / math.sqrt(1 - e2 * math.sin(latitude) ** 2)
    # Latitude and longitude differences [deg] -> metres north and east (radii M + h, (N + h)·cos φ).
    north = np.radians(diff(Gps, "latitude")) * (m_radius + ORIGIN[2])
    east = np.radians(diff(Gps, "longitude")) * (n_radius + ORIGIN[2]) * math.cos(latitude)
    up = diff(Gps, "altitude")

    def steps(x):
        """Changes between disjoint pairs of consecutive samples (independent of each other)."""
        pairs = len(x) // 2
        return x[1 : 2 * pairs : 2] - x[0 : 2 * pairs : 2]

    return {
        "accel": diff(Imu, "accel"),
        "gyro": diff(Imu, "gyro"),
        "accel_second": field("/second/imu", "accel") - field("/quiet/imu", "accel"),
        "mag": diff(Magnetometer, "field"),
        "baro": diff(Barometer, "pressure"),
        "gps_horizontal_step": np.stack([steps(north), steps(east)], axis=1),
        "gps_vertical_step": steps(up),
        "gps_velocity": diff(Gps, "velocity"),
    }


@pytest.mark.parametrize("quantity, samples, sigma", [
    ("accel", 10_000, ACCEL_SIGMA), ("gyro", 10_000, GYRO_SIGMA), ("mag", 4_000, MAG_SIGMA),
    ("baro", 2_000, BARO_SIGMA), ("gps_velocity", 400, GPS_VELOCITY),
    ("gps_horizontal_step", 200, step_sigma(GPS_H, DRIFT_H)), ("gps_vertical_step", 200, step_sigma(GPS_V, DRIFT_V)),
])
def test_noise_of_the_vehicle_file_sensors_has_the_authored_sigma(noise, quantity, samples, sigma):
    # For n zero-mean normal draws of spread σ, Σx²/σ² is chi-square with n degrees of freedom
    # (mean n, standard deviation √(2n)): accept |Σx²/(nσ²) - 1| < 5·√(2/n), five standard
    # deviations (±7% on the variance at n = 10,000, ±50% at n = 200: a 10x error fails every
    # one), and a mean within 5σ/√n.
    values = noise[quantity].reshape(len(noise[quantity]), -1)
    assert len(values) >= samples  # (the slower sensors also keep the sample held over from start-up)
    n = len(values)
    ratio = np.sum(values**2, axis=0) / (n * sigma**2)
    assert np.all(np.abs(ratio - 1.0) < 5 * math.sqrt(2.0 / n)), ratio
    assert np.all(np.abs(values.mean(axis=0)) < 5 * sigma / math.sqrt(n))


def test_noise_differs_between_consecutive_replays_of_the_captured_graph(noise):
    # Every tick replays one graph; the tick counter it increments reseeds the draws.
    for quantity in ("accel", "gyro", "mag", "gps_velocity"):
        values = noise[quantity].reshape(len(noise[quantity]), -1)
        assert np.all(np.any(values[1:] != values[:-1], axis=1)), quantity
        assert np.all(np.any(values != 0.0, axis=1)), quantity
    # One float32 pressure near 95,600 Pa resolves 1/128 Pa, so two draws of σ = 3 Pa meet by
    # chance about once in 1,400 pairs; a frozen stream would repeat every time.
    pressure = noise["baro"]
    assert np.mean(pressure[1:] == pressure[:-1]) < 0.005


def test_two_imus_draw_from_distinct_streams(noise):
    # Same mount, same settings, different prims: their noise is uncorrelated (|ρ| < 4/√N = 0.04).
    a, b = noise["accel"], noise["accel_second"]
    for axis in range(3):
        assert abs(np.corrcoef(a[:, axis], b[:, axis])[0, 1]) < 0.04


def test_gps_drift_wanders_slowly(ground_vehicle):
    # The vehicle file's GPS with its white noise turned off and sampling every tick, so its error
    # is the drift alone: d ← φ·d + σ·√(1 - φ²)·n with σ = 0.3 m, φ = exp(-dt/τ), dt = 4 ms,
    # τ = 60 s (the schema's fallbacks, see above). Tick-to-tick steps have
    # σ·√(2(1 - φ)) ≈ 0.3 m·0.01155 = 3.5 mm, far below σ.
    plant = ground_vehicle.plant
    drift = twin(own(ground_vehicle, Gps), "/drift/gps", noise=True)
    drift.horizontal_sigma = drift.vertical_sigma = drift.velocity_sigma = 0.0
    drift.rate, quiet = 0.0, twin(drift, "/quiet/gps", noise=False)
    loop = ring(ground_vehicle, [drift, quiet], seed=3)
    plant.reset()
    start(loop, plant)
    noisy, quiet = loop.output("gps", "/drift/gps"), loop.output("gps", "/quiet/gps")
    north = []
    for _ in range(2000):
        loop.tick()
        north.append(np.radians(noisy.numpy()[0]["latitude"] - quiet.numpy()[0]["latitude"]) * 6.37e6)  # float: a copy
    steps = np.diff(north)
    phi = math.exp(-TICK_S / DRIFT_TAU)
    assert abs(steps.std() / (DRIFT_H * math.sqrt(2 * (1 - phi))) - 1.0) < 0.1
    assert np.max(np.abs(north)) < 5 * DRIFT_H
