"""A fleet's drawn values: each vehicle of a world draws its own, but the world's air and place are shared.

A variation file draws per world (:mod:`nexus.worlds.drawn`). With several vehicles in a world
(``nexus run --vehicles K``) each vehicle draws the file's parameters from its own branch, keyed by (seed,
world, vehicle): vehicle 0 is the world's draw itself (so vehicle 0 of any fleet, and a one-vehicle run, keep
their values), and vehicle ``k`` > 0 draws on the branch ``vehicle/<k>`` of the run's tree, whatever the count
of vehicles. Two kinds of values stay the world's, one for all its vehicles:

* the air (:data:`WORLD_SCOPED` owners: the mean wind, its turbulence and the drawn gust): one air per world;
* the start offset and heading (the placement's ``start_*``): the formation moves as a whole, so its vehicles
  never draw into each other.

A value the world holds that is not its draw (a scenario's fault or start, a replay's given values) is the
world's for every vehicle.
"""

from __future__ import annotations

from collections.abc import Sequence

from nexus.core.rng import RngTree
from nexus.worlds.owners import owner_of

#: Owners whose drawn values belong to the world, not to one of its vehicles: its air.
WORLD_SCOPED = ("nexus.air.wind_field", "nexus.air.gust")
#: The placement's start offset and heading: the formation's, moved as a whole.
WORLD_PLACE = ("start_x", "start_y", "start_yaw")


def world_scoped(name: str) -> bool:
    """Whether drawn parameter ``name`` is the world's (its air, its place), shared by its vehicles."""
    owner = owner_of(name)
    return name in WORLD_PLACE or (owner is not None and owner.module in WORLD_SCOPED)


def vehicle_branch(seed: int, vehicle: int) -> RngTree:
    """The tree vehicle ``vehicle`` of a world draws its variation from: vehicle 0's is the run's own."""
    return RngTree(seed).vehicle(vehicle)


def slot_values(world_values: Sequence[dict], vehicles: int, *, variation=None, seed: int = 0,
                first_world: int = 0, first_vehicle: int = 0) -> list[dict]:
    """Each slot's values (vehicle after vehicle, world after world) from each world's ``world_values``.

    ``variation`` (a loaded variation file, or None) draws each vehicle's own values: a name the world drew
    itself (its value is its draw on the run's tree) and that is not :func:`world_scoped` takes the vehicle's
    draw; every other value is the world's.
    """
    if vehicles == 1 and first_vehicle == 0:
        return [dict(values) for values in world_values]
    out = []
    for index, values in enumerate(world_values):
        world = first_world + index
        drawn = variation.draw_world(RngTree(seed), world) if variation is not None else {}
        for k in range(vehicles):
            vehicle = first_vehicle + k
            own = dict(values)
            if variation is not None and vehicle > 0:
                mine = variation.draw_world(vehicle_branch(seed, vehicle), world)
                for name, value in mine.items():
                    if not world_scoped(name) and name in values and _same(values[name], drawn.get(name)):
                        own[name] = value
            out.append(own)
    return out


def _same(a, b) -> bool:
    """Whether two drawn values are the same draw (a list per rotor, a number or a name)."""
    return a == b or (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and list(a) == list(b))
