"""Discrete gusts: the 1 - cos shape of MIL-F-8785C (3.7.4), declared as scene prims applying ``NexusGustAPI``.

A gust of amplitude ``A`` [m/s] that starts at ``t0`` and lasts ``d`` [s] adds
``A/2 (1 - cos(2 pi (t - t0) / d))`` for ``t0 <= t <= t0 + d`` to the wind, blowing from its
``direction`` (degrees clockwise from north, as the mean wind's): it rises from 0 to ``A`` at
its midpoint and falls back to 0. The schema builds no component: the wind field reads the
scene's gusts (:func:`read_gusts`).

A variation file draws one more gust per world (:data:`GUST_DRAWS`: ``gust_start_time``,
``gust_duration``, ``gust_amplitude``, ``gust_direction``, and ``gust_probability``, the chance
a world gets it at all). It adds to the scene's gusts in that world only; a world without it
(its ``gust_start_time`` is ``inf``) blows as the scene does. Drawing any of them puts the wind
field in the ring (:func:`world_gusts` gives each world's row).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from nexus.core.errors import BuildError
from nexus.core.spec import Param, Spec, non_negative, positive
from nexus.schemas.reader import read_prim, where
from nexus.vocab import drawn

GUST_SPEC = Spec(
    name="Gust",
    schema="NexusGustAPI",
    noun="gust",
    doc="A discrete 1 - cos gust added to the scene's wind: it rises from 0 to its amplitude at its midpoint and "
        "falls back to 0 at its end, blowing from its direction.",
    params=(
        non_negative("start", "nexus:start", 0.0, "s", "Sim time the gust begins"),
        positive("duration", "nexus:duration", 1.0, "s", "How long the gust lasts (its peak is at half of it)"),
        non_negative("amplitude", "nexus:amplitude", 0.0, "m/s", "The gust's peak speed"),
        Param("direction", "nexus:direction", "float", 0.0, "deg",
              "Where the gust blows from, degrees clockwise from north (270: from the west); must be authored",
              low=0.0, high=360.0),
    ),
)


#: Each world's drawn gust: the same four numbers as a gust prim's, and the chance a world gets it.
GUST_DRAWS = (
    drawn.Drawn("gust_start_time", "s", "sim time a drawn gust begins (inf: no gust in this world; docs/air.md)",
                ">= 0", allow_inf=True, accepts=drawn.non_negative),
    drawn.Drawn("gust_duration", "s", "how long the drawn gust lasts, its peak at half of it; default 1",
                "> 0 and no longer than the run", accepts=drawn.positive, at_most_run=True),
    drawn.Drawn("gust_amplitude", "m/s", "the drawn gust's peak speed", ">= 0", accepts=drawn.non_negative),
    drawn.Drawn("gust_direction", "deg", "where the drawn gust blows from, clockwise from north", "in [0, 360]",
                accepts=drawn.within(0.0, 360.0)),
    drawn.Drawn("gust_probability", "-", "chance a world gets the drawn gust at all; default 1", "in [0, 1]",
                accepts=drawn.unit_interval),
)
GUST_PARAMETERS = tuple(d.name for d in GUST_DRAWS)
#: A world gets the drawn gust with its drawn probability (stream ``vary/gust_occurs/<world>``); a file that
#: draws its start must give its amplitude and direction (a gust with no direction is refused, as a prim's is).
DRAWN_GUST = drawn.Occurrence("gust_start_time", "gust_probability", "gust_occurs",
                              {"gust_duration": 1.0, "gust_amplitude": None, "gust_direction": None},
                              required={"gust_amplitude": "the gust's peak speed [m/s]",
                                        "gust_direction": "where it blows from [deg clockwise from north]"})


@drawn.draws(*GUST_DRAWS, occurrences=(DRAWN_GUST,))
@dataclass(frozen=True)
class Gust:
    """One gust: start and duration [s], amplitude [m/s], and the unit vector it blows toward (east, north)."""

    start: float
    duration: float
    amplitude: float
    toward: tuple[float, float]


def toward(direction_from: float) -> tuple[float, float]:
    """The horizontal unit vector (east, north) a wind from ``direction_from`` [deg from north] blows toward."""
    angle = math.radians(direction_from)
    return (-math.sin(angle), -math.cos(angle))


def read_gusts(stage, path: Path | str, run_duration: float) -> list[Gust]:
    """Every gust prim of ``stage``, checked: a direction must be authored and the gust must fit in the run."""
    gusts = []
    for prim in stage.Traverse():
        if not prim.HasAPI(GUST_SPEC.schema):
            continue
        values = read_prim(prim, GUST_SPEC, path)
        attribute = prim.GetAttribute("nexus:direction")
        if not attribute or not attribute.HasAuthoredValue():
            raise BuildError(f"{where(prim, GUST_SPEC, path)}: nexus:direction is not authored; give the direction "
                             "the gust blows from, degrees clockwise from north (e.g. float nexus:direction = 270)")
        if values["duration"] > run_duration:
            raise BuildError(f"{where(prim, GUST_SPEC, path)}: nexus:duration is {values['duration']:g} s, longer "
                             f"than the run ({run_duration:g} s); shorten the gust or fly longer (--duration)")
        gusts.append(Gust(values["start"], values["duration"], values["amplitude"], toward(values["direction"])))
    return gusts


#: A gust that adds nothing (amplitude 0): a world's row where it has no gust of that column.
NO_GUST = Gust(0.0, 1.0, 0.0, (0.0, 0.0))


def drawn_gust(values: dict) -> Gust | None:
    """A world's drawn gust (its values as :meth:`~nexus.worlds.variation.Variation.draw` gives them), or None."""
    start = values.get("gust_start_time", math.inf)
    if not math.isfinite(start):
        return None
    return Gust(float(start), float(values.get("gust_duration", 1.0)), float(values["gust_amplitude"]),
                toward(float(values["gust_direction"])))


def check_drawn_gusts(variation, run_duration: float, first_world: int = 0) -> None:
    """Refuse a drawn gust longer than the run (one line naming the world), as a prim's is refused."""
    for world, values in enumerate(variation, first_world):
        gust = drawn_gust(values)
        if gust is not None and gust.duration > run_duration:
            raise BuildError(f"world {world}: the drawn gust_duration is {gust.duration:g} s, longer than the run "
                             f"({run_duration:g} s); narrow gust_duration in the variation file or fly longer "
                             "(--duration)")


def world_gusts(scene: tuple[Gust, ...], variation) -> list[list[Gust]]:
    """Each world's gusts: the scene's, then its drawn one when some world draws a gust (:data:`NO_GUST` in a
    world without it), so that every row has as many gusts; a ring whose worlds draw none keeps the scene's."""
    drawn_rows = [drawn_gust(values) for values in variation]
    if not any(g is not None for g in drawn_rows):
        return [list(scene) for _ in variation]
    return [[*scene, g if g is not None else NO_GUST] for g in drawn_rows]
