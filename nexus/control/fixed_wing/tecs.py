"""Total-energy speed and height control (TECS): throttle from the total energy rate, pitch from its distribution.

PX4's TECS (docs.px4.io, "Fixed-wing Altitude/Speed Controller Tuning", the TECS section): the specific
energy rates, in [m/s] (energy per unit weight, differentiated),

    total   Ė_T = ḣ + V·V̇/g        balance   Ė_B = ḣ − V·V̇/g

Thrust changes the total (power in), pitch trades one form for the other at a fixed total. From a height
error and an airspeed error the law asks for ``ḣ_sp = clamp(k_h·(h_sp − h), −sink, climb)`` and
``V̇_sp = clamp(k_V·(V_sp − V), ±a_max)``; then

    throttle = throttle_trim + Ė_T,sp / k_T + k_Tp·(Ė_T,sp − Ė_T) + ∫ k_Ti·(Ė_T,sp − Ė_T) dt
    pitch    = pitch_trim + (Ė_B,sp + k_Bd·(Ė_B,sp − Ė_B) + ∫ k_Bi·(Ė_B,sp − Ė_B) dt) / V

``k_T`` [m/s] is the total energy rate one unit of throttle buys at the trim (so ``Ė_T,sp / k_T`` is the
feed-forward, PX4's ``FW_T_*_MAX`` rates mapped to the throttle range), and ``/V`` turns a balance rate
into a flight-path angle (ḣ = V·sin γ). Both integrators stop growing while their output is clamped.
"""

from __future__ import annotations

import warp as wp


@wp.struct
class TecsGains:
    """The energy loops' gains and limits, as the kernel reads them."""

    height_p: float  # k_h [1/s]
    speed_p: float  # k_V [1/s]
    climb_max: float  # [m/s]
    sink_max: float  # [m/s]
    acceleration_max: float  # [m/s²]
    energy_rate_per_throttle: float  # k_T [m/s]
    throttle_p: float  # k_Tp [s/m]
    throttle_i: float  # k_Ti [1/m]
    balance_d: float  # k_Bd [-]
    balance_i: float  # k_Bi [1/s]
    pitch_min: float  # [rad]
    pitch_max: float  # [rad]
    throttle_trim: float  # [0, 1]
    pitch_trim: float  # [rad]
    gravity: float  # [m/s²]


@wp.func
def energy_rates(climb_rate: float, airspeed: float, acceleration: float, gravity: float) -> wp.vec2:
    """(Ė_T, Ė_B) [m/s]: the total and balance specific energy rates of a climb rate, speed and acceleration."""
    kinetic = airspeed * acceleration / gravity
    return wp.vec2(climb_rate + kinetic, climb_rate - kinetic)


@wp.func
def tecs_goals(g: TecsGains, height_goal: float, speed_goal: float, height: float, climb_rate: float,
               airspeed: float, acceleration: float, throttle_integral: float, balance_integral: float, dt: float):
    """(throttle [0, 1], pitch goal [rad], new throttle integral [-], new balance integral [m/s])."""
    climb_goal = wp.clamp(g.height_p * (height_goal - height), -g.sink_max, g.climb_max)
    acceleration_goal = wp.clamp(g.speed_p * (speed_goal - airspeed), -g.acceleration_max, g.acceleration_max)
    v = wp.max(airspeed, 1.0)
    goal = energy_rates(climb_goal, v, acceleration_goal, g.gravity)
    flown = energy_rates(climb_rate, v, acceleration, g.gravity)
    total_error = goal[0] - flown[0]
    balance_error = goal[1] - flown[1]

    unclamped = g.throttle_trim + goal[0] / g.energy_rate_per_throttle + g.throttle_p * total_error + throttle_integral
    throttle = wp.clamp(unclamped, 0.0, 1.0)
    next_throttle_integral = throttle_integral
    # Integrate only while the throttle is inside its range, or when the error drives it back in.
    if throttle == unclamped or (unclamped > 1.0 and total_error < 0.0) or (unclamped < 0.0 and total_error > 0.0):
        next_throttle_integral = throttle_integral + g.throttle_i * total_error * dt

    unclamped_pitch = g.pitch_trim + (goal[1] + g.balance_d * balance_error + balance_integral) / v
    pitch = wp.clamp(unclamped_pitch, g.pitch_min, g.pitch_max)
    next_balance_integral = balance_integral
    if pitch == unclamped_pitch or (unclamped_pitch > g.pitch_max and balance_error < 0.0) or (
            unclamped_pitch < g.pitch_min and balance_error > 0.0):
        next_balance_integral = balance_integral + g.balance_i * balance_error * dt
    return throttle, pitch, next_throttle_integral, next_balance_integral
