"""PID gains for a vehicle from its inertia, its rotors' authority and its thrust margin (the rule of
``docs/vehicles.md``), so that a generated vehicle flies without hand tuning.

The PID's rate loop outputs a normalised torque that the control allocation
(:mod:`nexus.control.allocation`) turns into rotor thrusts: one unit moves the rotor that moves most by
``TORQUE_SCALE`` (0.5) of its thrust fraction, so it asks for the moment ``s_axis`` = 0.5 / max_i |B⁺_i,axis|
(the allocation's column scale, B the effectiveness matrix per unit thrust fraction) and gives the body
the angular acceleration A = s_axis / I_axis [rad/s² per unit]. On a flat layout of equal rotors this is

    A_roll = 0.5 · T_max · Σ y_i² / max|y_i| / I_xx,   A_pitch = 0.5 · T_max · Σ x_i² / max|x_i| / I_yy,
    A_yaw  = 0.5 · T_max · n · (kQ/kT) / I_zz,

T_max = kT ω_max² a rotor's full thrust, (x_i, y_i) its place about the centre of mass (for an X quad
Σ y_i² / max|y_i| = Σ|y_i|; a hexa-X rolls with 3 arms' worth, not 4, since its side rotors move most).
The rate gain puts the rate loop's crossover at ω_c: rate_P = ω_c / A, with ω_c = min(12, 0.6 / τ_up)
rad/s for roll and pitch (the motors must follow: 0.6 / τ_up keeps it well below the ESC's corner 1 / τ_up)
and ω_c = min(10, 0.5 / τ_up) for yaw. 12 rad/s is what the Astro Max's hand-tuned gains give (0.15 · 78).
Integral and derivative follow PX4's ratios (roll and pitch I = 4/3 P, D = 0.02 s · P; yaw I = P / 6, as
the Astro Max), the attitude gains are PX4's 6.5 (roll, pitch) and the Astro Max's 5 (yaw) scaled by
ω_c / 12 when the motors are slower. The thrust margin bounds the tilt: at most 45°, and no more than
keeps 90 % of full thrust holding altitude, acos(1 / (0.9 · T/W)). Position and velocity gains are
PX4's defaults (they are accelerations per metre and per m/s, the same for any size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from nexus.airframe.sizing import Airframe

#: Thrust fraction the most-moved rotor changes by per unit of normalised torque (nexus.control.allocation).
TORQUE_SCALE = 0.5
RATE_CROSSOVER = 12.0  # [rad/s] roll and pitch
YAW_CROSSOVER = 10.0  # [rad/s]


@dataclass(frozen=True)
class Gains:
    position_p: tuple = (0.95, 0.95, 1.0)
    velocity_p: tuple = (1.8, 1.8, 4.0)
    velocity_i: tuple = (0.4, 0.4, 1.0)
    velocity_d: tuple = (0.2, 0.2, 0.0)
    attitude_p: tuple = (6.5, 6.5, 5.0)
    rate_p: tuple = (0.15, 0.15, 0.2)
    rate_i: tuple = (0.2, 0.2, 0.1)
    rate_d: tuple = (0.003, 0.003, 0.0)
    hover_thrust: float = 0.5
    max_tilt: float = math.radians(45.0)


def authority(airframe: Airframe) -> tuple[float, float, float]:
    """Angular acceleration per unit of normalised torque, (roll, pitch, yaw) [rad/s²]: the moment the
    vehicle's allocation asks for per unit over the inertia.

    The allocation's column scale worked out here in NumPy (importing :mod:`nexus.control.allocation` would
    load Warp and Newton into ``nexus vehicle new``): upright rotors at (x, y) [m, FLU] give, per unit
    thrust fraction, the FRD moments (y, x, spin·kQ/kT)·T_max and the thrust T_max; one unit of torque is
    ``TORQUE_SCALE`` over the largest entry of the pseudo-inverse's column. ``tests/airframe`` checks it
    against the allocation itself.
    """
    full = airframe.thrust_coefficient * airframe.max_speed**2
    moment = airframe.torque_coefficient / airframe.thrust_coefficient
    rotors = airframe.rotors
    matrix = full * np.array([[r.position[1] for r in rotors], [r.position[0] for r in rotors],
                              [r.place.spin * moment for r in rotors], [1.0] * len(rotors)])
    largest = np.abs(np.linalg.pinv(matrix)).max(axis=0)
    inertia = airframe.inertia()
    return tuple(float(TORQUE_SCALE / largest[k] / inertia[k]) for k in range(3))


def crossovers(airframe: Airframe) -> tuple[float, float]:
    """The rate loop's crossover, (roll and pitch, yaw) [rad/s]."""
    return min(RATE_CROSSOVER, 0.6 / airframe.tau_up), min(YAW_CROSSOVER, 0.5 / airframe.tau_up)


def pid_gains(airframe: Airframe) -> Gains:
    """The rule's gains for ``airframe``."""
    roll, pitch, yaw = authority(airframe)
    tilt_c, yaw_c = crossovers(airframe)
    rate_p = (tilt_c / roll, tilt_c / pitch, yaw_c / yaw)
    slower = tilt_c / RATE_CROSSOVER
    max_tilt = min(math.radians(45.0), math.acos(min(1.0, 1.0 / (0.9 * airframe.thrust_to_weight))))
    return Gains(
        attitude_p=(6.5 * slower, 6.5 * slower, 5.0 * yaw_c / YAW_CROSSOVER),
        rate_p=rate_p,
        rate_i=(rate_p[0] * 4 / 3, rate_p[1] * 4 / 3, rate_p[2] / 6),
        rate_d=(rate_p[0] * 0.02, rate_p[1] * 0.02, 0.0),
        hover_thrust=airframe.hover_command,
        max_tilt=max_tilt,
    )
