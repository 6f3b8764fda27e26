"""ReferenceTrajectory: a host setpoint that is a whole trajectory, not one goal.

A tracking controller (the MPC) looks ahead along the reference, so it needs
the position, velocity and acceleration at any time, not just the current
goal. A reference is a chain of legs from ``start_time`` on; each leg gives
position [m], velocity [m/s] and acceleration [m/s²] in NED at a time
[s] since the leg began. The heading [rad, NED] is held at the start heading
(its rate is 0): the shapes here are flown facing one way.

Two shapes are planned from a scene's prims (:mod:`nexus.guidance.tracking`):

* a **figure-eight** (a lemniscate of Gerono): climb to ``height``, hold,
  then ``laps`` laps of ``x = a·sin φ``, ``y = (a/2)·sin 2φ`` (scene axes: x
  east, y north) with ``a = size/2``, one lap per ``period``. The phase rate
  rises smoothly from 0 over half a period at the start and falls back to 0
  over half a period at the end, so the reference starts and stops at rest
  and its acceleration stays continuous;
* **waypoints**: minimum-jerk legs between points at an average speed, with
  an optional dwell at each point.

Everything here is NumPy, with no simulator, so a reference can be checked on
its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ReferencePoint:
    """The reference at one time: NED position [m], velocity [m/s], acceleration [m/s²], heading [rad] and its rate [rad/s]."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    yaw: float
    yaw_rate: float


class Leg:
    """One piece of a reference, ``duration`` [s] long; :meth:`at` takes times since the leg began (an array)."""

    duration: float

    def at(self, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - interface
        raise NotImplementedError

    @property
    def end(self) -> np.ndarray:
        return self.at(np.array([self.duration]))[0][0]


@dataclass(frozen=True)
class MinimumJerkLeg(Leg):
    """From ``start`` to ``stop`` [m, NED] in ``duration`` [s], at rest at both ends (``stop == start`` holds)."""

    start: np.ndarray
    stop: np.ndarray
    duration: float

    def at(self, tau):
        s = np.clip(tau / self.duration, 0.0, 1.0)[:, None] if self.duration > 0 else np.ones((len(tau), 1))
        shape = 10 * s**3 - 15 * s**4 + 6 * s**5
        rate = (30 * s**2 - 60 * s**3 + 30 * s**4) / max(self.duration, 1e-12)
        curve = (60 * s - 180 * s**2 + 120 * s**3) / max(self.duration, 1e-12) ** 2
        inside = ((tau >= 0.0) & (tau <= self.duration))[:, None]
        delta = self.stop - self.start
        return self.start + shape * delta, rate * delta * inside, curve * delta * inside


@dataclass(frozen=True)
class FigureEightLeg(Leg):
    """``laps`` laps of a lemniscate of Gerono about ``centre`` [m, NED], ``size`` [m] wide (east) and half that deep (north).

    One lap takes ``period`` [s] at full speed; the phase rate ramps up over
    the first half period and down over the last, so the leg lasts
    ``laps·period + period/2``.
    """

    centre: np.ndarray
    size: float
    period: float
    laps: int

    @property
    def ramp(self) -> float:
        return 0.5 * self.period

    @property
    def duration(self) -> float:
        return self.laps * self.period + self.ramp

    def _phase(self, tau):
        """Phase φ [rad], its rate [rad/s] and its acceleration [rad/s²]."""
        omega = 2.0 * math.pi / self.period
        ramp, total = self.ramp, self.duration

        def up(t):  # phase rate ω·(3s² − 2s³), s = t/ramp, and its integral
            s = np.clip(t / ramp, 0.0, 1.0)
            return omega * ramp * (s**3 - 0.5 * s**4), omega * (3 * s**2 - 2 * s**3), omega * (6 * s - 6 * s**2) / ramp

        tau = np.clip(tau, 0.0, total)
        phase, rate, accel = up(tau)
        cruise = (tau > ramp) & (tau < total - ramp)
        phase = np.where(cruise, omega * (tau - 0.5 * ramp), phase)
        rate = np.where(cruise, omega, rate)
        accel = np.where(cruise, 0.0, accel)
        down = tau >= total - ramp
        d_phase, d_rate, d_accel = up(total - tau)
        phase = np.where(down, 2.0 * math.pi * self.laps - d_phase, phase)
        rate = np.where(down, d_rate, rate)
        accel = np.where(down, -d_accel, accel)
        return phase, rate, accel

    def at(self, tau):
        a = 0.5 * self.size
        phi, rate, accel = self._phase(np.asarray(tau, dtype=np.float64))
        zeros = np.zeros_like(phi)
        # NED: north = (a/2)·sin 2φ, east = a·sin φ.
        position = np.stack([0.5 * a * np.sin(2 * phi), a * np.sin(phi), zeros], axis=1) + self.centre
        velocity = np.stack([a * np.cos(2 * phi) * rate, a * np.cos(phi) * rate, zeros], axis=1)
        acceleration = np.stack([
            -2 * a * np.sin(2 * phi) * rate**2 + a * np.cos(2 * phi) * accel,
            -a * np.sin(phi) * rate**2 + a * np.cos(phi) * accel,
            zeros,
        ], axis=1)
        return position, velocity, acceleration


class ReferenceTrajectory:
    """Legs flown one after the other from ``start_time`` [s], facing ``yaw`` [rad, NED].

    Before the start it reads the first point, after the end the last one, at rest.
    """

    def __init__(self, legs: list[Leg], start_time: float, yaw: float, name: str = "reference"):
        if not legs:
            raise ValueError(f"{name}: a reference needs at least one leg")
        self.legs = list(legs)
        self.start_time = float(start_time)
        self.yaw = float(yaw)
        self.name = name
        self._starts = np.cumsum([0.0] + [leg.duration for leg in self.legs])

    @property
    def duration(self) -> float:
        """Sim time from the start to the last point [s]."""
        return float(self._starts[-1])

    @property
    def end_time(self) -> float:
        return self.start_time + self.duration

    def sample(self, times) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions, velocities and accelerations, each (n, 3), at sim ``times`` [s] (array-like)."""
        t = np.atleast_1d(np.asarray(times, dtype=np.float64)) - self.start_time
        t = np.clip(t, 0.0, self.duration)
        position, velocity, acceleration = (np.zeros((len(t), 3)) for _ in range(3))
        index = np.clip(np.searchsorted(self._starts, t, side="right") - 1, 0, len(self.legs) - 1)
        for i, leg in enumerate(self.legs):
            mask = index == i
            if mask.any():
                p, v, a = leg.at(t[mask] - self._starts[i])
                position[mask], velocity[mask], acceleration[mask] = p, v, a
        return position, velocity, acceleration

    def at(self, time: float) -> ReferencePoint:
        p, v, a = self.sample([time])
        return ReferencePoint(p[0], v[0], a[0], self.yaw, 0.0)


def figure_eight(start, yaw: float, start_time: float, *, size: float, height: float, period: float,
                 laps: int = 2, climb_speed: float = 0.5, hold_time: float = 1.0) -> ReferenceTrajectory:
    """Climb ``height`` [m] above ``start`` [m, NED] at ``climb_speed`` [m/s] on average, hold ``hold_time`` [s], fly the laps."""
    start = np.asarray(start, dtype=np.float64)
    centre = start + np.array([0.0, 0.0, -height])
    legs: list[Leg] = [MinimumJerkLeg(start, centre, height / climb_speed)]
    if hold_time > 0.0:
        legs.append(MinimumJerkLeg(centre, centre, hold_time))
    legs.append(FigureEightLeg(centre, size, period, int(laps)))
    return ReferenceTrajectory(legs, start_time, yaw, "figure-eight")


def waypoints(start, yaw: float, start_time: float, points, *, speed: float, dwell: float = 0.0) -> ReferenceTrajectory:
    """Minimum-jerk legs from ``start`` through each of ``points`` [m, NED] at ``speed`` [m/s] on average, resting ``dwell`` [s] at each."""
    legs: list[Leg] = []
    here = np.asarray(start, dtype=np.float64)
    for point in points:
        point = np.asarray(point, dtype=np.float64)
        distance = float(np.linalg.norm(point - here))
        if distance > 0.0:
            legs.append(MinimumJerkLeg(here, point, distance / speed))
        if dwell > 0.0:
            legs.append(MinimumJerkLeg(point, point, dwell))
        here = point
    return ReferenceTrajectory(legs, start_time, yaw, "waypoints")


__all__ = ["FigureEightLeg", "MinimumJerkLeg", "ReferencePoint", "ReferenceTrajectory", "figure_eight", "waypoints"]
