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
``NexusWaypointsAPI`` (points, speed, dwell), declared in
:data:`FIGURE_EIGHT_SPEC` and :data:`WAYPOINTS_SPEC` and built by
:meth:`FigureEightGuidance.from_prim` and :meth:`WaypointsGuidance.from_prim`.

Being a host stage, the guidance keeps the reference it planned (and
whether it has armed) in Python on the component, not as engine state: a
ring with a host stage is never snapshotted.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import warp as wp

from nexus.core import Component, Stage
from nexus.core.errors import BuildError
from nexus.core.spec import Input, Output, Param, Spec, non_negative, positive
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.profile import heading_of
from nexus.guidance.reference import ReferenceTrajectory, figure_eight, waypoints
from nexus.guidance.setpoint import Setpoint
from nexus.schemas.reader import where

#: Scene API schemas a tracking guidance is built from.
TRACKING_APIS = ("NexusFigureEightAPI", "NexusWaypointsAPI")

#: plan(start [m, NED], yaw [rad], start time [s]) -> the reference.
Planner = Callable[[np.ndarray, float, float], ReferenceTrajectory]

#: What a tracking stage reads and writes, whichever shape it plans.
TRACKING_INPUTS = (Input("estimate", PoseTwist, doc="Where the vehicle rests at the start: the reference starts there"),
                   Input("time", wp.float64))
TRACKING_OUTPUTS = (
    Output("setpoint", Setpoint, recorded=True, doc="The reference's current point: position [m, NED], heading [rad]"),
    Output("reference", ReferenceTrajectory, shape=None, doc="The whole reference, written once at start-up (host)"),
    Output("armed", wp.int32, recorded=True, doc="1 from the start"),
)




FIGURE_EIGHT_SPEC = Spec(
    name="FigureEight",
    schema="NexusFigureEightAPI",
    noun="tracking",
    doc="A figure-eight for the tracking guidance: climb nexus:height above the start, hold, then fly nexus:laps "
        "laps of a lemniscate of Gerono nexus:size wide along the scene's x (east) and half that along y (north), "
        "one lap per nexus:period; the speed ramps up over the first half period and down over the last, and the "
        "run ends at the centre.",
    params=(
        positive("size", "nexus:size", 2.0, "m", "Full width of the figure-eight along x; its depth along y is half of it"),
        positive("height", "nexus:height", 2.0, "m", "Height of the figure-eight above the start"),
        positive("period", "nexus:period", 8.0, "s", "Time of one lap at full speed"),
        Param("laps", "nexus:laps", "int", 2, "-", "Number of laps", low=1),
        positive("climb_speed", "nexus:climbSpeed", 0.5, "m/s", "Average climb speed to the figure-eight's centre"),
        non_negative("hold_time", "nexus:holdTime", 1.0, "s", "Hover at the centre before the first lap"),
    ),
    inputs=TRACKING_INPUTS,
    outputs=TRACKING_OUTPUTS,
    stage="tracking",
    kind="guide",
    host=True,
)

WAYPOINTS_SPEC = Spec(
    name="Waypoints",
    schema="NexusWaypointsAPI",
    noun="tracking",
    doc="Waypoints for the tracking guidance: minimum-jerk legs from the start through each point, at rest at each, "
        "and the run ends at the last point.",
    params=(
        # Each element must be finite (the Param checks it); that there is at least one point, from_prim checks.
        Param("points", "nexus:points", "float3[]", (), "m",
              "Offsets from where the vehicle rests at the start, scene axes (x east, y north, z up); at least one"),
        positive("speed", "nexus:speed", 1.0, "m/s", "Average speed of each leg"),
        non_negative("dwell", "nexus:dwell", 0.0, "s", "Rest at each point"),
    ),
    inputs=TRACKING_INPUTS,
    outputs=TRACKING_OUTPUTS,
    stage="tracking",
    kind="guide",
    host=True,
)


class TrackingGuidance(Component):
    """Writes ``reference`` once, ``setpoint`` (the current point) each tick and ``armed``; ends the run after the last point."""

    is_guidance = True

    def __init__(self, name: str, plan: Planner):
        super().__init__(name)
        self.plan = plan
        self.reference: ReferenceTrajectory | None = None

    def stages(self) -> list[Stage]:
        return [
            Stage(
                "tracking", "guide", self.run, host=True, start=self._start,
                reads=tuple(port.read(self) for port in TRACKING_INPUTS),
                writes=tuple(port.write(self) for port in TRACKING_OUTPUTS),
            )
        ]

    def _start(self, io) -> None:
        first = io["estimate"].read()
        start = np.array([first.position[0], first.position[1], first.position[2]], dtype=np.float64)
        self.reference = self.plan(start, heading_of(first.attitude), float(io["time"].read()))
        io["reference"].write(self.reference)
        io["armed"].write(1)

    def run(self, io) -> None:
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


class FigureEightGuidance(TrackingGuidance):
    """Tracking guidance flying a figure-eight (``NexusFigureEightAPI``)."""

    spec = FIGURE_EIGHT_SPEC

    @classmethod
    def from_prim(cls, prim, values, ctx) -> FigureEightGuidance:
        """The guidance for a scene prim; ``values`` are its checked parameters (sizes [m], times [s])."""

        def plan(start, yaw, time):
            return figure_eight(start, yaw, time, **values)

        return cls(str(prim.GetPath()), plan)


def _enu_to_ned(offset) -> np.ndarray:
    """A scene offset (x east, y north, z up) [m] in NED."""
    return np.array([float(offset[1]), float(offset[0]), -float(offset[2])])


class WaypointsGuidance(TrackingGuidance):
    """Tracking guidance through waypoints (``NexusWaypointsAPI``)."""

    spec = WAYPOINTS_SPEC

    @classmethod
    def from_prim(cls, prim, values, ctx) -> WaypointsGuidance:
        """The guidance for a scene prim. Offsets are in the scene's axes (x east, y north, z up) from where the
        vehicle rests at the start; ``ctx.path`` is the scene file, which errors name."""
        here = where(prim, WAYPOINTS_SPEC, ctx.path)
        if not values["points"]:
            raise BuildError(f"{here}: nexus:points is empty; author float3[] nexus:points = [(0, 0, 2), ...] "
                             "(offsets [m] from the start, x east, y north, z up)")
        offsets = [_enu_to_ned(p) for p in values["points"]]
        speed, dwell = values["speed"], values["dwell"]
        if all(np.linalg.norm(o) == 0.0 for o in offsets) and dwell == 0.0:
            raise BuildError(f"{here}: nexus:points never leaves the start and nexus:dwell is 0: nothing to fly")

        def plan(start, yaw, time):
            return waypoints(start, yaw, time, [start + o for o in offsets], speed=speed, dwell=dwell)

        return cls(str(prim.GetPath()), plan)


__all__ = ["FIGURE_EIGHT_SPEC", "TRACKING_APIS", "WAYPOINTS_SPEC", "FigureEightGuidance", "TrackingGuidance",
           "WaypointsGuidance"]
