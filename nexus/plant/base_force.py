"""A constant force on each world's base body (``--vary base_force_x``, ``base_force_y``, ``base_force_z``) [N].

A force stage: it adds each world's drawn force [N, world ENU] to the base
body's applied wrench, after the clear stage zeroed it and beside the
propellers. It declares the drawn parameters it takes beside its class
(:func:`nexus.vocab.drawn.draws`), and its ``from_draws`` puts it in the ring
only when some world draws one, so a run without one keeps its bits.

It is a push, not the air: the air's wind is a velocity [m/s] felt through the
vehicle's drag (:mod:`nexus.air.wind_field`, ``wind_speed`` and
``wind_direction``). The force used to be drawn as ``wind_x``, ``wind_y``
and ``wind_z`` (a second "wind"); a file that still uses those names is told
the new one (``Drawn.formerly``).
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core import Component, Stage
from nexus.core.arrays import ArrayDecl, NamedArrays
from nexus.core.spec import Spec
from nexus.plant.plant import Plant
from nexus.vocab.drawn import Drawn, abs_at_most, draws

#: The drawn force, in axis order; each once went by ``wind_<axis>`` (a second "wind" beside the air's).
BASE_FORCE_DRAWS = tuple(Drawn(f"base_force_{axis}", "N", f"constant force on the base body along {axis}, world ENU",
                               "|value| <= 100", accepts=abs_at_most(100.0), formerly=(f"wind_{axis}",))
                         for axis in "xyz")

BASE_FORCE_SPEC = Spec(
    name="BaseForce",
    doc="A constant force on each world's base body [N, world ENU], drawn per world (base_force_x/_y/_z). "
        "Built from a variation file, not from a prim.",
    arrays=(ArrayDecl("force", "vec3, one per world", "N", "each world's force on its base body, world ENU"),),
)


@wp.kernel
def add_base_force(force: wp.array(dtype=wp.vec3), base: wp.int32, bodies_per_world: wp.int32,
                   body_f: wp.array(dtype=wp.spatial_vector)):
    world = wp.tid()
    body = base + world * bodies_per_world
    body_f[body] = body_f[body] + wp.spatial_vector(force[world], wp.vec3(0.0))


@draws(*BASE_FORCE_DRAWS)
class BaseForce(Component):
    """Adds each world's constant force to its base body every tick."""

    spec = BASE_FORCE_SPEC

    def __init__(self, plant: Plant, name: str = "/plant/base_force"):
        super().__init__(name)
        self.plant = plant
        self.arrays = NamedArrays(name, self.spec.arrays)

    @classmethod
    def from_draws(cls, ring) -> BaseForce:
        """The force of a ring where some world draws one (:func:`nexus.worlds.drawn.take_draws`)."""
        return cls(ring.plant)

    def stages(self) -> list[Stage]:
        return [Stage("base_force", "force", self._run)]

    def prepare(self, ctx) -> None:
        rows = np.stack([ctx.varied(d.name, 0.0) for d in BASE_FORCE_DRAWS], axis=1).astype(np.float32)
        self.arrays = NamedArrays(self.name, self.spec.arrays, force=wp.array(rows, dtype=wp.vec3, device=ctx.device))

    def _run(self, io) -> None:
        plant = self.plant
        wp.launch(add_base_force, plant.worlds, inputs=[self.arrays.force, plant.base, plant.bodies_per_world],
                  outputs=[plant.state.body_f], device=io.device)
