"""The free-flyer's sine and cosine of one angle (nexus/plant/sin_cos.py) against Python's double-precision ones."""

import math

import numpy as np
import warp as wp

from nexus.plant.sin_cos import sin_cos


@wp.kernel
def _both(x: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    out[i] = sin_cos(x[i])


def _evaluate(angles: np.ndarray) -> np.ndarray:
    x = wp.array(angles.astype(np.float32), dtype=wp.float32, device="cpu")
    out = wp.zeros(len(angles), dtype=wp.vec2, device="cpu")
    wp.launch(_both, len(angles), inputs=[x], outputs=[out], device="cpu")
    return out.numpy()


def test_the_quadrants_and_their_edges_give_the_exact_values():
    """0, ±π/2, π, 3π/2 and 2π (as float32, so within float32's rounding of the angle itself: 1e-7)."""
    got = _evaluate(np.array([0.0, math.pi / 2, math.pi, 3 * math.pi / 2, 2 * math.pi, -math.pi / 2]))
    want = np.array([[0, 1], [1, 0], [0, -1], [-1, 0], [0, 1], [-1, 0]], dtype=np.float64)
    assert np.abs(got - want).max() < 2e-7


def test_within_two_float32_ulps_of_the_double_precision_values_up_to_a_spinning_rotors_angles():
    """100,000 angles from −10 to 10 rad and 100,000 up to 1e5 rad (a rotor at 1,000 rad/s for 200 s, halved):
    against math.sin and math.cos of the very float32 angle, within 2 ulps of 1 (1.2e-7) everywhere."""
    rng = np.random.default_rng(0)
    angles = np.concatenate([rng.uniform(-10.0, 10.0, 100_000), rng.uniform(-1e5, 1e5, 100_000)]).astype(np.float32)
    got = _evaluate(angles)
    exact = np.stack([np.sin(angles.astype(np.float64)), np.cos(angles.astype(np.float64))], axis=1)
    assert np.abs(got - exact).max() < 1.2e-7
    assert np.abs(np.hypot(got[:, 0], got[:, 1]) - 1.0).max() < 2.4e-7
