"""Each world's own vehicle: its drawn mass and centre of mass, and where and how it starts.

Applied to the model and state before the first tick, and only for the
parameters a variation draws, so a run without one keeps its bits. A world
flown alone (``nexus run --world-of``) gets the same values through the same
calls, so it matches its world of the batch bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import newton
import numpy as np

from nexus.plant.frames import quat_multiply_np
from nexus.plant.plant import Plant

MASS_PARAMETERS = ("mass", "com_x", "com_y", "com_z")
START_PARAMETERS = ("start_x", "start_y", "start_yaw")


def _drawn(variation: Sequence[dict], names: tuple[str, ...]) -> bool:
    return any(name in values for values in variation for name in names)


def vary_mass(plant: Plant, variation: Sequence[dict]) -> None:
    """Give each world's base body its drawn mass [kg] and centre-of-mass offset [m, FLU], then tell the solver."""
    if not _drawn(variation, MASS_PARAMETERS):
        return
    model = plant.model
    mass = model.body_mass.numpy()
    inverse = model.body_inv_mass.numpy()
    com = model.body_com.numpy()
    for world, values in enumerate(variation):
        body = plant.base + world * plant.bodies_per_world
        if "mass" in values:  # positive: build_flight checked every world's values
            value = float(values["mass"])
            mass[body] = value
            inverse[body] = 1.0 / value
        for axis, name in enumerate(("com_x", "com_y", "com_z")):
            if name in values:
                com[body][axis] += float(values[name])
    model.body_mass.assign(mass)
    model.body_inv_mass.assign(inverse)
    model.body_com.assign(com)
    plant.solver.notify_model_changed(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)


def _yaw_quaternion(degrees: float) -> np.ndarray:
    half = math.radians(degrees) / 2.0
    return np.array([0.0, 0.0, math.sin(half), math.cos(half)])  # (x, y, z, w), about world +z (ENU: counter-clockwise)


def place_worlds(plant: Plant, variation: Sequence[dict]) -> None:
    """Move each world's vehicle by its drawn start offset [m, ENU] and turn it to its drawn heading [deg].

    A heading of ``start_yaw`` turns the vehicle about the vertical: in NED (0 north,
    90 east, clockwise seen from above) it starts ``start_yaw`` degrees from its file's heading.
    """
    if not _drawn(variation, START_PARAMETERS):
        return
    q = plant.state.joint_q.numpy()
    for world, values in enumerate(variation):
        coord = plant._base_coord + world * plant.coords_per_world
        q[coord] += float(values.get("start_x", 0.0))
        q[coord + 1] += float(values.get("start_y", 0.0))
        if "start_yaw" in values:
            # NED yaw is clockwise from north: an ENU rotation of -yaw about +z.
            turned = quat_multiply_np(_yaw_quaternion(-float(values["start_yaw"])), q[coord + 3 : coord + 7].astype(np.float64))
            q[coord + 3 : coord + 7] = turned / np.linalg.norm(turned)
    plant.state.joint_q.assign(q)
    newton.eval_fk(plant.model, plant.state.joint_q, plant.state.joint_qd, plant.state)
