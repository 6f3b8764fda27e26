"""The EKF's kernel on hand-made samples: the algebra, alignment, convergence, a GPS outage, gating, determinism.

The filter's kernel is launched directly over synthetic sensor samples, so
every input is known exactly and each expectation is worked out by hand.
"""

import math
from types import SimpleNamespace

import numpy as np
import pytest
import warp as wp

from nexus.estimation.ekf import Ekf, divergence_line, ekf_step, heading_jacobian, state_arrays
from nexus.estimation.ekf_math import fuse_attitude_scalar, fuse_scalar, predict_covariance, vec15
from nexus.plant.plant import GeodeticOrigin
from nexus.sensors.airspeed import AirspeedSample
from nexus.sensors.rangefinder import RangeSample
from nexus.sensors.samples import BaroSample, GpsSample, ImuSample, MagSample

G = 9.80665
#: A simple Earth field [T] NED: 20 µT north, 45 µT down (declination 0).
FIELD = (2.0e-5, 0.0, 4.5e-5)
ORIGIN = GeodeticOrigin(47.0, 8.0, 400.0)


@wp.kernel
def _fuse_one(P: wp.array3d(dtype=wp.float32), k: int, c: float, nu: float, r: float, dx: wp.array(dtype=vec15)):
    dx[0] = fuse_scalar(P, 0, k, c, nu, r)


@wp.kernel
def _predict(P_in: wp.array3d(dtype=wp.float32), P: wp.array3d(dtype=wp.float32), T: float, dv: wp.vec3,
             R: wp.mat33, q: vec15):
    predict_covariance(P_in, P, 0, T, dv, R, q)


def random_spd(seed):
    a = np.random.default_rng(seed).standard_normal((15, 15))
    return (a @ a.T / 15 + np.eye(15) * 0.1).astype(np.float32)


def test_fuse_scalar_matches_the_kalman_update_by_hand():
    # P = diag(4) except P[2, 5] = P[5, 2] = 1; H = −e_2 (a height), R = 1, ν = 2.
    # S = c²·P22 + R = 5; K = c·P[:, 2]/S: K2 = −0.8, K5 = −0.2; δx = K·ν: δx2 = −1.6, δx5 = −0.4.
    # P'22 = P22 − c²·P22²/S = 4 − 16/5 = 0.8; P'25 = 1 − 4/5 = 0.2; P'55 = 4 − 1/5 = 3.8; others unchanged.
    P = np.eye(15, dtype=np.float32) * 4
    P[2, 5] = P[5, 2] = 1
    p = wp.array(P[None], dtype=wp.float32, device="cpu")
    dx = wp.zeros(1, dtype=vec15, device="cpu")
    wp.launch(_fuse_one, 1, inputs=[p, 2, -1.0, 2.0, 1.0, dx], device="cpu")
    out, d = p.numpy()[0], dx.numpy()[0]
    assert d[2] == pytest.approx(-1.6, abs=1e-6) and d[5] == pytest.approx(-0.4, abs=1e-6)
    assert np.count_nonzero(d) == 2
    assert out[2, 2] == pytest.approx(0.8, abs=1e-6)
    assert out[2, 5] == pytest.approx(0.2, abs=1e-6) and out[5, 2] == pytest.approx(0.2, abs=1e-6)
    assert out[5, 5] == pytest.approx(3.8, abs=1e-6)
    assert out[0, 0] == pytest.approx(4.0) and out[14, 14] == pytest.approx(4.0)


@wp.kernel
def _heading_jacobian(f: wp.vec3, out: wp.array(dtype=wp.vec3)):
    out[0] = heading_jacobian(f)


@wp.kernel
def _fuse_attitude(P: wp.array3d(dtype=wp.float32), h: wp.vec3, nu: float, r: float, dx: wp.array(dtype=vec15)):
    dx[0] = fuse_attitude_scalar(P, 0, h, nu, r)


def test_the_heading_jacobian_holds_the_tilt_terms_of_the_field_worked_by_hand():
    # f = (3, 4, 10) NED: H² = 9 + 16 = 25; H = (−f_N·f_D/H², −f_E·f_D/H², 1) = (−30/25, −40/25, 1).
    out = wp.zeros(1, dtype=wp.vec3, device="cpu")
    wp.launch(_heading_jacobian, 1, inputs=[wp.vec3(3.0, 4.0, 10.0), out], device="cpu")
    assert out.numpy()[0] == pytest.approx([-1.2, -1.6, 1.0], abs=1e-6)
    # The heading of the field turned by δθ = 1 mrad about north: the down component (10) swings to −east by
    # 0.01, so ψ = atan2(4 − 0.01, 3) − atan2(4, 3) = −0.0012 (to first order), −1.2 × 1 mrad.
    assert math.atan2(4.0 - 0.01, 3.0) - math.atan2(4.0, 3.0) == pytest.approx(-0.0012, rel=2e-3)
    wp.launch(_heading_jacobian, 1, inputs=[wp.vec3(2.0, 0.0, 0.0), out], device="cpu")
    assert out.numpy()[0] == pytest.approx([0.0, 0.0, 1.0])  # a horizontal field: no tilt term


def test_fuse_attitude_scalar_matches_the_kalman_update_by_hand():
    # P = I, H = (−1.2, −1.6, 1) on δθ (states 6-8), R = 1, ν = 0.3: S = 1.44 + 2.56 + 1 + 1 = 6;
    # K = H/6 = (−0.2, −0.26667, 0.16667); δθ = K·ν = (−0.06, −0.08, 0.05).
    # P' = I − Hᵀ·H/6: P'66 = 1 − 1.44/6 = 0.76, P'77 = 1 − 2.56/6 = 0.57333, P'88 = 5/6, P'67 = −1.92/6 = −0.32,
    # P'68 = 1.2/6 = 0.2, P'78 = 1.6/6 = 0.26667; the rest unchanged.
    p = wp.array(np.eye(15, dtype=np.float32)[None], dtype=wp.float32, device="cpu")
    dx = wp.zeros(1, dtype=vec15, device="cpu")
    wp.launch(_fuse_attitude, 1, inputs=[p, wp.vec3(-1.2, -1.6, 1.0), 0.3, 1.0, dx], device="cpu")
    out, d = p.numpy()[0], dx.numpy()[0]
    assert d[6:9] == pytest.approx([-0.06, -0.08, 0.05], abs=1e-6)
    assert np.count_nonzero(d) == 3
    assert [out[6, 6], out[7, 7], out[8, 8]] == pytest.approx([0.76, 0.573333, 0.833333], abs=1e-5)
    assert [out[6, 7], out[6, 8], out[7, 8]] == pytest.approx([-0.32, 0.2, 0.266667], abs=1e-5)
    assert np.array_equal(out, out.T)
    assert out[0, 0] == pytest.approx(1.0) and out[14, 14] == pytest.approx(1.0) and out[0, 6] == 0.0


def dense_transition(T, dv, R):
    """F = I + blocks, written out densely from the error-state equations (docs/estimation.md)."""
    F = np.eye(15)
    F[0:3, 3:6] = np.eye(3) * T
    skew = np.array([[0, -dv[2], dv[1]], [dv[2], 0, -dv[0]], [-dv[1], dv[0], 0]])
    F[3:6, 6:9] = -skew
    F[3:6, 12:15] = -R * T
    F[6:9, 9:12] = -R * T
    return F


@pytest.mark.parametrize("in_place", [True, False])
def test_sparse_prediction_equals_the_dense_product(in_place):
    P0 = random_spd(1)
    T, dv = 0.008, np.array([0.02, -0.05, -0.0784])
    c, s = math.cos(0.7), math.sin(0.7)
    R = np.array([[c, -s, 0.1], [s, c, -0.05], [-0.1, 0.05, 1.0]])
    q = np.arange(1, 16, dtype=np.float32) * 1e-6
    expected = dense_transition(T, dv, R) @ P0.astype(np.float64) @ dense_transition(T, dv, R).T + np.diag(q)
    src = wp.array(P0[None], dtype=wp.float32, device="cpu")
    dst = src if in_place else wp.zeros_like(src)
    wp.launch(_predict, 1, inputs=[src, dst, T, wp.vec3(*dv), wp.mat33(*R.ravel()), vec15(*q)], device="cpu")
    got = dst.numpy()[0]
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-6)
    assert np.array_equal(got, got.T)


class Harness:
    """The EKF kernel over ``worlds`` worlds at a 250 Hz IMU, fed samples the test writes."""

    def __init__(self, worlds=1, in_place=True, **params):
        self.ekf = Ekf("/vehicle/estimator", origin=ORIGIN, field_ned=FIELD, **params)
        self.worlds = worlds
        self.ekf.prepare(SimpleNamespace(worlds=worlds, device="cpu"))
        z = lambda dtype, *shape: wp.zeros((worlds, *shape), dtype=dtype, device="cpu")  # noqa: E731
        self.state = [z(wp.vec3, 8), z(wp.quat, 1), z(wp.float32, 15, 15), z(wp.float64, 8), z(wp.float32, 7),
                      z(wp.vec3, 64, 2), z(wp.float64, 65), z(wp.float32, 10), z(wp.float64, 32),
                      z(wp.vec3, 1), z(wp.float32, 17, 2), z(wp.float64, 16)]
        self.state[3].fill_(-1.0)
        self.state[7].fill_(-1.0)
        self.in_place = in_place
        # Not in place: a fresh state_out each tick (as a differentiable caller binds), swapped after the tick.
        self.spare = [wp.zeros_like(a) for a in self.state]
        self.imu, self.gps, self.baro = z(ImuSample), z(GpsSample), z(BaroSample)
        self.mag, self.rng, self.time = z(MagSample), z(RangeSample), z(wp.float64)
        self.air = z(AirspeedSample)
        self.out = [z(__import__("nexus").estimation.PoseTwist), z(wp.int32), z(wp.float32, 15), z(wp.float32, 9),
                    z(wp.float32, 9), z(wp.int32, 9), wp.zeros(worlds, dtype=wp.int32, device="cpu"), z(wp.vec3),
                    z(wp.int32), z(wp.vec3), z(wp.float32, 2), z(wp.float32, 3), z(wp.int32), z(wp.float32, 2),
                    z(wp.int32)]
        self.t = 0.0
        self.gps_position = np.zeros((worlds, 3))
        self.gps_velocity = np.zeros((worlds, 3), dtype=np.float32)
        self.baro_offset = 0.0  # [m] added to the barometer's height
        self.fix_type, self.eph = 3, 0.0
        self.range_distance = None  # [m]; None: no rangefinder samples
        self.vibration = 0.0  # [rad/s]: roll rate alternating ±this each sample (a vehicle in flight, not at rest)
        self.gps_jitter = 0.0  # [m]: white noise on the GPS position, seeded (a sensor that declares noise)
        self.jitter = np.random.default_rng(7)
        self.baro_on = True
        self.level()

    def level(self, accel=(0.0, 0.0, -G), field=FIELD, gyro=(0.0, 0.0, 0.0)):
        self.accel, self.field, self.gyro = [np.tile(np.asarray(v, dtype=np.float32), (self.worlds, 1))
                                             for v in (accel, field, gyro)]

    def _samples(self, gps_on):
        imu = self.imu.numpy()
        tick = round(self.t * 250)
        shake = np.array([self.vibration if tick % 2 else -self.vibration, 0.0, 0.0], dtype=np.float32)
        imu["time"], imu["accel"], imu["gyro"] = self.t, self.accel, self.gyro + shake
        self.imu.assign(imu)
        if tick % 25 == 0 and gps_on:  # 10 Hz
            g = self.gps.numpy()
            noise = self.jitter.normal(0.0, self.gps_jitter, self.gps_position.shape) if self.gps_jitter else 0.0
            lat, lon, alt = geodetic_of(self.gps_position + noise)
            g["time"], g["latitude"], g["longitude"], g["altitude"] = self.t, lat, lon, alt
            g["fix_type"], g["eph"], g["epv"], g["velocity"] = self.fix_type, self.eph, 0.0, self.gps_velocity
            g["satellites"] = 10
            self.gps.assign(g)
        if tick % 5 == 0 and self.baro_on:  # 50 Hz
            b = self.baro.numpy()
            b["time"], b["pressure_altitude"] = self.t, 400.0 - self.gps_position[:, 2] + self.baro_offset
            self.baro.assign(b)
        if tick % 5 == 0 and self.range_distance is not None:  # 50 Hz
            r = self.rng.numpy()
            r["time"], r["distance"], r["valid"] = self.t, self.range_distance, 1
            self.rng.assign(r)
        if tick % 5 == 0:
            m = self.mag.numpy()
            m["time"], m["field"] = self.t, self.field
            self.mag.assign(m)
        self.time.fill_(self.t)

    def step(self, ticks=1, gps_on=True):
        for _ in range(ticks):
            self._samples(gps_on)
            out = self.state if self.in_place else self.spare
            wp.launch(ekf_step, self.worlds, inputs=[self.imu, self.gps, self.baro, self.mag, self.rng, self.air, self.time,
                                                     self.ekf.tuning, int(self.in_place), state_arrays(self.state),
                                                     state_arrays(out)],
                      outputs=self.out, device="cpu")
            if not self.in_place:
                self.state, self.spare = self.spare, self.state
            self.t = round(self.t + 0.004, 9)

    @property
    def covariance(self):
        return self.state[2].numpy()

    @property
    def estimate(self):
        return self.out[0].numpy()


def geodetic_of(ned):
    """NED offsets [m] from ORIGIN to latitude, longitude, altitude (ECEF, as the GPS sensor does)."""
    from nexus.sensors.geodesy import ecef_to_latitude_longitude_np, enu_to_ecef_rotation, geodetic_to_ecef

    o = geodetic_to_ecef(ORIGIN.latitude, ORIGIN.longitude, ORIGIN.altitude)
    rot = enu_to_ecef_rotation(ORIGIN.latitude, ORIGIN.longitude)
    out = [ecef_to_latitude_longitude_np(o + rot @ np.array([n[1], n[0], -n[2]])) for n in ned]
    return [o_[0] for o_ in out], [o_[1] for o_ in out], ORIGIN.altitude - ned[:, 2]


def quat_angle_deg(q, axis_angle):
    axis, angle = axis_angle
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    ref = np.array([*(axis * math.sin(angle / 2)), math.cos(angle / 2)])
    return math.degrees(2 * math.acos(min(1.0, abs(float(np.dot(q, ref))))))


def test_alignment_and_convergence_at_rest_keeps_the_covariance_symmetric_positive_definite():
    # Rolled 10° (FRD accel of a vehicle rolled right by φ at rest: (0, −g·sin φ, −g·cos φ)) and yawed 30°:
    # the body sees the Earth's horizontal field turned by −30°: (Bn·cos 30°, −Bn·sin 30°, ...) before the roll.
    phi, psi = math.radians(10), math.radians(30)
    truth = (wp.quat_from_axis_angle(wp.vec3(0, 0, 1), psi) * wp.quat_from_axis_angle(wp.vec3(1, 0, 0), phi))
    field_body = wp.quat_rotate_inv(truth, wp.vec3(*FIELD))
    h = Harness(gyro_bias_init=0.1)
    h.level(accel=(0.0, -G * math.sin(phi), -G * math.cos(phi)), field=tuple(field_body))
    h.step(1)
    # Alignment alone: exact tilt and heading (no noise), so within float32 round-off.
    assert quat_angle_deg(h.estimate["attitude"][0], ((0, 0, 1), 0.0)) > 30.0
    aligned = np.array(h.estimate["attitude"][0])
    assert abs(abs(float(np.dot(aligned, np.array(truth)))) - 1.0) < 1e-6
    h.step(2500)  # 10 s at rest
    P = h.covariance[0]
    assert np.array_equal(P, P.T)
    assert np.linalg.eigvalsh(P.astype(np.float64)).min() > 0.0
    # The yaw variance settles well below its start (EKF2_ANGERR_INIT² = 0.01 rad²), the tilt too.
    assert P[8, 8] < 0.01 * 0.5 and P[6, 6] < 0.01 * 0.1
    est = h.estimate[0]
    assert abs(abs(float(np.dot(est["attitude"], np.array(truth)))) - 1.0) < 1e-6
    np.testing.assert_allclose(est["position"], [0, 0, 0], atol=1e-3)
    np.testing.assert_allclose(est["velocity"], [0, 0, 0], atol=1e-3)
    # Aligned, GPS, baro, mag aiding, both valid, origin set; the noise-free GPS repeats its samples exactly, but
    # declares no noise, so it is not frozen.
    assert h.out[1].numpy()[0] == 1 + 2 + 4 + 8 + 16 + 64 + 128 + 256


def test_a_gps_outage_grows_the_horizontal_variance_and_a_return_shrinks_it():
    # In flight (the gyro shakes, so the filter is not at rest and fuses no fake position below EKF2_NOAID_NOISE).
    h = Harness(horizontal_valid_limit=1.0)  # valid while the larger horizontal 1σ is under 1 m
    h.vibration = 0.1
    h.step(2500)
    assert h.out[1].numpy()[0] & 64
    before = h.covariance[0, 0, 0]
    variances = []
    for _ in range(6):  # 12 s without GPS, 2 s at a time (its 1σ stays below EKF2_NOAID_NOISE, 10 m: no fake fusion)
        h.step(500, gps_on=False)
        variances.append(h.covariance[0, 0, 0])
    # Dead reckoning: every 2 s more than the last (velocity noise integrates into position).
    assert all(b > a for a, b in zip([before, *variances], variances))
    assert variances[-1] > 10 * before
    assert not h.out[1].numpy()[0] & 4  # GPS aiding off after 1 s without a fusion
    while h.covariance[0, 0, 0] < 1.0 and h.t < 60.0:  # dead reckoning until 1σ passes 1 m
        assert h.out[1].numpy()[0] & 64
        h.step(250, gps_on=False)
    h.step(1, gps_on=False)
    assert h.covariance[0, 0, 0] >= 1.0 and not h.out[1].numpy()[0] & 64  # horizontal position invalid
    grown = h.covariance[0, 0, 0]
    h.step(250)  # the return: past EKF2_NOAID_TOUT and invalid, so a reset to the GPS (variance 0.5² m²), then fused
    assert h.covariance[0, 0, 0] < grown / 10
    assert h.out[1].numpy()[0] & 4 and h.out[1].numpy()[0] & 64


def test_the_gate_rejects_an_outlier_and_counts_it():
    h = Harness()
    h.step(2500)
    settled = h.estimate[0]["position"].copy()
    h.gps_position[0] = (30.0, 0.0, 0.0)  # a 30 m jump north: far outside 5 sigma
    h.step(25)  # one GPS sample
    rejected = h.out[5].numpy()[0]
    assert rejected[0] == 1 and rejected[1] == 0 and rejected[2] == 0  # north refused, east and down fused
    assert h.out[4].numpy()[0][0] > 1.0  # its test ratio is above 1
    assert abs(h.estimate[0]["position"][0] - settled[0]) < 0.01


def test_runs_are_bit_exact_and_world_i_of_n_is_a_one_world_run():
    def run(worlds, tilt, first=0):
        h = Harness(worlds=worlds)
        h.level(accel=np.array([[0.0, -G * math.sin(t), -G * math.cos(t)] for t in tilt], dtype=np.float32)[0],
                gyro=(0.001, -0.002, 0.0005))
        h.accel = np.array([[0.0, -G * math.sin(t), -G * math.cos(t)] for t in tilt], dtype=np.float32)
        h.gps_position = np.array([[0.1 * i, -0.2 * i, 0.05 * i] for i in range(first, first + worlds)])
        h.step(300)
        e = h.estimate  # field by field: the struct's padding bytes carry no value
        return np.concatenate([np.asarray(e[f], dtype=np.float64).reshape(worlds, -1)
                               for f in ("time", "position", "attitude", "velocity", "rates")], axis=1), h.covariance

    tilts = [0.0, 0.05, 0.1]
    a, b = run(3, tilts), run(3, tilts)
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()
    assert not np.array_equal(a[0][0], a[0][2])  # the worlds differ
    one = run(1, [0.1], first=2)  # world 2 alone
    assert one[0][0].tobytes() == a[0][2].tobytes() and one[1][0].tobytes() == a[1][2].tobytes()


def test_a_separate_state_out_gives_the_bits_of_the_state_advanced_in_place():
    # A differentiable caller binds a fresh state_out each tick: the kernel copies what it does not change.
    runs = []
    for in_place in (True, False):
        h = Harness(in_place=in_place)
        h.level(accel=(0.1, -0.2, -G), gyro=(0.002, 0.0, -0.001))
        h.gps_position[0] = (0.3, -0.1, 0.2)
        h.step(300)
        e = h.estimate
        runs.append((np.concatenate([np.asarray(e[f], dtype=np.float64).ravel() for f in ("position", "attitude",
                                                                                        "velocity")]), h.covariance))
    assert runs[0][0].tobytes() == runs[1][0].tobytes() and runs[0][1].tobytes() == runs[1][1].tobytes()


def test_the_rangefinder_sets_the_ground_then_fuses_height_above_it():
    # Only the rangefinder gives height (GPS and baro off). Level at rest, the first valid sample (0.5 m at
    # p_d = 0) puts the ground at d = p_d + 0.5·cos 0 = 0.5 m down. A later 0.7 m reading predicts
    # (0.5 − p_d)/cos 0 = 0.5 m: innovation 0.7 − 0.5 = 0.2 m, and the estimate rises (p_d < 0).
    h = Harness(fuse_gps=False, fuse_baro=False, fuse_range=True)
    h.range_distance = 0.5
    h.step(6)  # alignment at tick 0, then the ground at the sample of tick 5 (t = 0.02 s)
    status = h.out[1].numpy()[0]
    assert status & 32 and not status & 4 and not status & 8  # range aiding, no GPS, no baro
    assert h.out[5].numpy()[0][8] == 0
    h.range_distance = 0.7
    h.step(5)
    assert h.out[3].numpy()[0][8] == pytest.approx(0.2, abs=1e-4)
    assert h.estimate[0]["position"][2] < -0.01


def test_a_non_finite_filter_ends_its_world_as_diverged():
    # A NaN specific force makes the velocity and the covariance NaN: the world gets done flag 5
    # (estimator-diverged), the other world keeps flying (0).
    h = Harness(worlds=2)
    h.step(10)
    assert h.out[6].numpy().tolist() == [0, 0]
    h.accel = np.array([[0.0, 0.0, -G], [np.nan, 0.0, -G]], dtype=np.float32)
    h.step(2)
    assert h.out[6].numpy().tolist() == [0, 5]
    # What run.log gets: the tick it went (the 11th sample, t = 0.040 s at 250 Hz: tick 10), its state frozen
    # there (the velocity NaN from the NaN specific force) and the innovations of that tick: the barometer's
    # (50 Hz, due at tick 10) read the NaN height; the GPS's (10 Hz, last fused at alignment) is still 0.
    state = dict(zip(("nominal", "attitude", "covariance", "times", "references", "history", "history_times",
                      "divergence"), h.state))
    [report] = h.ekf.report(0.004, state)
    assert report["world"] == 1 and report["tick"] == 10 and report["time_s"] == pytest.approx(0.04)
    assert math.isnan(report["velocity"][0]) and math.isnan(report["innovations"]["baro"])
    assert report["innovations"]["gps_north"] == 0.0
    line = divergence_line("/vehicle/estimator", report)
    assert line.startswith("estimator-diverged: /vehicle/estimator world 1 at tick 10 (0.040 s): position (")
    assert "last innovations: gps_north 0, " in line and "baro nan" in line and "\n" not in line
    # The diverged world's state stays as it was on that tick.
    frozen = [a.numpy().copy() for a in h.state]
    h.step(3)
    assert all(np.array_equal(a[1], b.numpy()[1], equal_nan=True) for a, b in zip(frozen, h.state))


def test_a_run_whose_every_filter_diverged_ends_estimator_diverged():
    from nexus.runtime.run_file import final_status
    from nexus.worlds.summary import EXITS, run_end_reason

    assert run_end_reason(np.array([5, 5], dtype=np.int32)) == "estimator-diverged"
    assert run_end_reason(np.array([5, 1], dtype=np.int32)) == "done"  # each world's own reason is in the summary
    assert EXITS[5] == "estimator-diverged"
    assert final_status("estimator-diverged") == "failed"


def cruise(gps_delay, filter_delay, seconds=20.0, v=2.0):
    """Level flight north at a constant ``v`` [m/s] from the origin; the GPS reports where the vehicle was
    ``gps_delay`` s before its sample's time; the filter declares ``filter_delay``. Returns the last north error [m]."""
    h = Harness(gps_delay=filter_delay)
    h.step(1)  # aligned at rest at the origin ...
    nominal = h.state[0].numpy()
    nominal[0, 1] = (v, 0.0, 0.0)  # ... then given the true velocity, so only the GPS's delay moves it
    h.state[0].assign(nominal)
    history = h.state[5].numpy()
    history[0, 0, 1] = (v, 0.0, 0.0)  # and the alignment's sample in the delayed GPS's history too
    h.state[5].assign(history)
    h.gps_velocity[:] = (v, 0.0, 0.0)
    for _ in range(round(seconds * 250)):
        h.gps_position[0] = (v * (h.t - gps_delay), 0.0, 0.0)
        h.step(1)
    return float(h.estimate[0]["position"][0] - v * (h.t - 0.004))


def test_a_delayed_gps_biases_the_position_by_v_times_delay_unless_the_filter_declares_the_delay():
    # 2 m/s north, GPS 0.1 s late. Fused as if current, its position is v·d = 0.2 m behind and the filter
    # (whose IMU and GPS velocity agree with the truth) settles 0.2 m behind. Declared (nexus:gpsDelay = 0.1),
    # each sample is compared with the state 0.1 s before (25 IMU samples back): its innovation is 0 and the
    # estimate stays on the truth.
    # (Measured: -0.00037, -0.19977, -0.00039 m: float32 round-off on a position of 40 m.)
    assert cruise(0.0, 0.0) == pytest.approx(0.0, abs=1e-3)
    assert cruise(0.1, 0.0) == pytest.approx(-0.2, abs=1e-3)
    assert cruise(0.1, 0.1) == pytest.approx(0.0, abs=1e-3)


def baro_step(bias_noise, offset=5.0):
    """At rest at the origin, GPS and barometer fused; the barometer reads ``offset`` [m] high from 10 s on.
    Returns the height error [m] and the estimated offset 60 s after the step."""
    h = Harness(baro_bias_noise=bias_noise)
    h.step(2500)
    h.baro_offset = offset
    h.step(15000)
    return float(-h.estimate[0]["position"][2]), float(h.state[4].numpy()[0, 4])


def test_a_barometer_offset_step_is_taken_into_its_bias_and_does_not_pull_the_height():
    # Without the offset state the height settles where the two height fusions' pulls balance, each about
    # its rate over its noise variance: baro 50 Hz / 3.5² m², GPS 10 Hz / (1.5 · 0.5 m)²; the baro's share
    # is (50/12.25) / (50/12.25 + 10/0.5625) = 0.187, so 0.93 m of a 5 m step (the gains are P/(P + R),
    # not quite P/R: within 20 %).
    height, bias = baro_step(0.0)
    assert height == pytest.approx(0.187 * 5.0, rel=0.2) and bias == 0.0
    # With it (nexus:baroBiasNoise σ = 0.05 m/√s): the offset's gain settles at about √(σ²·dt/R) per sample
    # (dt = 0.02 s, R = 12.25 m²), a time constant of √(R·dt)/σ = 9.9 s; but the offset is learnt against the
    # filter's height, which the barometer's residual still pulls by 0.187 of it, so only 1 − 0.187 of the
    # residual is seen: 9.9 / 0.813 = 12.2 s. 60 s later 5 m · e^(−60/12.2) = 0.037 m of the step is left in the
    # offset (20 % margin: 0.045) and 0.187 of that in the height (0.0085). Measured: 4.9644 m, 0.0071 m.
    height, bias = baro_step(0.05)
    assert bias == pytest.approx(5.0, abs=0.045) and abs(5.0 - bias) > 0.02
    assert abs(height) < 0.187 * 0.045
    # No step, no offset: the height stays exactly on the truth.
    assert baro_step(0.05, offset=0.0) == (0.0, 0.0)


def test_the_origin_is_set_by_the_first_fix_that_passes_the_quality_checks():
    # At rest; the GPS says the vehicle is 10 m north, 5 m east of the scene's origin, first with no 3D fix,
    # then with a 3D fix but eph 4 m (above EKF2_REQ_EPH = 3), then good. Until the good fix the GPS is not
    # fused (no GPS aiding, position 0); the good fix puts the origin at 10, 5, 0, so the estimate stays at
    # the origin (no jump) and the GPS aids from then on.
    h = Harness()
    h.gps_position[0] = (10.0, 5.0, 0.0)
    h.fix_type = 2
    h.step(300)  # past the second the alignment counts as GPS aiding
    assert h.state[4].numpy()[0, 6] == 0.0 and not h.out[1].numpy()[0] & 4
    h.fix_type, h.eph = 3, 4.0
    h.step(250)
    assert h.state[4].numpy()[0, 6] == 0.0 and not h.out[1].numpy()[0] & 4
    h.eph = 0.0
    h.step(250)
    assert h.state[4].numpy()[0, 6] == 1.0 and h.out[1].numpy()[0] & 4
    np.testing.assert_allclose(h.state[0].numpy()[0, 7], (10.0, 5.0, 0.0), atol=1e-3)
    np.testing.assert_allclose(h.estimate[0]["position"], (0.0, 0.0, 0.0), atol=1e-3)
