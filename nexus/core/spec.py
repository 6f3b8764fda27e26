"""A component's declaration, written once: parameters, ports, state and rate.

A :class:`Spec` sits next to the component's kernels and says everything the
rest of Nexus needs to know about it without running it:

- its **parameters**: the USD attribute each is read from, its type, unit,
  default, bounds and a one-line doc. The USD schema files are generated from
  these (``nexus schema --write``), and one generic reader validates a prim
  against them, so a parameter is written down in exactly one place;
- its **relations** (USD relationships to other prims, such as the joint an
  ESC drives) and its **inputs** (signals it reads; each may be connected to
  a writer by the relationship ``nexus:inputs:<signal>``);
- its **outputs** (signals it writes), each flagged ``recorded`` or not: the
  record taps every recorded output;
- its **state**: arrays the engine allocates beside the signals, resets at
  the start of a run, and snapshots and restores with the rest of the tick
  state. Kernels take state as in/out arguments (see :mod:`nexus.core.state`).

Composition: a spec may name ``bases`` (other specs, usually abstract ones
such as the sensors' shared rate, noise switch and mount), whose parameters
it inherits; in USD the base becomes a built-in API schema of the derived one.

This module is domain-free: it knows USD type names as strings and Warp types
as opaque values, nothing of vehicles.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nexus.core.arrays import ArrayDecl, GradientName, gradient_names
from nexus.core.signals import NO_DEFAULT, Read, Write

#: USD value type names a parameter may have, with the Python type its value reads as.
PARAM_TYPES: dict[str, type] = {
    "float": float, "double": float, "int": int, "bool": bool, "float3": tuple, "double3": tuple,
    "float3[]": list, "float2[]": list, "string": str, "token": str,
}


@dataclass(frozen=True)
class Param:
    """One parameter: a USD attribute ``attr`` read into the component's keyword argument ``key``.

    ``low``/``high`` bound each element (vectors: every component); ``open_low``
    makes the lower bound strict (a rate or a time constant that must exceed 0).
    ``finite`` rejects inf and NaN. ``choices`` limits a value to a set.
    """

    key: str
    attr: str
    type: str
    default: Any
    unit: str = "-"
    doc: str = ""
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    finite: bool = True
    choices: tuple | None = None

    def __post_init__(self):
        if self.type not in PARAM_TYPES:
            raise ValueError(f"parameter {self.attr}: unknown USD type '{self.type}'; use one of {sorted(PARAM_TYPES)}")

    def bounds_text(self) -> str:
        """The allowed range in words, e.g. ``> 0`` or ``in [0, 1]``."""
        if self.choices is not None:
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.low is not None and self.high is not None:
            return f"in {'(' if self.open_low else '['}{self.low:g}, {self.high:g}]"
        if self.low is not None:
            return f"{'>' if self.open_low else '>='} {self.low:g}"
        if self.high is not None:
            return f"<= {self.high:g}"
        return "finite" if self.finite else "any value"

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not allowed, or None when it is."""
        if self.choices is not None:
            return None if value in self.choices else f"must be {self.bounds_text()}"
        if self.type in ("bool", "string", "token"):
            return None
        elements = _elements(value)
        for element in elements:
            if self.finite and not math.isfinite(element):
                return f"must be finite ({self.bounds_text()})"
            if self.low is not None and (element <= self.low if self.open_low else element < self.low):
                return f"must be {self.bounds_text()}"
            if self.high is not None and element > self.high:
                return f"must be {self.bounds_text()}"
        return None


def non_negative(key: str, attr: str, default: Any, unit: str = "-", doc: str = "", type: str = "float") -> Param:
    """A parameter that must be 0 or more (a noise sigma, a dwell time); each element for a vector."""
    return Param(key, attr, type, default, unit, doc, low=0.0)


def positive(key: str, attr: str, default: Any, unit: str = "-", doc: str = "", type: str = "float") -> Param:
    """A parameter that must be more than 0 (a speed, a time constant)."""
    return Param(key, attr, type, default, unit, doc, low=0.0, open_low=True)


def _elements(value: Any) -> list[float]:
    if isinstance(value, (int, float)):
        return [float(value)]
    flat: list[float] = []
    for item in value:
        flat.extend(_elements(item))
    return flat


@dataclass(frozen=True)
class Relation:
    """A USD relationship ``attr`` whose single target prim path becomes keyword argument ``key``."""

    key: str
    attr: str
    doc: str = ""
    required: bool = True


@dataclass(frozen=True)
class Input:
    """A signal the component reads. ``connectable`` gives it a ``nexus:inputs:<signal>`` relationship.

    ``signal`` may hold ``{name}`` fields, filled from the component's attributes
    (a sensor reads ``body/{body}``, the body it is mounted on).
    """

    signal: str
    dtype: Any
    shape: tuple[int, ...] | None = (1,)
    default: Any = NO_DEFAULT
    doc: str = ""
    connectable: bool = False

    def read(self, component: Any, shape: tuple[int, ...] | None = None) -> Read:
        return Read(self.signal.format_map(_Fields(component)), self.dtype, shape or self.shape, self.default)


@dataclass(frozen=True)
class Output:
    """A signal the component writes; ``recorded`` outputs are tapped by the record every tick."""

    signal: str
    dtype: Any
    shape: tuple[int, ...] | None = (1,)
    recorded: bool = False
    default: Any = NO_DEFAULT
    doc: str = ""

    def write(self, component: Any, shape: tuple[int, ...] | None = None, prim: str | None = None) -> Write:
        return Write(self.signal.format_map(_Fields(component)), self.dtype, shape or self.shape, self.default,
                     prim=prim, recorded=self.recorded)


@dataclass(frozen=True)
class StateVar:
    """One array of state the engine owns for each instance of the component.

    ``shape`` is per world: the engine allocates ``(worlds, *shape)`` (one world
    today). ``reset`` is the value every element takes at the start of a run,
    or a callable ``reset(component, ctx) -> array-like`` of the per-world shape,
    e.g. a turn-on bias drawn from the component's random stream.
    """

    name: str
    dtype: Any
    shape: tuple[int, ...] = (1,)
    reset: Any | Callable[[Any, Any], Any] = 0
    doc: str = ""


@dataclass(frozen=True)
class Spec:
    """Everything declared about one kind of component (see the module doc).

    ``schema`` is the USD API schema a prim applies to get this component (None
    for components that are not built from prims, such as the clock).
    ``abstract`` specs (a shared base) generate a schema but no component.
    ``stage``, ``kind`` and ``host`` describe the component's main stage.
    ``sampler`` marks a component that samples at its ``rate`` parameter [Hz].
    ``kind``, ``sampler`` and ``noun`` left unset are taken from the first base
    that sets them (a sensor names ``SENSOR`` as its base and restates none of
    them), else ``None``, ``False`` and ``"component"``.
    ``extras`` holds declarations other packages read (e.g. the MAVLink message
    a sensor sends to an autopilot); the engine ignores it.
    """

    name: str
    doc: str
    schema: str | None = None
    bases: tuple[Spec, ...] = ()
    params: tuple[Param, ...] = ()
    relations: tuple[Relation, ...] = ()
    inputs: tuple[Input, ...] = ()
    outputs: tuple[Output, ...] = ()
    state: tuple[StateVar, ...] = ()
    stage: str | None = None
    kind: str | None = None
    host: bool = False
    sampler: bool | None = None
    abstract: bool = False
    #: What errors call a prim of this kind: ``sensor`` gives "sensor prim /vehicle/body/base/Imu".
    noun: str | None = None
    #: The device arrays the component exposes by name (``component.arrays``; see :mod:`nexus.core.arrays`).
    arrays: tuple[ArrayDecl, ...] = ()
    extras: dict = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self):
        for name, fallback in _INHERITED.items():
            if getattr(self, name) is None:
                inherited = next((getattr(b, name) for b in self.bases if getattr(b, name) is not None), fallback)
                object.__setattr__(self, name, inherited)

    def __hash__(self) -> int:
        return hash((self.name, self.schema))

    @property
    def all_params(self) -> tuple[Param, ...]:
        """The bases' parameters, then this spec's own; a parameter of the same attribute overrides
        the base's (a sensor's own default rate), keeping the base's place."""
        merged: dict[str, Param] = {}
        for param in (*(p for base in self.bases for p in base.all_params), *self.params):
            merged[param.attr] = param
        return tuple(merged.values())

    @property
    def all_inputs(self) -> tuple[Input, ...]:
        return tuple(i for base in self.bases for i in base.all_inputs) + self.inputs

    @property
    def all_outputs(self) -> tuple[Output, ...]:
        return tuple(o for base in self.bases for o in base.all_outputs) + self.outputs

    @property
    def all_relations(self) -> tuple[Relation, ...]:
        return tuple(r for base in self.bases for r in base.all_relations) + self.relations

    @property
    def all_state(self) -> tuple[StateVar, ...]:
        return tuple(s for base in self.bases for s in base.all_state) + self.state

    def param(self, key: str) -> Param:
        for param in self.all_params:
            if param.key == key:
                return param
        raise KeyError(f"{self.name} declares no parameter '{key}'")

    def gradient_names(self, elements: int = 1) -> tuple[GradientName, ...]:
        """The rollout's parameter names in this spec's arrays, for ``elements`` instances (rotors, ESCs)."""
        return gradient_names(self, elements)

    def defaults(self) -> dict[str, Any]:
        """Keyword argument -> default, for every parameter."""
        return {p.key: p.default for p in self.all_params}

    def check(self) -> list[str]:
        """Problems with the declaration itself (duplicate names, defaults out of bounds)."""
        problems: list[str] = []
        seen: set[str] = set()
        for param in self.params:
            if param.attr in seen:
                problems.append(f"{self.name}: parameter {param.attr} is declared twice")
            seen.add(param.attr)
        for param in self.all_params:
            why = param.problem(param.default)
            if why is not None:
                problems.append(f"{self.name}: the default of {param.attr} ({param.default!r}) {why}")
        names = [s.name for s in self.all_state]
        if len(names) != len(set(names)):
            problems.append(f"{self.name}: state names repeat: {names}")
        return problems


#: Spec fields a spec takes from its bases when it leaves them unset, and their value when no base sets them.
_INHERITED = {"kind": None, "sampler": False, "noun": "component"}


def input_relations(spec: Spec) -> Sequence[Input]:
    """The inputs that a prim may connect with ``nexus:inputs:<signal>``."""
    return tuple(i for i in spec.all_inputs if i.connectable)


class _Fields(dict):
    """``str.format_map`` over a component's attributes."""

    def __init__(self, component: Any):
        super().__init__()
        self._component = component

    def __missing__(self, key: str) -> Any:
        return getattr(self._component, key)
