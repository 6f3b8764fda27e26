"""Where a render sensor looks from: mount frames, pinhole rays and the lidar's ray pattern.

Newton's ``SensorCamera`` looks along its local -Z axis with +Y up and +X
right (the USD convention). A Nexus sensor sits on a body (FLU: x forward,
y left, z up) at its mount offset; a camera looks along the body's +x, tilted
down by ``tilt`` [rad]. So the camera frame's axes, in body coordinates, are
X = -y (right), Y = +z (up), Z = -x (back).

The lidar spins about the body's +z axis. Column ``c`` of ``C`` looks at
azimuth ``2·pi·c / C`` [rad] (counter-clockwise from the body's +x), and
channel ``i`` of ``n`` at elevation ``-v/2 + i·v/(n - 1)`` over a vertical
field of view ``v`` [rad] (one channel: elevation 0).
"""

from __future__ import annotations

import math

import numpy as np

from nexus.plant.frames import quat_multiply_np, quat_rotate_np

#: The camera frame's axes as columns, in body (FLU) coordinates: X = -y, Y = +z, Z = -x.
CAMERA_IN_BODY = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


def vertical_fov(horizontal_fov: float, width: int, height: int) -> float:
    """The vertical field of view [rad] of a pinhole with square pixels."""
    return 2.0 * math.atan(math.tan(horizontal_fov / 2.0) * height / width)


def rotation_y(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rotation_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def matrix_to_quat_xyzw(m: np.ndarray) -> np.ndarray:
    """A rotation matrix as a unit quaternion (x, y, z, w), w >= 0."""
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0.0:
        s = 2.0 * math.sqrt(trace + 1.0)
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s, (m[1, 0] - m[0, 1]) / s]
    q = np.array(q, dtype=np.float64)
    q /= np.linalg.norm(q)
    return -q if q[3] < 0.0 else q


def camera_mount(tilt: float) -> np.ndarray:
    """The camera frame in the body frame for a camera tilted down by ``tilt`` [rad], as (x, y, z, w)."""
    return matrix_to_quat_xyzw(rotation_y(tilt) @ CAMERA_IN_BODY)


def lidar_column_mounts(columns: int) -> np.ndarray:
    """Each column's camera frame in the body frame, (columns, 4) quaternions (x, y, z, w)."""
    return np.stack([matrix_to_quat_xyzw(rotation_z(2.0 * math.pi * c / columns) @ CAMERA_IN_BODY)
                     for c in range(columns)])


def lidar_elevations(channels: int, vertical_fov: float) -> np.ndarray:
    """Each channel's elevation [rad], lowest first."""
    if channels == 1:
        return np.zeros(1)
    return -vertical_fov / 2.0 + np.arange(channels) * (vertical_fov / (channels - 1))


def lidar_rays(elevations: np.ndarray) -> np.ndarray:
    """One column's camera-space rays, shape (channels, 1, 1, 2, 3): origins 0, directions up by each elevation.

    Row 0 of an image is its top, so the highest channel comes first.
    """
    rays = np.zeros((len(elevations), 1, 1, 2, 3), dtype=np.float32)
    for row, elevation in enumerate(elevations[::-1]):
        rays[row, 0, 0, 1] = (0.0, math.sin(elevation), -math.cos(elevation))
    return rays


def sensor_transforms(body_poses: np.ndarray, offset: np.ndarray, mounts: np.ndarray) -> np.ndarray:
    """World transforms (p, q xyzw) [m] of a sensor frame: each body pose composed with the mount.

    ``body_poses`` (..., 7) float; ``offset`` (3,) in the body frame; ``mounts`` (..., 4) rotations of the
    sensor frame in the body frame (broadcast against the poses).
    """
    body_poses = np.asarray(body_poses, dtype=np.float64)
    position, rotation = body_poses[..., :3], body_poses[..., 3:7]
    where = position + quat_rotate_np(rotation, np.broadcast_to(offset, position.shape))
    turned = quat_multiply_np(rotation, np.broadcast_to(mounts, rotation.shape))
    return np.concatenate([where, turned], axis=-1)
