"""Each world's touching contact points after the step, recorded as ``contact`` for a scenario's contact check.

MuJoCo Warp keeps the contacts it found in its last step (``mjw_data.contact``: each one's world and
distance, ``nacon`` of them over all worlds). A contact point touches when its distance is 0 or less
(the shapes meet or interpenetrate); MuJoCo also lists points within a geom's margin that do not touch
yet, and those are left out. Every shape of the vehicle collides with the ground and the scene's other
shapes, so a touching point is the vehicle on the ground or against an obstacle (or, with several vehicles
in a world, against another vehicle). Each point counts for the vehicles its geoms belong to
(:mod:`nexus.plant.contact_slots`), not for the MuJoCo world it was found in.

Only a scenario with a ``contact`` check adds this stage (``nexus/runtime/scenario_parts.py``): other flights keep
their ring and their bits. It writes and reads nothing the physics uses.
"""

from __future__ import annotations

import warp as wp

from nexus.core import Component
from nexus.core.errors import BuildError
from nexus.core.spec import Output, Spec
from nexus.plant.contact_slots import count_touching, geom_slots

GROUND_CONTACT_SPEC = Spec(
    name="GroundContact",
    noun="contact flag",
    doc="Counts each world's contact points that touch (distance 0 or less) after the physics step.",
    outputs=(Output("contact", wp.int32, recorded=True,
                    doc="The world's touching contact points: the vehicle on the ground or against an obstacle"),),
    stage="contact",
    kind="state",
)


@wp.kernel
def clear_counts(count: wp.array(dtype=wp.int32)):
    count[wp.tid()] = 0


class GroundContact(Component):
    """Writes ``contact`` (touching contact points per world) from MuJoCo Warp's contacts of the last step."""

    spec = GROUND_CONTACT_SPEC

    def __init__(self, plant, name: str = "/scenario/contact"):
        super().__init__(name)
        self.plant = plant
        data = getattr(plant.solver, "mjw_data", None)
        if data is None:
            raise BuildError(f"{plant.vehicle_path}: the scenario's contact check reads MuJoCo's contacts; fly it "
                             "with the mujoco solver (the default) or remove the check")
        self._geom_slot = None

    def prepare(self, ctx) -> None:
        self._geom_slot = geom_slots(self.plant)

    def run(self, io) -> None:
        data = self.plant.solver.mjw_data
        count = io["contact"]
        wp.launch(clear_counts, self.plant.worlds, outputs=[count], device=io.device)
        wp.launch(count_touching, data.naconmax,
                  inputs=[data.nacon, data.contact.worldid, data.contact.geom, data.contact.dist, self._geom_slot],
                  outputs=[count], device=io.device)
