"""What a component may use while it prepares: device, tick length, random streams."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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
