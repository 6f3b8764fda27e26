"""Square root and arc cosine whose gradients stay finite at their singular points.

Hovering level, the PID law takes ``sqrt(0)`` (no horizontal speed, no
horizontal thrust) and ``acos(1)`` (no tilt, no heading error); a stopped
ESC takes ``sqrt(0)`` of its thrust. The values are
exact, but Warp's adjoints of ``wp.sqrt`` and ``wp.acos`` divide by zero
there, and ``0 * inf`` is NaN even on a branch whose result is thrown away,
so one such tick makes every gradient of a rollout NaN. These functions
compute their values with the same Warp built-ins (a run's bits do not change)
and give an adjoint that is the function's limit instead.
"""

from __future__ import annotations

import warp as wp


@wp.func
def safe_sqrt(x: float) -> float:
    """``wp.sqrt(x)``; its gradient is 0 at x <= 0 instead of infinite."""
    return wp.sqrt(x)


@wp.func_grad(safe_sqrt)
def adj_safe_sqrt(x: float, adj_ret: float):
    if x > 0.0:
        wp.adjoint[x] += adj_ret * 0.5 / wp.sqrt(x)


@wp.func
def angle_of_cosine(c: float) -> float:
    """``wp.acos(c)`` for c in [-1, 1]; its gradient is 0 where |c| = 1 (where it is only compared)."""
    return wp.acos(c)


@wp.func_grad(angle_of_cosine)
def adj_angle_of_cosine(c: float, adj_ret: float):
    s = 1.0 - c * c
    if s > 0.0:
        wp.adjoint[c] += -adj_ret / wp.sqrt(s)


@wp.func
def cos_of_scaled_angle(a: float, c: float) -> float:
    """``cos(a·acos(c))``: the heading part of an attitude error, scaled by ``a`` (c = cos θ in [-1, 1]).

    Its derivative in c is ``a·sin(aθ)/sin θ``, which tends to ``a²`` as θ -> 0, where Warp's own
    adjoint of ``acos`` divides by zero.
    """
    return wp.cos(a * wp.acos(c))


@wp.func_grad(cos_of_scaled_angle)
def adj_cos_of_scaled_angle(a: float, c: float, adj_ret: float):
    theta = wp.acos(c)
    s = wp.sin(theta)
    ratio = a * a
    if s > 1.0e-6:
        ratio = a * wp.sin(a * theta) / s
    wp.adjoint[c] += adj_ret * ratio
    wp.adjoint[a] += -adj_ret * wp.sin(a * theta) * theta


__all__ = ["angle_of_cosine", "cos_of_scaled_angle", "safe_sqrt"]
