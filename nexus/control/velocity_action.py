"""The velocity action: a policy asks for a velocity in its heading frame and a yaw rate; the vehicle's own PID
cascade (velocity -> acceleration -> thrust axis and collective -> attitude -> body rates -> torque) flies it.

Four values in [-1, 1] (clipped): a₀, a₁ the forward and right speed and a₂ the downward speed, in the heading
frame (NED turned by the vehicle's heading, the frame of the observation's ``velocity_heading``), scaled by the
limits the model declares (``nexus:velocity_limits``: horizontal speed [m/s], vertical speed [m/s], yaw rate
[rad/s]); the horizontal goal is then limited to a disc of the horizontal speed. a₃ is the yaw rate, fed forward
about the heading the vehicle has (no heading goal is held).

With a goal gain K > 0 (``nexus:velocity_goal_gain``, ``nexus train --goal-gain``) the policy's velocity is a
correction to a go-to-goal law: the cascade flies ``limit(K·(goal − position)) + v_policy``, limited again, where
``goal`` is the setpoint (the task's goal in training). Action 0 then flies straight at the goal and the policy
learns only what to add (going round a neighbour): residual learning on a proportional guidance law. With a fade
radius R > 0 (``nexus:velocity_goal_fade``) the correction is scaled by ``min(1, |goal − position| / R)^n``, so it
vanishes at the goal and the law alone brings the vehicle onto it; the power n ≥ 1
(``nexus:velocity_goal_fade_power``, 1 when absent) decides where the law wins: at e from the goal the law asks K·e and a correction of speed v is cut
to v·(e/R)^n, so with n = 1 a steady correction above K·R holds a vehicle off its goal anywhere inside R, and with
n = 2 the law wins inside K·R²/v of it. K = 0 (the default) leaves the velocity the
policy's alone, bit for bit as before. The cascade is :mod:`nexus.control.pid`'s own
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
#: The metadata key of the go-to-goal law's gain [1/s] under a velocity action (absent: 0, no law).
GOAL_GAIN_KEY = "nexus:velocity_goal_gain"
#: The metadata key of the radius [m] within which the policy's correction fades to 0 at the goal (absent: 0, none).
GOAL_FADE_KEY = "nexus:velocity_goal_fade"
#: The metadata key of the power [-] of that fade (absent: 1, linear).
GOAL_FADE_POWER_KEY = "nexus:velocity_goal_fade_power"
#: The largest fade power taken: above it the correction is gone long before the goal.
MAX_FADE_POWER = 4.0


@wp.func
def velocity_action(p: PidParams, s: PidState, est: PoseTwist, a0: float, a1: float, a2: float, a3: float,
                    limits: wp.vec3, goal: wp.vec3, goal_gain: float, goal_fade: float, goal_fade_power: float,
                    dt: float, on: float):
    """One tick of the velocity action (module doc) for the estimate ``est`` and the ``goal`` [m, NED, the
    estimate's frame] its go-to-goal law aims at with ``goal_gain`` [1/s] (0: none), the correction fading within
    ``goal_fade`` [m] of it (0: never) as the distance to the power ``goal_fade_power`` [-]: the collective thrust
    fraction [-], the normalised torque [-1, 1] and the cascade's next state."""
    psi = heading_of(est.attitude)
    c = wp.cos(psi)
    sn = wp.sin(psi)
    forward = wp.clamp(a0, -1.0, 1.0) * limits[0]
    right = wp.clamp(a1, -1.0, 1.0) * limits[0]
    down = wp.clamp(a2, -1.0, 1.0) * limits[1]
    asked = wp.vec3(c * forward - sn * right, sn * forward + c * right, down)
    if goal_gain > 0.0:  # the policy's velocity corrects the go-to-goal law's (module doc)
        to_goal = goal - est.position
        if goal_fade > 0.0:
            fade = wp.min(wp.length(to_goal) / goal_fade, 1.0)
            if goal_fade_power != 1.0:
                fade = wp.pow(fade, goal_fade_power)
            asked = asked * fade
        asked = asked + limit_speed(to_goal * goal_gain, limits[0], limits[1])
    velocity_goal = limit_speed(asked, limits[0], limits[1])
    zero = wp.vec3(0.0, 0.0, 0.0)
    acceleration, velocity_integral = velocity_loop(p, s, est.velocity, velocity_goal, zero, wp.vec3(1.0, 1.0, 1.0),
                                                    dt, on)
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
    goals: wp.array(dtype=wp.vec3),
    goal_gain: float,
    goal_fade: float,
    goal_fade_power: float,
    dt: float,
    mix: MixTables,
    # Data in and out:
    state: wp.array(dtype=PidState),
    # Out:
    controls: wp.array2d(dtype=wp.float32),
):
    """Each row's velocity action into its ``controls`` row (the policy controller's; zeros while disarmed), its
    go-to-goal law aiming at ``goals`` (the setpoints) with ``goal_gain``, the correction fading within
    ``goal_fade`` to the power ``goal_fade_power``."""
    w = wp.tid()
    p = params[0]
    on = float(0.0)
    if armed[w] != 0:
        on = 1.0
    collective, torque, out = velocity_action(p, state[w], estimate[w], actions[w, 0], actions[w, 1], actions[w, 2],
                                              actions[w, 3], limits, goals[w], goal_gain, goal_fade,
                                              goal_fade_power, dt, on)
    write_rotor_commands(controls, w, p.thrust_model_factor, collective, torque, on, mix, wp.int64(0))
    state[w] = out


@dataclass(frozen=True)
class VelocityScaling:
    """What a ``velocity:4`` action means at ±1: horizontal speed [m/s], vertical speed [m/s], yaw rate [rad/s];
    and the go-to-goal law's gain [1/s] it corrects (0: none) with the radius [m] the correction fades within (0:
    none) and the fade's power [-] (1: linear)."""

    limits: tuple[float, float, float]
    goal_gain: float = 0.0
    goal_fade: float = 0.0
    goal_fade_power: float = 1.0

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
        law = []
        for key, what in ((GOAL_GAIN_KEY, "a gain of at least 0 [1/s] (0: no go-to-goal law), e.g. 1.0"),
                          (GOAL_FADE_KEY, "a radius of at least 0 [m] (0: the correction never fades), e.g. 1.0")):
            value = 0.0
            if key in meta:
                try:
                    value = float(meta[key])
                except ValueError:
                    value = -1.0
                if not (value >= 0.0 and math.isfinite(value)):
                    raise ValueError(f"{where}: its metadata {key} is {meta[key]!r}; it must be {what}")
            law.append(value)
        power = 1.0
        if GOAL_FADE_POWER_KEY in meta:
            try:
                power = float(meta[GOAL_FADE_POWER_KEY])
            except ValueError:
                power = 0.0
            if not (1.0 <= power <= MAX_FADE_POWER):
                raise ValueError(f"{where}: its metadata {GOAL_FADE_POWER_KEY} is {meta[GOAL_FADE_POWER_KEY]!r}; it "
                                 f"must be a power from 1 to {MAX_FADE_POWER:g} (1: linear, 2: quadratic)")
        return cls(limits, *law, power)

    def metadata(self) -> dict[str, str]:
        """The keys as text that reads back to the same floats (the gain only when there is a law)."""
        keys = {VELOCITY_LIMITS_KEY: ",".join(repr(float(v)) for v in self.limits)}
        if self.goal_gain > 0.0:
            keys[GOAL_GAIN_KEY] = repr(float(self.goal_gain))
            if self.goal_fade > 0.0:
                keys[GOAL_FADE_KEY] = repr(float(self.goal_fade))
                if self.goal_fade_power != 1.0:
                    keys[GOAL_FADE_POWER_KEY] = repr(float(self.goal_fade_power))
        return keys
