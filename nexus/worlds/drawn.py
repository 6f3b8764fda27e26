"""A flight's draws: each world's values, drawn (or given) and checked, then handed to the parts that take them.

Each part declares the values it takes beside itself (:mod:`nexus.vocab.drawn`; the complete register:
:mod:`nexus.worlds.owners`). :func:`world_values` draws (or takes, for a replay) each world's values and
checks them, before anything is built; :func:`take_draws` then hands the values to their owners.
:func:`nexus.runtime.flight.build_flight` calls these two and decides nothing about which draw goes where.

A name no owner declares is refused with the sentence of the ``names`` look-up the caller hands in
(``name -> the variation parameter it stands for``, or a :class:`~nexus.core.errors.BuildError` saying
why not): the runtime hands in the vehicle's parameter table (:func:`nexus.runtime.params.variation_names`),
so the worlds need not know it. Without one, only the draws' own names are known.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nexus.core.errors import BuildError
from nexus.core.rng import RngTree
from nexus.sensors.faults import sensor_label
from nexus.sensors.sensor import Sensor
from nexus.vocab.names import VariationNames
from nexus.worlds.owners import drawn_parameters, owners
from nexus.worlds.variation import load_variation, own_name, world_values_problem


@dataclass(frozen=True)
class Ring:
    """What an owner joining the ring may look at: the plant, the ring's components so far, each world's values."""

    plant: Any
    components: tuple
    variation: tuple[dict, ...]


def world_values(options, plant, components: Sequence, given: Sequence[dict] | None = None, *,
                 names: VariationNames | None = None) -> list[dict]:
    """Each world's values, checked: ``given`` (a replay's, ``--world-of``'s), else drawn from ``options.vary``
    (a :class:`~nexus.runtime.config.RunConfig`) with the run's seed, else none (one empty dict per world).

    ``names`` resolves a name no owner declares (see the module)."""
    worlds = options.worlds
    if given is None:
        given = draw_values(options, plant, components, names=names) if options.vary else [{}] * worlds
    variation = [dict(values) for values in given]
    if len(variation) != worlds:
        raise BuildError(f"{len(variation)} worlds' values given for a run of {worlds} worlds")
    source = options.vary or "the drawn values"
    for world, values in enumerate(variation, options.first_world):
        problem = _world_problem(values, len(plant.rotors), names) if values else None
        if problem is not None:
            raise BuildError(f"{source}: world {world}: {problem}")
    return variation


def variation_file(options, plant, components: Sequence, *, names: VariationNames | None = None):
    """``options.vary`` loaded and checked against this plant's rotors and sensors (None without one)."""
    if not options.vary:
        return None
    sensors = [sensor_label(c) for c in components if isinstance(c, Sensor)]
    return load_variation(options.vary, rotors=len(plant.rotors), sensors=sensors, names=names,
                          run_s=options.duration_s)


def draw_values(options, plant, components: Sequence, *, names: VariationNames | None = None) -> list[dict]:
    """World ``first_world + i``'s values, drawn from ``options.vary`` with the run's seed."""
    variation = variation_file(options, plant, components, names=names)
    return variation.draw(RngTree(options.seed), options.first_world + options.worlds)[options.first_world:]


def _world_problem(values: dict, rotors: int, names: VariationNames | None) -> str | None:
    """What is wrong with one world's values: a name no owner takes (the look-up's sentence), or a value."""
    known = drawn_parameters()
    for name in values:
        if name not in known:
            try:
                variation = own_name(name, names)
            except BuildError as error:
                return str(error)
            return f"{name!r} is another name of {variation!r}; a world's values carry the draw's own name"
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


__all__ = ["Ring", "draw_values", "take_draws", "world_values"]
