"""An open-loop controller: holds a controls row set from the host.

Its device stage copies the held row into ``controls`` every tick, inside the
graph, so a test, a benchmark or a replay can change the command between
ticks with :meth:`HoldControls.set` and the captured graph picks it up.
"""

from __future__ import annotations

import numpy as np
import warp as wp

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
        self.held = wp.array(self._pending[np.newaxis], dtype=wp.float32, device=ctx.device)

    def set(self, values) -> None:
        """Hold ``values`` (one per channel; missing channels are 0) from the next tick on."""
        row = np.zeros(self.width, dtype=np.float32)
        values = np.asarray(values, dtype=np.float32).ravel()
        if values.size > self.width:
            raise ValueError(f"{self.name} holds {self.width} controls; got {values.size}")
        row[: values.size] = values
        self._pending = row
        if self.held is not None:
            self.held.assign(row[np.newaxis])

    def _run(self, io) -> None:
        wp.copy(io["controls"], self.held)
