"""Frame conventions in one place.

Newton's world is Z-up and Nexus takes it as ENU (x east, y north, z up);
vehicle bodies are FLU (x forward, y left, z up). Everything a sensor or the
estimator writes is NED / FRD, as autopilots expect. Each conversion exists
as a ``wp.func`` for kernels and as a NumPy function for host code and tests;
quaternions are Warp's ``(x, y, z, w)``.

Both changes of frame are proper rotations: ENU→NED is 180° about the axis
(1, 1, 0)/√2 and FLU→FRD is 180° about x, so ``q_ned_frd = Q_NED_ENU ⊗ q_enu_flu ⊗ Q_FLU_FRD``.
"""

from __future__ import annotations

import numpy as np
import warp as wp

_H = float(np.sqrt(0.5))

#: Rotation taking ENU coordinates to NED: (e, n, u) -> (n, e, -u).
Q_NED_ENU = (_H, _H, 0.0, 0.0)
#: Rotation taking FRD coordinates to FLU (and back): (x, y, z) -> (x, -y, -z).
Q_FLU_FRD = (1.0, 0.0, 0.0, 0.0)


@wp.func
def enu_to_ned(v: wp.vec3) -> wp.vec3:
    return wp.vec3(v[1], v[0], -v[2])


@wp.func
def flu_to_frd(v: wp.vec3) -> wp.vec3:
    return wp.vec3(v[0], -v[1], -v[2])


@wp.func
def ned_to_enu(v: wp.vec3) -> wp.vec3:
    return wp.vec3(v[1], v[0], -v[2])


@wp.func
def attitude_ned_frd(q_enu_flu: wp.quat) -> wp.quat:
    """Body-FRD-to-NED attitude from Newton's body-FLU-to-ENU rotation."""
    q_ned_enu = wp.quat(0.70710678118654752, 0.70710678118654752, 0.0, 0.0)
    q_flu_frd = wp.quat(1.0, 0.0, 0.0, 0.0)
    return wp.normalize(q_ned_enu * q_enu_flu * q_flu_frd)


# -- NumPy twins ---------------------------------------------------------------------


def enu_to_ned_np(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    if v.ndim == 1:  # the host's per-tick case, without np.stack's cost
        return np.array([v[1], v[0], -v[2]])
    return np.stack([v[..., 1], v[..., 0], -v[..., 2]], axis=-1)


ned_to_enu_np = enu_to_ned_np  # the swap is its own inverse


def flu_to_frd_np(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    if v.ndim == 1:
        return np.array([v[0], -v[1], -v[2]])
    return np.stack([v[..., 0], -v[..., 1], -v[..., 2]], axis=-1)


def quat_multiply_np(a, b) -> np.ndarray:
    """Hamilton product of (x, y, z, w) quaternions; arrays of them (..., 4) broadcast against each other."""
    ax, ay, az, aw = np.moveaxis(np.asarray(a), -1, 0)
    bx, by, bz, bw = np.moveaxis(np.asarray(b), -1, 0)
    return np.stack([
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ], axis=-1)


def quat_rotate_np(q, v) -> np.ndarray:
    """``v`` (..., 3) rotated by (x, y, z, w) unit quaternions ``q`` (..., 4), broadcasting over leading axes."""
    q = np.asarray(q)
    u, w = q[..., :3], q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def attitude_ned_frd_np(q_enu_flu) -> np.ndarray:
    q = quat_multiply_np(quat_multiply_np(Q_NED_ENU, np.asarray(q_enu_flu, dtype=np.float64)), Q_FLU_FRD)
    return q / np.linalg.norm(q)


def quat_to_matrix_np(q) -> np.ndarray:
    """Rotation matrix of an (x, y, z, w) quaternion."""
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def yaw_ned_np(q_ned_frd) -> float:
    """Heading [rad] of an FRD-to-NED attitude: 0 north, +π/2 east."""
    r = quat_to_matrix_np(q_ned_frd)
    return float(np.arctan2(r[1, 0], r[0, 0]))
