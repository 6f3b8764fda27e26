"""Straight-and-level trim on Nexus's own force model: the angle of attack, surfaces and throttle that balance it.

Flying level (flight-path angle 0, wings level, no rates) at airspeed ``Va`` [m/s], the
pitch equals the angle of attack and the air meets the body (FRD) at
``Va·(cosα·cosβ, sinβ, sinα·cosβ)``. Trim is the root of six equations in six unknowns,
``(α, δe, δt, β, δa, δr)``: the sum of the wing's wrench (:func:`aero_wrench_frd`), the
propeller's (:func:`propeller_wrench_body`) and gravity ``m·g·(−sinα, 0, cosα)`` is
zero in force and in moment. The residuals come from the force stages' own ``wp.func``
evaluated in a kernel (so trim shares every line of the flown model, float32 included),
and Newton's method with a finite-difference Jacobian finds the root (a few iterations
from α = δ = 0, δt = ½). The lateral unknowns balance the propeller's torque.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from nexus.aero.fixed_wing_forces import AeroModel, aero_model, aero_wrench_frd
from nexus.aero.propeller_advance import PropellerModel, propeller_model, propeller_wrench_body
from nexus.core.errors import NexusError

#: Finite-difference step of the Jacobian [rad or throttle fraction]; float32 residuals are good to ~1e-5 N.
STEP = 1.0e-3
#: Newton stops when no residual exceeds this [N or N·m], or after :data:`ITERATIONS` iterations.
TOLERANCE = 1.0e-3
ITERATIONS = 30


@dataclass(frozen=True)
class Trim:
    """A trimmed straight-and-level flight: angles [rad], throttle [0, 1], and the largest residual left [N or N·m]."""

    airspeed: float
    alpha: float
    elevator: float
    throttle: float
    beta: float
    aileron: float
    rudder: float
    residual: float

    @property
    def pitch(self) -> float:
        """Pitch [rad]: the angle of attack, flying level."""
        return self.alpha


@wp.kernel
def trim_residuals(
    # In:
    unknowns: wp.array2d(dtype=wp.float32),
    # Model:
    airspeed: wp.float32,
    weight: wp.float32,
    wing: AeroModel,
    propeller: PropellerModel,
    # Out:
    residuals: wp.array2d(dtype=wp.float32),
):
    i = wp.tid()
    alpha, elevator, throttle = unknowns[i, 0], unknowns[i, 1], unknowns[i, 2]
    beta, aileron, rudder = unknowns[i, 3], unknowns[i, 4], unknowns[i, 5]
    air = airspeed * wp.vec3(wp.cos(alpha) * wp.cos(beta), wp.sin(beta), wp.sin(alpha) * wp.cos(beta))
    aero = aero_wrench_frd(air, wp.vec3(0.0), wp.vec4(aileron, elevator, rudder, 0.0), wing)
    thrust = propeller_wrench_body(airspeed, throttle, propeller)
    force = wp.spatial_top(aero) + wp.spatial_top(thrust) + weight * wp.vec3(-wp.sin(alpha), 0.0, wp.cos(alpha))
    moment = wp.spatial_bottom(aero) + wp.spatial_bottom(thrust)
    for k in range(3):
        residuals[i, k] = force[k]
        residuals[i, 3 + k] = moment[k]


def straight_and_level(wing: dict, propeller: dict, mass: float, gravity: float, airspeed: float) -> Trim:
    """Trim at ``airspeed`` [m/s] for a wing's and a propeller's checked prim values, ``mass`` [kg] and
    ``gravity`` [m/s²]; a NexusError when Newton's method finds no root with the throttle in [0, 1] (too slow to
    fly level, too little thrust)."""
    wing_model, propeller_model_ = aero_model(wing), propeller_model(propeller)
    x = np.array([0.0, 0.0, 0.5, 0.0, 0.0, 0.0])
    candidates = wp.zeros((7, 6), dtype=wp.float32, device="cpu")
    residuals = wp.zeros((7, 6), dtype=wp.float32, device="cpu")

    def evaluate(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = np.repeat(x[None, :], 7, axis=0)
        rows[1:] += STEP * np.eye(6)
        candidates.assign(rows.astype(np.float32))
        wp.launch(trim_residuals, 7, inputs=[candidates, float(airspeed), float(mass * gravity), wing_model,
                                             propeller_model_], outputs=[residuals], device="cpu")
        r = residuals.numpy().astype(np.float64)
        return r[0], (r[1:] - r[0]).T / STEP

    for _ in range(ITERATIONS):
        r, jacobian = evaluate(x)
        if np.max(np.abs(r)) < TOLERANCE:
            break
        try:
            x = x - np.linalg.solve(jacobian, r)
        except np.linalg.LinAlgError:  # throttle past 1 (clamped) or a stalled wing: no direction left to go
            break
    r, _ = evaluate(x)
    worst = float(np.max(np.abs(r)))
    if worst >= TOLERANCE or not np.isfinite(worst) or not 0.0 <= x[2] <= 1.0:
        raise NexusError(f"no straight-and-level trim at {airspeed:g} m/s: after {ITERATIONS} Newton steps the "
                         f"forces and moments left are {np.round(r, 4).tolist()} (N, N m) at alpha "
                         f"{np.degrees(x[0]):.3g} deg, throttle {x[2]:.3g}; fly faster or give it more thrust")
    return Trim(float(airspeed), *(float(v) for v in x), worst)
