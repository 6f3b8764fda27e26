"""Attitude helpers of the cascade, as ``wp.func``: a thrust direction and heading to an
attitude, and an attitude error to body-rate goals. All in NED (world) and FRD (body).

The attitude law follows PX4's quaternion controller: it first turns the
body's z axis onto the goal's (the tilt, which thrust depends on) and lets
the heading follow at ``yaw_weight`` of that gain, so a large heading error
never costs tilt authority.
"""

from __future__ import annotations

import warp as wp

from nexus.plant.safe_math import cos_of_scaled_angle


@wp.func
def wrap_angle(angle: float) -> float:
    """``angle`` [rad] wrapped to (−π, π]."""
    return wp.atan2(wp.sin(angle), wp.cos(angle))


@wp.func
def heading_of(attitude: wp.quat) -> float:
    """The heading [rad, NED, from north towards east] of an FRD-to-NED attitude (x, y, z, w)."""
    x = attitude[0]
    y = attitude[1]
    z = attitude[2]
    w = attitude[3]
    return wp.atan2(2.0 * (x * y + z * w), 1.0 - 2.0 * (y * y + z * z))


@wp.func
def attitude_from_thrust_axis(body_z: wp.vec3, yaw: float) -> wp.quat:
    """The FRD→NED attitude whose z axis is ``body_z`` (unit, pointing down through the belly) and whose heading is ``yaw`` [rad]."""
    heading_y = wp.vec3(-wp.sin(yaw), wp.cos(yaw), 0.0)
    body_x = wp.normalize(wp.cross(heading_y, body_z))
    body_y = wp.cross(body_z, body_x)
    return wp.normalize(wp.quat_from_matrix(wp.matrix_from_cols(body_x, body_y, body_z)))


@wp.func
def canonical(q: wp.quat) -> wp.quat:
    """The same rotation with a non-negative scalar part."""
    if q[3] < 0.0:
        return wp.quat(-q[0], -q[1], -q[2], -q[3])
    return q


@wp.func
def attitude_error_rates(attitude: wp.quat, goal: wp.quat, gain: wp.vec3, yaw_weight: float) -> wp.vec3:
    """Body-rate goals [rad/s, FRD] that turn ``attitude`` towards ``goal``.

    ``gain`` [1/s] is per axis (roll, pitch, yaw); the heading part of the
    error is reduced by ``yaw_weight`` in [0, 1] and then driven at the roll
    and pitch gain, as PX4 does.
    """
    z_axis = wp.vec3(0.0, 0.0, 1.0)
    current_z = wp.quat_rotate(attitude, z_axis)
    goal_z = wp.quat_rotate(goal, z_axis)
    tilt_only = wp.quat_between_vectors(current_z, goal_z) * attitude
    heading = canonical(wp.quat_inverse(tilt_only) * goal)
    w = wp.clamp(heading[3], -1.0, 1.0)
    z = wp.clamp(heading[2], -1.0, 1.0)
    weighted = wp.quat(0.0, 0.0, wp.sin(yaw_weight * wp.asin(z)), cos_of_scaled_angle(yaw_weight, w))
    target = tilt_only * weighted
    error = canonical(wp.quat_inverse(attitude) * target)
    roll_pitch = 0.5 * (gain[0] + gain[1])
    return 2.0 * wp.vec3(error[0] * gain[0], error[1] * gain[1], error[2] * roll_pitch)
