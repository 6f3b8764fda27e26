"""Sine and cosine of one angle together, without the two C library calls.

The free-flyer's step needs both for each rotor's spin quaternion and for the base's turn (five pairs a world a
step on a quadrotor): as ``sinf`` and ``cosf`` calls they were a fifth of the step. Here the angle is reduced by π/2
in double precision (for a half angle up to 1e5 rad, a rotor at 1,000 rad/s for 200 s, the reduction is off by
less than 1e-11 rad, far below float32's resolution of the remainder), and the remainder, in [−π/4, π/4], goes
through the minimax polynomials of Moshier's Cephes library (``sinf``: degree 7, ``cosf``: degree 8; S. L. Moshier,
*Methods and Programs for Mathematical Functions*, 1989). Measured
against double precision over 400,000 angles up to 1e5 rad: at most 9.3e-8 off (NumPy's float32 ``sin`` and
``cos``: 6.7e-8); ``tests/plant/test_sin_cos.py`` holds it within 1.2e-7.
"""

from __future__ import annotations

import warp as wp

#: 2/π and π/2 in double precision.
_TWO_OVER_PI = wp.constant(wp.float64(0.6366197723675814))
_HALF_PI = wp.constant(wp.float64(1.5707963267948966))


@wp.func
def sin_cos(x: float) -> wp.vec2:
    """``(sin x, cos x)`` of ``x`` [rad], each within 1.2e-7."""
    xd = wp.float64(x)
    k = wp.floor(xd * _TWO_OVER_PI + wp.float64(0.5))
    r = wp.float32(xd - k * _HALF_PI)
    quadrant = wp.int64(k) & wp.int64(3)
    z = r * r
    s = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * (-1.9515295891e-4)))
    c = 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5))
    if quadrant == wp.int64(0):
        return wp.vec2(s, c)
    if quadrant == wp.int64(1):
        return wp.vec2(c, -s)
    if quadrant == wp.int64(2):
        return wp.vec2(-s, -c)
    return wp.vec2(-c, s)
