"""The drag kernel's force on crafted states, by hand: rotor drag in the rotor plane only, body drag per body axis.

One world, a base (body 0) and two rotors (bodies 1 and 2, DOFs 0 and 1) whose axes are the base's z;
c = 1e-3 N/((m/s)(rad/s)), 1/2 rho Cd A = (0.1, 0.2, 0.3) N/(m/s)^2 along the base's x, y, z.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

from nexus.air.drag import add_drag

C = 1e-3
K = (0.1, 0.2, 0.3)


def force(wind, velocity, speeds=(300.0, -200.0), yaw_deg: float = 0.0) -> np.ndarray:
    """The force [N, world] the kernel adds to the base, which turns ``yaw_deg`` about up."""
    half = math.radians(yaw_deg) / 2.0
    pose = [0.0, 0.0, 5.0, 0.0, 0.0, math.sin(half), math.cos(half)]
    body_q = wp.array([pose, pose, pose], dtype=wp.transform, device="cpu")
    body_qd = wp.array([[*velocity, 0.0, 0.0, 0.0], [0.0] * 6, [0.0] * 6], dtype=wp.spatial_vector, device="cpu")
    joint_qd = wp.array(speeds, dtype=wp.float32, device="cpu")
    body_f = wp.zeros(3, dtype=wp.spatial_vector, device="cpu")
    wp.launch(add_drag, 1, inputs=[wp.array([wind], dtype=wp.vec3, device="cpu"), body_q, body_qd, joint_qd, 0,
                                   wp.array([1, 2], dtype=wp.int32, device="cpu"),
                                   wp.array([0, 1], dtype=wp.int32, device="cpu"), 3, 2,
                                   wp.array([C], dtype=wp.float32, device="cpu"),
                                   wp.array([wp.vec3(*K)], dtype=wp.vec3, device="cpu"), wp.vec3(1.0, 1.0, 1.0)],
              outputs=[body_f], device="cpu")
    f = body_f.numpy()
    assert np.all(f[0, 3:] == 0.0) and np.all(f[1:] == 0.0)  # a force on the base alone, no moment
    return f[0, :3]


def test_still_air_and_a_still_vehicle_make_no_force():
    assert force((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)) == pytest.approx([0.0, 0.0, 0.0], abs=0.0)


def test_a_wind_along_x_pushes_with_rotor_and_body_drag():
    # Air 4 m/s along +x, level base: rotor drag C (300 + 200) 4 = 2.0 N; body drag 0.1 * 16 = 1.6 N; total 3.6 N.
    assert force((4.0, 0.0, 0.0), (0.0, 0.0, 0.0)) == pytest.approx([3.6, 0.0, 0.0], rel=1e-6)


def test_flying_into_still_air_is_the_same_as_air_blowing_at_the_vehicle():
    # Moving at -3 m/s along y in still air: air +3 m/s along y; rotor drag 1e-3 * 500 * 3 = 1.5 N, body 0.2 * 9 = 1.8 N.
    assert force((0.0, 0.0, 0.0), (0.0, -3.0, 0.0)) == pytest.approx([0.0, 3.3, 0.0], rel=1e-6)


def test_air_along_the_rotor_axes_makes_no_rotor_drag():
    # Air 2 m/s down through the rotors: no in-plane part, so only body drag along z: -0.3 * 4 = -1.2 N.
    assert force((0.0, 0.0, -2.0), (0.0, 0.0, 0.0)) == pytest.approx([0.0, 0.0, -1.2], rel=1e-6)


def test_body_drag_takes_the_area_of_the_axis_facing_the_air():
    # Turned 90 degrees left, the base's y axis faces -x: air 4 m/s along +x meets the y area (0.2), 3.2 N,
    # and rotor drag 2.0 N as before: 5.2 N along +x.
    assert force((4.0, 0.0, 0.0), (0.0, 0.0, 0.0), yaw_deg=90.0) == pytest.approx([5.2, 0.0, 0.0], abs=1e-5)
