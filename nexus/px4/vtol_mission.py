"""A standard VTOL's Nexus mission flown by PX4: PX4's VTOL mission items, uploaded, armed and started at fixed ticks.

``nexus run --controller px4 --px4-mission`` on a standard VTOL turns its VTOL mission (the scene's
``NexusVtolMissionAPI`` prim, else the vehicle file's, else the default: what ``--controller vtol`` flies,
:func:`nexus.control.vtol.mission.vtol_mission`) into PX4's items:

* ``NAV_VTOL_TAKEOFF`` to ``takeoffHeight`` with the first waypoint as its position: PX4 climbs on its rotors to the
  height, transitions towards the next waypoint (its docs: the item's heading parameter is ignored, the bearing to
  the next waypoint is flown) and then flies to the item's position on the wing;
* each waypoint: ``NAV_WAYPOINT`` at ``height`` (the first again, which the takeoff item already reached: PX4 takes
  it at once);
* ``NAV_VTOL_LAND`` at the landing point, height 0: PX4 flies there on the wing, transitions back before it and
  lands on its rotors.

Positions are north, east [m] from the NED origin (where the vehicle rests), as latitude and longitude through the
GPS's geodesy; heights above PX4's home, where it arms. The upload, the arm and the start go at fixed times of PX4's
clock (:class:`~nexus.px4.plane_mission.PlanePlan`); the run is over on the tick PX4 disarms after its landing.
The transitions' speeds, timeout and the landing's descent rate are PX4 parameters, which ``nexus px4 params``
derives from the same mission (:mod:`nexus.px4.vtol_params`).
"""

from __future__ import annotations

import math

from nexus.px4.plane_mission import degE7
from nexus.px4.step_mission import MAV_CMD_NAV_WAYPOINT, MAV_FRAME_GLOBAL_RELATIVE_ALT_INT

#: MAVLink's VTOL mission commands.
MAV_CMD_NAV_VTOL_TAKEOFF, MAV_CMD_NAV_VTOL_LAND = 84, 85


def vtol_mission_items(mission, origin, shift: tuple[float, float] = (0.0, 0.0)) -> list[tuple]:
    """PX4's items for a :class:`~nexus.control.vtol.mission.VtolMission`, each (command, frame, param1..4,
    x [degE7], y [degE7], z [m above home]); ``shift`` (north, east) [m] moves every point (a fleet's vehicle k)."""
    rel = MAV_FRAME_GLOBAL_RELATIVE_ALT_INT

    def at(point) -> tuple[int, int]:
        return degE7(origin, float(point[0]) + shift[0], float(point[1]) + shift[1])

    items = [(MAV_CMD_NAV_VTOL_TAKEOFF, rel, 0.0, 0.0, 0.0, math.nan, *at(mission.waypoints[0]),
              mission.takeoff_height)]
    for point in mission.waypoints:
        items.append((MAV_CMD_NAV_WAYPOINT, rel, 0.0, mission.acceptance_radius, 0.0, math.nan, *at(point),
                      mission.height))
    items.append((MAV_CMD_NAV_VTOL_LAND, rel, 0.0, 0.0, 0.0, math.nan, *at(mission.land), 0.0))
    return items


__all__ = ["MAV_CMD_NAV_VTOL_LAND", "MAV_CMD_NAV_VTOL_TAKEOFF", "vtol_mission_items"]
