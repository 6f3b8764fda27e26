"""The multirotor the MPC predicts with, read from the plant (nothing restated).

Mass and inertia are the whole vehicle's (every body, rotors included) about
its centre of mass; each rotor's position [m, FRD from the centre of mass],
spin, yaw moment per unit thrust ``kQ/kT`` [m] and full thrust
``kT·ω_max²`` [N] come from the plant's rotors and ESCs, the same way PX4's
control-allocation parameters are derived (:mod:`nexus.px4.params`).

Its moments and thrust come from the vehicle's effectiveness matrix
(:func:`nexus.plant.rotor_geometry.effectiveness`, per newton of each rotor's
thrust), the matrix the control allocation is built from.

State (13 + n for n rotors): position [m, NED], velocity [m/s, NED], attitude quaternion
FRD→NED as (w, x, y, z), body rates [rad/s, FRD], and the rotors' thrusts
[N]. Input (n): the rotor thrusts asked for [N], in ESC channel order (the
``controls`` slots), which each rotor reaches with the ESC's first-order lag
(the mean of its up and down time constants). Rotor gyroscopic torque and air
drag are left out: the rate loop below the MPC absorbs them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nexus.core.errors import BuildError
from nexus.plant.rotor_geometry import centre_of_mass, effectiveness, inertia_about, rotor_geometry, to_body_matrix

if TYPE_CHECKING:  # annotations only: CasADi loads when an MPC is built
    import casadi as ca

#: State entries before the rotors' thrusts: position, velocity, attitude quaternion, body rates.
BODY_STATE = 13


@dataclass(frozen=True)
class QuadModel:
    mass: float  # [kg]
    inertia: tuple  # diagonal [kg·m², FRD]
    gravity: float  # [m/s²]
    #: Per rotor, channel order: position [m, FRD from the centre of mass].
    rotor_positions: tuple
    #: Yaw moment per unit thrust [m], signed: + for a counter-clockwise rotor (nose-right torque).
    yaw_moments: tuple
    max_thrust: float  # per rotor [N]
    thrust_model_factor: float  # the ESC's f in thrust = (1 − f)·u + f·u²
    thrust_lag: float = 0.06  # the rotors' thrust time constant [s]
    #: (4, n): roll, pitch, yaw moment [N·m, FRD] and thrust [N] per newton of each rotor's thrust; None:
    #: upright rotors at ``rotor_positions`` with ``yaw_moments``.
    effectiveness: tuple | None = None

    @property
    def rotors(self) -> int:
        return len(self.rotor_positions)

    @property
    def state_size(self) -> int:
        return BODY_STATE + self.rotors

    def matrix(self) -> np.ndarray:
        """The effectiveness per newton (4, n)."""
        if self.effectiveness is not None:
            return np.asarray(self.effectiveness, dtype=np.float64)
        return np.array([[-r[1] for r in self.rotor_positions], [r[0] for r in self.rotor_positions],
                         list(self.yaw_moments), [1.0] * self.rotors])

    @property
    def hover_thrust(self) -> float:
        """Per-rotor thrust [N] that holds the weight."""
        return self.mass * self.gravity / len(self.rotor_positions)

    def dynamics(self, x, u):
        """dx/dt as a CasADi expression of the state ``x`` (13 + n) and the rotor thrusts asked for ``u`` (n)."""
        import casadi as ca  # noqa: PLC0415  (reason: casadi is optional and slow to import; loaded when an MPC is built)
        v, q, w, u_asked = x[3:6], x[6:10], x[10:13], u
        u = x[BODY_STATE:]  # the thrusts the rotors give now
        b = self.matrix()
        qw, qx, qy, qz = q[0], q[1], q[2], q[3]
        thrust = sum(b[3, i] * u[i] for i in range(self.rotors))
        # Body z (FRD, down) in NED is the third column of R(q); thrust pushes along −z.
        body_z = ca.vertcat(2 * (qx * qz + qw * qy), 2 * (qy * qz - qw * qx), 1 - 2 * (qx * qx + qy * qy))
        accel = ca.vertcat(0, 0, self.gravity) - body_z * thrust / self.mass
        q_dot = 0.5 * ca.vertcat(
            -qx * w[0] - qy * w[1] - qz * w[2],
            qw * w[0] + qy * w[2] - qz * w[1],
            qw * w[1] - qx * w[2] + qz * w[0],
            qw * w[2] + qx * w[1] - qy * w[0],
        )
        # Each rotor's moment per newton, from the effectiveness matrix: r × d plus its drag reaction.
        torque = ca.vertcat(*[sum(b[k, i] * u[i] for i in range(self.rotors)) for k in range(3)])
        inertia = ca.DM(self.inertia)
        w_dot = (torque - ca.cross(w, inertia * w)) / inertia
        return ca.vertcat(v, accel, q_dot, w_dot, (u_asked - u) / self.thrust_lag)

    def step_function(self, dt: float) -> ca.Function:
        """One RK4 step of ``dt`` [s]: F(x, u) -> x_next."""
        import casadi as ca  # noqa: PLC0415  (reason: casadi is optional and slow to import; loaded when an MPC is built)
        x, u = ca.SX.sym("x", self.state_size), ca.SX.sym("u", self.rotors)
        k1 = self.dynamics(x, u)
        k2 = self.dynamics(x + 0.5 * dt * k1, u)
        k3 = self.dynamics(x + 0.5 * dt * k2, u)
        k4 = self.dynamics(x + dt * k3, u)
        return ca.Function("F", [x, u], [x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)])


def model_from_plant(plant, where: str) -> QuadModel:
    """The plant's multirotor (its layout was checked when it loaded), or a BuildError naming ``where`` when its
    rotors are not equal (one full thrust and one thrust model)."""
    rotors = sorted(plant.rotors, key=lambda r: r.esc["channel"])
    geometry = rotor_geometry(plant)
    max_thrusts = {round(g.max_thrust, 6) for g in geometry}
    factors = {r.esc["thrust_model_factor"] for r in rotors}
    if len(max_thrusts) != 1 or len(factors) != 1:
        raise BuildError(f"{where}: the MPC needs equal rotors; full thrusts {sorted(max_thrusts)} N, "
                         f"nexus:thrustModelFactor {sorted(factors)}")
    max_thrust = float(max_thrusts.pop())
    per_newton = effectiveness(geometry) / np.array([g.max_thrust for g in geometry])
    return QuadModel(
        mass=plant.mass, inertia=tuple(float(i) for i in inertia_about(plant, centre_of_mass(plant), to_body_matrix(plant))),
        gravity=plant.gravity, rotor_positions=tuple(g.position for g in geometry),
        yaw_moments=tuple(g.yaw_moment for g in geometry), max_thrust=max_thrust, thrust_model_factor=float(factors.pop()),
        thrust_lag=float(np.mean([0.5 * (r.esc["tau_up"] + r.esc["tau_down"]) for r in rotors])),
        effectiveness=tuple(tuple(float(v) for v in row) for row in per_newton),
    )
