"""The parameters a rollout differentiates: where each lives on the device, and its name.

A parameter is one scalar the user names (``pid.kp_z``, ``mass``, ``rotor2.kt``)
that lives in one or more elements of a device array with ``requires_grad``.
Several elements when it is shared: a vehicle's mass is one number, but each
world has its own copy in Newton's ``body_mass``; the ESC time constant is one
number set on four ESCs. Setting a parameter writes every element; its
gradient is the sum of theirs (the chain rule through a shared value).

Names (units in brackets):

* ``pid.<gain>.<axis>``: each gain of the cascade, ``<gain>`` one of
  ``position_p`` [1/s], ``velocity_p`` [1/s], ``velocity_i`` [1/s²],
  ``velocity_d`` [-], ``attitude_p`` [1/s], ``rate_p`` [s/rad], ``rate_i``
  [1/rad], ``rate_d`` [s²/rad]; ``<axis>`` ``x``, ``y``, ``z`` (also ``roll``,
  ``pitch``, ``yaw``). Short names: ``pid.kp_z`` (position P, z), ``pid.kd_z``
  (velocity P, z: the altitude loop's damping), ``pid.ki_z`` (velocity I, z),
  ``pid.kp_yaw`` (attitude P, yaw), ``pid.kd_yaw`` (rate P, yaw).
* ``mass`` [kg]: the base body's mass. ``inertia.xx``, ``inertia.yy``,
  ``inertia.zz`` [kg·m²]: its principal inertia (body frame).
* ``rotor<i>.kt`` [N/(rad/s)²]: rotor i's thrust coefficient (1-based).
* ``esc.tau_up``, ``esc.tau_down`` [s]: every ESC's lag time constants.
* ``init.x``, ``init.y``, ``init.z`` [m, world ENU], ``init.vx``, ``init.vy``,
  ``init.vz`` [m/s, world ENU]: the base's initial position and velocity.
* ``drag.rotor`` [N/((m/s)(rad/s))]: the rotor drag coefficient, and
  ``drag.cd.x``, ``drag.cd.y``, ``drag.cd.z`` [-]: the body's drag coefficients
  along its axes (:mod:`nexus.air.drag`); only for a vehicle with a drag prim.

The names kept in a component's arrays (the PID's gains, the rotors' ``kt``, the
ESC time constants, the drag coefficients) are declared with those arrays in
the component's spec (``Spec.arrays``, :mod:`nexus.core.arrays`); this module
reads them from there and adds the physics' own (mass, inertia, start state).

Each name that sets a vehicle attribute may also be written as that attribute,
``"<prim path> <attribute>"`` with ``[i]`` for a vector's component;
``nexus params --vehicle V --reader gradient`` lists them all
(:mod:`nexus.runtime.params`, where a new alias goes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import warp as wp

from nexus.air.drag import DRAG_SPEC
from nexus.control.pid import PID_GAINS, PID_SHORT_NAMES, PID_SPEC
from nexus.core.arrays import GradientName
from nexus.core.errors import BuildError
from nexus.plant.esc import ESC_SPEC
from nexus.plant.propeller import PROPELLER_SPEC
from nexus.runtime.params import parameters

_PID_NAMES = PID_SPEC.gradient_names()
#: Each axis name of the PID's gains (``roll``, ``pitch``, ``yaw`` beside ``x``, ``y``, ``z``) -> its component.
AXES = {**{n.name.rsplit(".", 1)[1]: n.component for n in _PID_NAMES},
        **{a.rsplit(".", 1)[1]: n.component for n in _PID_NAMES for a in n.aliases if a.count(".") == 2}}
#: Short names for the gains an altitude or heading tune touches most (declared with the PID's array).
PID_ALIASES = dict(PID_SHORT_NAMES)
#: The drag's names (a vehicle with a ``NexusDragAPI`` prim): the rotor drag coefficient, the body's per axis.
DRAG_NAMES = tuple(n.name for n in DRAG_SPEC.gradient_names())

@dataclass
class Slot:
    """Where one parameter lives: elements of ``array`` (flat indices), read and written through ``get``/``put``.

    ``get(host)`` reads the parameter's value from a host copy of the array and
    ``put(host, value)`` writes it; ``grad(host_grad)`` sums its elements' gradients.
    """

    name: str
    array: wp.array
    get: Callable[[np.ndarray], float]
    put: Callable[[np.ndarray, float], None]
    grad: Callable[[np.ndarray], float]
    unit: str


def canonical(name: str) -> str:
    """The full name of a parameter: short PID names resolved, roll/pitch/yaw as x/y/z."""
    name = PID_ALIASES.get(name, name)
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == "pid" and parts[2] in AXES:
        parts[2] = "xyz"[AXES[parts[2]]]
    return ".".join(parts)


def rollout_name(name: str, vehicle=None) -> str:
    """The rollout's own name for ``name``: :func:`canonical` of it, or, for a ``"<prim path> <attribute>"``
    that ``nexus params`` gives to the gradient (``"/vehicle/controller nexus:positionP[2]"``), its rollout alias.

    ``vehicle`` is a name or USD path (None: the default vehicle).
    """
    if name.startswith("/"):
        entry = parameters(vehicle).get(name)
        if entry is not None and entry.read_by("gradient") and entry.aliases:
            return canonical(entry.aliases[0])
    return canonical(name)


def element_slot(name: str, array: wp.array, indices: list[tuple], unit: str) -> Slot:
    """A parameter shared by the elements ``indices`` of ``array`` (each a tuple of NumPy indices)."""

    def get(host):
        return float(host[indices[0]])

    def put(host, value):
        for index in indices:
            host[index] = value

    def grad(host):
        return float(sum(float(host[index]) for index in indices))

    return Slot(name, array, get, put, grad, unit)


def pid_slot(name: str, params: wp.array, gain: str, axis: int) -> Slot:
    """A gain of the one ``PidParams`` struct the kernel reads (its field ``gain``, component ``axis``)."""

    def get(host):
        return float(host[0][gain][axis])

    def put(host, value):
        host[0][gain][axis] = value

    def grad(host):
        return float(host[0][gain][axis])

    return Slot(name, params, get, put, grad, "")


def declared_slot(declared: GradientName, array: wp.array) -> Slot:
    """The slot of a name a component's spec declares with its ``array`` (``Spec.gradient_names``): a struct
    field's component (the PID's gains), one element (``rotor2.kt``) or every element alike (``esc.tau_up``)."""
    if declared.field is not None:
        return pid_slot(declared.name, array, declared.field, declared.component)
    elements = range(array.shape[0]) if declared.shared else (declared.element,)
    tail = () if declared.component is None else (declared.component,)
    return element_slot(declared.name, array, [(e, *tail) for e in elements], declared.unit)


def known_names(rotors: int, drag: bool = False) -> list[str]:
    """Every parameter name a rollout of a vehicle with ``rotors`` rotors knows (full names); ``drag``: the
    vehicle has a drag prim."""
    names = [n.name for n in _PID_NAMES]
    names += ["mass", "inertia.xx", "inertia.yy", "inertia.zz"]
    names += [n.name for n in PROPELLER_SPEC.gradient_names(rotors)]
    names += [n.name for n in ESC_SPEC.gradient_names(rotors)]
    names += [f"init.{v}" for v in ("x", "y", "z", "vx", "vy", "vz")]
    names += list(DRAG_NAMES) if drag else []
    return names

def unknown_parameter(name: str, rotors: int, vehicle=None) -> BuildError:
    """The error for a name the rollout has no slot for: the one sentence of :mod:`nexus.runtime.params`.

    ``vehicle`` (a name or a USD path; None: the default vehicle) gives the names suggested. A name the
    resolver knows but no gradient reads says so; one it gives to the gradient but this rollout lacks
    (a vehicle without that prim) lists the rollout's own names.
    """
    try:
        parameters(vehicle).resolve(name, "gradient")
    except BuildError as error:
        return error
    return BuildError(
        f"unknown parameter '{name}'; name one of pid.<gain>.<axis> (gains {', '.join(PID_GAINS)}; axes x, y, z), "
        f"{', '.join(PID_ALIASES)}, mass, inertia.xx|yy|zz, rotor1..{rotors}.kt, esc.tau_up, esc.tau_down, "
        "init.x|y|z|vx|vy|vz, drag.rotor, drag.cd.x|y|z (a vehicle with a drag prim)"
    )


__all__ = ["AXES", "DRAG_NAMES", "PID_ALIASES", "PID_GAINS", "Slot", "canonical", "declared_slot", "element_slot", "known_names", "pid_slot",
           "rollout_name", "unknown_parameter"]
