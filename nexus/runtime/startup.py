"""Start-up: settle the vehicle, fix the NED origin, and take the first samples.

Runs once, after the loop is built and before its first tick, eagerly and at
sim time 0, so captured and eager runs start from the same state:

1. the plant steps with its rotors stopped for ``settle_seconds`` so the
   vehicle comes to rest on its gear;
2. where the base then sits becomes the NED origin (``plant.ned_origin``);
3. the state stage publishes, every sensor takes its first sample (which
   starts its schedule), then the estimator and the guidance run once, the
   estimator first; a stage's ``start`` hook runs just before it (the device
   mission guidance plans there from the first estimate).

A plane (a ring with a wing, ``NexusFixedWingAeroAPI``) is not settled: its
file's air start (:mod:`nexus.control.fixed_wing.air_start`, carried by a
component's ``air_start``: the plane's mission) places it in the air, trimmed,
and fixes the NED origin below it, in place of steps 1 and 2. A plane with a
catapult (:mod:`nexus.control.fixed_wing.catapult`) is settled on its wheels as
above; a plane with neither would start at rest, below its stall speed, with
nothing to launch it, and is refused.
"""

from __future__ import annotations

import numpy as np

from nexus.core import Loop
from nexus.core.errors import BuildError
from nexus.plant.plant import Plant

#: Kinds run once before the first tick, in ring order.
FIRST_SAMPLE_KINDS = ("state", "sensor", "estimate", "guide")
#: The schema of a wing, and of the launcher that starts a plane from rest (settled like a multirotor).
WING_SCHEMA, CATAPULT_SCHEMA = "NexusFixedWingAeroAPI", "NexusCatapultAPI"


def settle(loop: Loop, plant: Plant, seconds: float = 0.2) -> np.ndarray:
    """Step the plant for ``seconds`` at the tick length, rotors off; return world 0's NED origin [m, ENU].

    Every world's origin is where its own base settled (``plant.ned_origin``, one per world).
    """
    loop.build()
    steps = int(round(seconds / (loop.dt_ns * 1e-9)))
    for _ in range(steps):
        loop.run_kinds(("clear", "step"))
    origins = plant.base_positions()
    plant.set_ned_origin(origins)
    return origins[0]


def _with_schema(loop: Loop, schema: str) -> list:
    return [c for c in loop.components if getattr(getattr(c, "spec", None), "schema", None) == schema]


def start(loop: Loop, plant: Plant, settle_seconds: float = 0.2) -> np.ndarray:
    """Settle (a plane: place it at its air start), fix the origin and take the first samples. Returns the
    origin [m, ENU]."""
    wings = _with_schema(loop, WING_SCHEMA)
    air_starts = [c.air_start for c in loop.components if getattr(c, "air_start", None) is not None]
    runway = any(getattr(c, "runway_takeoff", False) for c in loop.components)
    if air_starts:
        loop.build()
        origin = air_starts[0].place(loop, plant)[0]
    elif wings and not _with_schema(loop, CATAPULT_SCHEMA) and not runway:
        raise BuildError(f"{plant.vehicle_path}: {wings[0].name} is a wing, and nothing in this ring starts the plane "
                         "in the air (at rest it is below its stall speed, with no launch step); fly it with "
                         "--controller fixed_wing and a NexusAirStartAPI or NexusCatapultAPI prim in the file, or "
                         "with --controller px4 --px4-mission (PX4's runway takeoff)")
    else:
        origin = settle(loop, plant, settle_seconds)
    loop.run_kinds(FIRST_SAMPLE_KINDS, first=True)
    return origin
