"""Every reach into Newton's private parts, in one place: what each is, why Nexus needs it, what would replace it.

All of them serve the taped Featherstone run (:class:`nexus.plant.physics.TapedPlant`, ``nexus optimize``,
:mod:`nexus.diff`). A taped run gives each tick its own copy of every array the step writes, so the backward
pass finds that tick's values and not the last tick's; Newton 1.8 has no public way to hand a solver or an
actuator the arrays it writes into, nor to put the step's input wrench back before the step's adjoint. Each
function below is the one place one such reach happens, and :data:`INTERNALS` lists them for the test.

Written against Newton :data:`NEWTON_VERSION` (pinned in ``pyproject.toml``).
``tests/plant/test_newton_internals.py`` fails, naming this module, when the installed Newton is another
version or any part listed here is missing: read the new Newton's source for each entry of :data:`INTERNALS`,
fix the function that uses it (or switch to the public API it names), then move the pin and
:data:`NEWTON_VERSION` together.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import newton
import warp as wp
from newton.actuators import Actuator
from newton.solvers import SolverFeatherstone

from nexus.core.errors import BuildError

#: The Newton release this module was written against (the one ``pyproject.toml`` pins).
NEWTON_VERSION = "1.8.0"

try:
    from newton._src.solvers.featherstone.kernels import accumulate_free_distance_joint_f_to_body_force
except ImportError as missing:  # pragma: no cover - only on a Newton other than the pinned one
    raise ImportError(
        f"nexus.plant.newton_internals: Newton {newton.__version__} has no "
        "newton._src.solvers.featherstone.kernels.accumulate_free_distance_joint_f_to_body_force (written for "
        f"Newton {NEWTON_VERSION}); see this module's doc for what to do"
    ) from missing

#: Featherstone's arrays that every step overwrites: mass matrix ``M``, Jacobian ``J``, ``P``, ``H`` and the
#: Cholesky factor ``L``. Public attribute names, but not documented as something a caller may replace.
FEATHERSTONE_SCRATCH = ("M", "J", "P", "H", "L")


@dataclass(frozen=True)
class Internal:
    """One private part of Newton that Nexus uses: where it is, why, and the public API that would replace it."""

    name: str
    why: str
    public: str
    present: Callable[[], bool]


def _assigned_in(cls: type, attribute: str) -> Callable[[], bool]:
    """Whether ``cls``'s source assigns ``self.<attribute>`` (an instance attribute no class lists)."""
    return lambda: f"self.{attribute} =" in inspect.getsource(cls)


INTERNALS = (
    Internal(
        "SolverFeatherstone._allocate_state_aux_vars",
        "a taped run's states are made before the flight is captured; Featherstone would otherwise allocate its "
        "per-state arrays (joint_qdd, body_I_s, ...) inside the first captured step, where no allocation may happen",
        "a public 'prepare this State for stepping' call (or model.state() allocating them when the model was "
        "finalized for Featherstone)",
        lambda: callable(getattr(SolverFeatherstone, "_allocate_state_aux_vars", None))),
    Internal(
        "SolverFeatherstone.M, .J, .P, .H, .L (replaced, not read)",
        "each tick's step writes them and its adjoint reads them back; one shared set would hold the last tick's "
        "by the time the backward pass reaches an earlier one",
        "a solver scratch object passed to step() (as observables are), so a caller can own one per tick",
        lambda: all(_assigned_in(SolverFeatherstone, name)() for name in FEATHERSTONE_SCRATCH)),
    Internal(
        "Actuator._computed_forces, Actuator._applied_forces",
        "the servos' force buffers are written each tick and read by their adjoint: one copy per tick, as above",
        "the actuator's output buffers taken from its sim_state()/sim_control() containers, owned by the caller",
        lambda: _assigned_in(Actuator, "_computed_forces")() and _assigned_in(Actuator, "_applied_forces")()),
    Internal(
        "newton._src.solvers.featherstone.kernels.accumulate_free_distance_joint_f_to_body_force",
        "Featherstone's eval_rigid_tau overwrites body_f_ext with the solve-frame wrench, and Warp's adjoint runs "
        "the kernel's forward code again; the tape puts the step's input wrench back (body_f, then the free "
        "joints' joint_f, as the step built it) before that adjoint, so the moment arm's gradient keeps its sign",
        "an eval_rigid_tau that writes its own output array (no adjoint-time restore needed), or this kernel "
        "exported from newton.solvers",
        lambda: callable(accumulate_free_distance_joint_f_to_body_force)),
)


def problems() -> list[str]:
    """What differs from the Newton this module was written for: the version, and each missing part."""
    found = []
    if newton.__version__ != NEWTON_VERSION:
        found.append(f"Newton {newton.__version__} is installed; nexus.plant.newton_internals was written for "
                     f"{NEWTON_VERSION}")
    for internal in INTERNALS:
        try:
            present = internal.present()
        except (OSError, TypeError):  # no source to read
            present = False
        if not present:
            found.append(f"Newton {newton.__version__} lacks {internal.name}, which "
                         "nexus.plant.newton_internals uses")
    return found


def allocate_featherstone_state(solver: SolverFeatherstone, model: newton.Model, state: newton.State) -> None:
    """Give ``state`` Featherstone's per-state arrays now, with gradients (see :data:`INTERNALS`)."""
    solver._allocate_state_aux_vars(model, state, True)


def featherstone_scratch(solver: SolverFeatherstone) -> dict[str, wp.array]:
    """Featherstone's per-step arrays by name (:data:`FEATHERSTONE_SCRATCH`); refused with the Tile API, whose
    per-size views would keep writing the arrays they were made from."""
    if getattr(solver, "use_tile_gemm", False):
        raise BuildError("a taped run cannot replace Featherstone's matrices with use_tile_gemm on; build the "
                         "solver without it")
    return {name: getattr(solver, name) for name in FEATHERSTONE_SCRATCH}


def bind_featherstone_scratch(solver: SolverFeatherstone, arrays: dict[str, wp.array]) -> None:
    """Point Featherstone's per-step arrays at ``arrays`` (a tick's copies, or the live ones given back)."""
    for name, array in arrays.items():
        setattr(solver, name, array)


def servo_forces(actuator: Actuator) -> tuple[wp.array, wp.array]:
    """A servo's computed and applied force buffers [N or N m, one per actuated dof]."""
    return actuator._computed_forces, actuator._applied_forces


def bind_servo_forces(actuator: Actuator, computed: wp.array, applied: wp.array) -> None:
    """Point a servo's force buffers at ``computed`` and ``applied`` (a tick's copies, or the live ones)."""
    actuator._computed_forces, actuator._applied_forces = computed, applied


def add_free_joint_wrenches(model: newton.Model, joint_f: wp.array, wrench: wp.array, device) -> None:
    """Add each free joint's ``joint_f`` (world frame, at the centre of mass) to its child body's ``wrench``,
    as Featherstone's step does before it converts the wrench to its solve frame."""
    wp.launch(accumulate_free_distance_joint_f_to_body_force, model.joint_count,
              inputs=[model.joint_type, model.joint_child, model.joint_qd_start, joint_f],
              outputs=[wrench], device=device)
