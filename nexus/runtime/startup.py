"""Start-up: settle the vehicle, fix the NED origin, and take the first samples.

Runs once, after the loop is built and before its first tick, eagerly and at
sim time 0, so captured and eager runs start from the same state:

1. the plant steps with its rotors stopped for ``settle_seconds`` so the
   vehicle comes to rest on its gear, and on in steps of ``SETTLE_STEP_S``
   while any world's base still moves (faster than ``REST_SPEED`` or
   ``REST_RATE``), up to ``SETTLE_LIMIT_S`` more: an estimator aligns its tilt
   on the first accelerometer sample, which must be one at rest. A base still
   moving then is logged as a warning naming the world;
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

import logging

import numpy as np

from nexus.core import Loop
from nexus.core.errors import BuildError
from nexus.plant.plant import Plant

#: Kinds run once before the first tick, in ring order.
FIRST_SAMPLE_KINDS = ("state", "sensor", "estimate", "guide")
#: The schema of a wing, and of the launcher that starts a plane from rest (settled like a multirotor).
WING_SCHEMA, CATAPULT_SCHEMA = "NexusFixedWingAeroAPI", "NexusCatapultAPI"
#: A settled base is at rest below these speeds [m/s] and turn rates [rad/s] (the EKF's own rest test asks
#: 0.05 rad/s of its gyro, PX4's EKF2_MOVE_TEST).
REST_SPEED, REST_RATE = 0.05, 0.05
#: How long the start-up settles on past ``settle_seconds`` while a base still moves [s], and in what steps [s].
SETTLE_LIMIT_S, SETTLE_STEP_S = 2.0, 0.1

log = logging.getLogger("nexus")


def base_motion(plant: Plant) -> tuple[np.ndarray, np.ndarray]:
    """Every world's base speed [m/s] and turn rate [rad/s], read from the host."""
    twist = plant.state.body_qd.numpy()[plant.base_bodies()].astype(np.float64)
    return np.linalg.norm(twist[:, :3], axis=1), np.linalg.norm(twist[:, 3:], axis=1)


def settle(loop: Loop, plant: Plant, seconds: float = 0.2) -> np.ndarray:
    """Step the plant for ``seconds`` at the tick length, rotors off; return world 0's NED origin [m, ENU].

    Every world's origin is where its own base settled (``plant.ned_origin``, one per world).
    """
    loop.build()
    tick_s = loop.dt_ns * 1e-9

    def step(for_seconds: float) -> None:
        for _ in range(int(round(for_seconds / tick_s))):
            loop.run_kinds(("clear", "step"))

    def still_moving() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        speed, rate = base_motion(plant)
        return speed, rate, np.flatnonzero((speed > REST_SPEED) | (rate > REST_RATE))

    step(seconds)
    more = 0.0
    speed, rate, moving = still_moving()
    while len(moving) and more < SETTLE_LIMIT_S - 1e-9:
        step(SETTLE_STEP_S)
        more += SETTLE_STEP_S
        speed, rate, moving = still_moving()
    if len(moving):
        w = int(moving[0])
        log.warning(f"start-up: {plant.vehicle_path}: world {w}'s base still moves at {speed[w]:.3g} m/s and "
                    f"{rate[w]:.3g} rad/s after {seconds + more:.1f} s of settling ({len(moving)} world(s) so); an "
                    "estimator aligns its tilt on this first sample. Check the gear's collision shapes and the "
                    "start pose" + (", or fly --solver mujoco" if plant.solver_name != "mujoco" else ""))
    elif more:
        log.info(f"start-up: settled for {seconds + more:.1f} s (the base moved after {seconds:.1f} s)")
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
    # A runway takeoff (PX4's) and a VTOL (it lifts off on its rotors) start from rest, settled like a multirotor.
    runway = any(getattr(c, "runway_takeoff", False) or getattr(c, "vertical_takeoff", False) for c in loop.components)
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
