"""The Aerosonde on its EKF fusing the pitot's true airspeed, with wind states: the wind estimated, dead reckoning held
better through a GPS loss, the covariance symmetric positive definite all flight, and a frozen pitot caught.

``nexus run --vehicle aerosonde_ekf`` (its EKF fuses airspeed above nexus:EKF2_ARSP_THR = 9 m/s), CPU, default
scene, a variation file giving a steady 5 m/s wind from the west (``wind_speed = 5``, ``wind_direction = 270``:
the air moves east; 6.95 m/s at the route's 100 m by the wind's profile) and one sensor fault. Figures measured
2026-12-07: docs/estimation.md, "Airspeed and wind".
"""

from __future__ import annotations

import numpy as np
import pytest

from nexus.estimation import estimate_status as bits
from nexus.estimation.ekf import Ekf
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight
from nexus.plant.assets import resolve_asset
from nexus.record.parts import read_record

GPS_LOST_AT = 40.0  # [s], on the square's third leg (west, into the wind)
PITOT_FROZEN_AT = 40.0  # [s]
REPLAY_S = 0.064  # one graph replay: 16 ticks of 4 ms, when the covariance is sampled


class CovarianceWatch:
    """Called after every replay of the flight: keeps the EKF's 17×17 covariance [[P, C], [Cᵀ, W]] of that tick."""

    def __init__(self, flight):
        self.ekf = next(c for c in flight.vehicle.components if isinstance(c, Ekf))
        self.samples = []

    def __call__(self, flight):
        return self

    def update(self, now):
        state = self.ekf._store.of(self.ekf)
        P, Pw = state["covariance"].numpy()[0], state["wind_covariance"].numpy()[0]
        full = np.zeros((17, 17))
        full[:15, :15], full[:, 15:], full[15:, :15] = P, Pw, Pw[:15].T
        self.samples.append((now, full))


def fly(out, vehicle, duration, fault_sensor=None, fault_mode=None, fault_at=None, watch=None, wind=(5.0, 270.0)):
    """``nexus run`` in this process with a steady wind (speed [m/s], from [deg]) and at most one sensor fault."""
    vary = out.parent / f"{out.name}.toml"
    text = f"wind_speed = {wind[0]}\nwind_direction = {wind[1]}\n"
    if fault_sensor is not None:
        text += (f'sensor_fault_time = {fault_at}\nsensor_fault_sensor = "{fault_sensor}"\n'
                 f'sensor_fault_mode = "{fault_mode}"\n')
    vary.write_text(text)
    options = RunConfig(vehicle=str(vehicle), device="cpu", duration=duration, vary=str(vary))
    summary = run_flight(options, out, progress=False, watch=watch)
    assert summary.exit_reason == "duration", summary.exit_reason
    return read_record(out / "record.parquet").to_pandas()


class Watching:
    """The watch's factory: the flight is only known once built."""

    def __init__(self):
        self.watch = None

    def __call__(self, flight):
        self.watch = CovarianceWatch(flight)
        return self.watch


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("aerosonde_ekf_airspeed")


@pytest.fixture(scope="module")
def gps_lost(folder):
    """60 s with airspeed fused, the GPS dropping out at 40 s; the covariance sampled every replay."""
    watching = Watching()
    record = fly(folder / "fused", resolve_asset("vehicle", "aerosonde_ekf"), 60.0, "Gps", "dropout", GPS_LOST_AT,
                 watch=watching)
    return record, watching.watch.samples


@pytest.fixture(scope="module")
def gps_lost_without_airspeed(folder):
    """The same flight, the filter not fusing airspeed (nexus:EKF2_ARSP_THR = 0 over the same file)."""
    path = folder / "aerosonde_ekf_no_airspeed.usda"
    path.write_text('#usda 1.0\n(\n    defaultPrim = "vehicle"\n    kilogramsPerUnit = 1\n    metersPerUnit = 1\n'
                    f'    upAxis = "Z"\n)\n\ndef Xform "vehicle" (\n    prepend references = '
                    f'@{resolve_asset("vehicle", "aerosonde_ekf")}@\n)\n{{\n    over "ekf"\n    {{\n'
                    '        float nexus:EKF2_ARSP_THR = 0\n    }\n}\n')
    return fly(folder / "unfused", path, 60.0, "Gps", "dropout", GPS_LOST_AT)


@pytest.fixture(scope="module")
def east_wind(folder):
    """30 s in scenarios/aerosonde_blocked_pitot.toml's 8 m/s wind from the east (11.1 m/s at 100 m), no fault."""
    return fly(folder / "east", resolve_asset("vehicle", "aerosonde_ekf"), 30.0, wind=(8.0, 90.0))


@pytest.fixture(scope="module")
def pitot_frozen(folder):
    return fly(folder / "frozen", resolve_asset("vehicle", "aerosonde_ekf"), 50.0, "Pitot", "freeze", PITOT_FROZEN_AT)


def wind_error(record):
    """|estimated − true wind| [m/s], horizontal: the record's wind is ENU at the base, the estimate NED."""
    return np.hypot(record["ekf_wind[0]"] - record["wind[1]"], record["ekf_wind[1]"] - record["wind[0]"]).to_numpy()


def velocity_error(record):
    """|estimated − true velocity| [m/s], horizontal (truth ENU, estimate NED)."""
    return np.hypot(record["estimate.velocity[0]"] - record["body/base.velocity[1]"],
                    record["estimate.velocity[1]"] - record["body/base.velocity[0]"]).to_numpy()


def test_the_filter_estimates_the_wind_within_half_a_metre_a_second_from_20_s(gps_lost):
    record, _ = gps_lost
    t, error = record.time.to_numpy(), wind_error(record)
    # The truth at 100 m: 5 m/s × the profile's 1.39 = 6.95 m/s toward the east (6.81 at 25 s, the climb's end),
    # none north.
    route = t > 25.0
    assert np.all((record["wind[0]"].to_numpy()[route] > 6.75) & (record["wind[0]"].to_numpy()[route] < 6.96))
    assert np.all(np.abs(record["wind[1]"].to_numpy()) < 1e-6)
    # From the catapult (the wind set from the first airspeed above 9 m/s, at 5.24 s) the filter learns the wind
    # the plane climbs through: flown at most 0.37 m/s off from 15 s, 0.26 from 25 s, 0.10 from 40 s (GPS lost
    # at 40 s: the wind estimate holds, the airspeed keeps tying it to the velocity).
    assert np.max(error[(t >= 20.0) & (t < GPS_LOST_AT)]) < 0.5
    assert np.max(error[t >= GPS_LOST_AT]) < 0.2
    # Its own 1-sigma covers it: the error within 2 sigma (flown: within 0.88 sigma) from 20 s.
    sigma = np.sqrt(record["ekf_wind_variance[0]"] + record["ekf_wind_variance[1]"]).to_numpy()
    assert np.all(error[t >= 20.0] < 2.0 * sigma[t >= 20.0])


def test_airspeed_aiding_is_on_in_the_air_and_nothing_is_rejected(gps_lost):
    record, _ = gps_lost
    t, status = record.time.to_numpy(), record["estimate_status"].to_numpy().astype(int)
    aiding = (status & bits.AIRSPEED_AIDING) != 0
    assert not np.any(aiding[t < 5.0])  # at rest on the catapult: below 9 m/s, no wind states yet
    assert np.all(aiding[t > 7.0]) and not np.any(status & bits.AIRSPEED_FAULT)
    assert record["ekf_airspeed_rejected"].iloc[-1] == 0 and record["ekf_sideslip_rejected"].iloc[-1] == 0
    # The innovation: measured − |v − w|, the pitot reading the forward component only (cos α); flown at most
    # 0.21 m/s, its test ratio at most 0.001. The sideslip's: at most 0.015 rad.
    assert np.max(np.abs(record["ekf_airspeed[0]"].to_numpy()[t > 20.0])) < 1.0
    assert np.max(np.abs(record["ekf_sideslip[0]"].to_numpy()[t > 20.0])) < 0.05


def test_the_synthetic_sideslip_holds_the_wind_across_the_track_through_the_climb_in_a_stronger_wind(east_wind):
    record = east_wind
    t, error = record.time.to_numpy(), wind_error(record)
    # The climb-out east into 8 m/s (4.7 m/s at the catapult's height, 11.1 at 100 m): the airspeed alone sees only
    # |v − w|, so a wind across the track trades against one along it; climbing through the wind's layers faster
    # than its random walk follows, the filter without the sideslip put 7 m/s of wind across the track (7.07 m/s
    # off from 15 to 25 s, until the first turn). With it (nexus:fuseSideslip): flown 0.65 m/s at most 10-15 s,
    # 0.33 from 15 s, 0.26 from 20 s.
    assert np.max(error[t >= 15.0]) < 0.5
    assert record["ekf_airspeed_rejected"].iloc[-1] == 0 and record["ekf_sideslip_rejected"].iloc[-1] == 0


def test_with_airspeed_fused_dead_reckoning_holds_the_velocity_better_through_a_gps_loss(
        gps_lost, gps_lost_without_airspeed):
    record, _ = gps_lost
    t = record.time.to_numpy()
    lost = (t >= GPS_LOST_AT + 5.0) & (t < GPS_LOST_AT + 15.0)  # from the GPS fault on (1 s), dead reckoning
    assert np.all((record["estimate_status"].to_numpy().astype(int)[lost] & bits.GPS_AIDING) == 0)
    fused, unfused = velocity_error(record)[lost], velocity_error(gps_lost_without_airspeed)[lost]
    # Flown 45 to 55 s: at most 0.116 m/s with the airspeed (it holds the speed along the air's direction, the wind
    # known), 0.656 m/s without (the accelerometer's errors integrating).
    assert np.max(fused) < 0.3 < 0.4 < np.max(unfused)
    assert np.max(fused) < 0.5 * np.max(unfused)


def test_the_17_state_covariance_stays_symmetric_positive_definite_all_flight(gps_lost):
    _, samples = gps_lost
    assert len(samples) > 60.0 / REPLAY_S - 10  # every replay's (945 flown: the start-up's too)
    assert all(np.all(np.isfinite(P)) and np.array_equal(P, P.T) for _, P in samples)
    # Before the catapult the wind's rows are zero (its states start with the first airspeed above 9 m/s, 5.24 s);
    # from then on every eigenvalue of the whole 17-state covariance is positive.
    started = [(t, P) for t, P in samples if P[15, 15] > 0.0]
    assert started[0][0] == pytest.approx(5.25, abs=0.07)
    eigenvalues = np.array([np.linalg.eigvalsh(P) for _, P in started])
    assert eigenvalues.min() > 0.0  # flown: 1.27e-7 m² at the smallest, 49.8 at the largest (GPS lost)


def test_a_frozen_pitot_is_caught_after_ten_repeats_and_no_longer_fused(pitot_frozen):
    record = pitot_frozen
    t, status = record.time.to_numpy(), record["estimate_status"].to_numpy().astype(int)
    fault = (status & bits.AIRSPEED_FAULT) != 0
    caught = t[np.argmax(fault)]
    # Ten new samples repeating the last pressure (50 Hz: 0.2 s after the last live one, which came at most 20 ms
    # before the fault): flown 40.18 s.
    assert PITOT_FROZEN_AT + 0.15 < caught < PITOT_FROZEN_AT + 0.21
    assert np.all(fault[t >= caught])
    # No fusion after it: the aiding bit goes one aiding timeout (1 s) after the last accepted sample, and the wind
    # estimate stays as it was while its variance grows (flown 0.016 → 0.05 m²/s² by 50 s).
    assert not np.any((status[t > caught + 1.0] & bits.AIRSPEED_AIDING) != 0)
    after = t > caught
    for axis in (0, 1):
        wind = record[f"ekf_wind[{axis}]"].to_numpy()[after]
        assert np.ptp(wind) < 0.05  # (it still moves a little with the GPS's velocity, through their correlation)
    variance = record["ekf_wind_variance[1]"].to_numpy()
    assert variance[-1] > 2.0 * variance[np.argmax(after)]
    # The innovation recorded is the last one fused, before the freeze.
    assert np.ptp(record["ekf_airspeed[0]"].to_numpy()[after]) == 0.0
