"""A fleet's guidance: every vehicle of every world flies its own waypoint list, in one device launch.

The routes are given in the fleet's frame: [north, east, height] [m] from the vehicle file's place (where
vehicle 0 starts in a line), so that a swap or a formation is written as one picture. Each vehicle flies from
its own NED origin (where it settled, :mod:`nexus.plant.fleet`), so its route is moved by its place: in the line,
vehicle ``k`` starts ``k x spacing`` east of vehicle 0's place; with offsets, at its own. The legs are :class:`~nexus.guidance.waypoint_plan.
WaypointPlan`'s, flown by the device mission kernel: no Python runs per vehicle or per tick.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nexus.core.errors import BuildError
from nexus.guidance.mission import MissionGuidance
from nexus.guidance.profile import MissionPlan, MissionProfile
from nexus.guidance.waypoint_plan import WaypointPlan
from nexus.plant.fleet import FleetLayout


@dataclass(frozen=True)
class Route:
    """One vehicle's waypoints [north, east, height] [m, fleet frame] and how it flies them."""

    waypoints: tuple[tuple[float, float, float], ...]
    #: Average speed of the take-off and of a goto leg without ``leg_time`` [m/s].
    speed: float = 1.0
    #: Pause at each waypoint [s].
    hold: float = 0.0
    #: Every goto leg's duration [s] (None: distance / speed).
    leg_time: float | None = None
    #: The take-off's duration [s] (None: its height / speed).
    takeoff_time: float | None = None

    @classmethod
    def from_table(cls, table: dict) -> Route:
        """A route from a scenario's checked ``[[fleet.route]]`` table (keys as the fields; absent or None: default)."""
        given = {name: table[name] for name in ("speed", "hold", "leg_time", "takeoff_time")
                 if table.get(name) is not None}
        return cls(tuple(tuple(float(v) for v in point) for point in table["waypoints"]), **given)


class FleetMission(MissionGuidance):
    """Writes each vehicle's ``setpoint`` and ``armed`` from its own route; ends a world's vehicle once landed."""

    def __init__(self, routes: Sequence[Route], layout: FleetLayout, name: str = "/scene/fleet_mission",
                 profile: MissionProfile | None = None, where: str = "the fleet's routes"):
        super().__init__(name, profile)
        if len(routes) < layout.first_vehicle + layout.vehicles:
            raise BuildError(f"{where}: {len(routes)} route{'s' * (len(routes) != 1)} for "
                             f"{layout.first_vehicle + layout.vehicles} vehicles a world; give one route per vehicle "
                             "(or fly --vehicles with as many as there are routes)")
        self.routes = list(routes)
        self.layout = layout
        self.vehicles = layout.vehicles

    def prepare(self, ctx) -> None:
        super().prepare(ctx)
        if ctx.vehicles != self.layout.vehicles:
            raise BuildError(f"{self.name}: planned for {self.layout.vehicles} vehicles a world, the ring flies "
                             f"{ctx.vehicles}")

    def plan_for(self, world: int, start: np.ndarray, start_yaw: float, now: float) -> MissionPlan:
        """Slot ``world``'s vehicle's route, moved from the fleet's frame into its own (its start's)."""
        vehicle = self.layout.first_vehicle + world % self.vehicles
        route = self.routes[vehicle]
        east, north = (float(v) for v in self.layout.offset(vehicle)[:2])  # ENU
        local = [(n - north, e - east, h) for n, e, h in route.waypoints]
        return WaypointPlan(self.profile, start, start_yaw, local, speed=route.speed, hold=route.hold,
                            leg_time=route.leg_time, takeoff_time=route.takeoff_time, start_time=now)
