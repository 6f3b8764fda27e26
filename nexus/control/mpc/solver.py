"""The MPC's optimal control problem, solved real-time-iteration style: one QP per solve.

Multiple shooting over ``nodes`` intervals of ``horizon/nodes`` seconds (RK4
steps of :class:`~nexus.control.mpc.model.QuadModel`). Each solve linearises
the dynamics about the last solution shifted by one interval (the warm
start), and CasADi's bundled QP solver (``qrqp`` by default; ``osqp``,
``qpoases``, ``hpipm`` also ship with CasADi) solves the one QP in the
deviations from it. That is the real-time iteration of Diehl et al.: one
Gauss-Newton SQP step per control period, whose solution seeds the next.

Cost: squared errors from the reference (position, velocity, attitude
quaternion, body rates) weighted per node, rotor thrusts against the
reference's, and a heavier weight on the last node. Constraints: the
dynamics, the measured state at node 0, and ``min_thrust ≤ T ≤ max_thrust``
per rotor and node.

A solve that the QP solver reports as failed, or that gives a value that is
not finite, is counted; the caller keeps the last good command.
"""

from __future__ import annotations

import logging
import math
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from nexus.control.mpc.blas import one_blas_thread
from nexus.control.registry import ControllerOptions
from nexus.control.mpc.model import QuadModel

if TYPE_CHECKING:  # annotations only: CasADi loads when an MPC is built
    import casadi as ca

log = logging.getLogger("nexus")


@dataclass(frozen=True)
class MpcSettings(ControllerOptions):
    """The MPC's numbers, and ``--controller mpc``'s options (a sweep file's ``controller_options``). Units in
    brackets."""

    rate: float = 100.0  # solves per second [Hz]
    horizon: float = 1.0  # [s]
    nodes: int = 20  # shooting intervals over the horizon
    qp_solver: str = "qrqp"
    #: Compile the model's linearisation with the C compiler (gcc) when there is one.
    jit: bool = True
    #: Weights on squared errors: position [1/m²], velocity [s²/m²], quaternion [-], rates [s²/rad²].
    position_weight: tuple = (40.0, 40.0, 60.0)
    velocity_weight: tuple = (4.0, 4.0, 4.0)
    attitude_weight: tuple = (2.0, 2.0, 2.0, 8.0)  # on (w, x, y, z) differences; z carries the heading
    rate_weight: tuple = (0.5, 0.5, 0.5)
    rotor_weight: float = 0.0  # on the rotors' thrusts against the reference's [1/N²]
    thrust_weight: float = 0.02  # [1/N²]
    terminal_factor: float = 5.0
    #: Rotor thrust bounds as fractions of full thrust [-].
    min_thrust: float = 0.05
    max_thrust: float = 0.95
    #: Consecutive failed solves that end the flight.
    max_failures: int = 10


@dataclass
class SolveStats:
    solves: int = 0
    failures: int = 0
    consecutive_failures: int = 0
    times_us: list = field(default_factory=list)
    last_status: str = ""

    def summary(self) -> dict:
        times = np.asarray(self.times_us) if self.times_us else np.zeros(1)
        return {
            "solves": self.solves, "failures": self.failures, "last_status": self.last_status,
            "solve_us_median": round(float(np.median(times)), 1), "solve_us_p99": round(float(np.percentile(times, 99)), 1),
        }


def attitudes_for(accelerations: np.ndarray, yaw: float, gravity: float) -> np.ndarray:
    """Attitudes (n, 4) as (w, x, y, z), FRD→NED, that point the thrust along each of ``accelerations`` (n, 3)
    [m/s², NED] less gravity, at heading ``yaw`` [rad] (differential flatness). Vectorised: it runs at every node
    of every solve."""
    body_z = np.array([0.0, 0.0, gravity]) - np.asarray(accelerations, dtype=np.float64)
    body_z /= np.linalg.norm(body_z, axis=1, keepdims=True)
    hy = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
    body_x = np.stack([hy[1] * body_z[:, 2] - hy[2] * body_z[:, 1], hy[2] * body_z[:, 0] - hy[0] * body_z[:, 2],
                       hy[0] * body_z[:, 1] - hy[1] * body_z[:, 0]], axis=1)
    body_x /= np.linalg.norm(body_x, axis=1, keepdims=True)
    body_y = np.stack([body_z[:, 1] * body_x[:, 2] - body_z[:, 2] * body_x[:, 1],
                       body_z[:, 2] * body_x[:, 0] - body_z[:, 0] * body_x[:, 2],
                       body_z[:, 0] * body_x[:, 1] - body_z[:, 1] * body_x[:, 0]], axis=1)
    m = np.stack([body_x, body_y, body_z], axis=2)  # columns: the body axes in NED
    # Rotation matrix to quaternion: of the four formulas take, per row, the one with the largest pivot.
    pivots = np.stack([1 + m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2], 1 + m[:, 0, 0] - m[:, 1, 1] - m[:, 2, 2],
                       1 - m[:, 0, 0] + m[:, 1, 1] - m[:, 2, 2], 1 - m[:, 0, 0] - m[:, 1, 1] + m[:, 2, 2]], axis=1)
    choice = np.argmax(pivots, axis=1)
    s = 2.0 * np.sqrt(np.maximum(pivots[np.arange(len(m)), choice], 1e-12))
    a, b, c = m[:, 2, 1] - m[:, 1, 2], m[:, 0, 2] - m[:, 2, 0], m[:, 1, 0] - m[:, 0, 1]
    d, e, f = m[:, 0, 1] + m[:, 1, 0], m[:, 0, 2] + m[:, 2, 0], m[:, 1, 2] + m[:, 2, 1]
    candidates = np.stack([
        np.stack([0.25 * s, a / s, b / s, c / s], axis=1),
        np.stack([a / s, 0.25 * s, d / s, e / s], axis=1),
        np.stack([b / s, d / s, 0.25 * s, f / s], axis=1),
        np.stack([c / s, e / s, f / s, 0.25 * s], axis=1),
    ], axis=1)
    return candidates[np.arange(len(m)), choice]


#: Where CasADi writes the generated C source and the compiled library: a scratch folder of
#: this process (removed at exit), never the user's working directory.
_JIT_FOLDER: tempfile.TemporaryDirectory | None = None


def _jit_folder() -> str:
    global _JIT_FOLDER
    if _JIT_FOLDER is None:
        _JIT_FOLDER = tempfile.TemporaryDirectory(prefix="nexus-mpc-jit-")
    return _JIT_FOLDER.name


def linearisation(xs, us, next_x, nodes: int, jit: bool) -> ca.Function:
    """F(x, u), dF/dx and dF/du at ``nodes`` points at once; compiled with the system's C compiler when ``jit``
    and one is found (about 10x faster to evaluate), interpreted otherwise."""
    import casadi as ca  # noqa: PLC0415  (reason: casadi is optional and slow to import; loaded when an MPC is built)
    outputs = [next_x, ca.jacobian(next_x, xs), ca.jacobian(next_x, us)]
    if jit and shutil.which("gcc"):
        try:
            # The folder is removed at exit as a whole, so CasADi is told not to remove its files itself.
            options = {"jit": True, "compiler": "shell", "jit_name": "mpc_linearisation", "jit_temp_suffix": True,
                       "jit_cleanup": False,
                       "jit_options": {"flags": ["-O2"], "compiler": "gcc", "directory": _jit_folder(), "cleanup": False}}
            return ca.Function("mpc_linearisation", [xs, us], outputs, options).map(nodes)
        except RuntimeError as error:
            log.warning("the MPC's model could not be compiled (%s); evaluating it interpreted", str(error).splitlines()[0])
    return ca.Function("mpc_linearisation", [xs, us], outputs).map(nodes)


class RtiSolver:
    """One QP per :meth:`solve`, warm-started from the previous solution."""

    def __init__(self, model: QuadModel, settings: MpcSettings):
        import casadi as ca  # noqa: PLC0415  (reason: casadi is optional and slow to import; loaded when an MPC is built)
        self.model, self.settings = model, settings
        n, nx, nu = settings.nodes, model.state_size, model.rotors
        self.dt = settings.horizon / n
        #: Intervals the horizon moves on between solves.
        self.shift = min(1.0, 1.0 / (settings.rate * self.dt))
        step = model.step_function(self.dt)
        xs, us = ca.SX.sym("x", nx), ca.SX.sym("u", nu)
        next_x = step(xs, us)
        self.linear = linearisation(xs, us, next_x, n, settings.jit)
        weights = np.array(list(settings.position_weight) + list(settings.velocity_weight) + list(settings.attitude_weight)
                           + list(settings.rate_weight) + [settings.rotor_weight] * nu)
        self.state_weights = np.repeat(weights[:, None], n + 1, axis=1)
        self.state_weights[:, n] *= settings.terminal_factor
        # The QP is condensed: the state deviations follow from the input deviations through the linearised
        # dynamics, so its variables are the nodes' thrust deviations only, bounded by the rotor limits.
        self.nw = nu * n
        options = {"error_on_fail": False}
        if settings.qp_solver == "qrqp":
            options.update(print_iter=False, print_header=False, print_info=False)
        elif settings.qp_solver == "osqp":
            options.update(osqp={"verbose": False, "eps_abs": 1e-6, "eps_rel": 1e-6, "polish": True}, warm_start_primal=True)
        elif settings.qp_solver == "qpoases":
            options.update(printLevel="none", sparse=False)
        self.qp = ca.conic("mpc", settings.qp_solver,
                           {"h": ca.Sparsity.dense(self.nw, self.nw), "a": ca.Sparsity(0, self.nw)}, options)
        hover = model.hover_thrust
        self.xbar = np.zeros((nx, n + 1))
        self.xbar[6] = 1.0
        self.xbar[13:] = hover
        self.ubar = np.full((nu, n), hover)
        self.lam_x = np.zeros(self.nw)
        self.stats = SolveStats()
        self.started = False

    def reset(self, x0: np.ndarray) -> None:
        """Seed the linearisation with ``x0`` held at hover thrust."""
        self.xbar[:] = np.asarray(x0, dtype=np.float64)[:, None]
        self.ubar[:] = self.model.hover_thrust
        self.started = True

    def solve(self, x0: np.ndarray, xref: np.ndarray, uref: np.ndarray) -> bool:
        """One real-time iteration from state ``x0`` (13 + n) towards ``xref`` (13 + n, nodes+1) and ``uref`` (n, nodes); True if it succeeded.

        On success the new trajectory is in :attr:`xbar` and :attr:`ubar`
        (node 0 is the command); on failure they keep the last good one.
        """
        s, n, nx, nu = self.settings, self.settings.nodes, self.model.state_size, self.model.rotors
        if not self.started:
            self.reset(x0)
        x0 = np.asarray(x0, dtype=np.float64)
        if np.dot(x0[6:10], self.xbar[6:10, 0]) < 0.0:  # same rotation, other sign: keep the linearisation's hemisphere
            x0 = x0.copy()
            x0[6:10] *= -1.0
        lo, hi = s.min_thrust * self.model.max_thrust, s.max_thrust * self.model.max_thrust
        begin = time.perf_counter()
        blas = one_blas_thread()
        blas.__enter__()
        try:
            f, a, b = (m.full() for m in self.linear(self.xbar[:, :n], self.ubar))
            a, b = a.reshape(nx, n, nx), b.reshape(nx, n, nu)  # [row, node, column]
            gap = f - self.xbar[:, 1:]  # F(xbar_k, ubar_k) − xbar_{k+1}
            # dx_k = E_k du + e_k, from dx_0 = x0 − xbar_0 and dx_{k+1} = A_k dx_k + B_k du_k + gap_k.
            e = np.zeros((n + 1, nx))
            big_e = np.zeros((n + 1, nx, self.nw))
            e[0] = x0 - self.xbar[:, 0]
            for k in range(n):
                big_e[k + 1] = a[:, k, :] @ big_e[k]
                big_e[k + 1][:, k * nu:(k + 1) * nu] += b[:, k, :]
                e[k + 1] = a[:, k, :] @ e[k] + gap[:, k]
            stacked = big_e.reshape((n + 1) * nx, self.nw)
            weights = self.state_weights.T.ravel()
            offset = (e + (self.xbar - xref).T).ravel()
            hessian = 2.0 * (stacked.T @ (weights[:, None] * stacked)) + 2.0 * s.thrust_weight * np.eye(self.nw)
            gradient = 2.0 * (stacked.T @ (weights * offset)) + 2.0 * s.thrust_weight * (self.ubar - uref).T.ravel()
            result = self.qp(h=hessian, g=gradient, lbx=(lo - self.ubar).T.ravel(), ubx=(hi - self.ubar).T.ravel(),
                             x0=np.zeros(self.nw), lam_x0=self.lam_x)
            status = self.qp.stats()
            ok = bool(status.get("success", False))
            self.stats.last_status = str(status.get("return_status", ""))
            du = result["x"].full().ravel()
            x = self.xbar + (stacked @ du + e.ravel()).reshape(n + 1, nx).T
            if ok and not (np.isfinite(du).all() and np.isfinite(x).all()):
                ok, self.stats.last_status = False, "not finite (state or solution)"
        except RuntimeError as error:  # the QP solver refused the problem
            ok, self.stats.last_status = False, f"error: {error}".splitlines()[0][:120]
        finally:
            blas.__exit__(None, None, None)
        self.stats.times_us.append((time.perf_counter() - begin) * 1e6)
        self.stats.solves += 1
        if not ok:
            self.stats.failures += 1
            self.stats.consecutive_failures += 1
            return False
        self.stats.consecutive_failures = 0
        self.lam_x = result["lam_x"].full().ravel()
        u = self.ubar + du.reshape(n, nu).T
        x[6:10] /= np.linalg.norm(x[6:10], axis=0)
        self.solution_x, self.solution_u = x, u
        # Warm start: the solution moved on by one solve period (a fraction of an interval), its last node held.
        f = self.shift
        x_next = np.concatenate([x[:, 1:], x[:, -1:]], axis=1)
        u_next = np.concatenate([u[:, 1:], u[:, -1:]], axis=1)
        self.xbar = (1.0 - f) * x + f * x_next
        self.xbar[6:10] /= np.linalg.norm(self.xbar[6:10], axis=0)
        self.ubar = (1.0 - f) * u + f * u_next
        return True
