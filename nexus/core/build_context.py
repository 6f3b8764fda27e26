"""What a component may use while it prepares: device, tick length, random streams."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from nexus.core.rng import RngTree

if TYPE_CHECKING:
    from nexus.core.component import Component
    from nexus.core.stage import Stage
    from nexus.core.stage_io import StageIO
    from nexus.core.state import StateStore


@dataclass(frozen=True)
class BuildContext:
    device: str
    #: One control tick [ns]; ``dt`` is the same in seconds.
    dt_ns: int
    rng: RngTree
    #: Every component of the ring, in declaration order (the clock first), so
    #: one component can gather what the others declare, such as solver observables.
    components: tuple["Component", ...] = field(default=())
    #: Every stage of the ring with the buffers it will run on, so a component can lay out
    #: device data that points at them (e.g. the record's table of tap addresses) before capture.
    stage_ios: tuple[tuple["Stage", "StageIO"], ...] = field(default=())
    #: The engine's store of every component's declared state.
    states: "StateStore | None" = None
    #: Vehicle slots of the run: the leading axis of every device signal and state array. With several
    #: vehicles in a world (``vehicles`` > 1) slot ``s`` is vehicle ``s % vehicles`` of world ``s // vehicles``.
    worlds: int = 1
    #: The run-wide index of this ring's world 0 (``nexus run --world-of RUN:i`` flies world i alone).
    first_world: int = 0
    #: Each world's drawn values (``--vary``): parameter name -> value, one dict per world.
    variation: Sequence[dict] = field(default=())
    #: Vehicles in each world (1: the axis is the worlds themselves).
    vehicles: int = 1
    #: The index of this ring's vehicle 0 within its world (a vehicle flown alone keeps its index's random tree).
    first_vehicle: int = 0
    #: The world a per-world context stands for (:meth:`for_world`); None for the whole ring.
    world: int | None = None

    def world_rng(self, world: int) -> RngTree:
        """The random tree of this ring's slot ``world``: its world's run-wide index and its vehicle's index decide
        it (:meth:`RngTree.vehicle`), so vehicle ``k`` of a world draws what a one-vehicle run of it draws."""
        world, vehicle = divmod(int(world), self.vehicles)
        return self.rng.world(self.first_world + world).vehicle(self.first_vehicle + vehicle)

    def values_of(self, world: int) -> dict:
        """World ``world``'s drawn values (empty without a variation file)."""
        return dict(self.variation[world]) if world < len(self.variation) else {}

    @property
    def world_values(self) -> dict:
        """The drawn values of the world this context stands for (see :meth:`for_world`)."""
        return self.values_of(self.world or 0)

    def for_world(self, world: int) -> "BuildContext":
        """This context as seen by one world: its random tree as ``rng`` and its values as ``world_values``."""
        return replace(self, rng=self.world_rng(world), world=int(world))

    def varied(self, name: str, default: float) -> np.ndarray:
        """Drawn parameter ``name`` of every world, ``default`` where a world has none [float64, (worlds,)]."""
        return np.array([self.values_of(w).get(name, default) for w in range(self.worlds)], dtype=np.float64)

    def state_of(self, component: "Component") -> dict:
        """Name -> array of ``component``'s declared state (allocated; reset after every prepare)."""
        return self.states.of(component) if self.states is not None else {}

    def io_of(self, component: "Component", stage_name: str) -> "StageIO":
        """The buffers stage ``stage_name`` of ``component`` will run on."""
        for stage, io in self.stage_ios:
            if stage.component is component and stage.name == stage_name:
                return io
        raise KeyError(f"component '{component.name}' has no stage '{stage_name}' in this ring")

    @property
    def dt(self) -> float:
        """One control tick [s]."""
        return self.dt_ns * 1e-9
