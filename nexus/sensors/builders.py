"""Schema name -> builder of the sensor component for a prim applying it."""

from __future__ import annotations

from collections.abc import Callable

#: Filled by the sensor modules; read by :mod:`nexus.assembly`.
SENSOR_BUILDERS: dict[str, Callable] = {}
