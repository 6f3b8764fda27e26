"""What a component may use while it prepares: device, tick length, random streams."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nexus.core.rng import RngTree

if TYPE_CHECKING:
    from nexus.core.component import Component


@dataclass(frozen=True)
class BuildContext:
    device: str
    #: One control tick [ns]; ``dt`` is the same in seconds.
    dt_ns: int
    rng: RngTree
    #: Every component of the ring, in declaration order (the clock first), so
    #: one component can gather what the others declare, such as solver observables.
    components: tuple["Component", ...] = field(default=())

    @property
    def dt(self) -> float:
        """One control tick [s]."""
        return self.dt_ns * 1e-9
