"""Who takes each drawn value: every variation parameter is declared beside the part that owns it.

A part that takes drawn values says so with :func:`draws` above its class or
function, naming each parameter (:class:`Drawn`: unit, meaning, the check on
each value) and any fault a world may not get (:class:`Occurrence`). There are
three kinds of owner, and the declaration alone says which one a part is:

* a component of the vehicle (the propellers, the ESCs, the sensors, the IMU)
  reads its world's values while it prepares (``ctx.varied(name, default)``);
* a component with a ``from_draws(ring)`` class method (the wind, the sensor
  faults) joins the ring when some world draws one of its names, so a run
  without them keeps its ring and its bits; ``from_draws`` may return None
  (the sensor faults when no world gets one);
* a function ``f(plant, variation)`` (the base body's mass, the start placement)
  edits the plant's model or state before the first tick, again only when some
  world draws one of its names.

This module holds the declarations and the register they fill as their
modules are imported; it knows no owner. The worlds (:mod:`nexus.worlds.drawn`)
import Nexus's own owners, draw each world's values and hand them over; a
module of one's own registers the same way when it is imported (``nexus run
--plugin MODULE``), and ``nexus params`` lists its names with their owner.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nexus.core.errors import BuildError
from nexus.vocab.types import is_number, type_name


@dataclass(frozen=True)
class Interval:
    """A parameter's allowed values as an interval [low, high] (``open_low``/``open_high``: that end excluded).

    Called with a value it is the check on that value (a :class:`Drawn`'s ``accepts``); as numbers it lets a
    variation file's distribution be checked whole, before any draw (:mod:`nexus.worlds.variation`).
    """

    low: float = -math.inf
    high: float = math.inf
    open_low: bool = False
    open_high: bool = False

    def __call__(self, value) -> bool:
        above = value > self.low if self.open_low else value >= self.low
        below = value < self.high if self.open_high else value <= self.high
        return bool(above and below)


def within(low: float, high: float = math.inf, open_low: bool = False, open_high: bool = False) -> Interval:
    """The check ``low <= value <= high`` (``open_*``: that end excluded), readable as numbers."""
    return Interval(float(low), float(high), open_low, open_high)


#: ``> 0``, ``>= 0`` and ``in [0, 1]``.
positive = within(0.0, open_low=True)
non_negative = within(0.0)
unit_interval = within(0.0, 1.0)


def abs_at_most(bound: float) -> Interval:
    """``|value| <= bound``."""
    return within(-bound, bound)


@dataclass(frozen=True)
class Drawn:
    """One drawn parameter: its name in a variation file, unit, meaning and the check on each drawn value.

    ``kind`` is ``"float"``, ``"int"`` (a rotor index) or ``"str"`` (a name;
    ``sensor_name``: one of the vehicle's sensors); ``check`` is the check as
    text (``"> 0"``) and ``accepts`` the check itself; ``allow_inf`` marks fault
    times, which are ``math.inf`` in a world that does not get the fault.
    """

    name: str
    unit: str
    doc: str
    check: str
    per_rotor_allowed: bool = False
    kind: str = "float"
    allow_inf: bool = False
    accepts: Callable[[object], bool] = field(default=lambda value: True, repr=False, compare=False)
    sensor_name: bool = False
    #: Each value must also be no longer than the run [s] (a gust's duration): checked with the run's length.
    at_most_run: bool = False
    #: Names it went by before: a file that still gives one is told this name (:func:`renamed`).
    formerly: tuple[str, ...] = ()
    #: It acts on the vehicle's rotors: a variation for a vehicle with none (a plane) refuses it in one line.
    on_rotors: bool = False

    def problem(self, value, rotors: int) -> str | None:
        """Why one value fails this parameter's check (a phrase after "it"), or None."""
        unit = f" [{self.unit}]" if self.unit and self.unit != "-" else ""
        if self.kind == "str":
            if not isinstance(value, str):
                return f"must be a string, not {type_name(value)}"
            return None if self.accepts(value) else f"must be {self.check}"
        if self.kind == "int":
            if not isinstance(value, numbers.Integral) or isinstance(value, bool):
                return f"must be {self.check}, not {type_name(value)}"
            if value < 0:
                return f"is negative: rotors count from 0; the vehicle has {rotors} rotors (0..{rotors - 1})"
            if value >= rotors:
                return f"is past the last rotor: the vehicle has {rotors} rotors (0..{rotors - 1})"
            return None
        if not is_number(value):
            return f"must be a number, not {type_name(value)}"
        if math.isnan(value) or (math.isinf(value) and not (self.allow_inf and value > 0)):
            return f"must be finite{unit}"
        return None if self.accepts(value) else f"must be {self.check}{unit}"

    @property
    def interval(self) -> Interval | None:
        """The allowed values as numbers, when the check is an :class:`Interval` (None: a check of its own)."""
        return self.accepts if isinstance(self.accepts, Interval) and self.kind == "float" else None


@dataclass(frozen=True)
class Occurrence:
    """A fault a world may not get: when it happens (``time``), the chance a world gets it (``probability``,
    spent on the time: ``math.inf`` in a world without it, drawn from stream ``vary/<stream>/<world>``), the
    keys that only make sense with the time and their defaults, and those of them a file must give
    (key -> what it says)."""

    time: str
    probability: str
    stream: str
    defaults: dict = field(default_factory=dict)
    required: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Owner:
    """A part that takes drawn values: a component class or a function of the plant (see the module)."""

    target: Any
    parameters: tuple[Drawn, ...]
    occurrences: tuple[Occurrence, ...] = ()

    @property
    def module(self) -> str:
        return self.target.__module__

    @property
    def label(self) -> str:
        """How ``nexus params`` names the owner: ``nexus.plant.base_force.BaseForce``."""
        return f"{self.module}.{self.target.__qualname__}"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    def drawn_in(self, variation: Sequence[dict]) -> bool:
        """Whether some world draws one of this owner's names."""
        return any(name in values for values in variation for name in self.names)


_OWNERS: list[Owner] = []
#: Counts the registrations, so caches of the parameter table (:mod:`nexus.runtime.params`) see a new one.
_version = 0


def draws(*parameters: Drawn, occurrences: Sequence[Occurrence] = ()):
    """Declare, above a class or function, the drawn parameters it takes (see the module for the three kinds).

    The same target declared again (its module imported twice) replaces its entry; a name another owner
    already takes is refused.
    """

    def declare(target):
        global _version
        owner = Owner(target, tuple(parameters), tuple(occurrences))
        same = [o for o in _OWNERS if (o.module, o.target.__qualname__) == (owner.module, target.__qualname__)]
        for old in same:
            _OWNERS.remove(old)
        taken = {name: o for o in _OWNERS for name in o.names}
        for name in owner.names:
            if name in taken:
                raise BuildError(f"drawn parameter {name!r} is declared by both {taken[name].label} and "
                                 f"{owner.label}; rename one")
        _OWNERS.append(owner)
        _version += 1
        return target

    return declare


def withdraw(target) -> None:
    """Forget the declaration of ``target`` (a test's own owner, once it is done)."""
    global _version
    _OWNERS[:] = [o for o in _OWNERS if o.target is not target]
    _version += 1


def renamed(name: str) -> Drawn | None:
    """The declared parameter that once went by ``name`` (its ``formerly``), or None."""
    return next((p for o in _OWNERS for p in o.parameters if name in p.formerly), None)


def declared() -> tuple[Owner, ...]:
    """Every owner declared so far, in the order their modules registered."""
    return tuple(_OWNERS)


def version() -> int:
    """A number that changes with every declaration or withdrawal."""
    return _version


__all__ = ["Drawn", "Interval", "Occurrence", "Owner", "abs_at_most", "declared", "draws", "non_negative",
           "positive", "unit_interval", "version", "withdraw", "within"]
