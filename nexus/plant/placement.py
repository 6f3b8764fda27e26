"""Each world's own vehicle: its drawn mass and centre of mass, and where and how it starts.

Each function declares the drawn parameters it takes (:func:`nexus.worlds.drawn.draws`);
:func:`nexus.worlds.drawn.take_draws` applies it to the model and state before
the first tick, and only when some world draws one of its names, so a run
without them keeps its bits. A world
flown alone (``nexus run --world-of``) gets the same values through the same
calls, so it matches its world of the batch bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import newton
import numpy as np

from nexus.plant.frames import attitude_ned_frd_np, quat_multiply_np, yaw_ned_np
from nexus.plant.plant import Plant
from nexus.vocab.drawn import Drawn, abs_at_most, draws, positive

#: The base body's drawn mass and centre of mass.
MASS = (
    Drawn("mass", "kg", "base body mass", "> 0", accepts=positive),
    *(Drawn(f"com_{axis}", "m", f"centre-of-mass offset of the base body along {axis}, body frame FLU",
            "|value| <= 0.5", accepts=abs_at_most(0.5)) for axis in "xyz"),
)
#: Where and how each world's vehicle starts.
START = (
    *(Drawn(f"start_{axis}", "m", f"start offset of the vehicle along {axis}, world ENU", "|value| <= 1000",
            accepts=abs_at_most(1000.0)) for axis in "xy"),
    Drawn("start_yaw", "deg", "initial heading", "|value| <= 360", accepts=abs_at_most(360.0)),
)


@draws(*MASS)
def vary_mass(plant: Plant, variation: Sequence[dict]) -> None:
    """Give each world's base body its drawn mass [kg] and centre-of-mass offset [m, FLU], then tell the solver."""
    model = plant.model
    mass = model.body_mass.numpy()
    inverse = model.body_inv_mass.numpy()
    com = model.body_com.numpy()
    for world, values in enumerate(variation):
        body = plant.base + world * plant.bodies_per_world
        if "mass" in values:  # positive: world_values checked every world's values
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


@draws(*START)
def place_worlds(plant: Plant, variation: Sequence[dict]) -> None:
    """Move each world's vehicle by its drawn start offset [m, ENU] and turn it to its drawn heading [deg].

    A heading of ``start_yaw`` turns the vehicle about the vertical: in NED (0 north,
    90 east, clockwise seen from above) it starts ``start_yaw`` degrees from its file's heading.
    """
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


def place_in_air(plant: Plant, height: float, airspeed: float, pitch: float) -> np.ndarray:
    """Lift each world's vehicle ``height`` [m] above where it is, pitch it nose-up by ``pitch`` [rad] about its
    own left axis, and give it ``airspeed`` [m/s] along its heading, level, no turn rate (a plane's air start:
    :mod:`nexus.control.fixed_wing.air_start`). Returns each world's NED origin, the point below its start
    [m, ENU], and makes it ``plant.ned_origin``. Clears the solver's warm start, as :meth:`Plant.reset` does.
    """
    plant.solver.reset(plant.state)
    q = plant.state.joint_q.numpy()
    qd = plant.state.joint_qd.numpy()
    origins = np.zeros((plant.worlds, 3))
    half = -0.5 * float(pitch)  # nose up is a turn about FLU +y (left) by -pitch
    nose_up = np.array([0.0, math.sin(half), 0.0, math.cos(half)])
    for world in range(plant.worlds):
        coord = plant._base_coord + world * plant.coords_per_world
        dof = plant._base_dof + world * plant.dofs_per_world
        origins[world] = q[coord : coord + 3]
        heading = q[coord + 3 : coord + 7].astype(np.float64)
        x, y, z, w = heading
        nose = np.array([1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z)])  # the body x axis, east-north
        nose /= np.linalg.norm(nose)
        q[coord + 2] += float(height)
        turned = quat_multiply_np(heading, nose_up)
        q[coord + 3 : coord + 7] = turned / np.linalg.norm(turned)
        qd[dof : dof + 6] = 0.0
        qd[dof : dof + 2] = float(airspeed) * nose
    plant.state.joint_q.assign(q)
    plant.state.joint_qd.assign(qd)
    newton.eval_fk(plant.model, plant.state.joint_q, plant.state.joint_qd, plant.state)
    plant.state.body_f.zero_()
    plant.set_ned_origin(origins)
    return origins


def resting_heading(plant: Plant, world: int = 0) -> float:
    """Where world ``world``'s vehicle points as placed [rad, NED: clockwise from north]: its body x axis
    (forward) projected on the ground. A plane that takes off from a runway rolls along it."""
    coord = plant._base_coord + world * plant.coords_per_world
    return yaw_ned_np(attitude_ned_frd_np(plant.state.joint_q.numpy()[coord + 3 : coord + 7]))
