"""Losses over a rollout's trajectory, written as Warp kernels so the tape carries them back.

Each loss is a mean over ticks and worlds: one launch per tick adds that tick's
term, divided by ``ticks * worlds``, into a one-element loss array
(``wp.atomic_add``, whose adjoint hands the loss's gradient to every term).

* ``altitude``: squared height error [m²], ``(z - z_goal)²`` (NED z).
* ``yaw``: squared heading error [rad²], wrapped to (-π, π].
* ``figure8``: squared position error [m²], all three axes.
* ``energy``: the rotors' aerodynamic power ``Σ kQ·ω³`` [W] plus the squared
  position error weighted 100 W/m² (flying nowhere costs no power, so the
  tracking term keeps the vehicle on its path).
"""

from __future__ import annotations

import warp as wp

from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint

LOSSES = ("altitude", "yaw", "figure8", "energy")
#: Weight of the position error in the energy loss [W/m²].
ENERGY_TRACKING_WEIGHT = 100.0


@wp.func
def heading_ned(q: wp.quat) -> float:
    """Heading [rad] of a body-FRD-to-NED rotation (x, y, z, w)."""
    return wp.atan2(2.0 * (q[3] * q[2] + q[0] * q[1]), 1.0 - 2.0 * (q[1] * q[1] + q[2] * q[2]))


@wp.func
def wrapped(angle: float) -> float:
    """``angle`` [rad] wrapped to (-π, π]."""
    return wp.atan2(wp.sin(angle), wp.cos(angle))


@wp.kernel
def add_tracking_loss(
    estimate: wp.array(dtype=PoseTwist),
    setpoint: wp.array(dtype=Setpoint),
    kind: int,
    scale: float,
    loss: wp.array(dtype=float),
):
    """One tick's tracking term: 0 altitude, 1 heading, 2 position; ``scale`` = 1 / (ticks · worlds)."""
    world = wp.tid()
    e = estimate[world]
    s = setpoint[world]
    term = float(0.0)
    if kind == 0:
        dz = e.position[2] - s.position[2]
        term = dz * dz
    elif kind == 1:
        d = wrapped(heading_ned(e.attitude) - s.yaw)
        term = d * d
    else:
        term = wp.length_sq(e.position - s.position)
    wp.atomic_add(loss, 0, term * scale)


@wp.kernel
def add_power_loss(
    speed: wp.array(dtype=float),
    torque_coefficient: wp.array(dtype=float),
    rotors: int,
    scale: float,
    loss: wp.array(dtype=float),
):
    """One tick's rotor power ``Σ kQ·|ω|³`` [W] of world ``tid``, times ``scale``."""
    world = wp.tid()
    power = float(0.0)
    for i in range(rotors):
        w = wp.abs(speed[world * rotors + i])
        power += torque_coefficient[i] * w * w * w
    wp.atomic_add(loss, 0, power * scale)


__all__ = ["ENERGY_TRACKING_WEIGHT", "LOSSES", "add_power_loss", "add_tracking_loss", "heading_ned"]
