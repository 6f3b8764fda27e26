"""Setpoint tables a rollout follows: one goal per tick, computed on the host before the tape.

A rollout has no guidance stage: its setpoints do not depend on any
parameter, so they are a table (``(ticks, 3)`` positions [m, NED, from the
start] and ``(ticks,)`` headings [rad]) written once into device arrays.
Each reference starts at the vehicle's start point and heading, so a
vehicle that starts in hover starts on its goal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: ``--loss`` choices and the reference each follows.
REFERENCES = ("altitude", "yaw", "figure8", "energy")


@dataclass(frozen=True)
class Reference:
    """Goals per tick: ``position`` [m, NED, relative to the start], ``yaw`` [rad, NED]."""

    position: np.ndarray
    yaw: np.ndarray


def smooth(fraction: np.ndarray) -> np.ndarray:
    """0 -> 1 with zero slope at both ends (a cubic smooth step), clipped outside [0, 1]."""
    x = np.clip(fraction, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def hover_and_climb(ticks: int, dt: float, climb: float = 1.0, hold: float = 0.4, rise: float = 1.0) -> Reference:
    """Hover ``hold`` [s], climb ``climb`` [m] in ``rise`` [s] (smooth step), then hover."""
    t = (np.arange(ticks) + 1) * dt  # the time of each tick's setpoint, as the clock stamps the tick
    position = np.zeros((ticks, 3))
    position[:, 2] = -climb * smooth((t - hold) / rise)  # NED: up is -z
    return Reference(position, np.zeros(ticks))


def yaw_turn(ticks: int, dt: float, turn_deg: float = 30.0, hold: float = 0.4, rise: float = 1.0) -> Reference:
    """Hover in place and turn the heading by ``turn_deg`` [deg] in ``rise`` [s] after ``hold`` [s]."""
    t = (np.arange(ticks) + 1) * dt
    return Reference(np.zeros((ticks, 3)), np.radians(turn_deg) * smooth((t - hold) / rise))


def figure_eight(ticks: int, dt: float, size: float = 1.0, period: float = 8.0) -> Reference:
    """A horizontal figure eight of half-width ``size`` [m] flown once per ``period`` [s], at the start height."""
    t = (np.arange(ticks) + 1) * dt
    w = 2.0 * np.pi / period
    position = np.zeros((ticks, 3))
    position[:, 0] = size * np.sin(w * t)
    position[:, 1] = 0.5 * size * np.sin(2.0 * w * t)
    return Reference(position, np.zeros(ticks))


def reference_for(loss: str, ticks: int, dt: float) -> Reference:
    """The reference the loss ``loss`` measures against (``energy`` flies the climb)."""
    if loss in ("altitude", "energy"):
        return hover_and_climb(ticks, dt)
    if loss == "yaw":
        return yaw_turn(ticks, dt)
    if loss == "figure8":
        return figure_eight(ticks, dt)
    raise ValueError(f"--loss {loss}: choose one of {', '.join(REFERENCES)}")


__all__ = ["REFERENCES", "Reference", "figure_eight", "hover_and_climb", "reference_for", "smooth", "yaw_turn"]
