"""Surface temperatures of scene shapes, for thermal sensors.

A prim applying ``NexusTemperatureAPI`` (an obstacle, the ground) carries
``nexus:temperature`` [K], the temperature its surface shows a thermal camera.
The schema builds no component: like the geodetic origin it is scene data,
declared here so the schema files carry it and ``check_stage`` accepts the
attribute, and read with :func:`read_temperatures`.
"""

from __future__ import annotations

from pathlib import Path

from nexus.core.spec import Spec, positive
from nexus.schemas.reader import read_prim

__all__ = ["TEMPERATURE_SPEC", "read_temperatures"]

#: 20 °C, the fallback of an unauthored ``nexus:temperature`` [K].
AMBIENT_TEMPERATURE = 293.15

TEMPERATURE_SPEC = Spec(
    name="Temperature",
    schema="NexusTemperatureAPI",
    noun="temperature",
    doc="The surface temperature of a shape (a scene's obstacle or ground), for thermal sensors.",
    params=(
        positive("temperature", "nexus:temperature", AMBIENT_TEMPERATURE, "K",
                 "Surface temperature, absolute (kelvin, above 0)"),
    ),
)


def read_temperatures(stage, path: Path | str) -> dict[str, float]:
    """Prim path -> checked surface temperature [K] of every prim in ``stage`` applying ``NexusTemperatureAPI``."""
    return {
        str(prim.GetPath()): float(read_prim(prim, TEMPERATURE_SPEC, path)["temperature"])
        for prim in stage.Traverse()
        if prim.HasAPI(TEMPERATURE_SPEC.schema)
    }
