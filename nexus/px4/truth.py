"""HIL_STATE_QUATERNION's fields from one body-state row, in plain Python floats.

The ground truth goes to PX4 every other tick; done with NumPy on 3-vectors
and 3x3 matrices it cost tens of microseconds of array overhead a message,
for a dozen multiplications. Here the geodetic origin's ECEF position and
ENU-to-ECEF rotation are worked out once, and each message is scalar
arithmetic: the attitude FRD->NED (w, x, y, z, w >= 0), body rates FRD
[rad/s], latitude/longitude [deg] and altitude [m], NED velocity [m/s] and
specific force FRD [m/s²], as :mod:`nexus.px4.messages` encodes them.
"""

from __future__ import annotations

import math

from nexus.plant.frames import Q_NED_ENU
from nexus.sensors.geodesy import ecef_to_latitude_longitude_np, enu_to_ecef_rotation, geodetic_to_ecef


def _multiply(a, b) -> tuple:
    """Hamilton product of (x, y, z, w) quaternions."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


class GroundTruth:
    """Turns a ``BodyState`` row (pose, velocity, angular velocity, accel; ENU/FLU) into PX4's ground truth."""

    def __init__(self, origin, ned_origin_enu, gravity: float):
        self.origin = origin
        self.ned_origin = tuple(float(v) for v in ned_origin_enu)
        self.ecef = tuple(float(v) for v in geodetic_to_ecef(origin.latitude, origin.longitude, origin.altitude))
        self.rotation = tuple(tuple(float(v) for v in row) for row in enu_to_ecef_rotation(origin.latitude, origin.longitude))
        self.gravity = float(gravity)

    def fields(self, pose, velocity, angular_velocity, accel) -> tuple:
        """(attitude wxyz, rates FRD, (lat, lon, alt), velocity NED, specific force FRD)."""
        px, py, pz, x, y, z, w = (float(v) for v in pose)
        # Body-to-world rotation of the (x, y, z, w) attitude; its transpose takes world vectors to the body.
        r00, r01, r02 = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
        r10, r11, r12 = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
        r20, r21, r22 = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
        ox, oy, oz = (float(v) for v in angular_velocity)
        # FLU -> FRD flips y and z.
        rates = (r00 * ox + r10 * oy + r20 * oz, -(r01 * ox + r11 * oy + r21 * oz), -(r02 * ox + r12 * oy + r22 * oz))
        fx, fy, fz = float(accel[0]), float(accel[1]), float(accel[2]) + self.gravity
        force = (r00 * fx + r10 * fy + r20 * fz, -(r01 * fx + r11 * fy + r21 * fz), -(r02 * fx + r12 * fy + r22 * fz))
        # FRD -> NED = Q_NED_ENU ⊗ q ⊗ Q_FLU_FRD, and Q_FLU_FRD = (1, 0, 0, 0) is 180° about x.
        qx, qy, qz, qw = _multiply(_multiply(Q_NED_ENU, (x, y, z, w)), (1.0, 0.0, 0.0, 0.0))
        norm = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
        sign = -1.0 if qw < 0.0 else 1.0
        attitude = (sign * qw / norm, sign * qx / norm, sign * qy / norm, sign * qz / norm)
        e, n, u = px - self.ned_origin[0], py - self.ned_origin[1], pz - self.ned_origin[2]
        rot, ecef = self.rotation, self.ecef
        point = (ecef[0] + rot[0][0] * e + rot[0][1] * n + rot[0][2] * u,
                 ecef[1] + rot[1][0] * e + rot[1][1] * n + rot[1][2] * u,
                 ecef[2] + rot[2][0] * e + rot[2][1] * n + rot[2][2] * u)
        latitude, longitude = ecef_to_latitude_longitude_np(point)
        vx, vy, vz = (float(v) for v in velocity)
        return attitude, rates, (latitude, longitude, self.origin.altitude + u), (vy, vx, -vz), force
