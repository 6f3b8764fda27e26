"""The ESC's thrust model and its inverse: a rotor's thrust fraction <-> its ESC command.

An ESC command ``u`` in [0, 1] gives the thrust fraction ``t = (1 − f)·u + f·u²``
(``f``: ``nexus:thrustModelFactor``, PX4's ``THR_MDL_FAC``). The allocation
(:mod:`nexus.control.allocation`) works in thrust fractions; these turn them
into the commands the ``controls`` row carries. (The quad-X sign table that
lived here is gone: the allocation works the mix out from the vehicle's
rotors.)
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.plant.safe_math import safe_sqrt


@wp.func
def command_for_thrust(thrust: float, factor: float) -> float:
    """The ESC command u in [0, 1] whose thrust fraction is ``thrust``: the positive root of f·u² + (1 − f)·u − t = 0."""
    t = wp.clamp(thrust, 0.0, 1.0)
    if factor <= 1.0e-6:
        return t
    linear = 1.0 - factor
    # safe_sqrt: at f = 1 a rotor at zero thrust (or a slot past the vehicle's rotors) has a zero root, whose
    # gradient would be infinite and turn the tape's adjoint into NaN (0 · inf).
    return (-linear + safe_sqrt(linear * linear + 4.0 * factor * t)) / (2.0 * factor)


def thrust_fraction_np(command, factor: float) -> np.ndarray:
    """The ESC's thrust model, for host code and tests: t = (1 − f)·u + f·u²."""
    u = np.asarray(command, dtype=np.float64)
    return (1.0 - factor) * u + factor * u * u
