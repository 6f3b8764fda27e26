"""Where each rotor sits and pushes, read once from the loaded plant.

Control allocation (:mod:`nexus.control.allocation`), PX4's parameters
(:mod:`nexus.px4.params`: ``CA_ROTORn_*``) and the MPC's model all need the
same numbers: each rotor's position from the whole vehicle's centre of mass
[m, FRD body axes], the direction its thrust pushes [FRD unit vector], its
yaw moment per unit thrust ``spin·kQ/kT`` [m] and its full thrust
``kT·ω_max²`` [N]. They are worked out here, at the vehicle's initial pose,
in ESC channel order (the ``controls`` slots).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nexus.plant.frames import flu_to_frd_np, quat_to_matrix_np
from nexus.plant.plant import Plant


@dataclass(frozen=True)
class RotorGeometry:
    """One rotor as an allocator sees it."""

    #: ESC channel: the rotor's slot in the ``controls`` row.
    channel: int
    #: Index into ``Plant.rotors`` (the order a variation file's ``rotor_fail_index`` counts in).
    index: int
    #: The propeller's rotor joint prim (errors name it).
    joint_path: str
    #: From the centre of mass [m, FRD].
    position: tuple
    #: Direction of the rotor's thrust [FRD unit vector]; (0, 0, -1) for an upright rotor.
    axis: tuple
    #: ``spin·kQ/kT`` [m]: + for a counter-clockwise rotor, whose drag turns the nose right.
    yaw_moment: float
    #: ``kT·ω_max²`` [N].
    max_thrust: float


def centre_of_mass(plant: Plant) -> np.ndarray:
    """The whole vehicle's centre of mass [m, world] at its initial pose."""
    model = plant.model
    body_q = model.body_q.numpy().astype(np.float64)
    masses = model.body_mass.numpy().astype(np.float64)
    coms = model.body_com.numpy().astype(np.float64)
    points = []
    for q, com in zip(body_q, coms):
        points.append(q[:3] + quat_to_matrix_np(q[3:7]) @ com)
    return (masses[:, None] * np.array(points)).sum(axis=0) / masses.sum()


def inertia_about(plant: Plant, point, to_body) -> np.ndarray:
    """Diagonal of the whole vehicle's inertia about ``point`` [kg·m², body axes, FLU]."""
    model = plant.model
    body_q = model.body_q.numpy().astype(np.float64)
    total = np.zeros((3, 3))
    for q, mass, com, inertia in zip(body_q, model.body_mass.numpy(), model.body_com.numpy(), model.body_inertia.numpy()):
        rotation = to_body @ quat_to_matrix_np(q[3:7])
        r = to_body @ (q[:3] + quat_to_matrix_np(q[3:7]) @ com - point)
        total += rotation @ inertia @ rotation.T + mass * (np.dot(r, r) * np.eye(3) - np.outer(r, r))
    return np.diag(total)


def to_body_matrix(plant: Plant) -> np.ndarray:
    """World (ENU) to the base body's axes (FLU), at the initial pose."""
    base = plant.model.body_q.numpy().astype(np.float64)[plant.base]
    return quat_to_matrix_np(base[3:7]).T


def rotor_geometry(plant: Plant) -> list[RotorGeometry]:
    """Every rotor of ``plant`` (world 0) in ESC channel order."""
    body_q = plant.model.body_q.numpy().astype(np.float64)
    to_body = to_body_matrix(plant)
    com = centre_of_mass(plant)
    rotors = []
    for rotor in sorted(plant.rotors, key=lambda r: r.esc["channel"]):
        q = body_q[rotor.body]
        position = flu_to_frd_np(to_body @ (q[:3] - com))
        axis = flu_to_frd_np(to_body @ quat_to_matrix_np(q[3:7]) @ np.array([0.0, 0.0, 1.0]))
        rotors.append(RotorGeometry(
            channel=int(rotor.esc["channel"]), index=rotor.index, joint_path=rotor.joint_path,
            position=tuple(float(c) for c in position), axis=tuple(float(c) for c in axis / np.linalg.norm(axis)),
            yaw_moment=float(rotor.spin * rotor.torque_coefficient / rotor.thrust_coefficient),
            max_thrust=float(rotor.thrust_coefficient * rotor.esc["max_speed"] ** 2),
        ))
    return rotors
