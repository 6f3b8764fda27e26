"""Several vehicles in one world: where each starts, and whether they can touch.

A fleet of ``vehicles`` copies of one vehicle file flies in every world. The
plant lays them out as slots, world after world and vehicle after vehicle
(slot ``s`` is vehicle ``s % vehicles`` of world ``s // vehicles``), each slot
with the index spaces a world of one vehicle has: every stage serves slots as
it serves worlds, in one launch, and one vehicle per world is the run it was.

The formation is a line: vehicle ``k`` starts ``k x spacing`` east of where the
file puts the vehicle [m, ENU], so vehicle ``k``'s place depends on ``k`` alone
(a one-vehicle run of it, ``first_vehicle = k``, starts where it starts in the
fleet). A list of offsets ([north, east] [m] from the file's place, and a
start heading [deg], one per vehicle: ``nexus run --offset N,E[,YAW]`` once per
vehicle) takes the line's place. A heading turns the vehicle about the vertical
through its base, clockwise seen from above (a compass's sense, as the drawn
``start_yaw``), from the file's heading. Each vehicle's NED origin is where it
settles, as PX4 takes its local origin where it starts: a mission flown from
its own origin flies the leader's path plus the vehicle's offset, at the
vehicle's own heading.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import newton
import numpy as np

from nexus.core.errors import BuildError
from nexus.plant.frames import quat_multiply_np

#: ``--spacing``'s default [m]: a little more than the Astro Max's 1.1 m across its rotor discs.
DEFAULT_SPACING = 2.0


@dataclass(frozen=True)
class FleetLayout:
    """How many vehicles fly in each world, how far apart they start, and whether they collide."""

    #: Vehicles in each world.
    vehicles: int = 1
    #: Distance between neighbours of the line [m].
    spacing: float = DEFAULT_SPACING
    #: The vehicles of a world share one Newton world and collide (False: each has a Newton world of its own).
    contact: bool = True
    #: The index of this run's vehicle 0 in its world (a vehicle of a fleet flown alone keeps its place).
    first_vehicle: int = 0
    #: Each vehicle's start (north [m], east [m], heading [deg]) from the file's place and heading, in the line's
    #: stead (None: the line, every vehicle at the file's heading). A pair (north, east) starts at heading 0.
    offsets: tuple[tuple[float, ...], ...] | None = None

    def __post_init__(self):
        if isinstance(self.vehicles, bool) or not isinstance(self.vehicles, int) or self.vehicles < 1:
            raise BuildError(f"--vehicles {self.vehicles}: a world holds at least one vehicle; give a whole number")
        if not math.isfinite(self.spacing) or self.spacing <= 0.0:
            raise BuildError(f"--spacing {self.spacing}: give the distance between neighbouring vehicles in metres, "
                             "above 0")
        if isinstance(self.first_vehicle, bool) or not isinstance(self.first_vehicle, int) or self.first_vehicle < 0:
            raise BuildError(f"first_vehicle {self.first_vehicle}: a vehicle index is a whole number, 0 or more")
        if self.offsets is not None and len(self.offsets) < self.first_vehicle + self.vehicles:
            raise BuildError(f"--offset: {len(self.offsets)} offset{'s' * (len(self.offsets) != 1)} for "
                             f"{self.first_vehicle + self.vehicles} vehicles a world; give one --offset NORTH,EAST "
                             "per vehicle, vehicle 0's first")
        for place in self.offsets or ():
            if len(place) == 3:
                check_heading(place[2], f"--offset {','.join(f'{v:g}' for v in place)}")

    @property
    def shared(self) -> bool:
        """Whether the vehicles of a world share one Newton world (several of them, with contact)."""
        return self.vehicles > 1 and self.contact

    def offset(self, vehicle: int) -> np.ndarray:
        """Where vehicle ``vehicle`` (its index in the world) starts from the file's place [m, ENU]."""
        if self.offsets is not None:
            north, east = self.offsets[vehicle][:2]
            return np.array([float(east), float(north), 0.0])
        return np.array([float(vehicle) * self.spacing, 0.0, 0.0])

    def heading(self, vehicle: int) -> float:
        """How far vehicle ``vehicle`` starts turned from the file's heading [deg], clockwise seen from above."""
        if self.offsets is not None and len(self.offsets[vehicle]) > 2:
            return float(self.offsets[vehicle][2])
        return 0.0

    def slot_offsets(self, slots: int) -> np.ndarray:
        """Each slot's start offset [m, ENU], shape (slots, 3)."""
        return np.array([self.offset(self.first_vehicle + s % self.vehicles) for s in range(slots)])

    def slot_headings(self, slots: int) -> np.ndarray:
        """Each slot's start heading from the file's [deg, clockwise seen from above], shape (slots,)."""
        return np.array([self.heading(self.first_vehicle + s % self.vehicles) for s in range(slots)])


#: The largest start heading a vehicle takes [deg], either way (as the drawn ``start_yaw``).
MAX_HEADING = 360.0


def check_heading(degrees: float, where: str) -> float:
    """``degrees`` when it is a finite heading within ±360; else a one-line :class:`BuildError` naming ``where``."""
    if not math.isfinite(degrees) or abs(degrees) > MAX_HEADING:
        raise BuildError(f"{where}: the start heading {degrees:g} is not a heading; give YAW in degrees, clockwise "
                         f"seen from above, from -{MAX_HEADING:g} to {MAX_HEADING:g}")
    return degrees


def yaw_quaternion(degrees: float) -> np.ndarray:
    """The turn of a heading ``degrees`` clockwise seen from above (NED yaw), as an ENU quaternion (x, y, z, w):
    -``degrees`` about world +z."""
    half = -math.radians(degrees) / 2.0
    return np.array([0.0, 0.0, math.sin(half), math.cos(half)])


def vehicle_radius(model: newton.Model, body_q: np.ndarray, bodies: int, base: int) -> float:
    """How far the colliding shapes of slot 0's vehicle reach from its base, across the ground [m].

    A shape's reach is its centre's horizontal distance from the base plus its largest half-extent (a box's
    half size, a sphere's radius, a capsule's radius plus half length): an upper bound for boxes and spheres.
    """
    shape_body, flags = model.shape_body.numpy(), model.shape_flags.numpy()
    xform, scale = model.shape_transform.numpy(), model.shape_scale.numpy()
    collides = (flags & int(newton.ShapeFlags.COLLIDE_SHAPES)) != 0
    reach = 0.0
    for s in np.flatnonzero(collides & (shape_body >= 0) & (shape_body < bodies)):
        pose = body_q[shape_body[s]]
        centre = _rotate(pose[3:7], xform[s][:3]) + pose[:3]
        reach = max(reach, float(np.hypot(*(centre[:2] - body_q[base][:2]))) + float(np.max(np.abs(scale[s]))))
    return reach


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``v`` turned by the unit quaternion ``q`` (x, y, z, w)."""
    u, w = np.asarray(q[:3], dtype=np.float64), float(q[3])
    v = np.asarray(v, dtype=np.float64)
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


def _refuse_overlap(layout: FleetLayout, radius: float, path: str) -> None:
    """Refuse offsets that put two vehicles' shapes (each reaching ``radius`` [m]) over each other at the start."""
    first = layout.first_vehicle
    for a in range(first, first + layout.vehicles):
        for b in range(a + 1, first + layout.vehicles):
            apart = float(np.linalg.norm(layout.offset(a)[:2] - layout.offset(b)[:2]))
            if apart <= 2.0 * radius:
                raise BuildError(f"{path}: --offset puts vehicles {a} and {b} {apart:.3f} m apart at the start, "
                                 f"overlapping: the vehicle's shapes reach {radius:.3f} m from its base; move them "
                                 f"more than {2.0 * radius:.3f} m apart")


def place_fleet(plant, layout: FleetLayout, path: str) -> None:
    """Move every slot's vehicle to its place in the line and turn it to its start heading (model and state),
    refusing vehicles that overlap.

    ``path`` (the vehicle file) names what is at fault. A one-vehicle run at index 0 moves nothing. The overlap
    test bounds each vehicle by a circle about its base, which no heading changes.
    """
    offsets = layout.slot_offsets(plant.worlds)
    headings = layout.slot_headings(plant.worlds)
    # Each vehicle's place from vehicle 0's, where its GPS puts it on the Earth (zero for vehicle 0).
    plant.home_offset = (offsets - layout.offset(0)).astype(np.float32)
    if not offsets.any() and not headings.any():
        return
    if layout.vehicles > 1:
        body_q = plant.state.body_q.numpy()
        radius = vehicle_radius(plant.model, body_q, plant.bodies_per_world, plant.base)
        if layout.offsets is None and layout.spacing <= 2.0 * radius:
            raise BuildError(f"{path}: --spacing {layout.spacing:g} m puts the {layout.vehicles} vehicles of a world "
                             f"overlapping at the start: the vehicle's shapes reach {radius:.3f} m from its base; "
                             f"give a spacing above {2.0 * radius:.3f} m")
        if layout.offsets is not None:
            _refuse_overlap(layout, radius, path)
    for q in (plant.model.joint_q, plant.state.joint_q):
        values = q.numpy()
        for slot, offset in enumerate(offsets):
            coord = plant.base_coord + slot * plant.coords_per_world
            values[coord : coord + 3] += offset
            if headings[slot] != 0.0:  # a vehicle at the file's heading keeps its bits
                base = values[coord + 3 : coord + 7].astype(np.float64)
                turned = quat_multiply_np(yaw_quaternion(headings[slot]), base)
                values[coord + 3 : coord + 7] = turned / np.linalg.norm(turned)
        q.assign(values)
    newton.eval_fk(plant.model, plant.state.joint_q, plant.state.joint_qd, plant.state)
