"""Discrete gusts: the 1 - cos shape of MIL-F-8785C (3.7.4), declared as scene prims applying ``NexusGustAPI``.

A gust of amplitude ``A`` [m/s] that starts at ``t0`` and lasts ``d`` [s] adds
``A/2 (1 - cos(2 pi (t - t0) / d))`` for ``t0 <= t <= t0 + d`` to the wind, blowing from its
``direction`` (degrees clockwise from north, as the mean wind's): it rises from 0 to ``A`` at
its midpoint and falls back to 0. The schema builds no component: the wind field reads the
scene's gusts (:func:`read_gusts`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from nexus.core.errors import BuildError
from nexus.core.spec import Param, Spec, non_negative, positive
from nexus.schemas.reader import read_prim, where

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
