"""The IMU against hand calculations: gravity, free fall, yaw rate, mount offset, spin-up."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nexus.sensors import Imu
from nexus.sensors.imu import ACCEL_NOISE_SIGMA, GYRO_NOISE_SIGMA
from nexus.runtime.startup import start
from tests.sensors.conftest import BASE_COM, G, known_ring, place, ring, sample, vec


def test_resting_imu_reads_minus_g_on_z(ground_vehicle):
    # At rest the mount does not accelerate, so f = 0 - g_world = (0, 0, +g) ENU, which is
    # (0, 0, +g) in the level body's FLU axes and (0, 0, -g) in FRD. Noise σ = 6.37e-3 m/s²
    # (accel) and 8.73e-4 rad/s (gyro); the settled vehicle's contact jitter is below 2e-3 m/s².
    loop = ring(ground_vehicle)  # the vehicle file's own sensors, noise on
    ground_vehicle.plant.reset()
    start(loop, ground_vehicle.plant)
    accel, gyro = [], []
    for _ in range(100):
        loop.tick()
        imu = sample(loop, "imu")
        accel.append(vec(imu.accel))
        gyro.append(vec(imu.gyro))
    accel, gyro = np.array(accel), np.array(gyro)
    assert np.all(np.abs(accel - (0.0, 0.0, -G)) < 6 * ACCEL_NOISE_SIGMA + 2e-3)
    assert np.all(np.abs(gyro) < 6 * GYRO_NOISE_SIGMA)
    # The mean of 100 samples lies within 4σ/√100 (+ jitter) of the true value.
    np.testing.assert_allclose(accel.mean(axis=0), (0.0, 0.0, -G), atol=4 * ACCEL_NOISE_SIGMA / 10 + 5e-4)


def test_free_falling_imu_reads_about_zero(void_vehicle):
    # In free fall the body accelerates at g, so f = g - g = 0 on every axis, whatever the mount.
    imu = Imu("/test/imu", noise=False, mount=(0.1, 0.05, 0.02), rate=0.0)
    loop = ring(void_vehicle, [imu])
    place(void_vehicle, (0.0, 0.0, 50.0))
    for _ in range(25):
        loop.tick()
        np.testing.assert_allclose(vec(sample(loop, "imu").accel), 0.0, atol=1e-4)
        np.testing.assert_allclose(vec(sample(loop, "imu").gyro), 0.0, atol=1e-6)


def test_constant_yaw_rate_appears_on_gyro_z(void_vehicle):
    # ω = (0, 0, 2) rad/s ENU about a level body's up axis: FLU (0, 0, 2), FRD (0, 0, -2),
    # and nothing on x and y, at every heading the body turns through.
    imu = Imu("/test/imu", noise=False, rate=0.0)
    loop = ring(void_vehicle, [imu])
    place(void_vehicle, (0.0, 0.0, 50.0), angular_velocity=(0.0, 0.0, 2.0))
    for _ in range(25):  # 0.1 s: the body turns 0.2 rad
        loop.tick()
        np.testing.assert_allclose(vec(sample(loop, "imu").gyro), (0.0, 0.0, -2.0), atol=1e-4)


def test_mount_offset_adds_centripetal_term(void_vehicle):
    # Free fall, yaw rate ω = 2 rad/s, IMU 0.1 m forward of the body origin.
    # r = mount - com = (0.1, 0, 0.011) FLU; ω × (ω × r) = -ω²·(r_x, r_y, 0) = (-0.4, 0, 0) m/s²,
    # pointing from the mount to the spin axis; COM acceleration g cancels gravity, so
    # f = (-0.4, 0, 0) FLU = (-0.4, 0, 0) FRD. A mount on the axis reads 0.
    mount = np.array([0.1, 0.0, 0.0])
    omega = 2.0
    r = mount - BASE_COM
    expected = -omega**2 * np.array([r[0], r[1], 0.0])  # FLU; FRD has the same x
    offset = Imu("/test/imu_offset", noise=False, rate=0.0, mount=tuple(mount))
    centred = Imu("/test/imu_centred", noise=False, rate=0.0, mount=(0.0, 0.0, 0.0))
    loop = ring(void_vehicle, [offset, centred])
    place(void_vehicle, (0.0, 0.0, 50.0), angular_velocity=(0.0, 0.0, omega))
    for _ in range(10):
        loop.tick()
        np.testing.assert_allclose(vec(sample(loop, "imu", offset.name).accel), expected * (1, -1, -1), atol=1e-4)
        np.testing.assert_allclose(vec(sample(loop, "imu", centred.name).accel), 0.0, atol=1e-4)


@pytest.mark.parametrize("yaw", [0.0, math.pi / 2], ids=["heading-east", "heading-north"])
def test_yaw_spin_up_adds_tangential_term(yaw):
    # A body starting to spin about up: α = (0, 0, 5) rad/s², ω = 0 (so no centripetal term),
    # falling freely (COM acceleration g cancels gravity). IMU at (0.1, 0.05, 0.02) FLU, COM at
    # (0, 0, -0.011): r = (0.1, 0.05, 0.031) m in the body.
    # α × r = (α_y r_z - α_z r_y, α_z r_x - α_x r_z, α_x r_y - α_y r_x) = (-5·0.05, 5·0.1, 0)
    # = (-0.25, 0.5, 0) m/s² FLU, the same at any heading (α is along the yaw axis);
    # FRD flips y and z: (-0.25, -0.5, 0).
    imu = Imu("/test/imu", noise=False, rate=0.0, mount=(0.1, 0.05, 0.02))
    loop = known_ring([imu], yaw=yaw, angular_accel=(0.0, 0.0, 5.0))
    for _ in range(3):
        loop.tick()
        np.testing.assert_allclose(vec(sample(loop, "imu").accel), (-0.25, -0.5, 0.0), atol=1e-6)
        np.testing.assert_allclose(vec(sample(loop, "imu").gyro), 0.0, atol=1e-7)


def test_roll_spin_up_at_the_vehicle_imu_mount():
    # The vehicle file's IMU sits at (0, 0, 0.02) FLU (vehicles/astro_max_base.usda, Imu
    # nexus:mountOffset), 0.031 m above the COM at z = -0.011: r = (0, 0, 0.031) m. A roll
    # spin-up α = (20, 0, 0) rad/s² about the forward axis (level body, heading east):
    # α × r = (0·0.031 - 0·0, 0·0 - 20·0.031, 20·0 - 0·0) = (0, -0.62, 0) m/s² FLU = (0, 0.62, 0) FRD.
    imu = Imu("/test/imu", noise=False, rate=0.0, mount=(0.0, 0.0, 0.02))
    loop = known_ring([imu], angular_accel=(20.0, 0.0, 0.0))
    loop.tick()
    np.testing.assert_allclose(vec(sample(loop, "imu").accel), (0.0, 0.62, 0.0), atol=1e-6)
