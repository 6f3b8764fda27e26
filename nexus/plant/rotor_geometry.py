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

from nexus.core.errors import BuildError
from nexus.plant.frames import flu_to_frd_np, quat_to_matrix_np
from nexus.plant.plant import Plant

#: The most rotors a vehicle may have (PX4's motor outputs).
MAX_ROTORS = 12
#: Least total full thrust over weight a vehicle may have [-]: below it there is too little room to steer.
MIN_THRUST_TO_WEIGHT = 1.3
#: Rows of the effectiveness matrix (columns of the mix).
AXES = ("roll", "pitch", "yaw", "thrust")


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


_HINTS = {
    "roll": "the rotors sit in one line along the body's x axis; put rotors on both sides of it",
    "pitch": "the rotors sit in one line along the body's y axis; put rotors in front of and behind the centre of mass",
    "yaw": "every rotor spins the same way (or none has drag); give half of them the other nexus:spin",
}


def effectiveness(geometry: list[RotorGeometry]) -> np.ndarray:
    """``B`` (4, n): roll, pitch, yaw moment [N·m, FRD] and thrust [N, up] per unit thrust fraction of each rotor."""
    columns = []
    for rotor in geometry:
        r, d = np.asarray(rotor.position), np.asarray(rotor.axis)
        moment = np.cross(r, d) - rotor.yaw_moment * d
        columns.append(rotor.max_thrust * np.array([moment[0], moment[1], moment[2], -d[2]]))
    return np.array(columns, dtype=np.float64).T


def missing_authority(matrix: np.ndarray) -> str | None:
    """The first of roll, pitch, yaw that ``matrix`` cannot command on its own (None when it has all four)."""
    tol = 1e-9 * max(np.abs(matrix).max(), 1e-30)
    full = np.linalg.matrix_rank(matrix, tol=tol)
    if full == 4:
        return None
    for row, axis in enumerate(AXES[:3]):
        others = np.delete(matrix, row, axis=0)
        if not np.any(np.abs(matrix[row]) > tol) or np.linalg.matrix_rank(others, tol=tol) == full:
            return axis
    return "thrust"


def check_layout(geometry: list[RotorGeometry], weight: float, vehicle: str) -> np.ndarray:
    """The effectiveness matrix of a vehicle that can be flown, or a one-line BuildError naming what it lacks.

    ``weight`` [N] is the whole vehicle's; ``vehicle`` names its file.
    """
    joints = ", ".join(g.joint_path for g in geometry)
    if not 4 <= len(geometry) <= MAX_ROTORS:
        raise BuildError(f"{vehicle}: {len(geometry)} rotors ({joints}); the allocation mixes 4 to {MAX_ROTORS}")
    channels = [g.channel for g in geometry]
    if channels != list(range(len(geometry))):
        raise BuildError(f"{vehicle}: the ESCs of rotors {joints} use channels {channels}; give the {len(geometry)} "
                         f"rotors' ESCs channels 0 to {len(geometry) - 1}, one each (nexus:channel)")
    matrix = effectiveness(geometry)
    lacking = missing_authority(matrix)
    if lacking is not None:
        raise BuildError(f"{vehicle}: rotors {joints} give no {lacking} authority: {_HINTS.get(lacking, 'check the rotor axes')}")
    full = sum(g.max_thrust for g in geometry)
    if full < MIN_THRUST_TO_WEIGHT * weight:
        raise BuildError(f"{vehicle}: rotors {joints} give {full:.4g} N at full speed (kT·maxSpeed²) for a weight of "
                         f"{weight:.4g} N, a thrust-to-weight ratio of {full / weight:.3g}; it needs at least "
                         f"{MIN_THRUST_TO_WEIGHT} (raise nexus:maxSpeed or nexus:thrustCoefficient, or lighten the vehicle)")
    return matrix


def check_rotor_count(plant) -> None:
    """One ESC per rotor: a one-line BuildError naming the ESC prims when the counts differ."""
    escs = sorted(path for path, values in getattr(plant, "prim_values", {}).items() if "channel" in values)
    if escs and len(escs) != len(plant.rotors):
        raise BuildError(f"{plant.vehicle_path}: {len(escs)} ESC prims ({', '.join(escs)}) for {len(plant.rotors)} "
                         "rotors (propeller prims); give every rotor one ESC and every ESC a rotor with a propeller")


def check_vehicle(plant: Plant) -> None:
    """Every check above on a loaded plant (:func:`nexus.plant.loading.load_plant` runs it before any stage)."""
    check_rotor_count(plant)
    check_layout(rotor_geometry(plant), plant.mass * plant.gravity, str(plant.vehicle_path))
