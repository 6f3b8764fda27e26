"""The IMU's turn-on bias and bias random walk: their spread over many independent streams.

Each test flies many IMUs on one known body in free fall (every reading would be
exactly zero without noise), with white noise off, so a reading *is* the bias.
Every IMU prim draws from its own streams (``imu/turn_on_bias/<prim>``,
``imu/accel_bias/<prim>``, ...), and several run seeds are used, so the sensors
are independent draws of the same distribution.

Tolerance. For n independent zero-mean normal draws x of standard deviation σ,
S = Σx²/σ² follows a chi-square law with n degrees of freedom: mean n, standard
deviation √(2n). The tests accept |S/n - 1| < 5·√(2/n), five standard deviations
(a false alarm has odds of about 1 in 3.5 million; at n = 600, ±29% on the
variance, ±14% on σ). The mean is checked within 5σ/√n.
"""

from __future__ import annotations

import math

import numpy as np

from nexus.sensors import Imu
from tests.sensors.conftest import known_ring, sample, vec

SEEDS = (1, 2, 3, 4)
PER_SEED = 50
#: Draws per quantity: 4 seeds × 50 IMUs × 3 axes.
N = len(SEEDS) * PER_SEED * 3
TICK_S = 0.004


def assert_spread(draws: np.ndarray, sigma: float, what: str) -> None:
    """``draws`` are N(0, sigma²) within the chi-square bound above."""
    n = draws.size
    ratio = float(np.sum(draws**2)) / (n * sigma**2)
    assert abs(ratio - 1.0) < 5 * math.sqrt(2.0 / n), f"{what}: variance / expected = {ratio:.3f} over {n} draws"
    assert abs(draws.mean()) < 5 * sigma / math.sqrt(n), f"{what}: mean {draws.mean():.3g}, σ {sigma:.3g}"


def imus(**noise) -> list[Imu]:
    quiet = {"accel_sigma": 0.0, "gyro_sigma": 0.0, "rate": 0.0}
    return [Imu(f"/test/imu_{i}", **quiet, **noise) for i in range(PER_SEED)]


def readings(loop, sensors) -> tuple[np.ndarray, np.ndarray]:
    """Accel and gyro of every sensor now, shape (sensors, 3)."""
    rows = [sample(loop, "imu", s.name) for s in sensors]
    return np.array([vec(r.accel) for r in rows]), np.array([vec(r.gyro) for r in rows])


def test_turn_on_bias_spread_matches_its_sigma_and_holds_still():
    # accelBiasSigma 0.2 m/s², gyroBiasSigma 0.01 rad/s, no walk: each IMU reads a constant
    # drawn once at start, N(0, σ²) per axis.
    accel_sigma, gyro_sigma = 0.2, 0.01
    accel, gyro = [], []
    for seed in SEEDS:
        sensors = imus(accel_bias_sigma=accel_sigma, gyro_bias_sigma=gyro_sigma)
        loop = known_ring(sensors, seed=seed)
        loop.tick()
        first = readings(loop, sensors)
        for _ in range(10):
            loop.tick()
        later = readings(loop, sensors)
        # Without a random walk the bias does not move.
        np.testing.assert_array_equal(first[0], later[0])
        np.testing.assert_array_equal(first[1], later[1])
        accel.append(first[0])
        gyro.append(first[1])
    accel, gyro = np.array(accel), np.array(gyro)
    assert_spread(accel, accel_sigma, "accel turn-on bias")
    assert_spread(gyro, gyro_sigma, "gyro turn-on bias")
    # Two run seeds draw different biases.
    assert not np.array_equal(accel[0], accel[1])


def test_bias_random_walk_spread_grows_as_sigma_root_t():
    # accelBiasRandomWalk 0.05 m/s²/√s, gyroBiasRandomWalk 0.005 rad/s/√s, no turn-on bias.
    # Each sample after the first adds N(0, σ_w²·Δt) with Δt = 4 ms (the first, at t₀ = 4 ms,
    # adds nothing: no time has passed), so after k ticks the bias is N(0, σ_w²·(k - 1)·Δt):
    # its spread grows as σ_w·√(t - t₀), x2 from 100 to 397 ticks. A walk that forgot its
    # last value would stay at σ_w·√Δt = 0.063·σ_w.
    accel_walk, gyro_walk = 0.05, 0.005
    checkpoints = (25, 100, 397)  # ticks: t - t₀ = 0.096, 0.396, 1.584 s
    accel = {k: [] for k in checkpoints}
    gyro = {k: [] for k in checkpoints}
    for seed in SEEDS:
        sensors = imus(accel_bias_walk=accel_walk, gyro_bias_walk=gyro_walk)
        loop = known_ring(sensors, seed=seed)
        for tick in range(1, checkpoints[-1] + 1):
            loop.tick()
            if tick in accel:
                a, g = readings(loop, sensors)
                accel[tick].append(a)
                gyro[tick].append(g)
    for k in checkpoints:
        elapsed = (k - 1) * TICK_S
        assert_spread(np.array(accel[k]), accel_walk * math.sqrt(elapsed), f"accel bias walk after {elapsed:.3f} s")
        assert_spread(np.array(gyro[k]), gyro_walk * math.sqrt(elapsed), f"gyro bias walk after {elapsed:.3f} s")
