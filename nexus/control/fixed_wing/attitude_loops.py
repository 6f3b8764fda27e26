"""Bank and pitch to aileron, elevator and rudder (Beard and McLain, *Small Unmanned Aircraft*, ch. 6).

Successive loop closure with the book's signs (a positive aileron rolls right, a positive elevator pitches
the nose down, a positive rudder yaws the nose left):

    δa = δa_trim + k_φ·(φ_sp − φ) − k_p·p + ∫ k_φi·(φ_sp − φ) dt
    δe = δe_trim − k_θ·(θ_sp − θ) + k_q·(q − q_turn) − ∫ k_θi·(θ_sp − θ) dt
    δr = δr_trim + k_r·(r − r_turn)

with ``r_turn = g·sinφ·cosθ/V`` and ``q_turn = g·sinφ·tanφ·cosθ/V``, the body rates of a level
coordinated turn at bank φ (so the dampers do not fight the turn), the rudder a yaw damper around it.
Gains in [rad of deflection per rad] or per [rad/s]; every deflection is clamped to ±travel and returned
as a servo command in [−1, 1] (deflection / travel).
"""

from __future__ import annotations

import warp as wp


@wp.struct
class AttitudeGains:
    """The attitude loops' gains, trims and limits, as the kernel reads them."""

    roll_p: float  # k_φ [-]
    roll_rate_d: float  # k_p [s]
    roll_i: float  # k_φi [1/s]
    pitch_p: float  # k_θ [-]
    pitch_rate_d: float  # k_q [s]
    pitch_i: float  # k_θi [1/s]
    yaw_damper: float  # k_r [s]
    integral_limit: float  # bound on each integral term [rad of deflection]
    aileron_trim: float  # [rad]
    elevator_trim: float  # [rad]
    rudder_trim: float  # [rad]
    aileron_travel: float  # [rad]
    elevator_travel: float  # [rad]
    rudder_travel: float  # [rad]
    gravity: float  # [m/s²]


@wp.func
def turn_rates(roll: float, pitch: float, airspeed: float, gravity: float) -> wp.vec2:
    """(q, r) [rad/s], FRD: the pitch and yaw rates of a level coordinated turn banked ``roll`` [rad]."""
    turn = gravity * wp.cos(pitch) / wp.max(airspeed, 1.0)
    return wp.vec2(turn * wp.sin(roll) * wp.tan(roll), turn * wp.sin(roll))


@wp.func
def surface_commands(g: AttitudeGains, roll_goal: float, pitch_goal: float, roll: float, pitch: float,
                     rates: wp.vec3, airspeed: float, roll_integral: float, pitch_integral: float, dt: float):
    """(servo commands (aileron, elevator, rudder) in [−1, 1], new roll integral, new pitch integral) [rad]."""
    roll_error = roll_goal - roll
    pitch_error = pitch_goal - pitch
    next_roll = wp.clamp(roll_integral + g.roll_i * roll_error * dt, -g.integral_limit, g.integral_limit)
    next_pitch = wp.clamp(pitch_integral + g.pitch_i * pitch_error * dt, -g.integral_limit, g.integral_limit)
    turn = turn_rates(roll, pitch, airspeed, g.gravity)
    aileron = g.aileron_trim + g.roll_p * roll_error - g.roll_rate_d * rates[0] + next_roll
    elevator = g.elevator_trim - g.pitch_p * pitch_error + g.pitch_rate_d * (rates[1] - turn[0]) - next_pitch
    rudder = g.rudder_trim + g.yaw_damper * (rates[2] - turn[1])
    commands = wp.vec3(wp.clamp(aileron / g.aileron_travel, -1.0, 1.0),
                       wp.clamp(elevator / g.elevator_travel, -1.0, 1.0),
                       wp.clamp(rudder / g.rudder_travel, -1.0, 1.0))
    return commands, next_roll, next_pitch
