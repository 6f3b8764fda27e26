"""A vehicle's own waypoint list as a timed plan: take off, fly from waypoint to waypoint, land.

The plan a fleet's guidance (:mod:`nexus.guidance.fleet_mission`) gives each vehicle, in the legs the device
mission kernel flies (:func:`nexus.guidance.kernels.fly_mission`), so every vehicle of every world flies its
own list in one launch:

``takeoff``  straight up over the start to the first waypoint's height, over ``takeoff_time`` seconds when
             given (vehicles climbing to different heights then start their legs together), else at ``speed``;
``goto``     to each waypoint in turn along a minimum-jerk curve, over ``leg_time`` seconds when given (so that
             vehicles with legs of different lengths arrive together, as a swap through a common point needs),
             else over distance / ``speed`` (at least :data:`MIN_LEG_TIME`);
``hold``     ``hold`` seconds at each waypoint;
``land``     down at ``land_speed`` over the last waypoint; the guidance disarms once landed.

Waypoints are [north, east, height] [m] from where the vehicle rests at the start, as a scenario's steps are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from nexus.guidance.profile import Leg, MissionPlan, MissionProfile

#: The shortest goto leg [s]: a waypoint on top of the last still takes this long.
MIN_LEG_TIME = 1.0


class WaypointPlan(MissionPlan):
    """The legs of one vehicle's waypoint list from ``start`` [m, NED] and ``start_yaw`` [rad] at ``start_time``."""

    def __init__(self, profile: MissionProfile, start, start_yaw: float, waypoints: Sequence[Sequence[float]], *,
                 speed: float, hold: float = 0.0, leg_time: float | None = None,
                 takeoff_time: float | None = None, start_time: float = 0.0):
        profile.check()
        if not waypoints:
            raise ValueError("a waypoint plan needs at least one waypoint")
        self.profile = profile
        self.start = np.asarray(start, dtype=np.float64).copy()
        self.start_yaw = yaw = float(start_yaw)
        goals = [self.start + np.array([float(n), float(e), -float(h)]) for n, e, h in waypoints]
        legs: list[Leg] = []
        clock = float(start_time)

        def add(phase: str, duration: float, begin: np.ndarray, end: np.ndarray) -> None:
            nonlocal clock
            legs.append(Leg(phase, clock, duration, begin, end, yaw, yaw))
            clock += duration

        up = np.array([self.start[0], self.start[1], goals[0][2]])
        climb = float(takeoff_time) if takeoff_time is not None else max(abs(up[2] - self.start[2]) / speed, MIN_LEG_TIME)
        add("takeoff", climb, self.start, up)
        here = up
        for goal in goals:
            length = float(np.linalg.norm(goal - here))
            add("goto", float(leg_time) if leg_time is not None else max(length / speed, MIN_LEG_TIME), here, goal)
            if hold > 0.0:
                add("hold", float(hold), goal, goal)
            here = goal
        ground = np.array([here[0], here[1], self.start[2] + profile.ground_push])
        add("land", math.inf, here, ground)
        self.legs = legs
        self.land_time = legs[-1].start_time
        self.ground_z = float(self.start[2])
