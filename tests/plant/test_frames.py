"""ENU/FLU to NED/FRD on known rotations, in kernels and in NumPy."""

import numpy as np
import pytest
import warp as wp

from nexus.plant.frames import (
    attitude_ned_frd,
    attitude_ned_frd_np,
    enu_to_ned,
    enu_to_ned_np,
    flu_to_frd,
    flu_to_frd_np,
    quat_to_matrix_np,
    yaw_ned_np,
)


def quat_about_z(angle):
    return np.array([0.0, 0.0, np.sin(angle / 2), np.cos(angle / 2)])


@wp.kernel
def convert(vectors: wp.array(dtype=wp.vec3), quats: wp.array(dtype=wp.quat),
            ned: wp.array(dtype=wp.vec3), frd: wp.array(dtype=wp.vec3), att: wp.array(dtype=wp.quat)):
    i = wp.tid()
    ned[i] = enu_to_ned(vectors[i])
    frd[i] = flu_to_frd(vectors[i])
    att[i] = attitude_ned_frd(quats[i])


def test_vectors():
    # 1 m east, 2 m north, 3 m up is 2 m north, 1 m east, 3 m up (= -3 down).
    np.testing.assert_array_equal(enu_to_ned_np([1.0, 2.0, 3.0]), [2.0, 1.0, -3.0])
    # forward 1, left 2, up 3 is forward 1, right -2, down -3.
    np.testing.assert_array_equal(flu_to_frd_np([1.0, 2.0, 3.0]), [1.0, -2.0, -3.0])


def test_level_body_facing_east_in_enu_has_heading_east_in_ned():
    # Newton's identity attitude: body x along ENU x = east. In NED that is a 90° heading.
    q = attitude_ned_frd_np([0.0, 0.0, 0.0, 1.0])
    assert yaw_ned_np(q) == pytest.approx(np.pi / 2)
    # The body's down axis (FRD z) points down in NED.
    np.testing.assert_allclose(quat_to_matrix_np(q) @ [0, 0, 1], [0, 0, 1], atol=1e-12)


@pytest.mark.parametrize("enu_yaw_deg, ned_heading_deg", [(0, 90), (90, 0), (180, -90), (-90, 180), (45, 45)])
def test_enu_yaw_maps_to_ned_heading(enu_yaw_deg, ned_heading_deg):
    # ENU yaw is counter-clockwise from east; NED heading is clockwise from north: heading = 90° - yaw.
    q = attitude_ned_frd_np(quat_about_z(np.radians(enu_yaw_deg)))
    heading = np.degrees(yaw_ned_np(q))
    assert ((heading - ned_heading_deg + 180) % 360) - 180 == pytest.approx(0.0, abs=1e-9)


def test_attitude_rotates_body_vectors_consistently():
    rng = np.random.default_rng(1)
    for _ in range(20):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        v_flu = rng.normal(size=3)
        world_enu = quat_to_matrix_np(q) @ v_flu
        via_ned = quat_to_matrix_np(attitude_ned_frd_np(q)) @ flu_to_frd_np(v_flu)
        np.testing.assert_allclose(via_ned, enu_to_ned_np(world_enu), atol=1e-12)


def test_kernel_functions_match_numpy():
    rng = np.random.default_rng(2)
    vectors = rng.normal(size=(8, 3))
    quats = rng.normal(size=(8, 4))
    quats /= np.linalg.norm(quats, axis=1, keepdims=True)
    v = wp.array(vectors, dtype=wp.vec3, device="cpu")
    q = wp.array(quats, dtype=wp.quat, device="cpu")
    ned, frd = wp.zeros(8, dtype=wp.vec3, device="cpu"), wp.zeros(8, dtype=wp.vec3, device="cpu")
    att = wp.zeros(8, dtype=wp.quat, device="cpu")
    wp.launch(convert, 8, inputs=[v, q], outputs=[ned, frd, att], device="cpu")
    np.testing.assert_allclose(ned.numpy(), enu_to_ned_np(vectors), atol=1e-6)
    np.testing.assert_allclose(frd.numpy(), flu_to_frd_np(vectors), atol=1e-6)
    for got, want in zip(att.numpy(), [attitude_ned_frd_np(x) for x in quats]):
        # q and -q are one rotation.
        assert min(np.abs(got - want).max(), np.abs(got + want).max()) < 1e-6
