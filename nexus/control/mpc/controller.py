"""The MPC controller: a host solve at its own rate over the device attitude and rate loop.

Two ``control`` stages. ``mpc`` (host) reads the estimate and the
``reference`` (a :class:`~nexus.guidance.reference.ReferenceTrajectory` the
tracking guidance wrote at start-up); when a solve is due by the sensors'
due-time rule (:mod:`nexus.sensors.schedule`, whole nanoseconds), it runs one
real-time iteration (:mod:`nexus.control.mpc.solver`) and writes the
``attitude_goal``. ``attitude`` (device, every tick, captured) turns that goal
into the ``controls`` (:mod:`nexus.control.mpc.attitude_loop`).

The reference at each node comes with its flat outputs: the attitude that
points the thrust along the reference's acceleration less gravity at the
reference heading, and the rotor thrusts that carry it. A failed solve is
counted and the last good goal stays; ``max_failures`` failures in a row end
the flight with :class:`MpcError`.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.control.mpc.attitude_loop import AttitudeGoal, attitude_loop
from nexus.control.allocation import Allocation, allocation_for, mix_tables, quad_x_allocation
from nexus.control.mpc.model import QuadModel, model_from_plant
from nexus.control.mpc.solver import MpcSettings, RtiSolver, attitudes_for
from nexus.control.registry import register
from nexus.control.pid import PID_SPEC, PID_STATE, PidGains, PidParams, device_params
from nexus.core import Component, Read, Stage, Write
from nexus.core.errors import BuildError, RunError
from nexus.core.spec import Spec
from nexus.estimation.pose_twist import PoseTwist
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.guidance.reference import ReferenceTrajectory
from nexus.schemas.reader import read_connections, read_prim, where
from nexus.sensors.schedule import period_ns


class MpcError(RunError):
    """The MPC failed too many solves in a row: the flight cannot go on."""


def check_settings(model: QuadModel, settings: MpcSettings, where: str) -> None:
    """Raise BuildError naming ``where`` when the problem cannot be posed or cannot be feasible."""
    if not settings.horizon >= 1.0:
        raise BuildError(f"{where}: the MPC horizon is {settings.horizon} s; it must be at least 1 s")
    if not settings.rate >= 100.0:
        raise BuildError(f"{where}: the MPC rate is {settings.rate} Hz; it must be at least 100 Hz")
    if settings.nodes < 2:
        raise BuildError(f"{where}: the MPC needs at least 2 shooting nodes, got {settings.nodes}")
    if not 0.0 <= settings.min_thrust < settings.max_thrust <= 1.0:
        raise BuildError(f"{where}: the MPC's rotor thrust bounds [{settings.min_thrust}, {settings.max_thrust}] "
                         "(fractions of full thrust) must satisfy 0 <= min < max <= 1")
    hover = model.hover_thrust / model.max_thrust
    if not settings.min_thrust < hover < settings.max_thrust:
        raise BuildError(
            f"{where}: infeasible MPC: hovering takes {model.hover_thrust:.2f} N per rotor ({hover:.2f} of the "
            f"{model.max_thrust:.2f} N full thrust), outside the thrust bounds [{settings.min_thrust}, "
            f"{settings.max_thrust}]; the {model.mass:.2f} kg vehicle cannot hold its weight. Raise the bounds or "
            "use stronger rotors (nexus:maxSpeed of the ESCs, the propellers' thrust coefficient)"
        )


#: What the engine must know of the MPC: the attitude loop's state. It is built from the PID prim (its gains),
#: so it declares no schema of its own, and its two stages are written out in :meth:`MpcController.stages`.
MPC_SPEC = Spec(
    name="MpcController",
    noun="controller",
    doc="Host MPC over the device attitude and rate loop, on the PID prim's attitude and rate gains.",
    state=(PID_STATE,),
)


class MpcController(Component):
    """Host MPC at ``settings.rate`` writing ``attitude_goal``; device attitude and rate loop writing ``controls``.

    The device loop's integrators are engine state (``pid``). The host solve keeps its own Python state (the
    solver's warm start, the solve schedule): a ring with the MPC is not snapshotted (a host stage refuses).
    """

    spec = MPC_SPEC

    def __init__(self, name: str, model: QuadModel, gains: PidGains | None = None,
                 settings: MpcSettings | None = None, connections=None, rotor_speeds=None,
                 allocation: Allocation | None = None):
        """``rotor_speeds``: (the plant's ESC speed array [rad/s], rotor indices in channel order, kT [N/(rad/s)²]):
        the rotors' thrusts at each solve, as an ESC's RPM telemetry would give them; without it the MPC takes
        its own prediction."""
        super().__init__(name, connections)
        self.rotor_speeds = rotor_speeds
        self.model = model
        self.allocation = allocation or quad_x_allocation()
        self.gains = gains or PidGains()
        self.settings = settings or MpcSettings()
        check_settings(self.model, self.settings, name)
        self.solver: RtiSolver | None = None
        self._first_ns = None
        self._next = 0

    def stages(self) -> list[Stage]:
        return [
            Stage("mpc", "control", self._solve, host=True,
                  reads=(Read("estimate", PoseTwist, (1,)), Read("reference", ReferenceTrajectory),
                         Read("time_ns", wp.int64, (1,))),
                  writes=(Write("attitude_goal", AttitudeGoal, (1,)),)),
            Stage("attitude", "control", self._attitude,
                  reads=(Read("estimate", PoseTwist, (1,)), Read("attitude_goal", AttitudeGoal, (1,)),
                         Read("armed", wp.int32, (1,), default=1)),
                  writes=(Write("controls", wp.float32, (1, CONTROLS_WIDTH), recorded=True),)),
        ]

    def prepare(self, ctx) -> None:
        self.dt = ctx.dt
        self.period_ns = period_ns(self.settings.rate, ctx.dt_ns)
        f = self.model.thrust_model_factor
        self.params = wp.array([device_params(self.gains, f, self.model.gravity)], dtype=PidParams, device=ctx.device)
        self.solver = RtiSolver(self.model, self.settings)
        self.mix = mix_tables(self.allocation, ctx.worlds, ctx.device)
        self.no_clock = wp.zeros(ctx.worlds, dtype=wp.int64, device=ctx.device)

    # -- host: the solve --------------------------------------------------------------

    def _due(self, now_ns: int) -> bool:
        """The sensors' due-time rule: the k-th solve after the first at first + k·period [ns]."""
        if self._first_ns is None:
            self._first_ns, self._next = now_ns, 1
            return True
        if self.period_ns == 0:
            return True
        if now_ns < self._first_ns + self._next * self.period_ns:
            return False
        while self._first_ns + self._next * self.period_ns <= now_ns:
            self._next += 1
        return True

    def _solve(self, io) -> None:
        now_ns = int(io["time_ns"].read())
        if not self._due(now_ns):
            return
        reference: ReferenceTrajectory = io["reference"].read()
        e = io["estimate"].read()
        solver = self.solver
        thrusts = solver.xbar[13:, 0] if solver.started else np.zeros(self.model.rotors)
        if self.rotor_speeds is not None:
            speeds, indices, kt = self.rotor_speeds
            thrusts = kt * speeds.numpy()[indices].astype(np.float64) ** 2
        x0 = np.array([*e.position, *e.velocity, e.attitude[3], e.attitude[0], e.attitude[1], e.attitude[2], *e.rates,
                       *thrusts], dtype=np.float64)
        xref, uref = self.reference_nodes(reference, now_ns * 1e-9, x0[6:10])
        if solver.solve(x0, xref, uref):
            io["attitude_goal"].write(self.goal_from(solver.solution_x, solver.solution_u))
        elif solver.stats.consecutive_failures >= self.settings.max_failures:
            raise MpcError(
                f"controller '{self.name}': the MPC failed {solver.stats.consecutive_failures} solves in a row "
                f"(last: {solver.stats.last_status}) at sim time {now_ns * 1e-9:.3f} s; the flight stops. "
                "Check that the reference is within the vehicle's reach (speed, acceleration) and the state is finite"
            )

    def goal_from(self, x: np.ndarray, u: np.ndarray) -> AttitudeGoal:
        """The first interval's rotor thrusts as the mixer's collective and torques, and the planned attitude and
        rates at the next solve (one solve period along the first interval)."""
        fractions = u[:, 0] / self.model.max_thrust
        goal = AttitudeGoal()
        goal.thrust = float(fractions.mean())
        goal.torque = wp.vec3(*[float(t) for t in torques_for(self.allocation.mix, fractions)])
        f = self.solver.shift
        q = (1.0 - f) * x[6:10, 0] + f * x[6:10, 1]
        q /= np.linalg.norm(q)
        goal.attitude = wp.quat(float(q[1]), float(q[2]), float(q[3]), float(q[0]))
        goal.rates = wp.vec3(*[float(r) for r in (1.0 - f) * x[10:13, 0] + f * x[10:13, 1]])
        return goal

    def reference_nodes(self, reference: ReferenceTrajectory, now: float, attitude) -> tuple[np.ndarray, np.ndarray]:
        """Reference states (13 + n, nodes+1) and rotor thrusts (n, nodes) at the nodes from ``now`` [s]."""
        n, g = self.settings.nodes, self.model.gravity
        times = now + np.arange(n + 1) * self.solver.dt
        p, v, a = reference.sample(times)
        xref = np.zeros((self.model.state_size, n + 1))
        xref[0:3], xref[3:6] = p.T, v.T
        q = attitudes_for(a, reference.yaw, g)
        q *= np.where(q @ np.asarray(attitude) >= 0.0, 1.0, -1.0)[:, None]  # the hemisphere of the measured attitude
        xref[6:10] = q.T
        lift = np.linalg.norm(np.array([0.0, 0.0, g]) - a[:n], axis=1)
        rotors = self.model.rotors
        uref = np.repeat((self.model.mass * lift / float(rotors))[None, :], rotors, axis=0)
        xref[13:, :n], xref[13:, n] = uref, uref[:, -1]
        return xref, uref

    # -- device: the attitude loop ------------------------------------------------------

    def _attitude(self, io) -> None:
        wp.launch(attitude_loop, dim=1,
                  inputs=[io["estimate"], io["attitude_goal"], io["armed"], self.params, io.state_in["pid"],
                          float(self.dt), self.mix, self.no_clock],
                  outputs=[io.state_out["pid"], io["controls"]], device=io.device)

    def stats(self) -> dict:
        """Solves, failures and solve times [µs] so far (the run's controller_stats)."""
        summary = self.solver.stats.summary() if self.solver else {}
        return {"controller": "mpc", "rate_hz": self.settings.rate, "horizon_s": self.settings.horizon,
                "nodes": self.settings.nodes, "qp_solver": self.settings.qp_solver, **summary}


def torques_for(mix: np.ndarray, fractions: np.ndarray) -> np.ndarray:
    """The normalised torques (3,) whose mix comes nearest the rotors' thrust fractions: each torque column's
    projection when the mix's columns are orthogonal (PX4's quad-X: ±0.5 each), else the least-squares fit."""
    gram = mix.T @ mix
    if np.allclose(gram, np.diag(np.diag(gram)), atol=1e-9):
        return np.array([np.dot(mix[:, k], fractions) / gram[k, k] for k in range(3)])
    return np.linalg.lstsq(mix, fractions, rcond=None)[0][:3]


def build_mpc(prim, ctx, **options) -> MpcController:
    """The MPC for a vehicle: its model from the plant, its attitude and rate gains from the PID prim ``prim``
    (read and checked against ``PID_SPEC``, as the PID controller reads them).

    ``options`` may set any :class:`MpcSettings` field (``rate``, ``horizon``, ...).
    """
    path = str(prim.GetPath())
    here = where(prim, PID_SPEC, ctx.path)
    unknown = set(options) - set(MpcSettings.__dataclass_fields__)
    if unknown:
        raise BuildError(f"{here}: unknown MPC settings {sorted(unknown)}; known: {sorted(MpcSettings.__dataclass_fields__)}")
    gains = PidGains.from_values(prim, read_prim(prim, PID_SPEC, ctx.path), ctx.path)
    connections = read_connections(prim, PID_SPEC, ctx.path)
    rotors = sorted(ctx.plant.rotors, key=lambda r: r.esc["channel"])
    speeds = (ctx.plant.esc_speed, np.array([r.index for r in rotors]), np.array([r.thrust_coefficient for r in rotors]))
    return MpcController(path, model_from_plant(ctx.plant, here), gains, MpcSettings(**options), connections,
                         rotor_speeds=speeds, allocation=allocation_for(ctx.plant))


def _build(prim, path: str, ctx, options: MpcSettings) -> MpcController:
    if prim is None:
        raise BuildError(f"{ctx.path}: --controller mpc needs a prim with NexusPidControllerAPI (its attitude and "
                         "rate gains)")
    return build_mpc(prim, ctx, **options.keywords())


register("mpc", _build, help="model-predictive control of a tracking scene's reference (host solve, device attitude "
         "loop)", options=MpcSettings, reads_setpoint=True, duration_s=60.0,
         single_world="the MPC solves one vehicle's problem on the host each tick, and N of them in turn would run N "
                      "times slower than one; a batched solve is not built")
