"""An open-loop controller: holds a controls row set from the host.

Its device stage copies the held row into ``controls`` every tick, inside the
graph, so a test, a benchmark or a replay can change the command between
ticks with :meth:`HoldControls.set` and the captured graph picks it up.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.control.registry import register
from nexus.core import Component, Stage, Write
from nexus.plant.controls import CONTROLS_WIDTH


class HoldControls(Component):
    """Writes the row given to :meth:`set` (zeros until then) to ``controls``."""

    def __init__(self, name: str = "/vehicle/controller", width: int = CONTROLS_WIDTH):
        super().__init__(name)
        self.width = width
        self.held = None
        self._pending = np.zeros(width, dtype=np.float32)

    def stages(self) -> list[Stage]:
        return [Stage("hold", "control", self._run, writes=(Write("controls", wp.float32, (1, self.width), recorded=True),))]

    def prepare(self, ctx) -> None:
        self.worlds = ctx.worlds
        self.held = wp.array(np.broadcast_to(self._rows(self._pending), (self.worlds, self.width)).copy(),
                             dtype=wp.float32, device=ctx.device)

    def _rows(self, values) -> np.ndarray:
        values = np.asarray(values, dtype=np.float32)
        rows = np.atleast_2d(values)
        if rows.shape[-1] > self.width:
            raise ValueError(f"{self.name} holds {self.width} controls; got {rows.shape[-1]}")
        out = np.zeros((rows.shape[0], self.width), dtype=np.float32)
        out[:, : rows.shape[-1]] = rows
        return out

    def set(self, values) -> None:
        """Hold ``values`` from the next tick on: one per channel (missing channels are 0) for every world,
        or one row per world."""
        rows = self._rows(values)
        self._pending = rows[0] if rows.shape[0] == 1 else rows
        if self.held is not None:
            if rows.shape[0] not in (1, self.held.shape[0]):
                raise ValueError(f"{self.name} holds controls for {self.held.shape[0]} worlds; got {rows.shape[0]} rows")
            self.held.assign(np.broadcast_to(rows, self.held.shape).copy())

    def _run(self, io) -> None:
        wp.copy(io["controls"], self.held)


def _build(prim, path: str, ctx, options) -> HoldControls:
    return HoldControls(path)


register("hold", _build, help="open loop: holds a controls row (zeros) set from the host", duration_s=10.0)
