"""The EKF without its aids: frozen and dropped-out sensors, fake-position fusion, a GPS return's reset.

The kernel runs on hand-made samples (the harness of ``test_ekf_filter.py``:
250 Hz IMU, GPS 10 Hz, barometer 50 Hz, magnetometer 50 Hz), so each sample's
time and value is known and each expectation is worked out below. Status bits
(``estimate_status``): 4 GPS aiding, 8 baro aiding, 64 horizontal position
valid, 512 GPS fault, 1024 baro fault, 8192 fake-position fusion.
"""

import numpy as np
import pytest

from tests.estimation.test_ekf_filter import Harness

GPS_AIDING, BARO_AIDING, HORIZONTAL_VALID, GPS_FAULT, BARO_FAULT, NO_AID = 4, 8, 64, 512, 1024, 8192


def status(h):
    return int(h.out[1].numpy()[0])


def last_gps_accepted(h):
    return float(h.state[3].numpy()[0, 6])


def test_a_frozen_gps_is_detected_and_no_longer_fused_and_a_noiseless_one_is_not():
    # A GPS that declares noise (jitter 5 cm) for 10 s, then frozen: every sample from t = 10.0 s on carries the same
    # values with fresh times. The freeze is the 10th repeat of the first frozen sample: t = 10.0 + 10 x 0.1 = 11.0 s.
    h = Harness(sensor_noisy=(True, False, False, False))
    h.gps_jitter = 0.05
    h.step(2500)
    assert status(h) & GPS_AIDING and not status(h) & GPS_FAULT
    h.gps_jitter = 0.0
    h.step(250)  # t = 10.0 ... 10.996: the frozen sample and 9 repeats
    assert not status(h) & GPS_FAULT and last_gps_accepted(h) == pytest.approx(10.9)
    h.step(1)  # t = 11.0: the 10th repeat
    assert status(h) & GPS_FAULT
    h.step(500)  # 2 s more of the frozen GPS: none of it fused, and the GPS aiding is off 1 s after the last fusion
    assert last_gps_accepted(h) == pytest.approx(10.9)
    assert status(h) & GPS_FAULT and not status(h) & GPS_AIDING
    h.gps_jitter = 0.05  # fresh, changed samples: fused again
    h.step(25)
    assert not status(h) & GPS_FAULT and status(h) & GPS_AIDING and last_gps_accepted(h) == pytest.approx(13.1)
    # The same exactly repeating GPS that declares no noise (its values legitimately repeat) is never flagged.
    quiet = Harness()
    quiet.step(3000)
    assert status(quiet) & GPS_AIDING and not status(quiet) & GPS_FAULT


def test_a_gps_and_a_barometer_that_drop_out_are_detected_after_ten_sample_periods():
    # No new samples (gps_denied): the GPS's last at t = 9.9 s; faulted once its newest sample is more than
    # 10 periods (1 s at 10 Hz) old: from t = 10.904 s; the barometer's last at 9.98 s, 10 periods of 50 Hz
    # (0.2 s): from t = 10.184 s.
    h = Harness()
    h.step(2500)
    h.baro_on = False
    h.step(45, gps_on=False)  # to t = 10.176
    assert not status(h) & (GPS_FAULT | BARO_FAULT)
    h.step(2, gps_on=False)  # t = 10.18, 10.184
    assert status(h) & BARO_FAULT and not status(h) & GPS_FAULT
    h.step(178, gps_on=False)  # to t = 10.896
    assert not status(h) & GPS_FAULT
    h.step(2, gps_on=False)  # t = 10.9, 10.904
    assert status(h) & GPS_FAULT and status(h) & BARO_FAULT
    h.step(250, gps_on=False)
    assert not status(h) & (GPS_AIDING | BARO_AIDING)  # neither fused for over 1 s
    h.baro_on = True
    h.step(5)
    assert not status(h) & BARO_FAULT and status(h) & BARO_AIDING


def test_at_rest_without_gps_a_fake_position_keeps_the_horizontal_variance_bounded():
    # GPS gone after the alignment. For 5 s (EKF2_NOAID_TOUT) the filter dead-reckons; then, at rest (the IMU
    # quiet for more than 1 s), it fuses a fake position at the last one with R = 0.01² = 1e-4 m² every 0.2 s.
    # Each fusion is a scalar update: P+ = P-·R/(P- + R) < R. Between fusions P grows as the velocity's
    # uncertainty integrates: a (position, velocity) pair alone, driven by EKF2_ACC_NOISE (q = 0.35²·0.008 m²/s³
    # per second, PX4's discretisation at 125 Hz), settles, iterating P <- F·P·F' + Q over 0.2 s and the scalar
    # update to their fixed point, at P- = 1.11e-4 and P+ = 5.27e-5 m²; the filter's tilt and bias states only add
    # uncertainty, so its P- is at least 1.11e-4; below twice that. (Measured: P- = 1.438e-4 at most over 10-15 s,
    # 1.357e-4 over 15-20 s; P+ = 5.9e-5.)
    h = Harness()
    h.step(1)
    h.step(2500, gps_on=False)  # 10 s
    assert status(h) & NO_AID and status(h) & HORIZONTAL_VALID
    trace = []
    for _ in range(2500):  # 10 s more: 50 fake fusions
        h.step(1, gps_on=False)
        trace.append(float(h.covariance[0, 0, 0]))
    trace = np.array(trace)
    first, second = trace[:1250], trace[1250:]
    assert second.max() < first.max()  # bounded: not growing (the slow tilt and bias states still settle)
    assert 1.11e-4 <= first.max() and second.max() < 2 * 1.11e-4
    # After a fusion, P+ = P-·R/(P- + R) with the P- just before it.
    drops = np.flatnonzero(np.diff(trace) < -0.3 * trace[:-1])  # the fake fusions
    before, after = trace[drops[-1]], trace[drops[-1] + 1]
    assert second.min() < 1e-4 and after == pytest.approx(before * 1e-4 / (before + 1e-4), rel=0.02)
    np.testing.assert_allclose(h.estimate[0]["position"][:2], (0.0, 0.0), atol=1e-3)


@pytest.fixture(scope="module")
def flight_without_gps():
    """In flight (the gyro shakes at ±0.1 rad/s: not at rest), GPS lost after 10 s; the larger horizontal 1σ [m]
    and the status each second for 40 s."""
    h = Harness()
    h.vibration = 0.1
    h.step(2500)
    out = [(float(np.sqrt(max(h.covariance[0, 0, 0], h.covariance[0, 1, 1]))), status(h))]
    for _ in range(40):
        h.step(250, gps_on=False)
        out.append((float(np.sqrt(max(h.covariance[0, 0, 0], h.covariance[0, 1, 1]))), status(h)))
    return out


def test_in_flight_without_gps_the_horizontal_sigma_passes_5_m_and_the_position_turns_invalid_then_stays_bounded(
        flight_without_gps):
    # Dead reckoning: the 1σ grows every second until it passes EKF2_NOAID_NOISE (10 m); once it has passed the
    # 5 m limit the position is invalid. After 5 s without GPS (EKF2_NOAID_TOUT) the filter is in its no-aid mode;
    # moving, it fuses the fake position (R = 10² m²) only while the 1σ is above 10 m: each such fusion leaves
    # P+ = P-·100/(P- + 100) ≈ 50 m² (7.1 m), so the 1σ stays between about 7 and 10 m.
    # (Measured: 4.67 m at 10 s, 5.73 m at 11 s, 9.87 m at 14 s, then between 7.16 and 9.96 m.)
    sigma = [s for s, _ in flight_without_gps]
    bits = [b for _, b in flight_without_gps]
    assert sigma[0] < 0.2 and bits[0] & HORIZONTAL_VALID
    grow = next(i for i, s in enumerate(sigma) if s > 9.0)
    assert all(b > a for a, b in zip(sigma[:grow], sigma[1:grow + 1]))
    crossed = next(i for i, s in enumerate(sigma) if s >= 5.0)
    assert all(b & HORIZONTAL_VALID for b in bits[:crossed]) and not any(b & HORIZONTAL_VALID for b in bits[crossed:])
    assert all(b & NO_AID for b in bits[6:]) and not bits[4] & NO_AID
    assert all(7.0 < s < 10.2 for s in sigma[20:])


def test_a_gps_return_20_m_away_resets_the_position_by_that_delta_without_a_velocity_jump():
    # At rest, GPS lost for 8 s (past EKF2_NOAID_TOUT: the position held by the fake fusion at 0); it returns
    # saying the vehicle is 20 m north, 5 m west. A fusion would be refused (20 m at σ about 0.5 m is far past
    # the 5 SD gate); the filter resets its horizontal position to the GPS's: the reset's delta is (20, -5, 0) m
    # (new - old, old within 1e-3 of 0), counted once, and the velocity is the GPS's (0): no jump.
    h = Harness()
    h.step(2500)
    h.step(2000, gps_on=False)
    assert status(h) & NO_AID
    before = h.estimate[0]["position"].copy()
    h.gps_position[0] = (20.0, -5.0, 0.0)
    speeds = []
    for _ in range(250):
        h.step(1)
        speeds.append(float(np.linalg.norm(h.estimate[0]["velocity"])))
    np.testing.assert_allclose(h.out[7].numpy()[0], (20.0 - before[0], -5.0 - before[1], 0.0), atol=1e-3)
    np.testing.assert_allclose(h.out[7].numpy()[0], (20.0, -5.0, 0.0), atol=1e-3)
    assert h.out[8].numpy()[0] == 1
    np.testing.assert_allclose(h.estimate[0]["position"], (20.0, -5.0, 0.0), atol=0.01)
    assert max(speeds) < 0.01
    assert not status(h) & NO_AID and status(h) & GPS_AIDING and status(h) & HORIZONTAL_VALID
    assert h.out[5].numpy()[0][:2].tolist() == [0, 0]  # nothing rejected: the jump was a reset, not a fusion
