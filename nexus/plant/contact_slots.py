"""Which vehicle a MuJoCo contact touches: each geom's slot, so contacts land on the vehicles they belong to.

MuJoCo Warp lists the contacts of its last step with the MuJoCo world each was found in
(``contact.worldid``). That world is a slot only while every slot has a Newton world of its own; with
several vehicles sharing a world (:mod:`nexus.plant.fleet`, ``plant.shared_worlds``) it holds them all. The
geoms say whose a contact is: MuJoCo geom -> Newton shape (``SolverMuJoCo.mjc_geom_to_newton_shape``, per
MuJoCo world) -> Newton body (``model.shape_body``) -> slot (the body's index over
``plant.bodies_per_world``, the index spaces of a one-vehicle world). A shape on no body (the ground, the
scene's static shapes) belongs to no slot (-1).

A touching contact (distance 0 or less) counts for each slot it touches once: a vehicle on the ground for that
vehicle, one vehicle against another for both, a vehicle's part against its own other part once. With one
vehicle a world every contact's slots are its world, so the counts are the ones ``worldid`` gave.
"""

from __future__ import annotations

import numpy as np
import warp as wp


def geom_slots(plant) -> wp.array2d:
    """Each MuJoCo geom's slot, per MuJoCo world (-1: a static shape), int32, shape (MuJoCo worlds, geoms)."""
    shapes = plant.solver.mjc_geom_to_newton_shape.numpy()
    shape_body = plant.model.shape_body.numpy()
    body = np.where(shapes >= 0, shape_body[np.maximum(shapes, 0)], -1)
    slot = np.where(body >= 0, body // plant.bodies_per_world, -1).astype(np.int32)
    return wp.array(slot, dtype=wp.int32, device=plant.model.device)


@wp.func
def contact_slots(geom_slot: wp.array2d(dtype=wp.int32), world: wp.int32, geoms: wp.vec2i) -> wp.vec2i:
    """The slots of a contact's two geoms; the second is -1 when it is the first's or a static shape's (and a
    flex's, geom -1)."""
    first = wp.int32(-1)
    second = wp.int32(-1)
    if geoms[0] >= 0:
        first = geom_slot[world, geoms[0]]
    if geoms[1] >= 0:
        second = geom_slot[world, geoms[1]]
    if first < 0:
        first = second
        second = -1
    if second == first:
        second = -1
    return wp.vec2i(first, second)


@wp.func
def touched_slots(i: int, world_of: wp.array(dtype=wp.int32), geom: wp.array(dtype=wp.vec2i),
                  dist: wp.array(dtype=wp.float32), geom_slot: wp.array2d(dtype=wp.int32)) -> wp.vec2i:
    """The slots contact ``i`` counts for (:func:`contact_slots`) when it touches (distance 0 or less); (-1, -1)
    when it does not. Both counts of the touching contacts (one thread per contact, or per world) read this."""
    if dist[i] <= 0.0:
        return contact_slots(geom_slot, world_of[i], geom[i])
    return wp.vec2i(-1, -1)


@wp.kernel
def count_touching(
    # Data in:
    nacon: wp.array(dtype=wp.int32),
    world_of: wp.array(dtype=wp.int32),
    geom: wp.array(dtype=wp.vec2i),
    dist: wp.array(dtype=wp.float32),
    # In:
    geom_slot: wp.array2d(dtype=wp.int32),
    # Out:
    count: wp.array(dtype=wp.int32),
):
    """One thread per contact slot: a found contact with distance <= 0 adds one to each slot it touches."""
    i = wp.tid()
    if i < nacon[0]:
        slots = touched_slots(i, world_of, geom, dist, geom_slot)
        if slots[0] >= 0:
            wp.atomic_add(count, slots[0], 1)
        if slots[1] >= 0:
            wp.atomic_add(count, slots[1], 1)
