"""The velocity action: a policy asks for a velocity in its heading frame and a yaw rate; the vehicle's own PID
cascade (velocity -> acceleration -> thrust axis and collective -> attitude -> body rates -> torque) flies it.

Four values in [-1, 1] (clipped): a₀, a₁ the forward and right speed and a₂ the downward speed, in the heading
frame (NED turned by the vehicle's heading, the frame of the observation's ``velocity_heading``), scaled by the
limits the model declares (``nexus:velocity_limits``: horizontal speed [m/s], vertical speed [m/s], yaw rate
[rad/s]); the horizontal goal is then limited to a disc of the horizontal speed. a₃ is the yaw rate, fed forward
about the heading the vehicle has (no heading goal is held). The cascade is :mod:`nexus.control.pid`'s own
(:func:`~nexus.control.pid.velocity_loop`, :func:`~nexus.control.pid.acceleration_to_rates`,
:func:`~nexus.control.pid.rate_loop`), with the vehicle's gains, every tick; the learning environment
(``action="velocity"``) and ``nexus run --controller policy`` both fly it through :func:`velocity_action`, so a
velocity-mode policy flies the same in both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import warp as wp

from nexus.control.allocation import MixTables, write_rotor_commands
from nexus.control.attitude import heading_of
from nexus.control.pid import PidParams, PidState, acceleration_to_rates, limit_speed, rate_loop, velocity_loop
from nexus.estimation.pose_twist import PoseTwist

#: The limits ``nexus train`` uses at action ±1: horizontal speed [m/s], vertical speed [m/s], yaw rate [rad/s].
VELOCITY_LIMITS = (2.0, 1.0, 1.5)
#: The action layout a velocity-mode export declares, and the metadata key that scales it.
VELOCITY_LAYOUT = "velocity:4"
VELOCITY_LIMITS_KEY = "nexus:velocity_limits"


@wp.func
def velocity_action(p: PidParams, s: PidState, est: PoseTwist, a0: float, a1: float, a2: float, a3: float,
                    limits: wp.vec3, dt: float, on: float):
    """One tick of the velocity action (module doc) for the estimate ``est``: the collective thrust fraction [-],
    the normalised torque [-1, 1] and the cascade's next state."""
    psi = heading_of(est.attitude)
    c = wp.cos(psi)
    sn = wp.sin(psi)
    forward = wp.clamp(a0, -1.0, 1.0) * limits[0]
    right = wp.clamp(a1, -1.0, 1.0) * limits[0]
    down = wp.clamp(a2, -1.0, 1.0) * limits[1]
    goal = limit_speed(wp.vec3(c * forward - sn * right, sn * forward + c * right, down), limits[0], limits[1])
    zero = wp.vec3(0.0, 0.0, 0.0)
    acceleration, velocity_integral = velocity_loop(p, s, est.velocity, goal, zero, wp.vec3(1.0, 1.0, 1.0), dt, on)
    collective, rate_goal = acceleration_to_rates(p, est.attitude, acceleration, psi,
                                                  wp.clamp(a3, -1.0, 1.0) * limits[2])
    torque, rate_integral = rate_loop(p, s, est.rates, rate_goal, zero, dt, on)
    out = PidState()
    out.velocity_integral = velocity_integral
    out.rate_integral = rate_integral
    out.previous_velocity = est.velocity
    out.previous_rates = est.rates
    out.primed = 1.0
    return collective, torque, out


@wp.kernel
def fly_velocity_actions(
    # In:
    actions: wp.array2d(dtype=wp.float32),
    estimate: wp.array(dtype=PoseTwist),
    armed: wp.array(dtype=wp.int32),
    params: wp.array(dtype=PidParams),
    limits: wp.vec3,
    dt: float,
    mix: MixTables,
    # Data in and out:
    state: wp.array(dtype=PidState),
    # Out:
    controls: wp.array2d(dtype=wp.float32),
):
    """Each row's velocity action into its ``controls`` row (the policy controller's; zeros while disarmed)."""
    w = wp.tid()
    p = params[0]
    on = float(0.0)
    if armed[w] != 0:
        on = 1.0
    collective, torque, out = velocity_action(p, state[w], estimate[w], actions[w, 0], actions[w, 1], actions[w, 2],
                                              actions[w, 3], limits, dt, on)
    write_rotor_commands(controls, w, p.thrust_model_factor, collective, torque, on, mix, wp.int64(0))
    state[w] = out


@dataclass(frozen=True)
class VelocityScaling:
    """What a ``velocity:4`` action means at ±1: horizontal speed [m/s], vertical speed [m/s], yaw rate [rad/s]."""

    limits: tuple[float, float, float]

    @classmethod
    def from_metadata(cls, meta: dict, where: str) -> VelocityScaling:
        """Read ``nexus:velocity_limits``; ValueError naming it when it is missing or malformed."""
        if VELOCITY_LIMITS_KEY not in meta:
            raise ValueError(f"{where}: its metadata has no '{VELOCITY_LIMITS_KEY}', which scales its "
                             f"{VELOCITY_LAYOUT} action; export it again with nexus train, or add "
                             f"{VELOCITY_LIMITS_KEY}=2,1,1.5 (horizontal, vertical speed [m/s], yaw rate [rad/s])")
        try:
            limits = tuple(float(v) for v in meta[VELOCITY_LIMITS_KEY].split(","))
        except ValueError:
            limits = ()
        if len(limits) != 3 or not all(v > 0.0 and math.isfinite(v) for v in limits):
            raise ValueError(f"{where}: its metadata {VELOCITY_LIMITS_KEY} is {meta[VELOCITY_LIMITS_KEY]!r}; it must "
                             "be three positive limits: horizontal, vertical speed [m/s] and yaw rate [rad/s], "
                             "e.g. 2,1,1.5")
        return cls(limits)

    def metadata(self) -> dict[str, str]:
        """The key as text that reads back to the same floats."""
        return {VELOCITY_LIMITS_KEY: ",".join(repr(float(v)) for v in self.limits)}
