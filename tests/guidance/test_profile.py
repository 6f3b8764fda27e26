"""The mission plan on its own: phases, goals, durations and the scene's mission prim."""

import math
from dataclasses import astuple

import numpy as np
import pytest

from nexus.core.errors import BuildError
from nexus.guidance import MISSION_SPEC, MissionGuidance, MissionPlan, MissionProfile
from nexus.guidance.mission import heading_of
from nexus.plant.loading import open_stage
from nexus.plant.assets import resolve_asset
from nexus.schemas.reader import read_prim


def phases_over(plan, end, step=0.01):
    seen = []
    for t in np.arange(0.0, end, step):
        phase = plan.at(t)[0]
        if not seen or seen[-1] != phase:
            seen.append(phase)
    return seen


def test_phases_come_in_mission_order():
    plan = MissionPlan(MissionProfile.short(), start=[0.0, 0.0, 0.0], start_yaw=0.0)
    assert phases_over(plan, plan.land_time + 5.0) == ["takeoff", "hold", "yaw", "return", "land"]


def test_takeoff_ends_at_altitude_above_the_start():
    profile = MissionProfile(altitude=5.0, climb_speed=1.0)
    plan = MissionPlan(profile, start=[0.2, -0.1, 0.01], start_yaw=0.3)
    # 5 m at 1 m/s: the climb ends after 5 s, 5 m above (NED z 5 m smaller).
    _, goal, yaw = plan.at(5.0)
    np.testing.assert_allclose(goal, [0.2, -0.1, 0.01 - 5.0])
    assert yaw == pytest.approx(0.3)
    # Halfway through a minimum-jerk climb the goal is halfway up.
    assert plan.at(2.5)[1][2] == pytest.approx(0.01 - 2.5)


def test_yaw_sweep_visits_plus_then_minus_the_sweep_and_returns():
    profile = MissionProfile()
    plan = MissionPlan(profile, start=[0.0, 0.0, 0.0], start_yaw=math.pi / 2)
    yaw_legs = [leg for leg in plan.legs if leg.phase == "yaw"]
    targets = [math.degrees(leg.end_yaw - math.pi / 2) for leg in yaw_legs[::2]]
    assert targets == pytest.approx([90.0, -90.0, 0.0])
    # 90° at 45°/s, then 180°, then 90°: 2 s, 4 s, 2 s, each followed by a 1 s pause.
    assert [leg.duration for leg in yaw_legs] == pytest.approx([2.0, 1.0, 4.0, 1.0, 2.0, 1.0])
    # Headings are written wrapped: +90° from east (90°) is south, ±180°.
    assert abs(plan.at(yaw_legs[0].end_time)[2]) == pytest.approx(math.pi)


def test_return_flies_back_above_the_origin():
    plan = MissionPlan(MissionProfile.short(), start=[1.0, 2.0, 0.0], start_yaw=0.0)
    leg = next(leg for leg in plan.legs if leg.phase == "return")
    np.testing.assert_allclose(plan.at(leg.end_time)[1], [0.0, 0.0, -2.0])


def test_landing_goal_sinks_at_land_speed_and_stops_below_the_ground():
    profile = MissionProfile.short()
    plan = MissionPlan(profile, start=[0.0, 0.0, 0.0], start_yaw=0.0)
    # 1 m/s for 0.5 s from 2 m up: 1.5 m up.
    assert plan.at(plan.land_time + 0.5)[1][2] == pytest.approx(-1.5)
    assert plan.at(plan.land_time + 100.0)[1][2] == pytest.approx(profile.ground_push)


def test_short_profile_fits_in_ten_seconds_and_the_default_in_35():
    assert MissionPlan(MissionProfile.short(), [0, 0, 0], 0.0).nominal_duration < 10.0
    assert MissionPlan(MissionProfile(), [0, 0, 0], 0.0).nominal_duration < 35.0


def test_scene_mission_prim_reads_as_the_default_profile():
    scene = open_stage(resolve_asset("scene", "empty"))
    prim = scene.GetPrimAtPath("/scene/mission")
    read = MissionGuidance.from_prim(prim, read_prim(prim, MISSION_SPEC, "empty.usda"), None).profile
    # USD stores float32: compare to float32 precision.
    assert astuple(read) == pytest.approx(astuple(MissionProfile()), rel=1e-6)


def test_a_negative_speed_fails_the_build_naming_the_mission():
    with pytest.raises(BuildError, match="/scene/mission.*climb_speed"):
        MissionGuidance("/scene/mission", MissionProfile(climb_speed=-1.0))


def test_heading_of_a_quarter_turn_about_down_is_east():
    # 90° about NED z (down) turns north to east.
    q = [0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4)]
    assert heading_of(q) == pytest.approx(math.pi / 2)
