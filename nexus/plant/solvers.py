"""The physics solvers a vehicle flies with: ``mujoco`` (the default), ``featherstone`` or ``freeflyer``.

Both step the same Newton model from the same vehicle file. They differ in
what they can give:

* **mujoco** (``SolverMuJoCo``, MuJoCo Warp) computes its own contacts and the
  ``body_qdd`` observable the IMU reads. Its tape gradient is zero: never use
  it for a differentiable rollout.
* **featherstone** (``SolverFeatherstone``) is differentiable on a ``wp.Tape``.
  It takes contacts from Newton's ``CollisionPipeline`` (penalty contacts with
  the shapes' ``ke``/``kd``/``mu``), and it does not compute ``body_qdd``:
  Nexus supplies that observable itself (:data:`NEXUS_OBSERVABLES`) as the
  step-average acceleration ``(v_after - v_before) / dt`` of each body's
  centre of mass and angular velocity, which is exactly the acceleration a
  semi-implicit step applied.
* **freeflyer** (:class:`nexus.plant.freeflyer.SolverFreeFlyer`) flies a free
  base with rotors as one rigid body with spinning rotors, in one kernel launch
  a step over every world, with its own ground contact and ``body_qdd``; it
  refuses, at build, any model it cannot fly (docs/freeflyer.md).
"""

from __future__ import annotations

from pathlib import Path

import newton
import warp as wp

from nexus.core.errors import BuildError
from nexus.plant.freeflyer import FreeFlyerRefusal, SolverFreeFlyer
from nexus.plant.newton_messages import newton_messages_to_nexus

#: ``--solver`` choices; the first is the default.
SOLVERS = ("mujoco", "featherstone", "freeflyer")
DEFAULT_SOLVER = SOLVERS[0]
#: Observables Nexus computes itself when a solver does not (see :func:`step_average_acceleration`).
NEXUS_OBSERVABLES = {"featherstone": frozenset({"body_qdd"})}
#: MuJoCo's conjugate-gradient iteration limit a step (its default: 100).
CG_ITERATIONS = 1000


def check_solver(name: str) -> str:
    """``name`` if Nexus knows it, else a one-line BuildError listing the choices."""
    if name not in SOLVERS:
        raise BuildError(f"--solver {name}: unknown solver; choose one of {', '.join(SOLVERS)}")
    return name


#: How a refusal names each solver.
SOLVER_NAMES = {"mujoco": "MuJoCo", "featherstone": "Newton's Featherstone solver", "freeflyer": "the free-flyer solver"}


def make_solver(name: str, model: newton.Model, vehicle_path: Path, nconmax: int | None = None):
    """The Newton solver ``name`` for ``model``; a solver's refusal becomes one BuildError line."""
    check_solver(name)
    if name == "freeflyer":
        try:
            return SolverFreeFlyer(model)
        except FreeFlyerRefusal as refusal:
            raise BuildError(f"{vehicle_path}: --solver freeflyer: {refusal}") from refusal
    try:
        with newton_messages_to_nexus(str(vehicle_path)):
            if name == "mujoco":
                # Conjugate gradient instead of Newton's method: 92 graph nodes per step instead of 95 and about
                # 19% less CPU time, with the same flight (docs/benchmarking.md, Kernels per tick). CG needs more
                # iterations where contacts are stiff: a plane on its wheels in gusts took up to 199 at moderate
                # turbulence and 517 at severe, past MuJoCo's default limit of 100 (each such tick printed a
                # warning and left its contact forces unconverged); a step stops at convergence, so the higher
                # limit costs only those ticks.
                return newton.solvers.SolverMuJoCo(model, solver="cg", nconmax=nconmax,
                                                   iterations=CG_ITERATIONS)
            return newton.solvers.SolverFeatherstone(model)
    except Exception as error:
        what = " ".join(str(error).split()) or type(error).__name__
        solver = SOLVER_NAMES.get(name, name)
        naming = " (MuJoCo names a body by its prim path with '/' as '_')" if name == "mujoco" else ""
        raise BuildError(
            f"{vehicle_path}: {solver} refused the vehicle's model: {what}; check the masses, inertias "
            f"and joints of the bodies it names{naming}"
        ) from error


def solver_name(solver) -> str:
    """The ``--solver`` choice a solver object was made for."""
    if isinstance(solver, SolverFreeFlyer):
        return "freeflyer"
    return "mujoco" if isinstance(solver, newton.solvers.SolverMuJoCo) else "featherstone"


def needs_contacts(solver) -> bool:
    """Whether the solver takes contacts from Newton's collision pipeline (MuJoCo finds its own)."""
    return not isinstance(solver, (newton.solvers.SolverMuJoCo, SolverFreeFlyer))


@wp.kernel
def step_average_acceleration(
    qd_before: wp.array(dtype=wp.spatial_vector),
    qd_after: wp.array(dtype=wp.spatial_vector),
    inv_dt: float,
    qdd: wp.array(dtype=wp.spatial_vector),
):
    """Each body's acceleration over one step [m/s², rad/s²]: the change of its twist divided by the step."""
    i = wp.tid()
    qdd[i] = (qd_after[i] - qd_before[i]) * inv_dt


__all__ = ["DEFAULT_SOLVER", "NEXUS_OBSERVABLES", "SOLVERS", "check_solver", "make_solver", "needs_contacts",
           "solver_name", "step_average_acceleration"]
