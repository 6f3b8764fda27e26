"""A plane's Nexus mission flown by PX4: uploaded as PX4 mission items, armed and started at fixed ticks.

``nexus run --controller px4 --px4-mission`` on a plane turns the plane's mission (the scene's
``NexusPlaneMissionAPI`` prim, else the vehicle file's, else the default: what ``--controller fixed_wing``
flies, :func:`nexus.control.fixed_wing.mission.plane_mission`) into PX4's fixed-wing mission, item for phase:

* the launch: ``NAV_TAKEOFF`` to ``climbOutHeight`` at the NED origin, the launch point: PX4 climbs out on the
  heading it was launched on (it flies a takeoff waypoint's bearing only when the waypoint is over 10 m from the
  launch) and counts the takeoff done above that height; leg 0 then runs from this item to the first waypoint,
  as the Nexus mission's leg 0 runs from the origin (PX4 ends a fixed-wing leg within its acceptance radius or
  past the line through the waypoint square to the leg, which needs the leg's two ends apart: a takeoff item
  on the first waypoint left PX4 circling that waypoint at its bank limit, never within 15 m of it);
* each waypoint: ``NAV_WAYPOINT`` at ``height``, param2 ``acceptanceRadius`` (PX4 reads an item's acceptance
  radius only on a multicopter; a fixed wing's is ``NAV_ACC_RAD``, which ``nexus px4 params`` sets to it);
* the loiter: ``NAV_LOITER_TIME`` about the loiter centre for ``loiterTime``, radius negative anticlockwise
  (MAVLink's sign: positive loiters clockwise);
* the landing: ``DO_LAND_START``; ``NAV_LOITER_TO_ALT`` on the Nexus mission's approach circle (its centre,
  radius and way round) down to ``approachHeight``; ``NAV_WAYPOINT`` at the glide slope's entry,
  ``approachHeight / tan(glideSlope)`` before the touchdown point along ``landingCourse``, at ``approachHeight``;
  ``NAV_LAND`` at the touchdown point, height 0. PX4 flies a mission landing on the line from the item before
  ``NAV_LAND`` to the landing point, gliding down from that item's height (``FixedWingModeManager::
  initializeAutoLanding``): with the entry there, that is the Nexus mission's final, course and slope. (With the
  orbit itself before ``NAV_LAND``, as PX4's mission check pictures a landing pattern, PX4 glides from the orbit's
  centre: a first flight against real PX4 came in on a course of 113.4°, 23° off east, on the line from the
  centre 150 m north of the final, and touched down 65 m past the point and 25 m south of the line.) PX4's mission check takes the slope as the entry's height
  over its distance, and accepts it up to ``FW_LND_ANG`` + 0.1°, which ``nexus px4 params`` sets to the slope.

Positions are north, east [m] from the NED origin, where the plane rests on its wheels and the GPS puts the
scene's geodetic origin, so each becomes latitude and longitude through the same WGS-84 geodesy the GPS
measures with (:func:`nexus.sensors.geodesy.enu_offset_to_geodetic`); heights are above PX4's home (frame
``MAV_FRAME_GLOBAL_RELATIVE_ALT_INT``), which PX4 sets where it arms: on the ground at the NED origin.

The start is a catapult (``NexusCatapultAPI``): PX4 sends zeros until it arms, so a plane released in the air
would glide on centred surfaces with its motor off while PX4's estimator aligns (the Aerosonde's release is
1.5 m up). On its wheels it waits; PX4 arms and starts the mission (the takeoff's launch detection,
``FW_LAUN_DETCN_ON``), and the catapult's push, after the mission started, is the launch PX4 detects. The upload,
the arm and the start go at fixed times of PX4's clock, as a scenario's steps do (:class:`StepsPlan`); the
mission is over on the tick PX4's lockstep answer says it disarmed after its landing.
"""

from __future__ import annotations

import math

from nexus.core.errors import BuildError
from nexus.px4.step_mission import MAV_CMD_NAV_LOITER_TIME, MAV_CMD_NAV_WAYPOINT, MAV_FRAME_GLOBAL_RELATIVE_ALT_INT, StepsPlan
from nexus.px4.mission import MAV_CMD_NAV_LAND, MAV_CMD_NAV_TAKEOFF, usec
from nexus.sensors.geodesy import enu_offset_to_geodetic

MAV_CMD_NAV_LOITER_TO_ALT = 31
MAV_CMD_DO_LAND_START = 189
#: A mission item without a position (PX4 takes DO_LAND_START only in this frame).
MAV_FRAME_MISSION = 2
#: The push must come this long [s] after PX4's mission started: its navigator has switched to the takeoff and
#: its launch detector runs.
LAUNCH_AFTER_START_S = 1.0
#: PX4's TECS starts its altitude reference at its first update, before EKF2 has an origin, so at 0 m above sea
#: level, and moves it toward the field's altitude at about this rate [m/s] (``FW_T_CLMB_R_SP``'s 3 m/s) while
#: the plane waits; a catapult's launch restarts TECS at the plane's altitude, a runway takeoff does not, and a
#: climb-out that ends with the reference still below the field makes TECS dive (measured at 488 m: the reference
#: at 91 m when the climb-out ended 17 s after boot; the plane flew into the ground at 22 s).
TECS_REFERENCE_RATE = 3.0
#: PX4's default upload time [s] of a plane mission (:class:`~nexus.px4.step_mission.StepsPlan`'s).
DEFAULT_UPLOAD_S = 6.0
#: A runway takeoff's item lies this far [m] ahead of the plane along the runway: PX4's runway takeoff follows the
#: bearing from where it started to the item until the climb-out height, and the item is reached on height alone.
RUNWAY_TAKEOFF_AHEAD_M = 50.0


def degE7(origin, north: float, east: float) -> tuple[int, int]:
    """Latitude and longitude [degE7] of the point ``north``, ``east`` [m] from the geodetic ``origin``."""
    latitude, longitude, _ = enu_offset_to_geodetic(origin, (east, north, 0.0))
    return int(round(latitude * 1e7)), int(round(longitude * 1e7))


def plane_mission_items(mission, origin, where: str, runway_heading: float | None = None,
                        shift: tuple[float, float] = (0.0, 0.0)) -> list[tuple]:
    """PX4's items for a :class:`~nexus.control.fixed_wing.mission.PlaneMission`, each (command, frame,
    param1..4, x [degE7], y [degE7], z [m above home]); ``where`` names the mission in errors. With
    ``runway_heading`` [rad, clockwise from north] the plane takes off from the runway it rests on, and the
    takeoff item lies :data:`RUNWAY_TAKEOFF_AHEAD_M` ahead along it (PX4 rolls and climbs out on the bearing from
    where it starts to the takeoff item: an item on the start gives a bearing of centimetres, any way at all).
    ``shift`` (north, east) [m] moves every point: a fleet's vehicle k flies the mission from its own start, that far
    from vehicle 0's, where the geodetic origin is."""
    if not mission.land:
        raise BuildError(f"{where}: nexus:land is false, and PX4's plane mission ends with its landing (the run "
                         "ends when PX4 disarms on the ground); set nexus:land = true")
    rel = MAV_FRAME_GLOBAL_RELATIVE_ALT_INT

    def at(point) -> tuple[int, int]:
        return degE7(origin, float(point[0]) + shift[0], float(point[1]) + shift[1])

    ahead = (0.0, 0.0) if runway_heading is None else (RUNWAY_TAKEOFF_AHEAD_M * math.cos(runway_heading),
                                                        RUNWAY_TAKEOFF_AHEAD_M * math.sin(runway_heading))
    items = [(MAV_CMD_NAV_TAKEOFF, rel, 0.0, 0.0, 0.0, math.nan, *at(ahead), mission.climb_out_height)]
    for point in mission.waypoints:
        items.append((MAV_CMD_NAV_WAYPOINT, rel, 0.0, mission.acceptance_radius, 0.0, math.nan, *at(point),
                      mission.height))
    turn = 1.0 if mission.loiter_clockwise else -1.0
    items.append((MAV_CMD_NAV_LOITER_TIME, rel, mission.loiter_time, 0.0, turn * mission.loiter_radius, 0.0,
                  *at(mission.loiter_centre), mission.height))
    landing = mission.landing()
    items.append((MAV_CMD_DO_LAND_START, MAV_FRAME_MISSION, 0.0, 0.0, 0.0, 0.0, 0, 0, 0.0))
    items.append((MAV_CMD_NAV_LOITER_TO_ALT, rel, 0.0, turn * mission.loiter_radius, 0.0, 0.0, *at(landing.circle),
                  mission.approach_height))
    items.append((MAV_CMD_NAV_WAYPOINT, rel, 0.0, mission.acceptance_radius, 0.0, math.nan, *at(landing.entry),
                  mission.approach_height))
    items.append((MAV_CMD_NAV_LAND, rel, 0.0, 0.0, 0.0, math.nan, *at(mission.touchdown), 0.0))
    return items


#: A plane's ground speed [m/s] below which its roll-out has stopped, and the longest the run waits for it after PX4's
#: disarm [s] (a plane still rolling then ends the run anyway).
STOPPED_SPEED, ROLLOUT_LIMIT_S = 0.1, 60.0


class PlanePlan(StepsPlan):
    """Upload the plane's items, arm, start; over once PX4 disarmed after the start (its landing) and the plane has
    rolled to a stop on its wheels (:meth:`rolled_out`): PX4 disarms when its land detector sees the plane down,
    still rolling."""

    def __init__(self, items: list[tuple], *, height: float = 0.0, **times):
        super().__init__([], **times)
        self.pending.items = list(items)
        self.altitude = float(height)
        self.report.commanded_altitude_m = float(height)

    def note(self, message) -> None:
        super().note(message)
        if self.started:
            self.report.max_altitude_m = self.highest

    def rolled_out(self, now_usec: int, ground_speed: float) -> bool:
        """Whether the run ends at PX4 time ``now_usec`` [µs]: PX4 disarmed after its landing and the plane's true
        ground speed [m/s] is below :data:`STOPPED_SPEED` (or :data:`ROLLOUT_LIMIT_S` passed since the disarm)."""
        if not self.finished(now_usec):
            return False
        if ground_speed >= STOPPED_SPEED and now_usec - self.over_usec < usec(ROLLOUT_LIMIT_S):
            return False
        if self.landed and self.report.rolled_to_stop_s is None:
            self.report.rolled_to_stop_s = (now_usec - self.over_usec) * 1e-6
        return True

    def start_s(self) -> float:
        """PX4 time [s] the mission is started at (when no gate holds the upload)."""
        return (self.pending.due_usec if self.pending is not None else 0) * 1e-6 + self.arm_delay_s + self.start_delay_s


def check_launch(hold_time: float, start_s: float, where: str) -> None:
    """The catapult must push after PX4's mission started, or PX4's launch detector is not yet looking."""
    if hold_time < start_s + LAUNCH_AFTER_START_S:
        raise BuildError(f"{where}: nexus:holdTime {hold_time:g} s pushes the plane before PX4's mission can see it "
                         f"(PX4 starts the mission at {start_s:g} s of sim time, and its launch detector looks from "
                         f"then on); set nexus:holdTime to {start_s + LAUNCH_AFTER_START_S:g} s or more")


def runway_upload_s(field_altitude: float) -> float:
    """When [s of PX4's clock] a runway takeoff's mission may be uploaded, the arm and the start following: once
    TECS's altitude reference has come from 0 m to the field's altitude [m above sea level] (with a tenth to
    spare), and not before the usual 6 s: 178.9 s at PX4's SITL home, 488 m."""
    return max(DEFAULT_UPLOAD_S, 1.1 * abs(field_altitude) / TECS_REFERENCE_RATE)


__all__ = ["PlanePlan", "check_launch", "plane_mission_items", "runway_upload_s"]
