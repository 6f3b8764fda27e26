"""The lift curve of Beard and McLain, *Small Unmanned Aircraft* (Princeton 2012), eq. 4.9 to 4.10.

Below stall the lift coefficient is linear in the angle of attack, ``CL0 + CLα·α``; past
it the wing behaves as a flat plate, ``2·sign(α)·sin²α·cosα``. A sigmoid ``σ(α)``
blends the two:

    σ(α) = (1 + e^(−M(α−α0)) + e^(M(α+α0))) / ((1 + e^(−M(α−α0)))·(1 + e^(M(α+α0))))
    CL(α) = (1 − σ)·(CL0 + CLα·α) + σ·2·sign(α)·sin²α·cosα

``α0`` [rad] is the stall angle (the blend is one half there) and ``M`` [-] how sharp
the change is. ``σ`` is close to 0 for |α| < α0 and close to 1 beyond. The exponentials
are written with their arguments clamped, so a tumbling plane (|α| near π) gives a
finite σ (exactly 1 to float32) rather than inf/inf.
"""

from __future__ import annotations

import numpy as np
import warp as wp

#: The largest exponent the blend takes [-]: e^60 is 1.1e26, inside float32, and 1 + e^60 rounds to e^60.
EXPONENT_LIMIT = 60.0


@wp.func
def stall_blend(alpha: wp.float32, sharpness: wp.float32, stall_angle: wp.float32) -> wp.float32:
    """σ(α): 0 on the linear part of the lift curve, 1 on the flat plate's (see the module doc)."""
    rising = wp.exp(wp.clamp(-sharpness * (alpha - stall_angle), -EXPONENT_LIMIT, EXPONENT_LIMIT))
    falling = wp.exp(wp.clamp(sharpness * (alpha + stall_angle), -EXPONENT_LIMIT, EXPONENT_LIMIT))
    return (1.0 + rising + falling) / ((1.0 + rising) * (1.0 + falling))


@wp.func
def blended_lift_coefficient(alpha: wp.float32, lift_at_zero: wp.float32, lift_slope: wp.float32,
                             sharpness: wp.float32, stall_angle: wp.float32) -> wp.float32:
    """CL(α) [-]: the linear lift curve blended into the flat plate past stall (see the module doc)."""
    sigma = stall_blend(alpha, sharpness, stall_angle)
    s = wp.sin(alpha)
    plate = 2.0 * wp.sign(alpha) * s * s * wp.cos(alpha)
    return (1.0 - sigma) * (lift_at_zero + lift_slope * alpha) + sigma * plate


def stall_blend_np(alpha, sharpness: float, stall_angle: float):
    """σ(α) in float64, for host code (trim's first guess, the docs' figures)."""
    alpha = np.asarray(alpha, dtype=np.float64)
    rising = np.exp(np.clip(-sharpness * (alpha - stall_angle), -EXPONENT_LIMIT, EXPONENT_LIMIT))
    falling = np.exp(np.clip(sharpness * (alpha + stall_angle), -EXPONENT_LIMIT, EXPONENT_LIMIT))
    return (1.0 + rising + falling) / ((1.0 + rising) * (1.0 + falling))


def blended_lift_coefficient_np(alpha, lift_at_zero: float, lift_slope: float, sharpness: float, stall_angle: float):
    """CL(α) [-] in float64 (see :func:`blended_lift_coefficient`)."""
    alpha = np.asarray(alpha, dtype=np.float64)
    sigma = stall_blend_np(alpha, sharpness, stall_angle)
    plate = 2.0 * np.sign(alpha) * np.sin(alpha) ** 2 * np.cos(alpha)
    return (1.0 - sigma) * (lift_at_zero + lift_slope * alpha) + sigma * plate
