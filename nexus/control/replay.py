"""Open-loop replay: writes a recorded stream of controls rows back, tick by tick.

Row ``tick - 1`` of the recorded table goes into ``controls`` at the
controller's place in the ring, exactly where the original controller wrote
it, so the plant sees the same commands at the same ticks. A table of many
worlds (ticks × worlds × width) gives each world its own row.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage, Write


@wp.kernel
def replay_row(rows: wp.array3d(dtype=wp.float32), tick: wp.array(dtype=wp.int64), controls: wp.array2d(dtype=wp.float32)):
    world, j = wp.tid()
    i = wp.int32(tick[world]) - 1
    if i >= 0 and i < rows.shape[0]:
        controls[world, j] = rows[i, world, j]


class ReplayControls(Component):
    """Plays back ``rows`` (ticks × width, or ticks × worlds × width; float32) into ``controls``."""

    def __init__(self, rows: np.ndarray, name: str = "/vehicle/controller"):
        super().__init__(name)
        self.rows = np.ascontiguousarray(rows, dtype=np.float32)
        if self.rows.ndim == 2:
            self.rows = self.rows[:, np.newaxis, :]
        if self.rows.ndim != 3:
            raise ValueError(f"recorded controls must be a table (ticks × [worlds ×] width), got shape {self.rows.shape}")
        self.width = self.rows.shape[2]
        self.worlds = self.rows.shape[1]
        self.table = None

    def stages(self) -> list[Stage]:
        return [Stage(
            "replay", "control", self._run,
            reads=(Read("tick", wp.int64, (1,)),),
            writes=(Write("controls", wp.float32, (1, self.width), recorded=True),),
        )]

    def prepare(self, ctx) -> None:
        if ctx.worlds != self.worlds:
            raise ValueError(f"the recorded controls hold {self.worlds} worlds; the ring flies {ctx.worlds}")
        self.table = wp.array(self.rows, dtype=wp.float32, device=ctx.device)

    def _run(self, io) -> None:
        wp.launch(replay_row, (self.worlds, self.width), inputs=[self.table, io["tick"]], outputs=[io["controls"]],
                  device=io.device)
