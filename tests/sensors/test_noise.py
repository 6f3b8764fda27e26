"""Noise: its size, its freshness on every replay of a captured graph, and its streams.

Each noisy sensor runs beside a noiseless twin at the same mount, so their
difference is the noise alone, whatever the physics does.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nexus.sensors import Barometer, Gps, Imu, Magnetometer
from nexus.sensors.imu import ACCEL_NOISE_SIGMA, GYRO_NOISE_SIGMA
from nexus.sensors.magnetometer import TESLA_PER_GAUSS
from nexus.startup import start
from tests.sensors.conftest import ORIGIN, ring

SAMPLES = 10_000
MAG_SIGMA = 0.005 * TESLA_PER_GAUSS  # [T]
BARO_SIGMA = 3.0  # [Pa]
GPS_SIGMA = 0.02  # horizontal white noise [m]
GPS_VELOCITY_SIGMA = 0.05  # [m/s]


def twins(plant):
    """Noisy sensors (every tick) and their noiseless twins, plus a second noisy IMU."""
    every_tick = {"rate": 0.0, "mount": (0.0, 0.0, 0.02)}
    gps = {"plant": plant, "horizontal_drift_sigma": 0.0, "vertical_drift_sigma": 0.0, **every_tick}
    return [
        Imu("/noisy/imu", **every_tick), Imu("/quiet/imu", noise=False, **every_tick), Imu("/noisy/imu_b", **every_tick),
        Magnetometer("/noisy/mag", plant=plant, **every_tick), Magnetometer("/quiet/mag", plant=plant, noise=False, **every_tick),
        Barometer("/noisy/baro", plant=plant, **every_tick), Barometer("/quiet/baro", plant=plant, noise=False, **every_tick),
        Gps("/noisy/gps", **gps), Gps("/quiet/gps", noise=False, **gps),
    ]


@pytest.fixture(scope="module")
def noise(ground_vehicle) -> dict[str, np.ndarray]:
    """10,000 captured ticks of every twin's difference (noisy - quiet), resting on the ground."""
    loop = ring(ground_vehicle, twins(ground_vehicle.plant), seed=7)
    ground_vehicle.plant.reset()
    start(loop, ground_vehicle.plant)
    buffers = {name: loop.output(signal, name) for signal, name in [
        ("imu", "/noisy/imu"), ("imu", "/quiet/imu"), ("imu", "/noisy/imu_b"), ("mag", "/noisy/mag"),
        ("mag", "/quiet/mag"), ("baro", "/noisy/baro"), ("baro", "/quiet/baro"), ("gps", "/noisy/gps"), ("gps", "/quiet/gps"),
    ]}
    rows = {name: [] for name in buffers}
    for _ in range(SAMPLES):
        loop.tick()
        for name, buffer in buffers.items():
            rows[name].append(buffer.numpy().copy()[0])  # numpy() is a view on the CPU
    data = {name: np.array(values) for name, values in rows.items()}

    def field(name, key):
        return np.array([np.asarray(row[key], dtype=np.float64) for row in data[name]])

    m_radius = 6378137.0 * (1 - 0.00669437999014) / (1 - 0.00669437999014 * math.sin(math.radians(ORIGIN[0])) ** 2) ** 1.5
    return {
        "accel": field("/noisy/imu", "accel") - field("/quiet/imu", "accel"),
        "gyro": field("/noisy/imu", "gyro") - field("/quiet/imu", "gyro"),
        "accel_b": field("/noisy/imu_b", "accel") - field("/quiet/imu", "accel"),
        "mag": field("/noisy/mag", "field") - field("/quiet/mag", "field"),
        "baro": field("/noisy/baro", "pressure") - field("/quiet/baro", "pressure"),
        # Latitude difference [deg] -> metres north along the meridian (radius M + h).
        "gps_north": np.radians(field("/noisy/gps", "latitude") - field("/quiet/gps", "latitude")) * (m_radius + ORIGIN[2]),
        "gps_velocity": field("/noisy/gps", "velocity") - field("/quiet/gps", "velocity"),
    }


@pytest.mark.parametrize("quantity, sigma", [
    ("accel", ACCEL_NOISE_SIGMA), ("gyro", GYRO_NOISE_SIGMA), ("mag", MAG_SIGMA), ("baro", BARO_SIGMA),
    ("gps_north", GPS_SIGMA), ("gps_velocity", GPS_VELOCITY_SIGMA),
])
def test_noise_sigma_is_within_5_percent_over_10000_samples(noise, quantity, sigma):
    # The sample standard deviation of N = 10,000 Gaussian draws is off by about 1/√(2N) = 0.7%,
    # so 5% is a 7-standard-error bound; the mean is within 4σ/√N = 0.04σ.
    values = noise[quantity].reshape(SAMPLES, -1)
    assert np.all(np.abs(values.std(axis=0) / sigma - 1.0) < 0.05)
    assert np.all(np.abs(values.mean(axis=0)) < 4 * sigma / math.sqrt(SAMPLES))


def test_noise_differs_between_consecutive_replays_of_the_captured_graph(noise):
    # Every tick replays one graph; the tick counter it increments reseeds the draws.
    for quantity in ("accel", "gyro", "mag", "gps_velocity"):
        values = noise[quantity].reshape(SAMPLES, -1)
        assert np.all(np.any(values[1:] != values[:-1], axis=1)), quantity
        assert np.all(np.any(values != 0.0, axis=1)), quantity
    # One float32 pressure near 95,600 Pa resolves 1/128 Pa, so two draws of σ = 3 Pa meet by
    # chance about once in 1,400 pairs; a frozen stream would repeat every time.
    pressure = noise["baro"]
    assert np.mean(pressure[1:] == pressure[:-1]) < 0.005


def test_two_imus_draw_from_distinct_streams(noise):
    # Same mount, same settings, different prims: their noise is uncorrelated (|ρ| < 4/√N = 0.04).
    a, b = noise["accel"], noise["accel_b"]
    for axis in range(3):
        assert abs(np.corrcoef(a[:, axis], b[:, axis])[0, 1]) < 0.04


def test_gps_drift_wanders_slowly(ground_vehicle):
    # Drift only (white noise 0): d ← φ·d + σ·√(1 - φ²)·n with φ = exp(-dt/τ), dt = 4 ms, τ = 60 s.
    # Tick-to-tick steps have σ·√(2(1 - φ)) ≈ 0.3 m·0.01155 = 3.5 mm, far below σ = 0.3 m.
    plant = ground_vehicle.plant
    settings = {"plant": plant, "rate": 0.0, "horizontal_sigma": 0.0, "vertical_sigma": 0.0, "velocity_sigma": 0.0}
    loop = ring(ground_vehicle, [Gps("/drift/gps", **settings), Gps("/quiet/gps", noise=False, **settings)], seed=3)
    plant.reset()
    start(loop, plant)
    noisy, quiet = loop.output("gps", "/drift/gps"), loop.output("gps", "/quiet/gps")
    north = []
    for _ in range(2000):
        loop.tick()
        north.append(np.radians(noisy.numpy()[0]["latitude"] - quiet.numpy()[0]["latitude"]) * 6.37e6)  # float: a copy
    steps = np.diff(north)
    phi = math.exp(-0.004 / 60.0)
    assert abs(steps.std() / (0.3 * math.sqrt(2 * (1 - phi))) - 1.0) < 0.1
    assert np.max(np.abs(north)) < 5 * 0.3
