"""The short mission flown with ``--solver featherstone``: the same tolerances as MuJoCo's flight
(tests/guidance/test_mission_flight.py), and the IMU fed by Nexus's own body acceleration."""

from pathlib import Path

import numpy as np
import pytest

from nexus.runtime.assembly import assemble
from nexus.core import Loop
from nexus.core.errors import BuildError
from nexus.runtime.config import RunConfig
from nexus.guidance import MissionGuidance, MissionProfile
from nexus.runtime.startup import start
from tests.guidance.flight import Flight

STEADY_VEHICLE = Path(__file__).resolve().parents[1] / "data" / "astro_max_steady_sensors.usda"


def fly_featherstone(max_seconds: float = 12.0) -> tuple[Flight, np.ndarray, np.ndarray]:
    """The default ring on Featherstone, short mission; also every tick's IMU specific force [m/s², FRD]
    and estimated velocity [m/s, NED]."""
    # On the truth estimator, as the MuJoCo flight it is held against: the check is of the solver, not the EKF;
    # and on the Astro Max whose IMU biases hold still, so the accelerometer's mean over 0.4 s is the physics
    # plus white noise (the shipped walk moves it by up to 0.02 m/s² in a few seconds).
    vehicle = assemble(STEADY_VEHICLE, "empty", solver="featherstone", estimator="truth")
    old = next(c for c in vehicle.components if isinstance(c, MissionGuidance))
    guidance = MissionGuidance(old.name, MissionProfile.short())
    loop = Loop([guidance if c is old else c for c in vehicle.components], device="cpu")
    loop.build()
    start(loop, vehicle.plant)
    estimate, setpoint, controls, imu = (loop.output(name) for name in ("estimate", "setpoint", "controls", "imu"))
    rows, accel, velocity, reason = [], [], [], "ticks"
    for _ in range(int(max_seconds * 250)):
        done = loop.tick()
        e, s = estimate.numpy()[0], setpoint.numpy()[0]
        rows.append((loop.sim_time, guidance.phase, e["position"].copy(), e["attitude"].copy(),
                     s["position"].copy(), float(s["yaw"]), controls.numpy()[0, :4].copy()))
        accel.append(imu.numpy()[0]["accel"].copy())
        velocity.append(e["velocity"].copy())
        if done:
            reason = "done"
            break
    columns = list(zip(*rows))
    flight = Flight(time=np.array(columns[0]), phase=np.array(columns[1]), position=np.array(columns[2]),
                    attitude=np.array(columns[3]), goal=np.array(columns[4]), yaw_goal=np.array(columns[5]),
                    controls=np.array(columns[6]), guidance=guidance, reason=reason, profile=MissionProfile.short())
    return flight, np.array(accel), np.array(velocity)


@pytest.fixture(scope="module")
def flown():
    return fly_featherstone()


def test_featherstone_flies_the_short_mission_to_done_within_ten_seconds(flown):
    flight = flown[0]
    assert flight.reason == "done"
    assert flight.time[-1] <= 10.0
    assert [phase for _, phase in flight.guidance.transitions] == ["takeoff", "hold", "yaw", "return", "land", "landed"]


def test_featherstone_takes_off_holds_and_tracks_yaw_within_mujocos_tolerances(flown):
    flight = flown[0]
    hovering = flight.during("hold", "yaw")
    altitude = flight.guidance.plan.ground_z - flight.position[hovering, 2]
    assert np.abs(altitude - flight.profile.altitude).max() < 0.2
    sweep = flight.during("yaw")
    assert np.linalg.norm(flight.position[sweep] - flight.goal[sweep], axis=1).max() < 0.2
    assert np.abs(flight.yaw_error_deg[sweep]).max() < 5.0


def test_featherstone_lands_on_the_start_and_disarms(flown):
    flight = flown[0]
    assert abs(flight.position[-1, 2] - flight.guidance.plan.ground_z) < 0.1
    assert np.linalg.norm(flight.position[-1, :2]) < 0.2
    np.testing.assert_array_equal(flight.controls[-1], np.zeros(4, dtype=np.float32))


def test_featherstone_imu_reads_minus_g_less_the_vertical_acceleration_while_hovering(flown):
    # The accelerometer's FRD z reads the specific force -(g + a_up). Over the hold's last 100 ticks
    # the mean a_up is the change of the vertical speed over that time, (v_up(end) - v_up(start)) / T,
    # so mean(accel_z) = -9.80665 - Δv_up / T, up to the noise (σ 0.0064 m/s² per sample, 0.0007 on a mean
    # of 100) and the step-average's half-tick offset. MuJoCo's own body_qdd reads -9.8965 here.
    flight, accel, velocity = flown
    window = np.flatnonzero(flight.during("hold"))[-100:]
    first, last = window[0] - 1, window[-1]
    a_up = -(velocity[last, 2] - velocity[first, 2]) / (len(window) * 0.004)
    assert accel[window, 2].mean() == pytest.approx(-9.80665 - a_up, abs=0.01)
    assert np.abs(accel[window, :2].mean(axis=0)).max() < 0.05


def test_an_unknown_solver_is_one_line_naming_the_choices():
    with pytest.raises(BuildError, match=r"--solver bullet: unknown solver; choose one of mujoco, featherstone"):
        RunConfig(solver="bullet").check()
