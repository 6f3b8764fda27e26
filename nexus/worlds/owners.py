"""Every part that takes drawn values, Nexus's own first: the register of :mod:`nexus.vocab.drawn`, complete.

The owners declare themselves beside their classes (:func:`nexus.vocab.drawn.draws`); this module imports
Nexus's own (:data:`BUILTIN_MODULES`), so a look-up here sees every one of them whichever module asked first,
and lists them in a fixed order: Nexus's own in the order of :data:`BUILTIN_MODULES` (each module's in
declaration order), then those other modules declared (``nexus run --plugin MODULE``) as they registered.
"""

from __future__ import annotations

from nexus.air import gust, wind_field
from nexus.plant import base_force, battery, esc, ground_effect, placement, propeller
from nexus.sensors import faults, imu, sensor
from nexus.vocab import drawn
from nexus.vocab.drawn import Drawn, Occurrence, Owner

#: The modules that declare Nexus's own drawn parameters, in the order ``nexus params`` lists them.
BUILTIN_MODULES = tuple(module.__name__ for module in (
    placement, propeller, esc, sensor, imu, base_force, wind_field, gust, battery, ground_effect, faults))


def owners(builtin_only: bool = False) -> list[Owner]:
    """Every owner: Nexus's own first (in :data:`BUILTIN_MODULES` order), then the rest as they registered."""
    order = {module: i for i, module in enumerate(BUILTIN_MODULES)}
    declared = drawn.declared()
    own = sorted((o for o in declared if o.module in order), key=lambda o: order[o.module])  # stable: file order
    others = [] if builtin_only else [o for o in declared if o.module not in order]
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


def version() -> int:
    """A number that changes with every declaration or withdrawal (a cache of the owners' table sees a new one)."""
    return drawn.version()


__all__ = ["BUILTIN_MODULES", "drawn_parameters", "occurrences", "owner_of", "owners", "version"]
