"""A plane's mission: straight legs through a list of waypoints, then a loiter that ends the run.

A device stage of kind ``guide`` (one thread per world) that writes, each tick, the
:class:`~nexus.control.fixed_wing.controller.FixedWingTask` its :class:`FixedWingController` reads (the
controller's own device array; the stage runs before the control stage in the same tick):

* leg ``i`` runs from waypoint ``i − 1`` (the NED origin for the first, which the air start puts below the
  start) to waypoint ``i``; the next leg begins when the plane comes within the acceptance radius of the
  waypoint or passes the line through it square to the leg (PX4's waypoint acceptance, in spirit);
* after the last, it loiters on the circle about the loiter centre and, ``loiter_time`` after the loiter
  began, sets the world's done flag: the run ends ``done``. No approach or landing yet.

The mission is a vehicle file's or scene's ``NexusPlaneMissionAPI`` prim (:data:`PLANE_MISSION_SPEC`), else
:meth:`PlaneMission.default`. Positions north-east [m] from the NED origin, heights above it [m]. The leg
index (``plane_leg``: the loiter is ``len(waypoints)``) is recorded.
"""

from __future__ import annotations

import warp as wp

from nexus.control.fixed_wing.air_start import AirStart
from nexus.control.fixed_wing.controller import LINE, LOITER, FixedWingController, FixedWingTask
from nexus.core import Component, Stage
from nexus.core.errors import BuildError
from nexus.core.spec import Input, Output, Param, Spec, StateVar
from nexus.estimation.pose_twist import PoseTwist
from nexus.plant.usd_checks import nexus_apis
from nexus.schemas.reader import read_prim

#: The default mission: a 400 m square flown anticlockwise from the start (east first, the Aerosonde's heading),
#: 100 m up at 25 m/s, then 60 s on a 150 m loiter about the square's centre.
DEFAULT_WAYPOINTS = ((0.0, 400.0), (400.0, 400.0), (400.0, 0.0), (0.0, 0.0))

PLANE_MISSION_SPEC = Spec(
    name="PlaneMission",
    schema="NexusPlaneMissionAPI",
    noun="plane mission",
    doc="A plane's mission: straight legs from the NED origin through nexus:waypoints (north, east [m]) at "
        "nexus:height and nexus:airspeed, each ending within nexus:acceptanceRadius of its waypoint or abeam it, "
        "then a loiter of nexus:loiterRadius about (nexus:loiterNorth, nexus:loiterEast) for nexus:loiterTime, "
        "which ends the run.",
    params=(
        Param("waypoints", "nexus:waypoints", "float2[]", DEFAULT_WAYPOINTS, "m",
              "Waypoints (north, east) from the NED origin, flown in order"),
        Param("height", "nexus:height", "float", 100.0, "m", "Height above the NED origin", low=0.0, open_low=True),
        Param("airspeed", "nexus:airspeed", "float", 25.0, "m/s", "Airspeed flown", low=0.0, open_low=True),
        Param("acceptance_radius", "nexus:acceptanceRadius", "float", 60.0, "m",
              "Distance to a waypoint at which the next leg begins", low=0.0, open_low=True),
        Param("loiter_north", "nexus:loiterNorth", "float", 200.0, "m", "Loiter centre, north of the NED origin"),
        Param("loiter_east", "nexus:loiterEast", "float", 200.0, "m", "Loiter centre, east of the NED origin"),
        Param("loiter_radius", "nexus:loiterRadius", "float", 150.0, "m", "Loiter radius", low=0.0, open_low=True),
        Param("loiter_clockwise", "nexus:loiterClockwise", "bool", False, "-", "Loiter clockwise seen from above"),
        Param("loiter_time", "nexus:loiterTime", "float", 60.0, "s", "Time on the loiter before the run ends",
              low=0.0),
    ),
)


@wp.struct
class PlaneMissionState:
    leg: wp.int32  # the leg flown; len(waypoints) is the loiter
    loiter_start: wp.float64  # sim time the loiter began [s]; -1 before


def _empty(component, ctx) -> PlaneMissionState:
    state = PlaneMissionState()
    state.leg = 0
    state.loiter_start = wp.float64(-1.0)
    return state


PLANE_MISSION_STAGE_SPEC = Spec(
    name="PlaneMissionStage",
    doc="Flies a plane's mission: writes its FixedWingController's task each tick; ends the run after the loiter.",
    inputs=(Input("estimate", PoseTwist, doc="Where the plane is [m, NED]"), Input("time", wp.float64)),
    outputs=(Output("plane_leg", wp.int32, recorded=True, default=-1,
                    doc="The leg flown (0 from the origin to the first waypoint); the number of waypoints: the loiter"),),
    state=(StateVar("plane_mission", PlaneMissionState, (1,), _empty, "the leg flown and when the loiter began"),),
    stage="plane_mission",
    kind="guide",
)


@wp.kernel
def fly_plane_mission(
    time: wp.array(dtype=wp.float64),
    estimate: wp.array(dtype=PoseTwist),
    waypoints: wp.array(dtype=wp.vec2),
    loiter: FixedWingTask,
    acceptance: float,
    loiter_time: wp.float64,
    state_in: wp.array2d(dtype=PlaneMissionState),
    state_out: wp.array2d(dtype=PlaneMissionState),
    task: wp.array(dtype=FixedWingTask),
    leg_out: wp.array(dtype=wp.int32),
    done: wp.array(dtype=wp.int32),
):
    world = wp.tid()
    state = state_in[world, 0]
    count = waypoints.shape[0]
    position = estimate[world].position
    here = wp.vec2(position[0], position[1])
    if state.leg < count:
        start = wp.vec2(0.0, 0.0)
        if state.leg > 0:
            start = waypoints[state.leg - 1]
        end = waypoints[state.leg]
        to_end = end - here
        if wp.length(to_end) < acceptance or wp.dot(here - end, end - start) > 0.0:
            state.leg = state.leg + 1
            if state.leg == count:
                state.loiter_start = time[world]
    if state.leg < count:
        leg = FixedWingTask()
        leg.airspeed = loiter.airspeed
        leg.height = loiter.height
        leg.mode = LINE
        leg.start = wp.vec2(0.0, 0.0)
        if state.leg > 0:
            leg.start = waypoints[state.leg - 1]
        leg.end = waypoints[state.leg]
        leg.centre = loiter.centre
        leg.radius = loiter.radius
        leg.clockwise = loiter.clockwise
        task[world] = leg
    else:
        task[world] = loiter
        if time[world] - state.loiter_start >= loiter_time:
            done[world] = wp.max(done[world], 1)
    leg_out[world] = state.leg
    state_out[world, 0] = state


class PlaneMission(Component):
    """Writes a :class:`FixedWingController`'s task from a waypoint list and a loiter; ends the run after it."""

    spec = PLANE_MISSION_STAGE_SPEC
    is_guidance = True

    def __init__(self, name: str, waypoints=DEFAULT_WAYPOINTS, *, height: float = 100.0, airspeed: float = 25.0,
                 acceptance_radius: float = 60.0, loiter_north: float = 200.0, loiter_east: float = 200.0,
                 loiter_radius: float = 150.0, loiter_clockwise: bool = False, loiter_time: float = 60.0):
        super().__init__(name)
        self.waypoints = [tuple(float(v) for v in point) for point in waypoints]
        if not self.waypoints:
            raise BuildError(f"{name}: nexus:waypoints is empty; give at least one (north, east) [m]")
        self.height, self.airspeed = float(height), float(airspeed)
        self.acceptance_radius, self.loiter_time = float(acceptance_radius), float(loiter_time)
        self.loiter_centre = (float(loiter_north), float(loiter_east))
        self.loiter_radius, self.loiter_clockwise = float(loiter_radius), bool(loiter_clockwise)
        self.controller: FixedWingController | None = None
        #: The vehicle file's start in the air (None: none); the start-up places the plane there.
        self.air_start: AirStart | None = None

    @classmethod
    def from_values(cls, name: str, values: dict) -> PlaneMission:
        """The mission of a prim's checked values (:data:`PLANE_MISSION_SPEC`)."""
        return cls(name, **values)

    def flown_by(self, controller: FixedWingController) -> PlaneMission:
        """Write ``controller``'s task; returns self."""
        self.controller = controller
        return self

    def stages(self) -> list[Stage]:
        return [Stage(self.spec.stage, self.spec.kind, self.run, reads=self.reads(), writes=self.writes(),
                      finishes=True)]

    def loiter_task(self) -> FixedWingTask:
        """The loiter's task; the legs' tasks are it with a line (same airspeed and height)."""
        t = FixedWingTask()
        t.airspeed, t.height, t.mode = self.airspeed, self.height, LOITER
        t.start, t.end = wp.vec2(0.0, 0.0), wp.vec2(1.0, 0.0)
        t.centre, t.radius = wp.vec2(*self.loiter_centre), self.loiter_radius
        t.clockwise = 1.0 if self.loiter_clockwise else -1.0
        return t

    def prepare(self, ctx) -> None:
        if self.controller is None:
            raise BuildError(f"{self.name}: a plane mission needs the fixed_wing controller to fly it")
        if self.air_start is not None:
            self.air_start.prepare(ctx)
        self.worlds = ctx.worlds
        self._waypoints = wp.array([wp.vec2(*p) for p in self.waypoints], dtype=wp.vec2, device=ctx.device)
        self._loiter = self.loiter_task()

    def run(self, io) -> None:
        wp.launch(fly_plane_mission, self.worlds,
                  inputs=[io["time"], io["estimate"], self._waypoints, self._loiter, self.acceptance_radius,
                          wp.float64(self.loiter_time), io.state_in["plane_mission"]],
                  outputs=[io.state_out["plane_mission"], self.controller.task, io["plane_leg"], io.done],
                  device=io.device)


def plane_mission(vehicle_stage, scene_stage, vehicle_path, scene_path, controller: FixedWingController) -> PlaneMission:
    """The mission of the scene's ``NexusPlaneMissionAPI`` prim, else the vehicle file's, else the default;
    flown by ``controller``."""
    for stage, path in ((scene_stage, scene_path), (vehicle_stage, vehicle_path)):
        for prim in stage.Traverse():
            if PLANE_MISSION_SPEC.schema in nexus_apis(prim):
                values = read_prim(prim, PLANE_MISSION_SPEC, path)
                return PlaneMission.from_values(str(prim.GetPath()), values).flown_by(controller)
    return PlaneMission("/vehicle/plane_mission").flown_by(controller)


__all__ = ["DEFAULT_WAYPOINTS", "PLANE_MISSION_SPEC", "PlaneMission", "PlaneMissionState", "fly_plane_mission",
           "plane_mission"]
