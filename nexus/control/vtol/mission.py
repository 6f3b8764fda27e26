"""A standard VTOL's mission: up on the lift rotors, over to the wing, a route, back to the rotors, down.

A device stage of kind ``guide`` (one thread per world) that, each tick, picks the phase and writes what the
:class:`~nexus.control.vtol.controller.VtolController` flies in it: the multicopter loops' setpoint and whether
they run (and whether they hold a position or only fly level), and the fixed-wing stack's task. Its phases,
recorded as ``vtol_phase`` (PX4's standard-VTOL mission, `VT_*` parameters where PX4 has one):

0. **take-off**: straight up on the rotors to ``takeoff_height`` over the NED origin, nose towards the first
   waypoint, once the estimator is aligned with its origin and a horizontal position (its status has ``READY`` and
   ``HORIZONTAL_VALID``, as a multirotor's mission start waits for; the truth estimator's at once): until then the
   rotors stay off;
1. **front transition** once there and still: the pusher at full throttle, the rotors holding height and a level
   attitude (no position hold: the vehicle is meant to move), the wing's loops blended in with the airspeed
   between ``blend_airspeed`` and ``transition_airspeed`` (VT_ARSP_BLEND, VT_ARSP_TRANS); over
   ``transition_timeout`` without reaching it (VT_TRANS_TIMEOUT) the transition is abandoned for the back
   transition;
2. **fixed wing** from ``transition_airspeed``: straight legs through ``waypoints`` at ``height`` and ``airspeed``
   (the first from where the transition began), then a leg towards the landing point;
3. **back transition** within ``back_transition_distance`` of the landing point: the pusher off, the wing holding
   height while the air slows it, the rotors blended back in below ``transition_airspeed``;
4. **return** below ``blend_airspeed``: the rotors alone, to the landing point at the height the back transition
   began;
5. **land** within 1 m of it and slower than 0.5 m/s: down at ``land_speed`` (MPC_LAND_SPEED);
6. **landed** below :data:`LANDED_HEIGHT` and sinking slower than :data:`LANDED_SINK`: motors off, the run ends
   ``done``.

The mission is a vehicle file's or scene's ``NexusVtolMissionAPI`` prim (:data:`VTOL_MISSION_SPEC`), else the
default. Positions north-east [m] from the NED origin, heights above it [m].
"""

from __future__ import annotations

import math

import warp as wp

from nexus.control.fixed_wing.controller import LINE, FixedWingTask, free_task
from nexus.control.fixed_wing.mission import copy_task, leg_start, reached
from nexus.core import Component, Stage
from nexus.core.errors import BuildError
from nexus.core.spec import Input, Output, Param, Spec, StateVar
from nexus.estimation.estimate_status import HORIZONTAL_VALID, READY, STATUS_SIGNAL, TRUSTED
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint
from nexus.plant.usd_checks import nexus_apis
from nexus.schemas.reader import read_prim
from nexus.sensors.airspeed import AirspeedSample, pitot_speed

#: The mission's phases, recorded as ``vtol_phase``.
TAKEOFF, FRONT_TRANSITION, FIXED_WING, BACK_TRANSITION, RETURN, LAND, LANDED = range(7)
PHASE_NAMES = ("takeoff", "front-transition", "fixed-wing", "back-transition", "return", "land", "landed")
#: The default route: a 400 m square's three sides from the take-off (east first), 40 m up at 25 m/s, then home.
DEFAULT_WAYPOINTS = ((0.0, 400.0), (400.0, 400.0), (400.0, 0.0))
#: Height [m] above the NED origin (the base resting on its gear) and sink rate [m/s] under which it has landed
#: (PX4's land detector asks the same of its vertical speed: LNDMC_Z_VEL_MAX 0.5).
LANDED_HEIGHT, LANDED_SINK = 0.15, 0.25
#: The take-off is done, and the landing begins, at the goal within these [m] and slower than this [m/s].
AT_GOAL, STILL = 1.0, 0.5
#: The back transition's height hold: the climb rate asked [m/s] per metre below the height it began at, and its
#: bound [m/s].
HOLD_GAIN, HOLD_RATE = 0.5, 2.0
#: The landing's height goal stops this far [m] below the origin: on the ground the rotors idle down.
BELOW_GROUND = 1.0

VTOL_MISSION_SPEC = Spec(
    name="VtolMission",
    schema="NexusVtolMissionAPI",
    noun="VTOL mission",
    doc="A standard VTOL's mission: a vertical take-off to nexus:takeoffHeight, a front transition (pusher at full "
        "throttle, rotors blended out between nexus:blendAirspeed and nexus:transitionAirspeed), straight legs "
        "through nexus:waypoints (north, east [m]) at nexus:height and nexus:airspeed, a back transition "
        "nexus:backTransitionDistance before the landing point (nexus:landNorth, nexus:landEast), a return on the "
        "rotors and a vertical landing at nexus:landSpeed; the run ends on the ground.",
    params=(
        Param("waypoints", "nexus:waypoints", "float2[]", DEFAULT_WAYPOINTS, "m",
              "Waypoints (north, east) from the NED origin, flown in order on the wing"),
        Param("takeoff_height", "nexus:takeoffHeight", "float", 20.0, "m",
              "Height of the vertical take-off, where the front transition starts (PX4's MIS_TAKEOFF_ALT)",
              low=0.0, open_low=True),
        Param("height", "nexus:height", "float", 40.0, "m", "Height of the route above the NED origin",
              low=0.0, open_low=True),
        Param("airspeed", "nexus:airspeed", "float", 25.0, "m/s", "Airspeed of the route (FW_AIRSPD_TRIM)",
              low=0.0, open_low=True),
        Param("acceptance_radius", "nexus:acceptanceRadius", "float", 60.0, "m",
              "Distance to a waypoint at which the next leg begins", low=0.0, open_low=True),
        Param("transition_airspeed", "nexus:transitionAirspeed", "float", 16.0, "m/s",
              "Airspeed at which the front transition ends and the rotors stop (VT_ARSP_TRANS)",
              low=0.0, open_low=True),
        Param("blend_airspeed", "nexus:blendAirspeed", "float", 12.0, "m/s",
              "Airspeed from which the wing's loops blend in and the rotors out (VT_ARSP_BLEND); below "
              "nexus:transitionAirspeed", low=0.0, open_low=True),
        Param("transition_timeout", "nexus:transitionTimeout", "float", 15.0, "s",
              "Longest front transition: past it the vehicle goes back to its rotors (VT_TRANS_TIMEOUT)",
              low=0.0, open_low=True),
        Param("back_transition_distance", "nexus:backTransitionDistance", "float", 250.0, "m",
              "Distance before the landing point at which the back transition begins", low=0.0, open_low=True),
        Param("land_north", "nexus:landNorth", "float", 0.0, "m", "Landing point, north of the NED origin"),
        Param("land_east", "nexus:landEast", "float", 0.0, "m", "Landing point, east of the NED origin"),
        Param("land_speed", "nexus:landSpeed", "float", 0.7, "m/s", "Descent rate of the landing (MPC_LAND_SPEED)",
              low=0.0, open_low=True),
    ),
)


@wp.struct
class VtolMissionParams:
    takeoff_height: float  # [m]
    height: float  # [m]
    airspeed: float  # [m/s]
    acceptance: float  # [m]
    transition_airspeed: float  # [m/s]
    blend_airspeed: float  # [m/s]
    transition_timeout: wp.float64  # [s]
    back_distance: float  # [m]
    land: wp.vec2  # [m]
    land_speed: float  # [m/s]
    heading: float  # the take-off's heading, towards the first waypoint [rad]
    pitot: wp.int32  # 1: the airspeed is the pitot's
    air_density: float  # [kg/m³]
    dt: float  # [s]


@wp.struct
class VtolMissionState:
    phase: wp.int32
    leg: wp.int32  # the route's leg; len(waypoints) is the leg towards the landing point
    phase_start: wp.float64  # sim time the phase began [s]
    origin: wp.vec2  # where the front transition began: the first leg's start [m]
    yaw: float  # the heading the rotors hold after the back transition [rad]
    hold_height: float  # the height the back transition began at [m]
    descent: float  # the landing's height goal [m]
    started: wp.int32  # 1 once the estimator was ready for the take-off (latched)


def _empty(component, ctx) -> VtolMissionState:
    state = VtolMissionState()
    state.phase_start = wp.float64(0.0)
    return state


VTOL_MISSION_STAGE_SPEC = Spec(
    name="VtolMissionStage",
    doc="Flies a standard VTOL's mission: writes its VtolController's setpoint, task and which loops run; ends the "
        "run on the ground after the landing.",
    inputs=(Input("estimate", PoseTwist, doc="Where the vehicle is [m, NED]"), Input("time", wp.float64),
            Input("armed", wp.int32, default=1, doc="0 cuts every motor and clears the integrators"),
            Input(STATUS_SIGNAL, wp.int32, default=TRUSTED,
                  doc="The estimator's status bits, passed to the multicopter loops"),
            Input("airspeed", AirspeedSample, default=AirspeedSample(),
                  doc="The pitot's reading: the transitions' airspeed (the ground speed without a pitot)")),
    outputs=(Output("vtol_phase", wp.int32, recorded=True, default=-1,
                    doc="0 take-off, 1 front transition, 2 fixed wing, 3 back transition, 4 return, 5 land, 6 landed"),
             Output("vtol_leg", wp.int32, recorded=True, default=-1,
                    doc="The route's leg (0 from the transition to the first waypoint); the number of waypoints: "
                        "the leg towards the landing point")),
    state=(StateVar("vtol_mission", VtolMissionState, (1,), _empty,
                    "the phase, when it began, the route's leg and the holds of the back transition and landing"),),
    stage="vtol_mission",
    kind="guide",
)

_HORIZONTAL_VALID = wp.constant(HORIZONTAL_VALID)
#: What the take-off waits for: aligned with its origin and a horizontal position to fly on (a kernel constant).
_START_STATUS = wp.constant(READY | HORIZONTAL_VALID)


@wp.func
def vtol_airspeed(p: VtolMissionParams, sample: AirspeedSample, velocity: wp.vec3) -> float:
    """The pitot's airspeed √(2q/ρ) [m/s], or the ground speed without one."""
    if p.pitot == 1:
        return pitot_speed(sample.differential_pressure, p.air_density)
    return wp.length(velocity)


@wp.kernel
def fly_vtol_mission(
    time: wp.array(dtype=wp.float64),
    estimate: wp.array(dtype=PoseTwist),
    armed: wp.array(dtype=wp.int32),
    status: wp.array(dtype=wp.int32),
    pitot: wp.array(dtype=AirspeedSample),
    waypoints: wp.array(dtype=wp.vec2),
    params: wp.array(dtype=VtolMissionParams),
    cruise: FixedWingTask,
    state_in: wp.array2d(dtype=VtolMissionState),
    state_out: wp.array2d(dtype=VtolMissionState),
    setpoint: wp.array(dtype=Setpoint),
    task: wp.array(dtype=FixedWingTask),
    multicopter_on: wp.array(dtype=wp.int32),
    wing_on: wp.array(dtype=wp.int32),
    multicopter_status: wp.array(dtype=wp.int32),
    phase_out: wp.array(dtype=wp.int32),
    leg_out: wp.array(dtype=wp.int32),
    done: wp.array(dtype=wp.int32),
):
    world = wp.tid()
    p = params[0]
    s = state_in[world, 0]
    est = estimate[world]
    now = time[world]
    count = waypoints.shape[0]
    here = wp.vec2(est.position[0], est.position[1])
    height = -est.position[2]
    speed = wp.length(est.velocity)
    airspeed = vtol_airspeed(p, pitot[world], est.velocity)

    # The take-off waits for the estimator (latched); then the phase changes (several in one tick where their tests
    # pass), then what the phase flies.
    if s.started == 0 and (status[world] & _START_STATUS) == _START_STATUS:
        s.started = 1
        s.phase_start = now
    phase = s.phase
    if phase == TAKEOFF and wp.abs(height - p.takeoff_height) < AT_GOAL and speed < STILL:
        phase = FRONT_TRANSITION
        s.origin = here
    if phase == FRONT_TRANSITION and airspeed >= p.transition_airspeed:
        phase = FIXED_WING
    if phase == FRONT_TRANSITION and phase == s.phase and now - s.phase_start > p.transition_timeout:
        phase = BACK_TRANSITION  # abandoned: back to the rotors where it is
    if phase == FIXED_WING:
        if s.leg < count:
            start = s.origin
            if s.leg > 0:
                start = leg_start(waypoints, s.leg)
            if reached(here, start, waypoints[s.leg], p.acceptance):
                s.leg = s.leg + 1
        if s.leg >= count and wp.length(p.land - here) < p.back_distance:
            phase = BACK_TRANSITION
    if phase == BACK_TRANSITION and phase != s.phase:
        s.yaw = wp.atan2(est.velocity[1], est.velocity[0])
        s.hold_height = height
    if phase == BACK_TRANSITION and airspeed < p.blend_airspeed:
        phase = RETURN
    if phase == RETURN and wp.length(p.land - here) < AT_GOAL and speed < STILL:
        phase = LAND
        s.descent = height
    if phase == LAND and height < LANDED_HEIGHT and wp.abs(est.velocity[2]) < LANDED_SINK:
        phase = LANDED
    if phase != s.phase:
        s.phase_start = now
    s.phase = phase

    # The rotors' setpoint: over the origin in the take-off, where the vehicle is in the front transition (it flies
    # level there, no position held), over the landing point from the wing on (held from the back transition's
    # blend on: the rotors brake).
    goal = Setpoint()
    goal.position = wp.vec3(0.0, 0.0, -p.takeoff_height)
    goal.yaw = p.heading
    if phase == FRONT_TRANSITION:
        goal.position = wp.vec3(here[0], here[1], -p.takeoff_height)
    elif phase == FIXED_WING:
        goal.position = wp.vec3(p.land[0], p.land[1], -p.height)
    elif phase >= BACK_TRANSITION:
        goal.yaw = s.yaw
        goal.position = wp.vec3(p.land[0], p.land[1], -s.hold_height)
        if phase >= LAND:
            s.descent = wp.max(s.descent - p.land_speed * p.dt, -BELOW_GROUND)
            goal.position = wp.vec3(p.land[0], p.land[1], -s.descent)
    setpoint[world] = goal

    # The wing's task: the current leg (the first from the transition's start; past the waypoints, towards the
    # landing point) at the route's height and speed; full throttle and wings level in the front transition,
    # no throttle and the height held in the back transition.
    t = copy_task(cruise)
    t.mode = LINE
    t.start = s.origin
    t.end = waypoints[0]
    if s.leg > 0 and s.leg < count:
        t.start = leg_start(waypoints, s.leg)
        t.end = waypoints[s.leg]
    elif s.leg >= count:
        t.start = waypoints[count - 1]
        t.end = p.land
    if phase == FRONT_TRANSITION:
        t.height = p.takeoff_height
        t.throttle_min = 1.0
        t.bank_max = 0.0
    elif phase == BACK_TRANSITION:  # the height held by pitch alone (a flare's law at a climb rate back to it)
        t.height = s.hold_height
        t.throttle_max = 0.0
        t.flare = 1
        t.climb_rate = wp.clamp(HOLD_GAIN * (s.hold_height - height), -HOLD_RATE, HOLD_RATE)
    task[world] = t

    on = armed[world]
    rotors = s.started
    if phase == FIXED_WING or phase == LANDED:
        rotors = wp.int32(0)
    wing = wp.int32(0)
    if phase == FRONT_TRANSITION or phase == FIXED_WING or phase == BACK_TRANSITION:
        wing = wp.int32(1)
    multicopter_on[world] = on * rotors
    wing_on[world] = on * wing
    bits = status[world]
    if phase == FRONT_TRANSITION or (phase == BACK_TRANSITION and airspeed >= p.transition_airspeed):
        bits = bits - (bits & _HORIZONTAL_VALID)  # the rotors fly level and hold height, no position
    multicopter_status[world] = bits
    if phase == LANDED:
        done[world] = wp.max(done[world], 1)
    phase_out[world] = phase
    leg_out[world] = s.leg
    state_out[world, 0] = s


class VtolMission(Component):
    """Writes a :class:`~nexus.control.vtol.controller.VtolController`'s setpoint, task and loop switches."""

    spec = VTOL_MISSION_STAGE_SPEC
    is_guidance = True

    def __init__(self, name: str, waypoints=DEFAULT_WAYPOINTS, *, takeoff_height: float = 20.0,
                 height: float = 40.0, airspeed: float = 25.0, acceptance_radius: float = 60.0,
                 transition_airspeed: float = 16.0, blend_airspeed: float = 12.0, transition_timeout: float = 15.0,
                 back_transition_distance: float = 250.0, land_north: float = 0.0, land_east: float = 0.0,
                 land_speed: float = 0.7):
        super().__init__(name)
        self.waypoints = [tuple(float(v) for v in point) for point in waypoints]
        if not self.waypoints:
            raise BuildError(f"{name}: nexus:waypoints is empty; give at least one (north, east) [m]")
        if not blend_airspeed < transition_airspeed:
            raise BuildError(f"{name}: nexus:blendAirspeed ({blend_airspeed} m/s) must be below "
                             f"nexus:transitionAirspeed ({transition_airspeed} m/s); the rotors blend out between them")
        self.takeoff_height, self.height, self.airspeed = float(takeoff_height), float(height), float(airspeed)
        self.acceptance_radius = float(acceptance_radius)
        self.transition_airspeed, self.blend_airspeed = float(transition_airspeed), float(blend_airspeed)
        self.transition_timeout = float(transition_timeout)
        self.back_transition_distance = float(back_transition_distance)
        self.land = (float(land_north), float(land_east))
        self.land_speed = float(land_speed)
        self.controller = None

    @classmethod
    def from_values(cls, name: str, values: dict) -> VtolMission:
        return cls(name, **values)

    def flown_by(self, controller) -> VtolMission:
        """Write ``controller``'s setpoint, task and switches; returns self."""
        self.controller = controller
        return self

    def stages(self) -> list[Stage]:
        return [Stage(self.spec.stage, self.spec.kind, self.run, reads=self.reads(), writes=self.writes(),
                      finishes=True)]

    def params(self, dt: float) -> VtolMissionParams:
        p = VtolMissionParams()
        p.takeoff_height, p.height, p.airspeed = self.takeoff_height, self.height, self.airspeed
        p.acceptance = self.acceptance_radius
        p.transition_airspeed, p.blend_airspeed = self.transition_airspeed, self.blend_airspeed
        p.transition_timeout = wp.float64(self.transition_timeout)
        p.back_distance, p.land, p.land_speed = self.back_transition_distance, wp.vec2(*self.land), self.land_speed
        north, east = self.waypoints[0]
        p.heading = math.atan2(east, north)
        p.pitot, p.air_density = int(self.controller.wing.pitot), float(self.controller.wing.air_density)
        p.dt = float(dt)
        return p

    def prepare(self, ctx) -> None:
        if self.controller is None:
            raise BuildError(f"{self.name}: a VTOL mission needs the vtol controller to fly it")
        self.worlds = ctx.worlds
        self._waypoints = wp.array([wp.vec2(*p) for p in self.waypoints], dtype=wp.vec2, device=ctx.device)
        self._params = wp.array([self.params(ctx.dt)], dtype=VtolMissionParams, device=ctx.device)
        cruise = free_task()
        cruise.airspeed, cruise.height, cruise.mode = self.airspeed, self.height, LINE
        cruise.radius, cruise.clockwise = 1.0, 1.0
        self._cruise = cruise

    def run(self, io) -> None:
        c = self.controller
        wp.launch(fly_vtol_mission, self.worlds,
                  inputs=[io["time"], io["estimate"], io["armed"], io[STATUS_SIGNAL], io["airspeed"], self._waypoints,
                          self._params, self._cruise, io.state_in["vtol_mission"]],
                  outputs=[io.state_out["vtol_mission"], c.setpoint, c.wing.task, c.multicopter_on, c.wing_on,
                           c.multicopter_status, io["vtol_phase"], io["vtol_leg"], io.done],
                  device=io.device)


def vtol_mission(vehicle_stage, scene_stage, vehicle_path, scene_path, controller) -> VtolMission:
    """The mission of the scene's ``NexusVtolMissionAPI`` prim, else the vehicle file's, else the default; flown by
    ``controller``."""
    for stage, path in ((scene_stage, scene_path), (vehicle_stage, vehicle_path)):
        for prim in stage.Traverse():
            if VTOL_MISSION_SPEC.schema in nexus_apis(prim):
                values = read_prim(prim, VTOL_MISSION_SPEC, path)
                return VtolMission.from_values(str(prim.GetPath()), values).flown_by(controller)
    return VtolMission("/vehicle/vtol_mission").flown_by(controller)


__all__ = ["DEFAULT_WAYPOINTS", "PHASE_NAMES", "VTOL_MISSION_SPEC", "VtolMission", "VtolMissionParams",
           "VtolMissionState", "fly_vtol_mission", "vtol_mission"]
