"""``nexus plot`` of a vehicle with two IMUs: one channel group per IMU prim, each with its own mount and σ.

The record names a signal's columns by writer when two components write it
(``imu/Imu.accel[0]``, ``imu/ImuQuiet.accel[0]``); a one-IMU run keeps ``imu.accel[0]``
and its report must not change.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from nexus.viz.report import write_report
from nexus.viz.run_data import load_run
from nexus.viz.series import flight_series
from nexus.viz.vehicle_file import read_vehicle_file

AXES = ("accel x", "accel y", "accel z", "gyro x", "gyro y", "gyro z")


@pytest.fixture(scope="module")
def two_imu_report(two_imu_run, tmp_path_factory):
    """The shared 1 s two-IMU run (250 ticks at 250 Hz), plotted in a copy of its folder."""
    out = tmp_path_factory.mktemp("viz_two_imus") / "run"
    shutil.copytree(two_imu_run, out)
    report = write_report(out)
    stats = {(s["sensor"], s["channel"]): s for s in report.sensor_stats}
    return out, report, stats


def test_each_imu_has_its_own_channels_figure_and_title(two_imu_report):
    out, report, stats = two_imu_report
    for writer in ("Imu", "ImuQuiet"):
        assert all((f"imu/{writer}", axis) in stats for axis in AXES), sorted(stats)
        assert stats[(f"imu/{writer}", "accel x")]["samples"] == 250  # 250 Hz IMU, 250 ticks
        assert report.figures[f"imu-{writer}"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not any(sensor == "imu" for sensor, _ in stats)  # no channel claims to be "the" IMU
    assert "imu" not in report.figures
    page = (out / "report.html").read_text()
    assert "IMU Imu against truth" in page and "IMU ImuQuiet against truth" in page
    assert "<figcaption>IMU against truth" not in page
    # The other sensors have one writer each: as in a one-IMU run.
    assert {"mag", "baro", "gps"} <= set(report.figures)
    assert json.loads((out / "plots" / "sensor_stats.json").read_text()) == report.sensor_stats


@pytest.mark.parametrize("axis, sigma", [
    ("accel x", 0.00637), ("accel z", 0.00637),  # Imu's nexus:accelNoiseSigma [m/s²], vehicles/astro_max_base.usda
    ("gyro x", 0.0008726646), ("gyro z", 0.0008726646),  # Imu's nexus:gyroNoiseSigma [rad/s], same file
])
def test_the_noisy_imu_has_its_prims_sigma_and_noise(two_imu_report, axis, sigma):
    stats = two_imu_report[2][("imu/Imu", axis)]
    assert stats["sigma"] == pytest.approx(sigma, rel=1e-6)
    # 250 Gaussian samples: the sample std is within ±3·σ/√(2·250) ≈ 13.4% of σ, the mean within ±4·σ/√250 ≈ 0.25σ.
    assert stats["residual_std"] == pytest.approx(sigma, rel=0.14)
    assert abs(stats["residual_mean"]) < 0.26 * sigma


@pytest.mark.parametrize("axis", AXES)
def test_the_quiet_imu_has_the_sigma_its_prim_authors(two_imu_report, axis):
    # ImuQuiet authors nexus:noise = 0 (tests/data/astro_max_two_imus.usda): σ = 0 on every axis.
    stats = two_imu_report[2][("imu/ImuQuiet", axis)]
    assert stats["sigma"] == 0.0
    assert stats["within_1sigma"] is None  # no band to be within


def test_the_quiet_imus_truth_is_taken_at_its_own_mount(two_imu_report):
    # Noiseless, so sample − truth is float32 rounding (|a| ≈ 9.8 m/s²: ~1e-6) when truth is worked out at
    # ImuQuiet's mount (0.05, 0, 0.02) m; at Imu's mount (0, 0, 0.02) m the 5 cm lever arm of the take-off's
    # rotation leaves ~1e-4 m/s² (measured 9.7e-5 on this flight).
    out = two_imu_report[0]
    run = load_run(out)
    vehicle = read_vehicle_file(run.vehicle_path(), None)
    assert vehicle.sensor("imu", "ImuQuiet").mount == pytest.approx((0.05, 0.0, 0.02))
    series = flight_series(run, vehicle)
    worst = max(float(np.max(np.abs(channel.residual))) for channel in series.channels["imu/ImuQuiet"])
    assert worst < 1e-5


def test_a_one_imu_run_keeps_its_channel_names_and_titles(short_run, tmp_path):
    report = write_report(short_run, tmp_path)
    sensors = {(s["sensor"], s["channel"]) for s in report.sensor_stats}
    assert {(sensor, axis) for sensor, axis in sensors if sensor.startswith("imu")} == {("imu", a) for a in AXES}
    assert {sensor for sensor, _ in sensors} == {"imu", "mag", "baro", "gps"}
    assert [name for name in report.figures if name not in ("position", "attitude", "rates", "motors")] == [
        "imu", "mag", "baro", "gps"]
    page = (tmp_path / "report.html").read_text()
    for title in ("IMU against truth", "Magnetometer against truth", "Barometer against truth",
                  "GPS position against truth"):
        assert f"<figcaption>{title} (plots/" in page
    imu = next(s for s in report.sensor_stats if s["sensor"] == "imu" and s["channel"] == "accel x")
    assert imu["sigma"] == pytest.approx(0.00637, rel=1e-6)  # Imu's nexus:accelNoiseSigma [m/s²]
