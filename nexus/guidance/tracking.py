"""Tracking guidance: plan a ReferenceTrajectory at start-up, hand it on, end the run after its last point.

A host stage of kind ``guide``. Its ``start`` hook (run once by the start-up,
before the first tick) reads the first estimate, plans the reference from
where the vehicle rests and the way it faces, writes it to the host signal
``reference`` and arms, so a tracking controller (the MPC) has the whole
reference from its first solve. Every tick it also writes the reference's
current point as the device ``setpoint``: a PID flight follows the same
reference through it (the PID feeds the point's change forward), and the
record keeps it. Once the tick's sim time passes the reference's end it calls
``io.finish()``: the run ends "done" with the vehicle at the last point, in
the air.

Scene prims: ``NexusFigureEightAPI`` (size, height, period, laps) and
``NexusWaypointsAPI`` (points, speed, dwell); see :func:`build_tracking`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage, Write
from nexus.core.errors import BuildError
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint
from nexus.guidance.profile import heading_of
from nexus.guidance.reference import ReferenceTrajectory, figure_eight, waypoints

#: Scene API schemas a tracking guidance is built from.
TRACKING_APIS = ("NexusFigureEightAPI", "NexusWaypointsAPI")

#: plan(start [m, NED], yaw [rad], start time [s]) -> the reference.
Planner = Callable[[np.ndarray, float, float], ReferenceTrajectory]


class TrackingGuidance(Component):
    """Writes ``reference`` once, ``setpoint`` (the current point) each tick and ``armed``; ends the run after the last point."""

    is_guidance = True

    def __init__(self, name: str, plan: Planner):
        super().__init__(name)
        self.plan = plan
        self.reference: ReferenceTrajectory | None = None
        self._armed = None

    def stages(self) -> list[Stage]:
        return [
            Stage(
                "tracking", "guide", self._run, host=True, start=self._start,
                reads=(Read("estimate", PoseTwist, (1,)), Read("time", wp.float64, (1,))),
                writes=(Write("setpoint", Setpoint, (1,)), Write("reference", ReferenceTrajectory),
                        Write("armed", wp.int32, (1,))),
            )
        ]

    def _start(self, io) -> None:
        first = io["estimate"].read()
        start = np.array([first.position[0], first.position[1], first.position[2]], dtype=np.float64)
        self.reference = self.plan(start, heading_of(first.attitude), float(io["time"].read()))
        io["reference"].write(self.reference)
        io["armed"].write(1)

    def _run(self, io) -> None:
        if self.reference is None:  # a ring run without the start-up
            self._start(io)
        now = float(io["time"].read())
        point = self.reference.at(now)
        setpoint = Setpoint()
        setpoint.position = wp.vec3(*[float(x) for x in point.position])
        setpoint.yaw = float(point.yaw)
        io["setpoint"].write(setpoint)
        if now >= self.reference.end_time:
            io.finish()


def _value(prim, name: str):
    attribute = prim.GetAttribute(name)
    return attribute.Get() if attribute else None


def _positive(prim, name: str, where: str) -> float:
    value = float(_value(prim, name))
    if not (value > 0.0 and math.isfinite(value)):
        raise BuildError(f"{where}: {name} must be positive and finite, got {value}; set it on the prim")
    return value


def _not_negative(prim, name: str, where: str) -> float:
    value = float(_value(prim, name))
    if not (value >= 0.0 and math.isfinite(value)):
        raise BuildError(f"{where}: {name} must be 0 or positive and finite, got {value}; set it on the prim")
    return value


def _enu_to_ned(offset) -> np.ndarray:
    """A scene offset (x east, y north, z up) [m] in NED."""
    return np.array([float(offset[1]), float(offset[0]), -float(offset[2])])


def build_tracking(prim, ctx) -> TrackingGuidance:
    """The guidance for a scene prim applying ``NexusFigureEightAPI`` or ``NexusWaypointsAPI``.

    Offsets are in the scene's axes (x east, y north, z up) from where the
    vehicle rests at the start. ``ctx`` is :class:`nexus.assembly.PrimContext`.
    """
    path = str(prim.GetPath())
    scene = getattr(getattr(ctx, "plant", None), "scene_path", None) or getattr(ctx, "path", "")
    where = f"{scene}: tracking prim {path}"
    if prim.HasAPI("NexusFigureEightAPI"):
        size = _positive(prim, "nexus:size", where)
        height = _positive(prim, "nexus:height", where)
        period = _positive(prim, "nexus:period", where)
        climb_speed = _positive(prim, "nexus:climbSpeed", where)
        hold_time = _not_negative(prim, "nexus:holdTime", where)
        laps = int(_value(prim, "nexus:laps"))
        if laps < 1:
            raise BuildError(f"{where}: nexus:laps must be at least 1, got {laps}")

        def plan(start, yaw, time):
            return figure_eight(start, yaw, time, size=size, height=height, period=period, laps=laps,
                                climb_speed=climb_speed, hold_time=hold_time)

        return TrackingGuidance(path, plan)
    points = _value(prim, "nexus:points")
    if not points:
        raise BuildError(f"{where}: nexus:points is empty; author float3[] nexus:points = [(0, 0, 2), ...] "
                         "(offsets [m] from the start, x east, y north, z up)")
    speed = _positive(prim, "nexus:speed", where)
    dwell = _not_negative(prim, "nexus:dwell", where)
    offsets = [_enu_to_ned(p) for p in points]
    if not all(np.isfinite(o).all() for o in offsets):
        raise BuildError(f"{where}: nexus:points holds a value that is not finite")
    if all(np.linalg.norm(o) == 0.0 for o in offsets) and dwell == 0.0:
        raise BuildError(f"{where}: nexus:points never leaves the start and nexus:dwell is 0: nothing to fly")

    def plan(start, yaw, time):
        return waypoints(start, yaw, time, [start + o for o in offsets], speed=speed, dwell=dwell)

    return TrackingGuidance(path, plan)


__all__ = ["TRACKING_APIS", "TrackingGuidance", "build_tracking"]
