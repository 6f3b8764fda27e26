"""What a rollout refuses to differentiate, said before anything runs: never a silent zero gradient.

* ``SolverMuJoCo`` records nothing a tape can reverse: its gradient is zero
  without a word (measured, ``../shared/DESIGN.md``).
* A host stage (PX4's ``exchange``, the MPC's ``mpc``, the
  policy's ``policy``) runs Python between kernels; nothing it computes is on
  the tape, so the gradient would stop there.
"""

from __future__ import annotations

from nexus.core.errors import BuildError
from nexus.plant.solvers import check_solver

#: Host stages of each controller that has any (named without building it: PX4 would wait for its link).
HOST_STAGES = {"px4": ("exchange",), "mpc": ("mpc",), "policy": ("policy",)}


def refuse_undifferentiable(solver: str, controller: str, vehicle: str, scene: str, device: str) -> None:
    """One-line BuildError naming the solver or stage a gradient cannot pass through."""
    check_solver(solver)
    if solver == "mujoco":
        raise BuildError(
            "--solver mujoco: a gradient through SolverMuJoCo's step is zero (MuJoCo Warp records no adjoint); "
            "differentiate with --solver featherstone"
        )
    if solver == "freeflyer":
        raise BuildError(
            "--solver freeflyer: its gradients have not been checked against central differences "
            "(docs/freeflyer.md); differentiate with --solver featherstone"
        )
    if controller in HOST_STAGES:
        stages = ", ".join(f"'{name}'" for name in HOST_STAGES[controller])
        raise BuildError(
            f"--controller {controller}: its host stage(s) {stages} run Python between kernels, outside the tape, "
            "so no gradient passes them; differentiate the device PID (--controller pid)"
        )
    if controller != "pid":
        raise BuildError(f"--controller {controller}: the rollout differentiates the PID controller only; "
                         "use --controller pid")


__all__ = ["HOST_STAGES", "refuse_undifferentiable"]
