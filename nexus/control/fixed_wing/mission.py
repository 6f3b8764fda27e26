"""A plane's mission: a climb-out, straight legs through a list of waypoints, a loiter, then a landing.

A device stage of kind ``guide`` (one thread per world) that writes, each tick, the
:class:`~nexus.control.fixed_wing.controller.FixedWingTask` its :class:`FixedWingController` reads (the
controller's own device array; the stage runs before the control stage in the same tick). Its phases,
recorded as ``plane_phase``:

0. **launch**: from the start (a release in the air, :mod:`.air_start`, or a catapult's push from rest,
   :mod:`.catapult`: the throttle off and the surfaces centred until the plane moves faster than
   :data:`LAUNCH_DETECT_SPEED`) along leg 0 at full throttle, the bank held within 10° (PX4 keeps the wings level
   until its clearance), until ``climb_out_height``;
1. **route**: leg ``i`` runs from waypoint ``i − 1`` (the NED origin for the first) to waypoint ``i``; the next
   leg begins within the acceptance radius of the waypoint or past the line through it square to the leg;
2. **loiter** on the circle about the loiter centre for ``loiter_time``; without ``land`` the run then ends;
3. **descent** to ``approach_height`` at ``approach_airspeed`` on the approach circle: the loiter's radius and
   way round, tangent to the final at the glide slope's entry, ``approach_height / tan γ`` before the
   touchdown point along ``landing_course`` (PX4's loiter-to-altitude before a landing);
4. **approach**: on round the circle at the approach height until the entry, heading along the course;
5. **final**: the line through the entry and the touchdown point, the height goal ``tan γ`` times the distance
   still to go, with the glide's sink rate ``V·tan γ`` as the height loop's feed-forward;
6. **flare** below ``flare_time · V · sin γ`` (where the glide's sink equals ``h / flare_time``): the sink rate
   flown is ``max(h / flare_time, touchdown_sink_rate)``, throttle idle, bank within 5°;
7. **roll-out** from :data:`TOUCHDOWN_HEIGHT`: surfaces centred, no throttle; the run ends ``done`` when the
   ground speed is under :data:`STOPPED_SPEED`.

The mission is a vehicle file's or scene's ``NexusPlaneMissionAPI`` prim (:data:`PLANE_MISSION_SPEC`), else
the default (``PlaneMission(name)``). Positions north-east [m] from the NED origin, heights above it [m]. The leg
index (``plane_leg``: ``len(waypoints)`` from the loiter on) and the phase are recorded.
"""

from __future__ import annotations

import math

import warp as wp

from nexus.control.fixed_wing.air_start import AirStart
from nexus.control.fixed_wing.controller import LINE, LOITER, FixedWingController, FixedWingTask, free_task
from nexus.core import Component, Stage
from nexus.core.errors import BuildError
from nexus.core.spec import Input, Output, Param, Spec, StateVar
from nexus.estimation.pose_twist import PoseTwist
from nexus.plant.usd_checks import nexus_apis
from nexus.schemas.reader import read_prim

#: The default mission: a 400 m square flown anticlockwise from the start (east first, the Aerosonde's heading),
#: 100 m up at 25 m/s, then 60 s on a 150 m loiter about the square's centre, then a landing at the origin.
DEFAULT_WAYPOINTS = ((0.0, 400.0), (400.0, 400.0), (400.0, 0.0), (0.0, 0.0))

#: The mission's phases, recorded as ``plane_phase``.
LAUNCH, ROUTE, LOITERING, DESCENT, APPROACH, FINAL, FLARE, ROLLOUT = range(8)
PHASE_NAMES = ("launch", "route", "loiter", "descent", "approach", "final", "flare", "rollout")

PLANE_MISSION_SPEC = Spec(
    name="PlaneMission",
    schema="NexusPlaneMissionAPI",
    noun="plane mission",
    doc="A plane's mission: a climb-out, straight legs from the NED origin through nexus:waypoints (north, east [m]) "
        "at nexus:height and nexus:airspeed, each ending within nexus:acceptanceRadius of its waypoint or abeam it, "
        "a loiter of nexus:loiterRadius about (nexus:loiterNorth, nexus:loiterEast) for nexus:loiterTime, then "
        "(with nexus:land) a descent on the loiter, an approach on a glide slope, a flare and a touchdown at "
        "(nexus:touchdownNorth, nexus:touchdownEast) flying nexus:landingCourse; the run ends on the ground, or "
        "after the loiter without nexus:land.",
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
        Param("loiter_time", "nexus:loiterTime", "float", 60.0, "s",
              "Time on the loiter before the landing (or, without nexus:land, before the run ends)", low=0.0),
        Param("climb_out_height", "nexus:climbOutHeight", "float", 10.0, "m",
              "Height below which the plane climbs at full throttle with its wings nearly level (a launch's "
              "climb-out; PX4's FW_CLMBOUT_DIFF)", low=0.0),
        Param("land", "nexus:land", "bool", True, "-", "Land after the loiter; without it the run ends on the loiter"),
        Param("touchdown_north", "nexus:touchdownNorth", "float", 0.0, "m", "Touchdown point, north of the NED origin"),
        Param("touchdown_east", "nexus:touchdownEast", "float", 0.0, "m", "Touchdown point, east of the NED origin"),
        Param("landing_course", "nexus:landingCourse", "float", 1.5707963, "rad",
              "Course flown on the final approach, clockwise from north (π/2: east)"),
        Param("approach_height", "nexus:approachHeight", "float", 30.0, "m",
              "Height the loiter descends to and the glide slope starts from", low=0.0, open_low=True),
        Param("approach_airspeed", "nexus:approachAirspeed", "float", 18.0, "m/s",
              "Airspeed on the approach (PX4's FW_LND_AIRSPD)", low=0.0, open_low=True),
        Param("glide_slope", "nexus:glideSlope", "float", 0.0872665, "rad",
              "Glide slope of the final approach (PX4's FW_LND_ANG, 5°)", low=0.0, high=0.35, open_low=True),
        Param("flare_time", "nexus:flareTime", "float", 1.5, "s",
              "The flare's time constant: the sink rate flown is the height over it", low=0.0, open_low=True),
        Param("touchdown_sink_rate", "nexus:touchdownSinkRate", "float", 0.3, "m/s",
              "Sink rate the flare ends at (the floor of height / flareTime)", low=0.0, open_low=True),
    ),
)

#: A plane's height [m] above its NED origin (the base's place in the file, resting on its gear) at which it is on
#: the ground: the flare ends and the roll-out begins.
TOUCHDOWN_HEIGHT = 0.1
#: Ground speed [m/s] under which a plane rolling out has stopped: the run ends ``done``.
STOPPED_SPEED = 1.0
#: Speed [m/s] from which a plane in its launch phase counts as launched: below it (at rest before a catapult's
#: push, :mod:`.catapult`) the throttle stays off and the surfaces centred; above it, full throttle (PX4 starts the
#: motor once its detector sees the push).
LAUNCH_DETECT_SPEED = 5.0
#: The approach circle hands over to the final within this many radii of the entry, heading within 10° of the
#: course (cos 10° = 0.98481): 26 m of arc before the entry on a 150 m circle.
ROLL_OUT_OF_CIRCLE, ALIGNED = 0.3, 0.98480775
#: Bank limits [rad]: in a launch's climb-out (PX4 holds the wings level below its clearance) and in the flare.
CLIMB_OUT_BANK, FLARE_BANK = 0.1745329, 0.0872665


@wp.struct
class PlaneMissionState:
    phase: wp.int32  # LAUNCH .. ROLLOUT
    leg: wp.int32  # the leg flown; len(waypoints) is the loiter
    loiter_start: wp.float64  # sim time the loiter began [s]; -1 before


def _empty(component, ctx) -> PlaneMissionState:
    state = PlaneMissionState()
    state.phase = LAUNCH
    state.leg = 0
    state.loiter_start = wp.float64(-1.0)
    return state


PLANE_MISSION_STAGE_SPEC = Spec(
    name="PlaneMissionStage",
    doc="Flies a plane's mission: writes its FixedWingController's task each tick; ends the run when the plane has "
        "stopped on the ground after its landing (or after the loiter, without one).",
    inputs=(Input("estimate", PoseTwist, doc="Where the plane is [m, NED]"), Input("time", wp.float64)),
    outputs=(Output("plane_leg", wp.int32, recorded=True, default=-1,
                    doc="The leg flown (0 from the origin to the first waypoint); the number of waypoints: the loiter "
                        "and the landing"),
             Output("plane_phase", wp.int32, recorded=True, default=-1,
                    doc="0 launch, 1 route, 2 loiter, 3 descent, 4 approach, 5 final, 6 flare, 7 roll-out")),
    state=(StateVar("plane_mission", PlaneMissionState, (1,), _empty,
                    "the phase, the leg flown and when the loiter began"),),
    stage="plane_mission",
    kind="guide",
)


@wp.struct
class Landing:
    """The landing's geometry and speeds, as the kernel reads them."""

    land: wp.int32
    touchdown: wp.vec2  # [m]
    course: wp.vec2  # unit vector north-east of the final approach [-]
    entry: wp.vec2  # where the glide slope starts: approach_height / tan(glide slope) before the touchdown [m]
    circle: wp.vec2  # the approach circle's centre: one radius to the side of the entry, the circle tangent there [m]
    radius: float  # the approach circle's radius: the loiter's [m]
    approach_height: float  # [m]
    approach_airspeed: float  # [m/s]
    slope: float  # tan(glide slope) [-]
    flare_height: float  # the height at which the glide's sink rate equals height / flare_time [m]
    flare_time: float  # [s]
    sink_floor: float  # [m/s]
    climb_out_height: float  # [m]


@wp.func
def leg_start(waypoints: wp.array(dtype=wp.vec2), leg: wp.int32) -> wp.vec2:
    if leg > 0:
        return waypoints[leg - 1]
    return wp.vec2(0.0, 0.0)


@wp.func
def reached(here: wp.vec2, start: wp.vec2, end: wp.vec2, acceptance: float) -> wp.bool:
    """Within the acceptance radius of a leg's end, or past the line through it square to the leg."""
    return wp.length(end - here) < acceptance or wp.dot(here - end, end - start) > 0.0


@wp.func
def copy_task(source: FixedWingTask) -> FixedWingTask:
    t = FixedWingTask()
    t.airspeed = source.airspeed
    t.height = source.height
    t.mode = source.mode
    t.start = source.start
    t.end = source.end
    t.centre = source.centre
    t.radius = source.radius
    t.clockwise = source.clockwise
    t.throttle_min = source.throttle_min
    t.throttle_max = source.throttle_max
    t.bank_max = source.bank_max
    t.climb_rate = source.climb_rate
    t.flare = source.flare
    return t


@wp.kernel
def fly_plane_mission(
    time: wp.array(dtype=wp.float64),
    estimate: wp.array(dtype=PoseTwist),
    waypoints: wp.array(dtype=wp.vec2),
    loiter: FixedWingTask,
    landing: Landing,
    acceptance: float,
    loiter_time: wp.float64,
    state_in: wp.array2d(dtype=PlaneMissionState),
    state_out: wp.array2d(dtype=PlaneMissionState),
    task: wp.array(dtype=FixedWingTask),
    leg_out: wp.array(dtype=wp.int32),
    phase_out: wp.array(dtype=wp.int32),
    done: wp.array(dtype=wp.int32),
):
    world = wp.tid()
    state = state_in[world, 0]
    count = waypoints.shape[0]
    est = estimate[world]
    here = wp.vec2(est.position[0], est.position[1])
    height = -est.position[2]

    # The phase changes first, then the task of the phase flown.
    if state.phase == LAUNCH and height >= landing.climb_out_height:
        state.phase = ROUTE
    if state.phase == LAUNCH or state.phase == ROUTE:
        if reached(here, leg_start(waypoints, state.leg), waypoints[state.leg], acceptance):
            state.leg = wp.min(state.leg + 1, count)
        if state.leg == count:
            state.phase = LOITERING
            state.loiter_start = time[world]
    if state.phase == LOITERING and time[world] - state.loiter_start >= loiter_time and landing.land != 0:
        state.phase = DESCENT
    if state.phase == DESCENT and wp.abs(height - landing.approach_height) < 2.0:
        state.phase = APPROACH
    ground = wp.vec2(est.velocity[0], est.velocity[1])
    if state.phase == APPROACH and wp.length(here - landing.entry) < ROLL_OUT_OF_CIRCLE * landing.radius and (
            wp.dot(ground, landing.course) > ALIGNED * wp.length(ground)):
        state.phase = FINAL
    to_go = wp.dot(landing.touchdown - here, landing.course)  # along the final, before the touchdown [m]
    if state.phase == FINAL and height <= landing.flare_height:
        state.phase = FLARE
    if state.phase == FLARE and height <= TOUCHDOWN_HEIGHT:
        state.phase = ROLLOUT

    t = copy_task(loiter)
    if state.phase == LAUNCH or state.phase == ROUTE:
        t.mode = LINE
        t.start = leg_start(waypoints, state.leg)
        t.end = waypoints[state.leg]
        if state.phase == LAUNCH:
            t.throttle_min = 1.0
            t.bank_max = CLIMB_OUT_BANK
            if wp.length(wp.vec3(est.velocity[0], est.velocity[1], est.velocity[2])) < LAUNCH_DETECT_SPEED:
                t.flare = 2  # at rest before a catapult's push: on the ground, throttle off, surfaces centred
    elif state.phase == DESCENT or state.phase == APPROACH:
        t.centre = landing.circle
        t.radius = landing.radius
        t.height = landing.approach_height
        t.airspeed = landing.approach_airspeed
    elif state.phase >= FINAL:
        t.mode = LINE
        t.start = landing.entry
        t.end = landing.touchdown
        t.airspeed = landing.approach_airspeed
        t.height = wp.clamp(landing.slope * to_go, 0.0, landing.approach_height)
        along = wp.dot(ground, landing.course)
        if to_go * landing.slope < landing.approach_height:
            t.climb_rate = -landing.slope * wp.max(along, 0.0)  # the glide slope's sink at the speed along it
        if state.phase >= FLARE:
            t.flare = 1
            t.climb_rate = -wp.max(height / landing.flare_time, landing.sink_floor)
            t.throttle_max = 0.0
            t.bank_max = FLARE_BANK
        if state.phase == ROLLOUT:
            t.flare = 2
    task[world] = t

    if state.phase == LOITERING and landing.land == 0 and time[world] - state.loiter_start >= loiter_time:
        done[world] = wp.max(done[world], 1)
    if state.phase == ROLLOUT and wp.length(wp.vec2(est.velocity[0], est.velocity[1])) < STOPPED_SPEED:
        done[world] = wp.max(done[world], 1)
    leg_out[world] = state.leg
    phase_out[world] = state.phase
    state_out[world, 0] = state


class PlaneMission(Component):
    """Writes a :class:`FixedWingController`'s task from a waypoint list and a loiter; ends the run after it."""

    spec = PLANE_MISSION_STAGE_SPEC
    is_guidance = True

    def __init__(self, name: str, waypoints=DEFAULT_WAYPOINTS, *, height: float = 100.0, airspeed: float = 25.0,
                 acceptance_radius: float = 60.0, loiter_north: float = 200.0, loiter_east: float = 200.0,
                 loiter_radius: float = 150.0, loiter_clockwise: bool = False, loiter_time: float = 60.0,
                 climb_out_height: float = 10.0, land: bool = True, touchdown_north: float = 0.0,
                 touchdown_east: float = 0.0, landing_course: float = math.pi / 2, approach_height: float = 30.0,
                 approach_airspeed: float = 18.0, glide_slope: float = math.radians(5.0), flare_time: float = 1.5,
                 touchdown_sink_rate: float = 0.3):
        super().__init__(name)
        self.waypoints = [tuple(float(v) for v in point) for point in waypoints]
        if not self.waypoints:
            raise BuildError(f"{name}: nexus:waypoints is empty; give at least one (north, east) [m]")
        self.height, self.airspeed = float(height), float(airspeed)
        self.acceptance_radius, self.loiter_time = float(acceptance_radius), float(loiter_time)
        self.loiter_centre = (float(loiter_north), float(loiter_east))
        self.loiter_radius, self.loiter_clockwise = float(loiter_radius), bool(loiter_clockwise)
        self.climb_out_height, self.land = float(climb_out_height), bool(land)
        self.touchdown = (float(touchdown_north), float(touchdown_east))
        self.landing_course, self.approach_height = float(landing_course), float(approach_height)
        self.approach_airspeed, self.glide_slope = float(approach_airspeed), float(glide_slope)
        self.flare_time, self.touchdown_sink_rate = float(flare_time), float(touchdown_sink_rate)
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
        t = free_task()
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
        self._landing = self.landing()

    def landing(self) -> Landing:
        """The landing's geometry: the glide slope's entry ``approach_height / tan(slope)`` before the touchdown
        along the course, and the flare's height ``flare_time · approach_airspeed · sin(slope)``, where the glide's
        sink rate equals the flare's ``height / flare_time``."""
        out = Landing()
        course = (math.cos(self.landing_course), math.sin(self.landing_course))
        run_in = self.approach_height / math.tan(self.glide_slope)
        out.land = 1 if self.land else 0
        out.touchdown, out.course = wp.vec2(*self.touchdown), wp.vec2(*course)
        out.entry = wp.vec2(self.touchdown[0] - run_in * course[0], self.touchdown[1] - run_in * course[1])
        # Flying the circle's way round, the plane at the entry heads along the course: the centre is to the right
        # of the course (clockwise) or to the left.
        side = (-course[1], course[0]) if self.loiter_clockwise else (course[1], -course[0])
        out.circle = wp.vec2(out.entry[0] + self.loiter_radius * side[0], out.entry[1] + self.loiter_radius * side[1])
        out.radius = self.loiter_radius
        out.approach_height, out.approach_airspeed = self.approach_height, self.approach_airspeed
        out.slope = math.tan(self.glide_slope)
        out.flare_height = self.flare_time * self.approach_airspeed * math.sin(self.glide_slope)
        out.flare_time, out.sink_floor = self.flare_time, self.touchdown_sink_rate
        out.climb_out_height = self.climb_out_height
        return out

    def run(self, io) -> None:
        wp.launch(fly_plane_mission, self.worlds,
                  inputs=[io["time"], io["estimate"], self._waypoints, self._loiter, self._landing,
                          self.acceptance_radius, wp.float64(self.loiter_time), io.state_in["plane_mission"]],
                  outputs=[io.state_out["plane_mission"], self.controller.task, io["plane_leg"], io["plane_phase"],
                           io.done],
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


__all__ = ["DEFAULT_WAYPOINTS", "PHASE_NAMES", "PLANE_MISSION_SPEC", "Landing", "PlaneMission", "PlaneMissionState",
           "fly_plane_mission", "plane_mission"]
