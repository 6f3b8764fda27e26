"""The fixed-wing controller: L1 guidance, TECS and the attitude loops as one device stage, one thread per world.

Each tick it reads the ``estimate`` (:class:`~nexus.estimation.pose_twist.PoseTwist`, NED/FRD) and ``armed``
(0 cuts the throttle, centres the surfaces and clears the integrators) and its world's
:class:`FixedWingTask` (a device array the host sets between ticks with :meth:`FixedWingController.set_task`:
an airspeed, a height and a straight leg or a loiter circle), and writes the ``controls`` row at the
channels the vehicle file gives its aileron, elevator and rudder (servo commands in [−1, 1]) and its
propeller (throttle in [0, 1]); the other slots stay 0.

* :mod:`.lateral_guidance`: the leg or circle → a lateral acceleration → the bank goal ``atan(a/g)``;
* :mod:`.tecs`: height and airspeed → the pitch goal and the throttle;
* :mod:`.attitude_loops`: bank and pitch goals → aileron, elevator, rudder.

The airspeed is the pitot's (``airspeed``, :mod:`nexus.sensors.airspeed`: ``√(2q/ρ)``) where the vehicle has one and
it reads; a pitot that repeats its pressure exactly three new samples in a row (frozen: its noise is above zero) or
gives no new sample for 0.5 s (dropped out) has failed for the rest of the flight, and the stack then flies
airspeed-less as PX4 does: no speed demand, the throttle from the trim and the energy rate, the pitch for height;
or, with ``nexus:airspeedFallback`` (PX4's ASPD_FALLBACK 1) and an estimator that has fused an airspeed, the
length of the estimate's velocity less the estimator's wind (``ekf_wind``), with its speed demand as before.
Without a pitot the airspeed is the estimate's ground speed (exact in still air). ``plane_airspeed`` and
``airspeed_source`` record which. The speed's rate is a first-order filter (time constant ``speed_filter``) of the
acceleration along the nose with a pitot (in a steady wind the airspeed's rate, turns included), else of the
ground speed's change per tick. The
integrators and the previous speed are one :class:`FixedWingState` per world, state the engine owns. No
host reads, no Python branching on device values: eager and captured runs share the kernel.

:func:`plane_controller` builds one for the plane a vehicle file declares; :mod:`.plugin` registers it as
``--controller fixed_wing``.
"""

from __future__ import annotations

import math
import warp as wp

from nexus.aero.control_surfaces import CONTROL_SURFACE_SPEC
from nexus.aero.fixed_wing_forces import FIXED_WING_AERO_SPEC
from nexus.aero.propeller_advance import ADVANCE_RATIO_PROPELLER_SPEC
from nexus.aero.trim import Trim, straight_and_level
from nexus.control.fixed_wing.attitude_loops import AttitudeGains, surface_commands
from nexus.control.fixed_wing.gains import FixedWingGains, vehicle_gains
from nexus.control.fixed_wing.lateral_guidance import line_acceleration, loiter_acceleration
from nexus.control.fixed_wing.tecs import TecsGains, tecs_goals
from nexus.core import Component
from nexus.core.errors import BuildError
from nexus.core.spec import Input, Output, Spec, StateVar
from nexus.estimation.ekf import WIND_SIGNAL
from nexus.estimation.estimate_status import AIRSPEED_AIDING, STATUS_SIGNAL, TRUSTED
from nexus.estimation.pose_twist import PoseTwist
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.usd_checks import nexus_apis
from nexus.schemas.reader import read_prim
from nexus.sensors.airspeed import AIRSPEED_SPEC, AirspeedSample, pitot_speed
from nexus.sensors.barometer import isa_density

#: :attr:`FixedWingTask.mode` values.
LINE, LOITER = 0, 1
#: The status bit that says the estimator has fused an airspeed, so its wind is known (a kernel constant).
_AIRSPEED_AIDING = wp.constant(AIRSPEED_AIDING)
#: New pitot samples in a row equal to the one before that make it frozen (its noise is above zero: a live pitot
#: never repeats a float32 reading), and the time [s] without a new sample that makes it dropped out.
FROZEN_SAMPLES, PITOT_TIMEOUT = 3.0, 0.5


@wp.struct
class FixedWingTask:
    """What one world's plane is asked to fly: positions north-east [m] from the NED origin."""

    airspeed: float  # [m/s]
    height: float  # [m] above the NED origin (−down)
    mode: wp.int32  # LINE or LOITER
    start: wp.vec2  # LINE: a point of the leg [m]
    end: wp.vec2  # LINE: a point farther along it [m]
    centre: wp.vec2  # LOITER [m]
    radius: float  # LOITER [m]
    clockwise: float  # LOITER: +1 clockwise seen from above, −1 anticlockwise
    throttle_min: float  # the throttle's floor [0, 1]: 1 in a launch's climb-out
    throttle_max: float  # the throttle's ceiling [0, 1]: 0 in a flare and on the ground
    bank_max: float  # the bank's limit [rad] below the controller's own (a launch's and a flare's wings level)
    climb_rate: float  # [m/s] (negative: sinking): a feed-forward on the height loop; with ``flare``, the rate flown
    flare: wp.int32  # 1: fly ``climb_rate`` alone at the speed the plane has (no height or speed demand); 2: on the
    # ground (rolling out): surfaces centred, throttle 0


@wp.struct
class FixedWingParams:
    tecs: TecsGains
    attitude: AttitudeGains
    l1: float  # L1 distance [m]
    bank_max: float  # [rad]
    speed_filter: float  # dt / (τ + dt) of the airspeed-rate filter [-]
    aileron_channel: wp.int32
    elevator_channel: wp.int32
    rudder_channel: wp.int32
    throttle_channel: wp.int32
    pitot: wp.int32  # 1: the vehicle has an airspeed sensor, and the stack flies its reading while it is good
    air_density: float  # ρ that turns the pitot's pressure into a speed: ISA at the scene's origin [kg/m³]
    pitot_timeout: float  # [s] with no new pitot sample the sensor has failed (dropped out)
    fallback: wp.int32  # 1: once the pitot has failed, fly the ground speed less the estimator's wind (if it has one)


@wp.struct
class FixedWingState:
    throttle_integral: float  # [-]
    balance_integral: float  # [m/s]
    roll_integral: float  # [rad]
    pitch_integral: float  # [rad]
    previous_velocity: wp.vec3  # the previous tick's velocity [m/s, NED] (its length: the previous ground speed)
    acceleration: float  # filtered airspeed rate [m/s²]
    primed: float  # 0 before the first tick: no rate yet
    pitot_pressure: float  # the last new pitot sample's pressure [Pa]
    pitot_time: wp.float64  # its time [s]; -1 before the first
    pitot_repeats: float  # new samples in a row equal to the one before
    pitot_failed: float  # 1 once the pitot froze or dropped out: latched for the flight
    wind_known: float  # 1 once the estimator has fused an airspeed (its wind states on): latched for the flight


def zero_fixed_wing_state(component, ctx) -> FixedWingState:
    """A controller's state at the start of a run: empty integrators, not primed, no pitot sample yet."""
    state = FixedWingState()
    state.pitot_time = wp.float64(-1.0)
    return state


FIXED_WING_STATE = StateVar("fixed_wing", FixedWingState, (1,), zero_fixed_wing_state,
                            "TECS's and the attitude loops' integrators, the previous velocity, the speed's filtered "
                            "rate and the pitot's last sample")

FIXED_WING_CONTROLLER_SPEC = Spec(
    name="FixedWingController",
    doc="A fixed-wing flight stack: L1 guidance for straight legs and loiter circles, TECS for airspeed and "
        "height, attitude loops to aileron, elevator and rudder; writes `controls` at the vehicle's surface and "
        "propeller channels.",
    inputs=(
        Input("estimate", PoseTwist, connectable=True, doc="The prim whose stage writes the `estimate` signal."),
        Input("armed", wp.int32, default=1, doc="0 cuts the throttle and clears the integrators; 1 when nothing writes it"),
        Input("airspeed", AirspeedSample, default=AirspeedSample(),
              doc="The pitot's reading (nexus/sensors/airspeed.py); read only when the vehicle has one"),
        Input(WIND_SIGNAL, wp.vec3, default=wp.vec3(0.0, 0.0, 0.0),
              doc="The estimator's wind [m/s] NED, flown once the pitot fails; read only with nexus:airspeedFallback"),
        Input(STATUS_SIGNAL, wp.int32, default=TRUSTED,
              doc="The estimator's status bits: its wind is flown only once it has fused an airspeed (AIRSPEED_AIDING); "
                  "read only with nexus:airspeedFallback"),
    ),
    outputs=(Output("controls", wp.float32, (1, CONTROLS_WIDTH), recorded=True,
                    doc="Servo commands in [-1, 1] at the surfaces' channels, throttle in [0, 1] at the propeller's"),
             Output("plane_airspeed", wp.float32, recorded=True, default=0.0,
                    doc="The airspeed the stack flew this tick [m/s]: the pitot's, else the speed over the ground "
                        "(or, its pitot failed, that less the estimator's wind: nexus:airspeedFallback)"),
             Output("airspeed_source", wp.int32, recorded=True, default=0,
                    doc="0 the speed over the ground (no pitot), 1 the pitot, 2 none: the pitot failed (airspeed-less), "
                        "3 the ground speed less the estimator's wind: the pitot failed (nexus:airspeedFallback)")),
    state=(FIXED_WING_STATE,),
    stage="fixed_wing",
    kind="control",
    noun="controller",
)


@wp.func
def roll_and_pitch(attitude: wp.quat) -> wp.vec2:
    """(φ, θ) [rad] of a body-FRD-to-NED rotation (yaw-pitch-roll Euler angles)."""
    r = wp.quat_to_matrix(attitude)
    return wp.vec2(wp.atan2(r[2, 1], r[2, 2]), wp.asin(wp.clamp(-r[2, 0], -1.0, 1.0)))


@wp.kernel
def fixed_wing_control(
    # In:
    estimate: wp.array(dtype=PoseTwist),
    armed: wp.array(dtype=wp.int32),
    pitot: wp.array(dtype=AirspeedSample),
    wind: wp.array(dtype=wp.vec3),
    status: wp.array(dtype=wp.int32),
    task: wp.array(dtype=FixedWingTask),
    state_in: wp.array2d(dtype=FixedWingState),
    # Model:
    params: wp.array(dtype=FixedWingParams),
    dt: float,
    # Out:
    state_out: wp.array2d(dtype=FixedWingState),
    controls: wp.array2d(dtype=wp.float32),
    airspeed_flown: wp.array(dtype=wp.float32),
    airspeed_source: wp.array(dtype=wp.int32),
):
    world = wp.tid()
    p = params[0]
    s = state_in[world, 0]
    est = estimate[world]
    goal = task[world]
    on = float(0.0)
    if armed[world] != 0:
        on = 1.0

    # The speed flown is the pitot's while it reads, else the speed over the ground (no pitot: still air assumed).
    # Its rate: with a pitot, the acceleration along the nose (the air's direction but for α and β: what an
    # accelerometer gives, and what in a steady wind is the airspeed's rate, turns included); without one, the
    # ground speed's change. Both smooth, then filtered (time constant speed_filter).
    ground_speed = wp.length(est.velocity)
    rate = (ground_speed - wp.length(s.previous_velocity)) / dt * s.primed
    if p.pitot == 1:
        nose = wp.quat_rotate(est.attitude, wp.vec3(1.0, 0.0, 0.0))
        rate = wp.dot(est.velocity - s.previous_velocity, nose) / dt * s.primed
    acceleration = s.acceleration + p.speed_filter * (rate - s.acceleration) * s.primed
    airspeed = ground_speed
    source = wp.int32(0)
    sample = pitot[world]
    pressure = s.pitot_pressure
    sampled = s.pitot_time
    repeats = s.pitot_repeats
    failed = s.pitot_failed
    wind_known = s.wind_known
    if p.fallback == 1 and (status[world] & _AIRSPEED_AIDING) != 0:
        wind_known = 1.0
    if p.pitot == 1:
        if sample.time > sampled:  # a new sample: a frozen pitot repeats its pressure exactly, a live one never
            if sampled >= wp.float64(0.0) and sample.differential_pressure == pressure:
                repeats = repeats + 1.0
            else:
                repeats = 0.0
            pressure = sample.differential_pressure
            sampled = sample.time
        if repeats >= FROZEN_SAMPLES or (sampled >= wp.float64(0.0) and est.time - sampled > wp.float64(p.pitot_timeout)):
            failed = 1.0
        if failed == 0.0:
            airspeed = pitot_speed(pressure, p.air_density)
            source = wp.int32(1)
        elif wind_known == 1.0:  # PX4's ASPD_FALLBACK 1: the speed through the air the estimator's wind gives
            airspeed = wp.length(est.velocity - wind[world])
            source = wp.int32(3)
        else:
            source = wp.int32(2)
    angles = roll_and_pitch(est.attitude)
    position = wp.vec2(est.position[0], est.position[1])
    ground_velocity = wp.vec2(est.velocity[0], est.velocity[1])

    lateral = float(0.0)
    if goal.mode == 1:
        lateral = loiter_acceleration(position, ground_velocity, goal.centre, goal.radius, goal.clockwise, p.l1)
    else:
        lateral = line_acceleration(position, ground_velocity, goal.start, goal.end, p.l1)
    bank_limit = wp.min(p.bank_max, goal.bank_max)
    bank_goal = wp.clamp(wp.atan(lateral / p.tecs.gravity), -bank_limit, bank_limit)

    # The climb rate is a feed-forward on the height loop (a glide slope's sink: the goal offset by rate / k_h, so
    # the loop flies the rate with no lag behind the moving height). A flare flies the rate alone: the height goal
    # at that offset from the height flown, and no speed demand (the speed the plane has, its rate left out), so
    # the whole energy balance, and so the pitch, goes to the sink rate.
    height = -est.position[2]
    height_goal = goal.height + goal.climb_rate / p.tecs.height_p
    speed_goal = goal.airspeed
    speed_rate = acceleration
    if goal.flare != 0:
        height_goal = height + goal.climb_rate / p.tecs.height_p
        speed_goal = airspeed
        speed_rate = 0.0
    if source == 2:  # no airspeed: no speed demand, the height flown as asked (PX4's airspeed-less TECS)
        speed_goal = airspeed
        speed_rate = 0.0
    throttle, pitch_goal, throttle_integral, balance_integral = tecs_goals(
        p.tecs, height_goal, speed_goal, height, -est.velocity[2], airspeed, speed_rate,
        s.throttle_integral, s.balance_integral, dt)
    # A launch's full throttle and a flare's idle override TECS; its throttle integrator holds meanwhile.
    limited = wp.clamp(throttle, goal.throttle_min, goal.throttle_max)
    if limited != throttle:
        throttle = limited
        throttle_integral = s.throttle_integral
    commands, roll_integral, pitch_integral = surface_commands(
        p.attitude, bank_goal, pitch_goal, angles[0], angles[1], est.rates, airspeed, s.roll_integral,
        s.pitch_integral, dt)

    if goal.flare == 2:  # on the ground: surfaces centred, no throttle, the integrators held
        commands = wp.vec3(0.0, 0.0, 0.0)
        throttle = 0.0
        throttle_integral = s.throttle_integral
        balance_integral = s.balance_integral
        roll_integral = s.roll_integral
        pitch_integral = s.pitch_integral

    controls[world, p.aileron_channel] = commands[0] * on
    controls[world, p.elevator_channel] = commands[1] * on
    controls[world, p.rudder_channel] = commands[2] * on
    controls[world, p.throttle_channel] = throttle * on

    out = FixedWingState()
    out.throttle_integral = throttle_integral * on
    out.balance_integral = balance_integral * on
    out.roll_integral = roll_integral * on
    out.pitch_integral = pitch_integral * on
    out.previous_velocity = est.velocity
    out.acceleration = acceleration
    out.primed = 1.0
    out.pitot_pressure = pressure
    out.pitot_time = sampled
    out.pitot_repeats = repeats
    out.pitot_failed = failed
    out.wind_known = wind_known
    state_out[world, 0] = out
    airspeed_flown[world] = airspeed
    airspeed_source[world] = source


class FixedWingController(Component):
    """L1 guidance, TECS and the attitude loops as one ``control`` stage writing ``controls``.

    ``trim`` is the vehicle's straight-and-level trim (:func:`nexus.aero.trim.straight_and_level`): its
    throttle, pitch and surfaces are the loops' feed-forwards. ``channels`` maps ``aileron``, ``elevator``,
    ``rudder`` and ``throttle`` to their slots of the ``controls`` row, ``travel`` each surface to its
    travel [rad]. The task (:meth:`set_task`) starts as the line due east through the NED origin, at the
    trim's speed and height 0. The gains (:class:`~.gains.FixedWingGains`) default to the Aerosonde's at 25 m/s;
    :func:`plane_controller` reads a vehicle file's own (:func:`~.gains.vehicle_gains`).
    """

    spec = FIXED_WING_CONTROLLER_SPEC

    def __init__(self, name: str, trim: Trim, channels: dict, travel: dict, *, gravity: float = 9.80665,
                 gains: FixedWingGains | None = None, connections=None):
        super().__init__(name, connections)
        missing = [role for role in ("aileron", "elevator", "rudder", "throttle") if role not in channels]
        if missing or any(role not in travel for role in ("aileron", "elevator", "rudder")):
            raise BuildError(f"{name}: the fixed-wing controller needs an aileron, an elevator, a rudder and a "
                             f"propeller; missing {', '.join(missing) or 'a surface travel'}")
        self.trim, self.channels, self.travel = trim, dict(channels), dict(travel)
        self.gravity = float(gravity)
        self.gains = gains or FixedWingGains()
        self._pending = [line_task(trim.airspeed, 0.0, (0.0, 0.0), (0.0, 1.0))]
        self.task = None
        #: Whether the stack flies the vehicle's pitot (``airspeed`` signal), and the density that turns its pressure
        #: into a speed [kg/m³] (:func:`plane_controller` sets both from the file and the scene's origin).
        self.pitot, self.air_density = False, 1.225

    def params(self, dt: float) -> FixedWingParams:
        """The kernel's struct: the gains, the trim's feed-forwards and the channels."""
        g, trim = self.gains, self.trim
        tecs = TecsGains()
        for name in ("height_p", "speed_p", "climb_max", "sink_max", "acceleration_max", "energy_rate_per_throttle",
                     "throttle_p", "throttle_i", "balance_d", "balance_i", "pitch_min", "pitch_max"):
            setattr(tecs, name, float(getattr(g, name)))
        tecs.throttle_trim, tecs.pitch_trim, tecs.gravity = float(trim.throttle), float(trim.pitch), self.gravity
        attitude = AttitudeGains()
        for name in ("roll_p", "roll_rate_d", "roll_i", "pitch_p", "pitch_rate_d", "pitch_i", "yaw_damper",
                     "integral_limit"):
            setattr(attitude, name, float(getattr(g, name)))
        attitude.aileron_trim, attitude.elevator_trim = float(trim.aileron), float(trim.elevator)
        attitude.rudder_trim = float(trim.rudder)
        attitude.aileron_travel, attitude.elevator_travel = float(self.travel["aileron"]), float(self.travel["elevator"])
        attitude.rudder_travel, attitude.gravity = float(self.travel["rudder"]), self.gravity
        p = FixedWingParams()
        p.tecs, p.attitude = tecs, attitude
        p.l1, p.bank_max = float(g.l1), float(g.bank_max)
        p.speed_filter = float(dt) / (float(g.speed_filter_time) + float(dt))
        p.aileron_channel, p.elevator_channel = int(self.channels["aileron"]), int(self.channels["elevator"])
        p.rudder_channel, p.throttle_channel = int(self.channels["rudder"]), int(self.channels["throttle"])
        p.pitot, p.air_density, p.pitot_timeout = int(self.pitot), float(self.air_density), PITOT_TIMEOUT
        p.fallback = int(g.airspeed_fallback)
        return p

    def set_task(self, tasks) -> None:
        """Fly ``tasks`` (one :class:`FixedWingTask` for every world, or a list of one per world) from the next
        tick on; a captured graph reads them on its next replay."""
        tasks = list(tasks) if isinstance(tasks, (list, tuple)) else [tasks]
        self._pending = tasks
        if self.task is not None:
            self.task.assign(self._rows(tasks))

    def _rows(self, tasks) -> list:
        worlds = self.worlds
        if len(tasks) not in (1, worlds):
            raise ValueError(f"{self.name} flies {worlds} worlds; got {len(tasks)} tasks")
        return tasks * worlds if len(tasks) == 1 else tasks

    def reads(self) -> tuple:
        """The spec's inputs; the estimator's wind and status only when the stack may fly them (the fallback)."""
        if self.gains.airspeed_fallback:
            return super().reads()
        return tuple(r for r in super().reads() if r.signal not in (WIND_SIGNAL, STATUS_SIGNAL))

    def prepare(self, ctx) -> None:
        self.dt, self.worlds = float(ctx.dt), ctx.worlds
        if self.gains.airspeed_fallback and not any(
                write.signal == WIND_SIGNAL for stage, _ in ctx.stage_ios for write in stage.writes):
            where = self.gains.where or self.name
            raise BuildError(
                f"{where}: nexus:airspeedFallback is 1 (once the pitot fails, fly the ground speed less the "
                "estimator's wind) but no estimator in this flight fuses airspeed; give the vehicle's EKF "
                "nexus:EKF2_ARSP_THR above 0 (with a pitot), or set nexus:airspeedFallback = 0")
        self._params = wp.array([self.params(self.dt)], dtype=FixedWingParams, device=ctx.device)
        self.task = wp.array(self._rows(self._pending), dtype=FixedWingTask, device=ctx.device)
        #: What the kernel reads for the wind and the status without the fallback (never the stack's airspeed).
        self._no_wind = wp.zeros(ctx.worlds, dtype=wp.vec3, device=ctx.device)
        self._no_status = wp.zeros(ctx.worlds, dtype=wp.int32, device=ctx.device)

    def run(self, io) -> None:
        fallback = self.gains.airspeed_fallback
        wind = io[WIND_SIGNAL] if fallback else self._no_wind
        status = io[STATUS_SIGNAL] if fallback else self._no_status
        wp.launch(fixed_wing_control, dim=self.worlds,
                  inputs=[io["estimate"], io["armed"], io["airspeed"], wind, status, self.task,
                          io.state_in["fixed_wing"], self._params, self.dt],
                  outputs=[io.state_out["fixed_wing"], io["controls"], io["plane_airspeed"], io["airspeed_source"]],
                  device=io.device)


def free_task() -> FixedWingTask:
    """A task with no launch, flare or bank limit: the throttle free in [0, 1], the controller's bank limit."""
    t = FixedWingTask()
    t.throttle_min, t.throttle_max, t.bank_max = 0.0, 1.0, math.pi
    t.climb_rate, t.flare = 0.0, 0
    return t


def line_task(airspeed: float, height: float, start, end) -> FixedWingTask:
    """Fly the straight line from ``start`` through ``end`` (north-east [m]) at ``airspeed`` [m/s], ``height`` [m]."""
    t = free_task()
    t.airspeed, t.height, t.mode = float(airspeed), float(height), LINE
    t.start, t.end = wp.vec2(*map(float, start)), wp.vec2(*map(float, end))
    t.radius, t.clockwise = 1.0, 1.0
    return t


def loiter_task(airspeed: float, height: float, centre, radius: float, clockwise: bool = True) -> FixedWingTask:
    """Loiter on the circle of ``radius`` [m] about ``centre`` (north-east [m]) at ``airspeed`` [m/s], ``height`` [m]."""
    if not radius > 0.0:
        raise ValueError(f"a loiter radius must be positive; got {radius} m")
    t = free_task()
    t.airspeed, t.height, t.mode = float(airspeed), float(height), LOITER
    t.start, t.end = wp.vec2(0.0, 0.0), wp.vec2(1.0, 0.0)
    t.centre, t.radius, t.clockwise = wp.vec2(*map(float, centre)), float(radius), 1.0 if clockwise else -1.0
    return t


def _parts(stage, path) -> dict:
    """The vehicle file's wing, propeller and surfaces, each read against its spec."""
    found: dict = {"surfaces": {}}
    for prim in stage.Traverse():
        for api in nexus_apis(prim):
            if api == FIXED_WING_AERO_SPEC.schema:
                found["wing"] = read_prim(prim, FIXED_WING_AERO_SPEC, path)
            elif api == ADVANCE_RATIO_PROPELLER_SPEC.schema:
                found["propeller"] = read_prim(prim, ADVANCE_RATIO_PROPELLER_SPEC, path)
            elif api == CONTROL_SURFACE_SPEC.schema:
                values = read_prim(prim, CONTROL_SURFACE_SPEC, path)
                found["surfaces"][values["role"]] = values
    return found


def plane_controller(name: str, stage, path, mass: float, gravity: float,
                     airspeed: float | None = None, origin_altitude: float = 0.0) -> FixedWingController:
    """The controller for the plane a vehicle file (``stage``, opened from ``path``) declares, with the file's gains
    (its ``NexusFixedWingGainsAPI`` prim, else the Aerosonde's), trimmed straight and level at ``airspeed`` [m/s]
    (None or 0: the gains' trim airspeed) for ``mass`` [kg] and ``gravity`` [m/s²]; its channels and travels come
    from the file's surfaces and propeller. A file with an airspeed sensor (``NexusAirspeedAPI``) is flown on its
    reading, turned into a speed with the ISA density at ``origin_altitude`` [m] (the scene's origin). A file
    without a wing, a propeller, an aileron, an elevator and a rudder, or with a gain out of its bounds, is refused
    in one line naming what is wrong."""
    gains = vehicle_gains(stage, path)
    airspeed = airspeed or gains.trim_airspeed
    parts = _parts(stage, path)
    missing = [role for role in ("wing", "propeller") if role not in parts]
    missing += [role for role in ("aileron", "elevator", "rudder") if role not in parts["surfaces"]]
    if missing:
        raise BuildError(f"{path}: the fixed-wing controller needs a plane: no {', '.join(missing)} (a prim with "
                         "NexusFixedWingAeroAPI, NexusAdvanceRatioPropellerAPI, or NexusControlSurfaceAPI and that "
                         "nexus:role)")
    trim = straight_and_level(parts["wing"], parts["propeller"], mass, gravity, airspeed)
    surfaces = parts["surfaces"]
    controller = FixedWingController(
        name, trim, {**{role: surfaces[role]["channel"] for role in ("aileron", "elevator", "rudder")},
                     "throttle": parts["propeller"]["channel"]},
        {role: surfaces[role]["travel"] for role in ("aileron", "elevator", "rudder")}, gravity=gravity, gains=gains)
    controller.pitot = any(AIRSPEED_SPEC.schema in nexus_apis(prim) for prim in stage.Traverse())
    controller.air_density = float(isa_density(wp.float64(origin_altitude)))  # the barometer's and pitot's ISA
    return controller



__all__ = ["FIXED_WING_CONTROLLER_SPEC", "FixedWingController", "FixedWingGains", "FixedWingParams",
           "FixedWingState", "FixedWingTask", "LINE", "LOITER", "fixed_wing_control", "free_task", "line_task",
           "loiter_task", "plane_controller"]
