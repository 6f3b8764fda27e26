"""The quadrotor the MPC predicts with, read from the plant (nothing restated).

Mass and inertia are the whole vehicle's (every body, rotors included) about
its centre of mass; each rotor's position [m, FRD from the centre of mass],
spin, yaw moment per unit thrust ``kQ/kT`` [m] and full thrust
``kT·ω_max²`` [N] come from the plant's rotors and ESCs, the same way PX4's
control-allocation parameters are derived (:mod:`nexus.px4.params`).

State (17): position [m, NED], velocity [m/s, NED], attitude quaternion
FRD→NED as (w, x, y, z), body rates [rad/s, FRD], and the rotors' thrusts
[N]. Input (4): the rotor thrusts asked for [N], in ESC channel order (the
``controls`` slots), which each rotor reaches with the ESC's first-order lag
(the mean of its up and down time constants). Rotor gyroscopic torque and air
drag are left out: the rate loop below the MPC absorbs them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nexus.core.errors import BuildError

if TYPE_CHECKING:  # annotations only: CasADi loads when an MPC is built
    import casadi as ca

STATE_SIZE, INPUT_SIZE = 17, 4


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

    @property
    def hover_thrust(self) -> float:
        """Per-rotor thrust [N] that holds the weight."""
        return self.mass * self.gravity / len(self.rotor_positions)

    def dynamics(self, x, u):
        """dx/dt as a CasADi expression of the state ``x`` (17) and the rotor thrusts asked for ``u`` (4)."""
        import casadi as ca  # noqa: PLC0415 (loaded when an MPC is built: listing the controllers must not need it)
        v, q, w, u_asked = x[3:6], x[6:10], x[10:13], u
        u = x[13:17]  # the thrusts the rotors give now
        qw, qx, qy, qz = q[0], q[1], q[2], q[3]
        thrust = ca.sum1(u)
        # Body z (FRD, down) in NED is the third column of R(q); thrust pushes along −z.
        body_z = ca.vertcat(2 * (qx * qz + qw * qy), 2 * (qy * qz - qw * qx), 1 - 2 * (qx * qx + qy * qy))
        accel = ca.vertcat(0, 0, self.gravity) - body_z * thrust / self.mass
        q_dot = 0.5 * ca.vertcat(
            -qx * w[0] - qy * w[1] - qz * w[2],
            qw * w[0] + qy * w[2] - qz * w[1],
            qw * w[1] - qx * w[2] + qz * w[0],
            qw * w[2] + qx * w[1] - qy * w[0],
        )
        # r × (0, 0, −T) = (−y·T, x·T, 0), plus the rotor's yaw reaction.
        torque = ca.vertcat(
            sum(-r[1] * u[i] for i, r in enumerate(self.rotor_positions)),
            sum(r[0] * u[i] for i, r in enumerate(self.rotor_positions)),
            sum(k * u[i] for i, k in enumerate(self.yaw_moments)),
        )
        inertia = ca.DM(self.inertia)
        w_dot = (torque - ca.cross(w, inertia * w)) / inertia
        return ca.vertcat(v, accel, q_dot, w_dot, (u_asked - u) / self.thrust_lag)

    def step_function(self, dt: float) -> ca.Function:
        """One RK4 step of ``dt`` [s]: F(x, u) -> x_next."""
        import casadi as ca  # noqa: PLC0415 (loaded when an MPC is built: listing the controllers must not need it)
        x, u = ca.SX.sym("x", STATE_SIZE), ca.SX.sym("u", INPUT_SIZE)
        k1 = self.dynamics(x, u)
        k2 = self.dynamics(x + 0.5 * dt * k1, u)
        k3 = self.dynamics(x + 0.5 * dt * k2, u)
        k4 = self.dynamics(x + dt * k3, u)
        return ca.Function("F", [x, u], [x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)])


def model_from_plant(plant, where: str) -> QuadModel:
    """The plant's quadrotor, or a BuildError naming ``where`` when it is not a four-rotor vehicle with one thrust model."""
    from nexus.plant.frames import flu_to_frd_np, quat_to_matrix_np
    from nexus.plant.rotor_geometry import centre_of_mass, inertia_about

    rotors = sorted(plant.rotors, key=lambda r: r.esc["channel"])
    if len(rotors) != INPUT_SIZE or [r.esc["channel"] for r in rotors] != list(range(INPUT_SIZE)):
        raise BuildError(f"{where}: the MPC's model is a quadrotor on ESC channels 0-3; this vehicle has "
                         f"{len(rotors)} rotors on channels {[r.esc['channel'] for r in rotors]}")
    max_thrusts = {round(r.thrust_coefficient * r.esc["max_speed"] ** 2, 6) for r in rotors}
    factors = {r.esc["thrust_model_factor"] for r in rotors}
    if len(max_thrusts) != 1 or len(factors) != 1:
        raise BuildError(f"{where}: the MPC needs equal rotors; full thrusts {sorted(max_thrusts)} N, "
                         f"nexus:thrustModelFactor {sorted(factors)}")
    body_q = plant.model.body_q.numpy().astype(np.float64)
    to_body = quat_to_matrix_np(body_q[plant.base][3:7]).T
    com = centre_of_mass(plant)
    positions = tuple(tuple(float(c) for c in flu_to_frd_np(to_body @ (body_q[r.body][:3] - com))) for r in rotors)
    return QuadModel(
        mass=plant.mass, inertia=tuple(float(i) for i in inertia_about(plant, com, to_body)), gravity=plant.gravity,
        rotor_positions=positions,
        yaw_moments=tuple(float(r.spin * r.torque_coefficient / r.thrust_coefficient) for r in rotors),
        max_thrust=float(max_thrusts.pop()), thrust_model_factor=float(factors.pop()),
        thrust_lag=float(np.mean([0.5 * (r.esc["tau_up"] + r.esc["tau_down"]) for r in rotors])),
    )
