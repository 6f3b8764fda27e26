"""A ring for the air's tests: the clock, a body held where the test says in every world, and the wind field."""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core import Component, Loop, Stage, Write
from nexus.plant.body_state import BodyState


@wp.kernel
def hold_body(position: wp.vec3, velocity: wp.vec3, out: wp.array(dtype=BodyState)):
    world = wp.tid()
    state = BodyState()
    state.pose = wp.transform(position, wp.quat_identity())
    state.velocity = velocity
    out[world] = state


class HeldBody(Component):
    """Publishes ``body/base`` at ``position`` [m, ENU] moving at ``velocity`` [m/s], in every world."""

    def __init__(self, position=(0.0, 0.0, 10.0), velocity=(0.0, 0.0, 0.0)):
        super().__init__("/test/held_body")
        self.position, self.velocity = wp.vec3(*position), wp.vec3(*velocity)

    def stages(self) -> list[Stage]:
        return [Stage("body", "state", self._run, writes=(Write("body/base", BodyState, (1,)),))]

    def _run(self, io) -> None:
        out = io["body/base"]
        wp.launch(hold_body, out.shape[0], inputs=[self.position, self.velocity], outputs=[out], device=io.device)


@wp.kernel
def tape_wind(wind: wp.array(dtype=wp.vec3), tick: wp.array(dtype=wp.int64), history: wp.array2d(dtype=wp.vec3)):
    world = wp.tid()
    row = wp.int32(tick[world]) - 1
    if row < history.shape[0]:
        history[row, world] = wind[world]


class WindTape(Component):
    """Keeps every tick's ``wind`` of every world on the device (row ``tick - 1``), inside the graph."""

    def __init__(self, ticks: int, worlds: int):
        super().__init__("/test/wind_tape")
        self.history = wp.zeros((ticks, worlds), dtype=wp.vec3, device="cpu")

    def stages(self) -> list[Stage]:
        from nexus.core import Read

        return [Stage("tape", "record", self._run, reads=(Read("wind", wp.vec3, (1,)), Read("tick", wp.int64, (1,))))]

    def _run(self, io) -> None:
        wp.launch(tape_wind, self.history.shape[1], inputs=[io["wind"], io["tick"]], outputs=[self.history],
                  device=io.device)


def wind_series(field, ticks: int, *, worlds: int = 1, seed: int = 0, position=(0.0, 0.0, 10.0),
                velocity=(0.0, 0.0, 0.0), first_world: int = 0, tick_hz: float = 250.0,
                mode: str = "captured", variation=()) -> np.ndarray:
    """Every tick's wind [m/s, ENU] of every world: shape (ticks, worlds, 3). The body is published after the
    wind field in the ring, so tick 1 sees it at the origin; the rows from tick 2 on see it where it is held.
    ``variation``: each world's drawn values (a variation file's draw), as a run hands them to the ring."""
    tape = WindTape(ticks, worlds)
    loop = Loop([HeldBody(position, velocity), field, tape], device="cpu", worlds=worlds, seed=seed,
                first_world=first_world, tick_hz=tick_hz, mode=mode, variation=variation).build()
    while loop.ticks < ticks:
        loop.advance(ticks - loop.ticks)
    return tape.history.numpy().astype(np.float64)
