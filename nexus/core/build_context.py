"""What a component may use while it prepares: device, tick length, random streams."""

from __future__ import annotations

from dataclasses import dataclass

from nexus.core.rng import RngTree


@dataclass(frozen=True)
class BuildContext:
    device: str
    #: One control tick [ns]; ``dt`` is the same in seconds.
    dt_ns: int
    rng: RngTree

    @property
    def dt(self) -> float:
        """One control tick [s]."""
        return self.dt_ns * 1e-9
