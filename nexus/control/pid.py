"""The cascaded PID controller: position -> velocity -> attitude -> body rate -> control allocation.

One device stage and one kernel. Each tick it reads the ``estimate``
(:class:`~nexus.estimation.pose_twist.PoseTwist`, NED/FRD), the ``setpoint`` (position
goal [m] NED and heading [rad]) and ``armed`` (``wp.int32``; 0 cuts the
motors), and writes the ``controls`` row (one slot per rotor, in ESC channel
order; the rest stay 0).

* **Position** (P): velocity goal = ``positionP``·error + the setpoint's own
  velocity (its change since the last tick, so a guidance's smooth ramps are
  followed without lag), limited to the horizontal and vertical speed limits.
* **Velocity** (PID): an acceleration goal [m/s²], plus the setpoint's own
  acceleration (the change of its velocity); the D term acts on the measured
  velocity.
* **Thrust and attitude**: the acceleration goal less gravity gives the thrust
  direction (tilt limited to ``maxTilt``) and the collective thrust fraction,
  scaled so that zero acceleration asks for the hover thrust; with the
  setpoint's heading this is an attitude goal, driven PX4's way (tilt first,
  heading weighted), plus the heading's rate of change as a feed-forward.
* **Rate** (PID): normalised torques in [-1, 1]; D acts on the measured rates.
* **Allocation**: :mod:`nexus.control.allocation`, the mix worked out from the
  vehicle's rotor geometry at build time (any layout of 4 to 12 rotors). With
  the option ``knows_failures`` the controller switches, at a drawn rotor
  failure's tick (``rotor_fail_*`` in a variation file), to the mix solved
  without that rotor; without it, it mixes as if every rotor still worked.

Gains come from the ``NexusPidControllerAPI`` prim, declared once in
:data:`PID_SPEC` and read by :func:`nexus.schemas.reader.read_prim`. The
integrators and the previous tick's values are one :class:`PidState` per
world, state the engine owns (allocated, reset to zeros at start,
snapshotted and restored with the tick); the kernel reads it from
``state_in`` and writes ``state_out`` (the same array in a normal run, one
per step in a differentiable rollout). There are no host reads and no Python
decisions on device values, so the same kernel serves eager, captured and
taped callers. While ``armed`` is 0 the controls are zero and the
integrators are cleared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import warp as wp

from nexus.control.attitude import attitude_error_rates, attitude_from_thrust_axis, wrap_angle
from nexus.control.allocation import (Allocation, MixTables, allocation_for, failures_of, mix_tables, quad_x_allocation,
                                      write_rotor_commands)
from nexus.plant.rotor_geometry import rotor_geometry
from nexus.plant.safe_math import angle_of_cosine, safe_sqrt
from nexus.core import Component
from nexus.core.arrays import ArrayDecl, NamedArrays
from nexus.core.errors import BuildError
from nexus.core.signals import Read
from nexus.core.spec import Input, Output, Param, Spec, StateVar, non_negative
from nexus.estimation.estimate_status import HORIZONTAL_VALID, STATUS_SIGNAL, TRUSTED
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.control.registry import ControllerOptions, option, register
from nexus.schemas.reader import read_connections, read_prim, shown, where


@wp.struct
class PidParams:
    """The controller's gains and limits as the kernel reads them (one device struct)."""

    position_p: wp.vec3
    velocity_p: wp.vec3
    velocity_i: wp.vec3
    velocity_d: wp.vec3
    attitude_p: wp.vec3
    rate_p: wp.vec3
    rate_i: wp.vec3
    rate_d: wp.vec3
    #: Hover thrust as a thrust fraction (after the ESC's thrust model) [-].
    hover_thrust: float
    thrust_model_factor: float
    max_tilt: float
    max_horizontal_speed: float
    max_vertical_speed: float
    max_rates: wp.vec3
    #: Bound on each velocity integral term [m/s²] and rate integral term [-].
    acceleration_integral_limit: float
    rate_integral_limit: float
    #: Bound on each axis of the setpoint's acceleration fed forward [m/s²].
    max_feedforward_acceleration: float
    min_thrust: float
    max_thrust: float
    gravity: float


@wp.struct
class PidState:
    """What the controller carries from one tick to the next."""

    velocity_integral: wp.vec3
    rate_integral: wp.vec3
    previous_velocity: wp.vec3
    previous_rates: wp.vec3
    previous_goal: wp.vec3
    previous_goal_velocity: wp.vec3
    previous_yaw_goal: float
    #: 0 before the first update: no derivative or feed-forward yet.
    primed: float


def zero_pid_state(component, ctx) -> PidState:
    """A controller's state at the start of a run: empty integrators, not primed."""
    return PidState()


#: The state of the PID law (and of the MPC's attitude and rate loop): one :class:`PidState` per world.
PID_STATE = StateVar("pid", PidState, (1,), zero_pid_state,
                     "integrators and the previous tick's estimate and setpoint (derivatives, feed-forward)")


#: The gains a differentiable rollout may set, each a float3 parameter and a field of :class:`PidParams`.
PID_GAINS = ("position_p", "velocity_p", "velocity_i", "velocity_d", "attitude_p", "rate_p", "rate_i", "rate_d")
#: Short names for the gains an altitude or heading tune touches most.
PID_SHORT_NAMES = (("pid.kp_z", "pid.position_p.z"), ("pid.kd_z", "pid.velocity_p.z"), ("pid.ki_z", "pid.velocity_i.z"),
                   ("pid.kp_yaw", "pid.attitude_p.yaw"), ("pid.kd_yaw", "pid.rate_p.yaw"))

PID_SPEC = Spec(
    name="PidController",
    schema="NexusPidControllerAPI",
    noun="controller",
    doc="A cascaded PID flight controller (position, velocity, attitude, body rate) and control allocation writing the "
        "`controls` row every tick. Gains follow PX4's multicopter parameters and units: the velocity loop outputs "
        "acceleration [m/s^2], which nexus:hoverThrust scales to a collective thrust, and the rate loop outputs "
        "normalised torques in [-1, 1], one unit moving the most-moved rotor's thrust fraction by 0.5 (the allocation "
        "is worked out from the rotors' geometry: docs/vehicles.md). The fallbacks are "
        "PX4's defaults; a vehicle authors the gains tuned for it. Vector gains are per axis (x, y, z) or (roll, "
        "pitch, yaw). It reads `estimate`, `setpoint` and `armed` (0 cuts the motors; 1 when nothing writes it).",
    params=(
        non_negative("position_p", "nexus:positionP", (0.95, 0.95, 1.0), "1/s",
                     "Position gain, (x, y, z) (MPC_XY_P, MPC_Z_P)", type="float3"),
        non_negative("velocity_p", "nexus:velocityP", (1.8, 1.8, 4.0), "1/s",
                     "Velocity gain, (x, y, z) (MPC_XY_VEL_P_ACC, MPC_Z_VEL_P_ACC)", type="float3"),
        non_negative("velocity_i", "nexus:velocityI", (0.4, 0.4, 2.0), "1/s^2",
                     "Velocity integral gain, (x, y, z) (MPC_XY_VEL_I_ACC, MPC_Z_VEL_I_ACC)", type="float3"),
        non_negative("velocity_d", "nexus:velocityD", (0.2, 0.2, 0.0), "-",
                     "Velocity derivative gain, (x, y, z) (MPC_XY_VEL_D_ACC, MPC_Z_VEL_D_ACC)", type="float3"),
        non_negative("attitude_p", "nexus:attitudeP", (6.5, 6.5, 2.8), "1/s",
                     "Attitude gain, (roll, pitch, yaw) (MC_ROLL_P, MC_PITCH_P, MC_YAW_P)", type="float3"),
        non_negative("rate_p", "nexus:rateP", (0.15, 0.15, 0.2), "s/rad",
                     "Body-rate gain, (roll, pitch, yaw) (MC_ROLLRATE_P, MC_PITCHRATE_P, MC_YAWRATE_P)", type="float3"),
        non_negative("rate_i", "nexus:rateI", (0.2, 0.2, 0.1), "1/rad",
                     "Body-rate integral gain, (roll, pitch, yaw) (MC_*RATE_I)", type="float3"),
        non_negative("rate_d", "nexus:rateD", (0.003, 0.003, 0.0), "s^2/rad",
                     "Body-rate derivative gain, (roll, pitch, yaw) (MC_*RATE_D)", type="float3"),
        # (0, 1) is open at both ends: the Param states the lower end, PidGains.from_values the upper.
        Param("hover_thrust", "nexus:hoverThrust", "float", 0.5, "-",
              "ESC command that holds hover, in (0, 1) (MPC_THR_HOVER); the controller passes it through the ESCs' "
              "thrust model to get the hover thrust fraction", low=0.0, open_low=True, high=1.0),
        Param("max_tilt", "nexus:maxTilt", "float", math.radians(45.0), "rad",
              "Largest tilt the position loop may command, in (0, pi/2) (MPC_TILTMAX_AIR)",
              low=0.0, open_low=True, high=math.pi / 2),
        Param("max_horizontal_speed", "nexus:maxHorizontalSpeed", "float", 12.0, "m/s",
              "Largest horizontal speed the position loop may command (MPC_XY_VEL_MAX)", low=0.0),
        Param("max_vertical_speed", "nexus:maxVerticalSpeed", "float", 3.0, "m/s",
              "Largest vertical speed the position loop may command (MPC_Z_VEL_MAX_UP)", low=0.0),
    ),
    inputs=(
        Input("estimate", PoseTwist, connectable=True, doc="The prim whose stage writes the `estimate` signal (an estimator)."),
        Input("setpoint", Setpoint, connectable=True,
              doc="The prim whose stage writes the `setpoint` signal (a guidance); needed only when several write it."),
        Input("armed", wp.int32, default=1, doc="0 cuts the motors and clears the integrators; 1 when nothing writes it"),
        Input(STATUS_SIGNAL, wp.int32, default=TRUSTED,
              doc="The estimator's status bits; without HORIZONTAL_VALID the horizontal loops stop and the vehicle "
                  "flies level (PX4's flight without a position); trusted when nothing writes it"),
    ),
    outputs=(Output("controls", wp.float32, (1, CONTROLS_WIDTH), recorded=True,
                    doc="ESC commands in [0, 1], one slot per rotor in ESC channel order"),),
    state=(PID_STATE,),
    stage="pid",
    kind="control",
    arrays=(
        ArrayDecl("params", "one PidParams struct: the gains and limits the kernel reads", "-",
                  "The controller's gains and limits", gradient=True, rollout="pid.{field}.{axis}", fields=PID_GAINS,
                  axes=("x", "y", "z"), axis_aliases=("roll", "pitch", "yaw"), aliases=PID_SHORT_NAMES),
    ),
)


@wp.func
def bounded_axis(value: float, limit: float, gain: float) -> float:
    """One axis of :func:`bounded`."""
    if gain > 0.0:
        bound = limit / gain
        return wp.clamp(value, -bound, bound)
    return value


@wp.func
def bounded(value: wp.vec3, limit: float, gain: wp.vec3) -> wp.vec3:
    """The integral ``value`` clipped so each ``gain[i]·value[i]`` stays within ±``limit``.

    Built as a new vector rather than by writing components of a copy (``out = value; out[i] = ...``),
    whose adjoint in Warp 1.19 hands the gradient to ``value`` twice.
    """
    return wp.vec3(bounded_axis(value[0], limit, gain[0]), bounded_axis(value[1], limit, gain[1]),
                   bounded_axis(value[2], limit, gain[2]))


@wp.func
def limit_speed(velocity: wp.vec3, horizontal: float, vertical: float) -> wp.vec3:
    speed = safe_sqrt(velocity[0] * velocity[0] + velocity[1] * velocity[1])
    scale = float(1.0)
    if speed > horizontal:
        scale = horizontal / speed
    return wp.vec3(velocity[0] * scale, velocity[1] * scale, wp.clamp(velocity[2], -vertical, vertical))


@wp.func
def thrust_axis(acceleration: wp.vec3, gravity: float, max_tilt: float) -> wp.vec3:
    """Unit body z (down through the belly, NED) that points thrust along the acceleration goal, tilt limited."""
    axis = wp.normalize(wp.vec3(-acceleration[0], -acceleration[1], gravity))
    horizontal = safe_sqrt(axis[0] * axis[0] + axis[1] * axis[1])
    if angle_of_cosine(wp.clamp(axis[2], -1.0, 1.0)) > max_tilt and horizontal > 1.0e-6:
        s = wp.sin(max_tilt) / horizontal
        axis = wp.vec3(axis[0] * s, axis[1] * s, wp.cos(max_tilt))
    return axis


@wp.func
def clamp_rates(rates: wp.vec3, limits: wp.vec3) -> wp.vec3:
    """Each body-rate goal [rad/s] within ±its limit."""
    return wp.vec3(
        wp.clamp(rates[0], -limits[0], limits[0]),
        wp.clamp(rates[1], -limits[1], limits[1]),
        wp.clamp(rates[2], -limits[2], limits[2]),
    )


@wp.func
def rate_loop(p: PidParams, s: PidState, rates: wp.vec3, rate_goal: wp.vec3, torque_feedforward: wp.vec3,
              dt: float, on: float):
    """Body-rate PID: normalised torque [-1, 1] (with ``torque_feedforward`` added) and the new rate integral."""
    rate_error = rate_goal - rates
    rate_integral = bounded(s.rate_integral + rate_error * dt, p.rate_integral_limit, p.rate_i) * on
    rate_change = (rates - s.previous_rates) * (s.primed / dt)
    torque = torque_feedforward + wp.cw_mul(p.rate_p, rate_error) + wp.cw_mul(p.rate_i, rate_integral) - wp.cw_mul(p.rate_d, rate_change)
    torque = wp.vec3(wp.clamp(torque[0], -1.0, 1.0), wp.clamp(torque[1], -1.0, 1.0), wp.clamp(torque[2], -1.0, 1.0))
    return torque, rate_integral


@wp.func
def velocity_loop(p: PidParams, s: PidState, velocity: wp.vec3, velocity_goal: wp.vec3, goal_acceleration: wp.vec3,
                  horizontal: wp.vec3, dt: float, on: float):
    """Velocity PID (NED): the acceleration goal [m/s²] (``goal_acceleration`` fed forward, each axis times
    ``horizontal``'s, 0 to stop it) and the new velocity integral."""
    velocity_error = wp.cw_mul(velocity_goal - velocity, horizontal)
    velocity_integral = bounded(s.velocity_integral + velocity_error * dt, p.acceleration_integral_limit, p.velocity_i) * on
    acceleration_rate = (velocity - s.previous_velocity) * (s.primed / dt)
    acceleration = wp.cw_mul(
        goal_acceleration
        + wp.cw_mul(p.velocity_p, velocity_error)
        + wp.cw_mul(p.velocity_i, velocity_integral)
        - wp.cw_mul(p.velocity_d, acceleration_rate),
        horizontal,
    )
    return acceleration, velocity_integral


@wp.func
def acceleration_to_rates(p: PidParams, attitude: wp.quat, acceleration: wp.vec3, yaw: float, yaw_rate: float):
    """An acceleration goal [m/s², NED] and a heading [rad] with its rate [rad/s] fed forward: the collective
    thrust fraction [-] and the body-rate goal [rad/s, FRD] (thrust axis, tilt limited, then the attitude law)."""
    body_z = thrust_axis(acceleration, p.gravity, p.max_tilt)
    collective = p.hover_thrust * (p.gravity - acceleration[2]) / p.gravity
    collective = wp.clamp(collective / wp.max(body_z[2], 0.1), p.min_thrust, p.max_thrust)
    attitude_goal = attitude_from_thrust_axis(body_z, yaw)
    yaw_weight = wp.clamp(p.attitude_p[2] / wp.max(0.5 * (p.attitude_p[0] + p.attitude_p[1]), 1.0e-6), 0.0, 1.0)
    rate_goal = attitude_error_rates(attitude, attitude_goal, p.attitude_p, yaw_weight)
    rate_goal = clamp_rates(rate_goal + wp.quat_rotate_inv(attitude, wp.vec3(0.0, 0.0, yaw_rate)), p.max_rates)
    return collective, rate_goal


#: The status bit the horizontal loops need (a kernel constant).
_HORIZONTAL_VALID = wp.constant(HORIZONTAL_VALID)


@wp.kernel
def pid_control(
    estimate: wp.array(dtype=PoseTwist),
    setpoint: wp.array(dtype=Setpoint),
    armed: wp.array(dtype=wp.int32),
    status: wp.array(dtype=wp.int32),
    params: wp.array(dtype=PidParams),
    state_in: wp.array2d(dtype=PidState),
    dt: float,
    mix: MixTables,
    time_ns: wp.array(dtype=wp.int64),
    state_out: wp.array2d(dtype=PidState),
    controls: wp.array2d(dtype=wp.float32),
):
    world = wp.tid()
    p = params[0]
    s = state_in[world, 0]
    est = estimate[world]
    goal = setpoint[world]
    on = float(0.0)
    if armed[world] != 0:
        on = 1.0

    # Position -> velocity goal, with the setpoint's own velocity fed forward.
    goal_velocity = limit_speed((goal.position - s.previous_goal) * (s.primed / dt), p.max_horizontal_speed, p.max_vertical_speed)
    goal_acceleration = (goal_velocity - s.previous_goal_velocity) * (s.primed / dt)
    goal_acceleration = wp.vec3(
        wp.clamp(goal_acceleration[0], -p.max_feedforward_acceleration, p.max_feedforward_acceleration),
        wp.clamp(goal_acceleration[1], -p.max_feedforward_acceleration, p.max_feedforward_acceleration),
        wp.clamp(goal_acceleration[2], -p.max_feedforward_acceleration, p.max_feedforward_acceleration),
    )
    velocity_goal = wp.cw_mul(p.position_p, goal.position - est.position) + goal_velocity
    velocity_goal = limit_speed(velocity_goal, p.max_horizontal_speed, p.max_vertical_speed)

    # Without a valid horizontal position (the estimator's status) the horizontal loops stop: no horizontal
    # acceleration is asked for and the horizontal integral holds, so the vehicle flies level, as PX4 does without
    # a position, rather than chase a dead-reckoned estimate. ``level`` is 1 otherwise, and x * 1 is x, bit for bit.
    level = float(1.0)
    if (status[world] & _HORIZONTAL_VALID) == 0:
        level = 0.0
    horizontal = wp.vec3(level, level, 1.0)

    # Velocity -> acceleration goal [m/s²] -> collective and body-rate goal, the heading's rate fed forward.
    acceleration, velocity_integral = velocity_loop(p, s, est.velocity, velocity_goal, goal_acceleration, horizontal,
                                                    dt, on)
    yaw_rate = wrap_angle(goal.yaw - s.previous_yaw_goal) * (s.primed / dt)
    collective, rate_goal = acceleration_to_rates(p, est.attitude, acceleration, goal.yaw, yaw_rate)

    # Rate -> normalised torque, mixed into the rotor commands.
    torque, rate_integral = rate_loop(p, s, est.rates, rate_goal, wp.vec3(0.0, 0.0, 0.0), dt, on)
    write_rotor_commands(controls, world, p.thrust_model_factor, collective, torque, on, mix, time_ns[world])

    out = PidState()
    out.velocity_integral = velocity_integral
    out.rate_integral = rate_integral
    out.previous_velocity = est.velocity
    out.previous_rates = est.rates
    out.previous_goal = goal.position
    out.previous_goal_velocity = goal_velocity
    out.previous_yaw_goal = goal.yaw
    out.primed = 1.0
    state_out[world, 0] = out


_PRIM = PID_SPEC.defaults()


@dataclass
class PidGains:
    """Gains and limits as the controller uses them: the prim's (``PID_SPEC``, defaults from there) and fixed ones.

    Vector gains are per axis: (x, y, z) NED for position and velocity, (roll,
    pitch, yaw) FRD for attitude and rate. ``hover_thrust`` is the ESC command
    u that holds hover (``nexus:hoverThrust``).
    """

    position_p: tuple = _PRIM["position_p"]  # [1/s]
    velocity_p: tuple = _PRIM["velocity_p"]  # [1/s]
    velocity_i: tuple = _PRIM["velocity_i"]  # [1/s²]
    velocity_d: tuple = _PRIM["velocity_d"]  # [-]
    attitude_p: tuple = _PRIM["attitude_p"]  # [1/s]
    rate_p: tuple = _PRIM["rate_p"]  # [s/rad]
    rate_i: tuple = _PRIM["rate_i"]  # [1/rad]
    rate_d: tuple = _PRIM["rate_d"]  # [s²/rad]
    hover_thrust: float = _PRIM["hover_thrust"]  # ESC command [-]
    max_tilt: float = _PRIM["max_tilt"]  # [rad]
    max_horizontal_speed: float = _PRIM["max_horizontal_speed"]  # [m/s]
    max_vertical_speed: float = _PRIM["max_vertical_speed"]  # [m/s]
    # Not on the prim:
    max_rates: tuple = (math.radians(220.0), math.radians(220.0), math.radians(200.0))  # [rad/s]
    acceleration_integral_limit: float = 4.0  # [m/s²]
    max_feedforward_acceleration: float = 5.0  # [m/s²]
    rate_integral_limit: float = 0.3  # [-]
    min_thrust: float = 0.08  # thrust fraction [-]
    max_thrust: float = 0.9  # thrust fraction [-]

    @classmethod
    def from_values(cls, prim, values: dict, path) -> PidGains:
        """The gains from ``read_prim(prim, PID_SPEC, path)``'s checked values.

        The hover command's range is open at the top, which a :class:`Param`
        cannot state (its ``high`` is inclusive): it must stay below 1, checked
        here and worded as ``read_prim`` words its errors. (The tilt's π/2 needs
        no such check: no float32 equals it, and the nearest is above it.)
        """
        for key, high, allowed in (("hover_thrust", 1.0, "in (0, 1)"),):
            if values[key] >= high:
                param = PID_SPEC.param(key)
                unit = "" if param.unit == "-" else f" {param.unit}"
                raise BuildError(f"{where(prim, PID_SPEC, path)}: {param.attr} is {shown(values[key])}{unit}; "
                                 f"it must be {allowed} ({param.doc.rstrip('.')})")
        return cls(**{key: values[key] for key in _PRIM})


def device_params(gains: PidGains, thrust_model_factor: float, gravity: float) -> PidParams:
    """The kernel's view of ``gains``: the hover command becomes a thrust fraction."""
    f = float(thrust_model_factor)
    u = float(gains.hover_thrust)
    params = PidParams()
    for name in ("position_p", "velocity_p", "velocity_i", "velocity_d", "attitude_p", "rate_p", "rate_i", "rate_d", "max_rates"):
        setattr(params, name, wp.vec3(*[float(x) for x in getattr(gains, name)]))
    params.hover_thrust = (1.0 - f) * u + f * u * u
    params.thrust_model_factor = f
    for name in ("max_tilt", "max_horizontal_speed", "max_vertical_speed", "acceleration_integral_limit",
                 "rate_integral_limit", "max_feedforward_acceleration", "min_thrust", "max_thrust"):
        setattr(params, name, float(getattr(gains, name)))
    params.gravity = float(gravity)
    return params


@dataclass(frozen=True)
class PidOptions(ControllerOptions):
    """``--controller pid``'s options."""

    knows_failures: bool = option(
        False, "Tell the PID of a drawn rotor failure (a variation file's rotor_fail_*): at the failure's tick it "
        "mixes with the allocation solved without that rotor.", flag="--knows-failures")



class PidController(Component):
    """The cascaded PID law as one ``control`` stage writing ``controls`` through the vehicle's allocation.

    The gains are a device table made in :meth:`prepare` (constant through a
    run; :meth:`set_gains` rewrites it between ticks); the integrators are the
    engine's state ``pid`` (:data:`PID_STATE`), reached through the stage's io.
    The mix (:class:`~nexus.control.allocation.Allocation`) comes from the
    vehicle's geometry; without one (a controller made by hand) it is PX4's
    quad-X.
    """

    spec = PID_SPEC

    def __init__(
        self,
        name: str = "/vehicle/controller",
        gains: PidGains | None = None,
        *,
        thrust_model_factor: float = 0.5,
        gravity: float = 9.80665,
        allocation: Allocation | None = None,
        knows_failures: bool = False,
        connections=None,
    ):
        super().__init__(name, connections)
        self.gains = gains or PidGains()
        self.thrust_model_factor = float(thrust_model_factor)
        self.gravity = float(gravity)
        self.allocation = allocation or quad_x_allocation()
        self.knows_failures = bool(knows_failures)
        #: Each rotor's :class:`~nexus.plant.rotor_geometry.RotorGeometry` (maps a drawn failure to its slot).
        self.geometry = None
        self._params = None

    @property
    def rotor_count(self) -> int:
        return self.allocation.rotors

    @classmethod
    def from_prim(cls, prim, values, ctx, knows_failures: bool = False) -> PidController:
        """The controller for a prim applying ``NexusPidControllerAPI``; ``ctx`` is :class:`nexus.runtime.assembly.PrimContext`.

        The thrust model factor comes from the vehicle's ESCs, which must agree; the allocation from its rotors.
        """
        factors = {rotor.esc["thrust_model_factor"] for rotor in ctx.plant.rotors}
        if len(factors) != 1:
            raise BuildError(f"{where(prim, PID_SPEC, ctx.path)}: the ESCs disagree on nexus:thrustModelFactor "
                             f"({sorted(factors)}); the mixer needs one")
        controller = cls(str(prim.GetPath()), PidGains.from_values(prim, values, ctx.path),
                         thrust_model_factor=factors.pop(), gravity=ctx.plant.gravity,
                         allocation=allocation_for(ctx.plant), knows_failures=knows_failures,
                         connections=read_connections(prim, cls.spec, ctx.path))
        controller.geometry = rotor_geometry(ctx.plant)
        return controller

    def reads(self) -> tuple:
        # The clock, when the controller is told of rotor failures (it switches mix at a failure's tick).
        if self.knows_failures:
            return (*super().reads(), Read("time_ns", wp.int64, (1,)))
        return super().reads()

    def prepare(self, ctx) -> None:
        self.dt = ctx.dt
        self.worlds = ctx.worlds
        self._params = wp.array([device_params(self.gains, self.thrust_model_factor, self.gravity)], dtype=PidParams, device=ctx.device)
        #: The arrays the spec declares, by name (the rollout differentiates the gains in ``params``).
        self.arrays = NamedArrays(f"controller {self.name}", PID_SPEC.arrays, params=self._params)
        failures = failures_of(ctx, self.geometry) if (self.knows_failures and self.geometry) else None
        self.mix = mix_tables(self.allocation, ctx.worlds, ctx.device, failures)
        self.no_clock = wp.zeros(ctx.worlds, dtype=wp.int64, device=ctx.device)

    def fault_clocks(self) -> dict:
        """The per-world rotor failure times [ns] the mix switches at, for a fault fired by a condition
        (:mod:`nexus.runtime.fault_trigger`); none unless the PID knows of failures."""
        mix = getattr(self, "mix", None)
        return {"rotor": [mix.fail_ns]} if self.knows_failures and mix is not None else {}

    def set_gains(self, gains: PidGains) -> None:
        """Change the gains between ticks; a captured graph reads the new values on its next replay."""
        self.gains = gains
        if self._params is not None:
            self._params.assign([device_params(gains, self.thrust_model_factor, self.gravity)])

    def scale_gains(self, factors: dict) -> None:
        """Multiply each named gain (:data:`PID_GAINS`, a per-axis tuple) by its factor (a scenario's
        ``controller.gain_scale``)."""
        self.set_gains(replace(self.gains, **{name: tuple(float(v) * factors[name] for v in getattr(self.gains, name))
                                              for name in factors}))

    def run(self, io) -> None:
        wp.launch(
            pid_control,
            dim=self.worlds,
            inputs=[io["estimate"], io["setpoint"], io["armed"], io[STATUS_SIGNAL], self._params, io.state_in["pid"],
                    float(self.dt),
                    self.mix, io["time_ns"] if self.knows_failures else self.no_clock],
            outputs=[io.state_out["pid"], io["controls"]],
            device=io.device,
        )



def _build(prim, path: str, ctx, options: PidOptions) -> PidController:
    """``--controller pid``: the controller the vehicle's ``NexusPidControllerAPI`` prim declares."""
    if prim is None:
        raise BuildError(f"{ctx.path}: --controller pid needs a prim with NexusPidControllerAPI (its gains)")
    return PidController.from_prim(prim, read_prim(prim, PidController.spec, ctx.path), ctx,
                                   knows_failures=options.knows_failures)


register("pid", _build, help="the cascaded PID of the vehicle's NexusPidControllerAPI prim", options=PidOptions,
         reads_setpoint=True, duration_s=60.0, gains=PID_GAINS)


__all__ = ["PID_GAINS", "PID_SHORT_NAMES", "PID_SPEC", "PID_STATE", "PidController", "PidGains", "PidOptions", "PidParams", "PidState", "device_params", "pid_control"]
