"""The EKF matched to its sensors is consistent (NEES, NIS, whiteness), and starts from its alignment's covariance.

The figures at full size (64 worlds, 120 s after 10 s of convergence) and the derivations are in
docs/estimation.md, "Consistency"; here the same checks run on a shorter hover to fit the suite's budget.
"""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from tests.estimation.test_ekf_filter import Harness

ROOT = Path(__file__).resolve().parents[2]
MATCHED_VEHICLE = ROOT / "tests" / "data" / "astro_max_ekf_matched.usda"
MATCHED_SCENE = ROOT / "tests" / "data" / "ekf_matched_hover.usda"


def consistency_tool():
    spec = importlib.util.spec_from_file_location("ekf_consistency", ROOT / "tools" / "ekf_consistency.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_alignment_ties_the_tilt_to_the_accelerometer_bias():
    # Level, heading 0, field 20 µT north, 45 µT down (Z/H = 2.25); ABIAS_INIT 0.2, ANGERR_INIT 0.1, HEAD_NOISE 0.3.
    # A specific-force step ε along y rolls the alignment by −ε/g, and the tilted field turns its heading by
    # (Z/H)·(−ε/g); along x it pitches by ε/g (heading unmoved); along z nothing. So the attitude's Jacobian
    # (NED rotation vector per m/s²) is J = [[0, −1/g, 0], [1/g, 0, 0], [0, −2.25/g, 0]], and with
    # Σ_b = 0.04·I: P_θθ = 0.04·J·Jᵀ + 0.01·I + diag(0, 0, 0.09); P_θb = −0.04·J.
    #   0.04/g² = 4.15928e-4: P_θθ = [[0.01041593, 0, 9.35838e-4], [0, 0.01041593, 0], [9.35838e-4, 0, 0.10210564]]
    #   0.04/g = 4.078865e-3: P[θN, b_y] = 4.078865e-3, P[θE, b_x] = −4.078865e-3, P[θD, b_y] = 9.177446e-3
    # Position: the first fix (eph 0) places the origin: 0.5² horizontal, (1.5·0.5)² = 0.5625 down.
    h = Harness(accel_bias_init=0.2, attitude_init=0.1, heading_noise=0.3)
    h.step(1)
    P = h.covariance[0].astype(np.float64)
    expected_tilt = np.array([[0.01041593, 0.0, 9.35838e-4], [0.0, 0.01041593, 0.0], [9.35838e-4, 0.0, 0.10210564]])
    np.testing.assert_allclose(P[6:9, 6:9], expected_tilt, atol=2e-6)
    expected_cross = np.array([[0.0, 4.078865e-3, 0.0], [-4.078865e-3, 0.0, 0.0], [0.0, 9.177446e-3, 0.0]])
    np.testing.assert_allclose(P[6:9, 12:15], expected_cross, atol=1e-5)
    np.testing.assert_allclose(P[12:15, 6:9], expected_cross.T, atol=1e-5)
    np.testing.assert_allclose(np.diag(P)[0:3], [0.25, 0.25, 0.5625], rtol=1e-6)
    np.testing.assert_allclose(np.diag(P)[12:15], [0.04, 0.04, 0.04], rtol=1e-6)
    assert np.linalg.eigvalsh(P).min() > 0.0


def test_the_matched_tuning_is_the_sensors_declared_noise_turned_into_the_filters_terms():
    # By hand (docs/estimation.md, Consistency): 2 IMU samples of 4 ms a covariance step (T = 8 ms);
    # 0.00637/√2, 0.0008726646/√2; walks 0.001/√0.008, 0.0001/√0.008; 0.00637/9.80665; baro 3 Pa over
    # |dp/dh| = 11.67095 Pa/m at 300 m; magnetometer 0.005 gauss = 5e-7 T over the 34,346 nT horizontal field.
    tuning = consistency_tool().matched_tuning(MATCHED_VEHICLE, MATCHED_SCENE)
    expected = {"EKF2_ACC_NOISE": 0.0045043, "EKF2_GYR_NOISE": 0.00061707, "EKF2_ACC_B_NOISE": 0.011180,
                "EKF2_GYR_B_NOISE": 0.0011180, "EKF2_ABIAS_INIT": 0.05, "EKF2_GBIAS_INIT": 0.003,
                "EKF2_ANGERR_INIT": 0.00064956, "EKF2_GPS_P_NOISE": 0.02, "EKF2_GPS_V_NOISE": 0.05,
                "EKF2_BARO_NOISE": 0.25705, "EKF2_HEAD_NOISE": 0.014558, "baroBiasNoise": 0.005}
    for name, value in expected.items():
        assert tuning[name] == pytest.approx(value, rel=2e-4), name
    assert tuning["gps_drift_off"] and tuning["vertical_gps_noise"] == pytest.approx(0.04)
    assert abs(tuning["down_field_over_horizontal"]) < 1e-4  # the dip equator: the heading needs no tilt
    # The vehicle file authors exactly these (the barometer's at the 2 m hover: 0.2571).
    text = MATCHED_VEHICLE.read_text()
    for line in ("EKF2_ACC_NOISE = 0.0045043", "EKF2_GYR_NOISE = 0.00061707", "EKF2_ACC_B_NOISE = 0.011180",
                 "EKF2_GYR_B_NOISE = 0.0011180", "EKF2_ABIAS_INIT = 0.05", "EKF2_GBIAS_INIT = 0.003",
                 "EKF2_ANGERR_INIT = 0.00064956", "EKF2_GPS_P_NOISE = 0.02", "EKF2_GPS_V_NOISE = 0.05",
                 "EKF2_BARO_NOISE = 0.2571", "EKF2_HEAD_NOISE = 0.014558", "baroBiasNoise = 0.005"):
        assert line in text, line


#: The hover of docs/estimation.md's figures: 64 worlds, 10 s to converge, 120 s checked (seed 0; about 16 s of CPU
#: with the free-flyer solver, most of the test's time is the build).
WORLDS, CONVERGE, SECONDS = 64, 10.0, 120.0
SHIPPED_VEHICLE = ROOT / "vehicles" / "astro_max_base.usda"
HOVER_SCENE = ROOT / "tests" / "data" / "ekf_hover.usda"


@pytest.fixture(scope="module")
def tool():
    return consistency_tool()


@pytest.fixture(scope="module")
def matched(tool):
    return tool.statistics(tool.fly(MATCHED_VEHICLE, MATCHED_SCENE, WORLDS, SECONDS, CONVERGE, "freeflyer", 0))


@pytest.fixture(scope="module")
def shipped(tool):
    """The shipped vehicle's sensors (GPS drift on, IMU bias walks, no turn-on bias) and tuning, hovering at Zurich."""
    return tool.statistics(tool.fly(SHIPPED_VEHICLE, HOVER_SCENE, WORLDS, SECONDS, CONVERGE, "freeflyer", 0,
                                    estimator="ekf"))


def test_the_matched_filter_nees_lies_in_the_chi_square_band(matched):
    # χ²(192)/64, two-sided 95 %: [2.43, 3.63]; at least 90 % of the 121 samples 1 s apart inside, and the time
    # average. (Seed 0, 2026-12-06: position 2.983, 95.0 % inside; velocity 2.981, 90.1 %; attitude 3.368.)
    assert matched["samples"] == 121
    assert matched["nees_band"][0] == pytest.approx(2.43, abs=0.005)
    assert matched["nees_band"][1] == pytest.approx(3.63, abs=0.005)
    for name in ("position", "velocity", "attitude"):
        assert 2.43 <= matched["nees"][name]["time_average"] <= 3.63, (name, matched["nees"][name])
    for name in ("position", "velocity"):
        assert matched["nees"][name]["share_inside"] >= 0.9, (name, matched["nees"][name])


@pytest.mark.xfail(strict=True, reason="seed 0's attitude NEES is inside its band at 88.4 % of the samples, not 90 %: "
                   "a hover's tilt error is a per-world constant, so a flight's samples are one draw of 64 worlds; "
                   "16 flights (4 seeds x 4 headings) average 3.045, and 3 of them miss the 90 % share by chance "
                   "(docs/estimation.md, Consistency)")
def test_the_matched_filter_attitude_nees_lies_in_the_band_at_nine_samples_in_ten(matched):
    assert matched["nees"]["attitude"]["share_inside"] >= 0.9, matched["nees"]["attitude"]


def test_the_matched_filter_nis_lies_in_the_chi_square_band_and_innovations_are_white(matched):
    # χ²(64)/64, two-sided 95 %: [0.68, 1.38]; whiteness: |r(k)| ≤ 1.96/√1200 at lags 1..20 (0.1 s to 2 s) for at
    # least 90 % of the 64 × 20 (world, lag) pairs of each scalar (95 % expected of white noise).
    assert matched["nis_band"][0] == pytest.approx(0.68, abs=0.005)
    assert matched["nis_band"][1] == pytest.approx(1.38, abs=0.005)
    assert set(matched["nis"]) == {"gps_north", "gps_east", "gps_down", "gps_vnorth", "gps_veast", "gps_vdown",
                                   "baro", "heading"}
    for name, s in matched["nis"].items():
        assert s["share_inside"] >= 0.9, (name, s)
        assert 0.68 <= s["time_average"] <= 1.38, (name, s)
        w = matched["whiteness"][name]
        assert w["bound"] == pytest.approx(1.96 / math.sqrt(1200))
        assert w["share_within"] >= 0.9, (name, w)


def test_the_shipped_tuning_holds_its_error_bounds_and_is_not_overconfident_in_velocity_and_attitude(shipped):
    # Bounds: the GPS's drift (0.3 m settled 1σ a horizontal axis, so √2·0.3 = 0.42 m horizontal RMS; 0.5 m
    # vertical, which the barometer pulls in) dominates the position error. The accelerometer's bias walk
    # (0.006 m/s²/√s) moves the horizontal bias by 0.006·√130 = 0.07 m/s² 1σ by the end; in a hover the filter
    # cannot tell it from a tilt (g·δθ), so the tilt error grows to 0.07/9.81 = 0.4° an axis: under 0.6° RMS.
    # At Zurich the field dips 63° (down 2.0 times the horizontal), so a tilt error turns the tilt-compensated
    # heading by twice as much: yaw under 1.2°. Measured (seed 0, 2026-12-06): 0.420 m, 0.393 m, tilt 0.459°,
    # yaw 0.697°; NEES velocity 0.236, attitude 0.207.
    assert shipped["rms"]["horizontal_m"] < 0.6
    assert shipped["rms"]["vertical_m"] < 0.6
    assert shipped["rms"]["tilt_deg"] < 0.6
    assert shipped["rms"]["yaw_deg"] < 1.2
    for name in ("velocity", "attitude"):
        assert shipped["nees"][name]["time_average"] < 3.63, (name, shipped["nees"][name])


def test_the_shipped_tuning_is_not_overconfident_in_position(shipped):
    # The GPS's drift (one slow error shared by the 600 samples of its 60 s) is no state of the filter; the shipped
    # vehicles' position random walks (nexus:gpsDriftNoise 0.57, nexus:gpsVerticalDriftNoise 1.05 m/√s) keep the
    # position variance at the drift's. Without them (PX4's filter) the time average is 21.3. Measured (seed 0,
    # 2026-12-06): 3.161, inside the band at 99.2 % of the samples.
    assert shipped["nees"]["position"]["time_average"] < 3.63
