"""Flight quality of the short mission, read from the flight: the PID, the truth estimator and the guidance together."""

import numpy as np
import pytest

from nexus.guidance import MissionProfile
from tests.guidance.flight import fly


@pytest.fixture(scope="module")
def flight():
    return fly(MissionProfile.short())


def test_short_mission_lands_and_ends_the_run_within_ten_seconds(flight):
    assert flight.reason == "done"
    assert flight.time[-1] <= 10.0
    assert flight.phase[-1] == "landed"


def test_phases_follow_the_mission_order(flight):
    phases = [phase for _, phase in flight.guidance.transitions]
    assert phases == ["takeoff", "hold", "yaw", "return", "land", "landed"]


def test_takes_off_to_the_target_altitude_within_0_2_m(flight):
    # Altitude is up, NED z is down: altitude = start z − z.
    hovering = flight.during("hold", "yaw")
    altitude = flight.guidance.plan.ground_z - flight.position[hovering, 2]
    assert np.abs(altitude - flight.profile.altitude).max() < 0.2


def test_holds_position_within_0_2_m_during_the_yaw_sweep(flight):
    sweep = flight.during("yaw")
    error = np.linalg.norm(flight.position[sweep] - flight.goal[sweep], axis=1)
    assert error.max() < 0.2


def test_tracks_yaw_within_5_degrees(flight):
    sweep = flight.during("yaw")
    assert np.abs(flight.yaw_error_deg[sweep]).max() < 5.0
    # The sweep really turned: the goal reached both sides.
    assert np.degrees(flight.yaw_goal[sweep] - flight.yaw_goal[0]).max() == pytest.approx(flight.profile.yaw_sweep, abs=0.01)
    assert np.degrees(flight.yaw_goal[sweep] - flight.yaw_goal[0]).min() == pytest.approx(-flight.profile.yaw_sweep, abs=0.01)


def test_lands_on_the_start_and_disarms(flight):
    # Back within 0.1 m of where it started, the last row of controls is zero.
    assert abs(flight.position[-1, 2] - flight.guidance.plan.ground_z) < 0.1
    assert np.linalg.norm(flight.position[-1, :2]) < 0.2
    np.testing.assert_array_equal(flight.controls[-1], np.zeros(4, dtype=np.float32))
    # Armed before: the rotors were commanded during the landing.
    assert flight.controls[flight.during("land")].max() > 0.3
