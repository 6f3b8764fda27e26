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
"""

from __future__ import annotations

import numpy as np

from nexus.core import Loop
from nexus.plant.plant import Plant

#: Kinds run once before the first tick, in ring order.
FIRST_SAMPLE_KINDS = ("state", "sensor", "estimate", "guide")


def settle(loop: Loop, plant: Plant, seconds: float = 0.2) -> np.ndarray:
    """Step the plant for ``seconds`` at the tick length, rotors off; return world 0's NED origin [m, ENU].

    Every world's origin is where its own base settled (``plant.ned_origin``, one per world).
    """
    loop.build()
    steps = int(round(seconds / (loop.dt_ns * 1e-9)))
    for _ in range(steps):
        loop.run_kinds(("clear", "step"))
    origins = plant.base_positions()
    plant.ned_origin.assign(np.asarray(origins, dtype=np.float32))
    return origins[0]


def start(loop: Loop, plant: Plant, settle_seconds: float = 0.2) -> np.ndarray:
    """Settle, fix the origin and take the first samples. Returns the origin [m, ENU]."""
    origin = settle(loop, plant, settle_seconds)
    loop.run_kinds(FIRST_SAMPLE_KINDS, first=True)
    return origin
