"""A constant wind force on each world's base body (``--vary wind_x``, ``wind_y``, ``wind_z``).

A force stage: it adds each world's drawn force [N, world ENU] to the base
body's applied wrench, after the clear stage zeroed it and beside the
propellers. It declares the drawn parameters it takes beside its class
(:func:`nexus.worlds.drawn.draws`), and its ``from_draws`` puts it in the ring
only when some world draws a wind, so a run without one keeps its bits.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core import Component, Stage
from nexus.plant.plant import Plant
from nexus.vocab.drawn import Drawn, abs_at_most, draws

#: The drawn force, in axis order.
WIND_DRAWS = tuple(Drawn(f"wind_{axis}", "N", f"constant force on the base body along {axis}, world ENU",
                         "|value| <= 100", accepts=abs_at_most(100.0)) for axis in "xyz")


@wp.kernel
def add_wind(force: wp.array(dtype=wp.vec3), base: wp.int32, bodies_per_world: wp.int32,
             body_f: wp.array(dtype=wp.spatial_vector)):
    world = wp.tid()
    body = base + world * bodies_per_world
    body_f[body] = body_f[body] + wp.spatial_vector(force[world], wp.vec3(0.0))


@draws(*WIND_DRAWS)
class Wind(Component):
    """Adds each world's constant wind force to its base body every tick."""

    def __init__(self, plant: Plant, name: str = "/plant/wind"):
        super().__init__(name)
        self.plant = plant
        self.force = None

    @classmethod
    def from_draws(cls, ring) -> Wind:
        """The wind of a ring where some world draws one (:func:`nexus.worlds.drawn.take_draws`)."""
        return cls(ring.plant)

    def stages(self) -> list[Stage]:
        return [Stage("wind", "force", self._run)]

    def prepare(self, ctx) -> None:
        rows = np.stack([ctx.varied(name, 0.0) for name in (d.name for d in WIND_DRAWS)], axis=1).astype(np.float32)
        self.force = wp.array(rows, dtype=wp.vec3, device=ctx.device)

    def _run(self, io) -> None:
        plant = self.plant
        wp.launch(add_wind, plant.worlds, inputs=[self.force, plant.base, plant.bodies_per_world],
                  outputs=[plant.state.body_f], device=io.device)
