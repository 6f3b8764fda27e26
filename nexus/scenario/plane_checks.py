"""A plane's scenario measures, from its run's record and files: airspeed, altitude, cross-track error from the
mission's current leg, stall margin, and the touchdown's sink rate and point (the series:
:class:`nexus.worlds.plane_record.PlaneRecord`, which a sweep's row figures read too).

The mission's geometry is read the way the run read it (:func:`nexus.control.fixed_wing.mission.plane_mission`:
the scene's ``NexusPlaneMissionAPI`` prim, else the vehicle file's, else the default), from the files run.json
names; the wing's values and the base's mass from the vehicle file (a drawn ``mass`` from run.json's
``world_values``). A standard VTOL's record (``vtol_phase``) is measured by its VTOL mission: the cross-track from its
legs on the wing and in the back transition, the stall margin on the wing, the touchdown at its ``landed`` phase
and its landing point; a check's ``phases`` may name its phases. A record without either (a multirotor's) gives
NaN everywhere, which fails the check: the run cannot say.

* ``airspeed`` [m/s]: ``|v − wind|`` of the base (the recorded ``wind``; still air without it);
* ``altitude`` [m]: height above the NED origin (a plane's: the ground under its release);
* ``cross_track`` [m]: horizontal distance from what the mission flies in that row's phase: the line of leg
  ``plane_leg`` (from waypoint ``i − 1``, the NED origin for the first, through waypoint ``i``) in the launch
  and the route; ``|distance to the centre − radius|`` on the loiter and on the approach circle (descent and
  approach); the final's line (through the glide slope's entry and the touchdown point) from the final on;
* ``stall_margin`` [-]: airspeed over the level-flight stall speed at the world's mass,
  ``√(2mg/(ρ S (C_L0 + C_Lα α0)))`` (:func:`~nexus.control.fixed_wing.air_start.stall_speed`), while airborne
  (before the roll-out; NaN after, which a window must leave out);
* ``touchdown_sink`` [m/s]: the crash detector's hardest touchdown (run.json's ``crash.hardest_touchdown_m_s``),
  at its tick;
* ``touchdown_point`` [m]: horizontal distance from the mission's touchdown point to where the plane was on the
  first row of its roll-out (the touchdown).
"""

from __future__ import annotations

from nexus.control.fixed_wing.mission import PHASE_NAMES
from nexus.control.vtol.mission import PHASE_NAMES as VTOL_PHASE_NAMES
from nexus.worlds.plane_record import PlaneRecord

#: The measures this module gives, with their unit, bound side and meaning (:data:`nexus.scenario.spec.MEASURES`).
PLANE_MEASURES = {
    "airspeed": ("m/s", "max", "a plane's speed through the air, |v - wind| (max or min)"),
    "altitude": ("m", "max", "height above the NED origin (a plane's: the ground under its release; max or min)"),
    "cross_track": ("m", "max", "a plane's horizontal distance from its mission's current leg, loiter or approach "
                                "circle, or final (by the recorded plane_leg and plane_phase)"),
    "stall_margin": ("-", "min", "a plane's airspeed over its level-flight stall speed at its mass, while airborne "
                                 "(before the roll-out)"),
    "touchdown_sink": ("m/s", "max", "the hardest touchdown's sink rate (run.json's crash block)"),
    "touchdown_point": ("m", "max", "horizontal distance from the mission's touchdown point to where the plane "
                                    "touched down (the first row of its roll-out)"),
}


__all__ = ["PHASE_NAMES", "PLANE_MEASURES", "PlaneRecord", "VTOL_PHASE_NAMES"]
