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

:func:`world_values` draws (or takes, for a replay) each world's values and
checks them, before anything is built: a name no owner declares gets the
resolver's one "did you mean" sentence (:mod:`nexus.runtime.params`), naming
the variation file. :func:`take_draws` then hands the values to their owners.
:func:`nexus.runtime.flight.build_flight` calls these two and decides nothing
about which draw goes where.

Nexus's own owners live in :data:`BUILTIN_MODULES`, imported on the first
look-up; a module of one's own registers the same way when it is imported
(``nexus run --plugin MODULE``), and ``nexus params`` lists its names with
their owner.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nexus.core.errors import BuildError
from nexus.core.lazy import import_once

#: The modules that declare Nexus's own drawn parameters, imported on the first look-up; their parameters are
#: listed in this order (then each module's in declaration order), then those other modules declared.
BUILTIN_MODULES = ("nexus.plant.placement", "nexus.plant.propeller", "nexus.plant.esc", "nexus.sensors.sensor",
                   "nexus.sensors.imu", "nexus.plant.wind", "nexus.air.wind_field", "nexus.air.gust",
                   "nexus.plant.battery", "nexus.plant.ground_effect", "nexus.sensors.faults")


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
        """How ``nexus params`` names the owner: ``nexus.plant.wind.Wind``."""
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


def version() -> int:
    """A number that changes with every declaration or withdrawal."""
    _load_builtins()
    return _version


_load_builtins = import_once(BUILTIN_MODULES)


def owners(builtin_only: bool = False) -> list[Owner]:
    """Every owner: Nexus's own first (in :data:`BUILTIN_MODULES` order), then the rest as they registered."""
    _load_builtins()
    order = {module: i for i, module in enumerate(BUILTIN_MODULES)}
    own = sorted((o for o in _OWNERS if o.module in order), key=lambda o: order[o.module])  # stable: file order
    others = [] if builtin_only else [o for o in _OWNERS if o.module not in order]
    return [*own, *others]


def drawn_parameters(builtin_only: bool = False) -> dict[str, Drawn]:
    """Every parameter a variation file may name, by name, in :func:`owners` order."""
    return {p.name: p for o in owners(builtin_only) for p in o.parameters}


def occurrences() -> list[Occurrence]:
    """Every declared fault, in :func:`owners` order."""
    return [occurrence for o in owners() for occurrence in o.occurrences]


def owner_of(name: str) -> Owner | None:
    """The owner that takes drawn parameter ``name`` (None: no owner declares it)."""
    return next((o for o in owners() if name in o.names), None)


# -- a flight's draws ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Ring:
    """What an owner joining the ring may look at: the plant, the ring's components so far, each world's values."""

    plant: Any
    components: tuple
    variation: tuple[dict, ...]


def world_values(options, plant, components: Sequence, given: Sequence[dict] | None = None) -> list[dict]:
    """Each world's values, checked: ``given`` (a replay's, ``--world-of``'s), else drawn from ``options.vary``
    (a :class:`~nexus.runtime.flight.RunConfig`) with the run's seed, else none (one empty dict per world)."""
    worlds = options.worlds
    if given is None:
        given = _draw(options, plant, components) if options.vary else [{}] * worlds
    variation = [dict(values) for values in given]
    if len(variation) != worlds:
        raise BuildError(f"{len(variation)} worlds' values given for a run of {worlds} worlds")
    source = options.vary or "the drawn values"
    for world, values in enumerate(variation, options.first_world):
        problem = _world_problem(values, len(plant.rotors), options.vehicle) if values else None
        if problem is not None:
            raise BuildError(f"{source}: world {world}: {problem}")
    return variation


def _draw(options, plant, components: Sequence) -> list[dict]:
    """World ``first_world + i``'s values, drawn from ``options.vary`` with the run's seed."""
    from nexus.core.rng import RngTree  # noqa: PLC0415
    from nexus.sensors.faults import sensor_label  # noqa: PLC0415
    from nexus.sensors.sensor import Sensor  # noqa: PLC0415
    from nexus.worlds.variation import load_variation  # noqa: PLC0415

    sensors = [sensor_label(c) for c in components if isinstance(c, Sensor)]
    variation = load_variation(options.vary, rotors=len(plant.rotors), sensors=sensors, vehicle=options.vehicle,
                               run_s=options.duration_s)
    return variation.draw(RngTree(options.seed), options.first_world + options.worlds)[options.first_world:]


def _world_problem(values: dict, rotors: int, vehicle) -> str | None:
    """What is wrong with one world's values: a name no owner takes (the resolver's sentence), or a value."""
    from nexus.worlds.variation import world_values_problem  # noqa: PLC0415

    known = drawn_parameters()
    for name in values:
        if name not in known:
            from nexus.runtime.params import parameters  # noqa: PLC0415

            try:
                entry = parameters(vehicle).resolve(name, "variation")
            except BuildError as error:
                return str(error)
            return f"{name!r} is another name of {entry.variation!r}; a world's values carry the draw's own name"
    return world_values_problem(values, rotors)


def take_draws(plant, components: Sequence, variation: Sequence[dict]) -> list:
    """Hand each world's values to the owners that take them, before the ring is built.

    Functions of the plant edit its model or state; owners with ``from_draws`` give the components that join
    the ring (returned, in owner order); an owner no world draws for is left alone.
    """
    ring = Ring(plant, tuple(components), tuple(dict(values) for values in variation))
    parts = []
    for owner in owners():
        if not owner.drawn_in(variation):
            continue
        if not isinstance(owner.target, type):
            owner.target(plant, variation)
        elif hasattr(owner.target, "from_draws"):
            part = owner.target.from_draws(ring)
            if part is not None:
                parts.append(part)
    return parts


# -- words -----------------------------------------------------------------------------------------------------

def is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def type_name(value) -> str:
    """A value's type in words, with the value: ``a string ('x')``."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if is_number(value):
        return f"a number ({value!r})"
    return f"a {type(value).__name__} ({value})"


def show(value) -> str:
    """A value as an error shows it (six significant digits, strings quoted)."""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, str):
        return repr(value)
    return str(value)


__all__ = ["BUILTIN_MODULES", "Drawn", "Interval", "Occurrence", "Owner", "Ring", "abs_at_most", "draws",
           "drawn_parameters", "non_negative", "occurrences", "owner_of", "owners", "positive", "take_draws",
           "unit_interval", "within", "withdraw", "world_values"]
