"""Sizing, gains and writing in one call: what ``nexus vehicle new`` does, for tests and scripts too."""

from __future__ import annotations

from pathlib import Path

from nexus.airframe.gains import Gains, pid_gains
from nexus.airframe.sizing import Airframe, AirframeInput, size
from nexus.airframe.usd_writer import vehicle_text
from nexus.core.errors import BuildError


def build_vehicle(name: str, given: AirframeInput, out: str | Path, source: str | None = None,
                  command: str | None = None) -> tuple[Airframe, Gains]:
    """Size ``given``, derive its gains and write the vehicle file ``out``; returns what was written."""
    if not name or not all(c.isalnum() or c in "_-" for c in name):
        raise BuildError(f"vehicle name {name!r}: use letters, digits, '_' and '-' only")
    airframe = size(name, given, source)
    if airframe.gear_height < airframe.box[2] / 2:
        key = f"{source}: key 'gear_height'" if source else "--gear-height"
        raise BuildError(f"{key} is {airframe.gear_height:g}; the hub box ({airframe.box[2]:g} m tall) would reach "
                         f"below the skids: give at least {airframe.box[2] / 2:g} m")
    gains = pid_gains(airframe)
    out = Path(out)
    if out.suffix != ".usda":
        raise BuildError(f"--out {out}: a vehicle file is USD text; give a path ending in .usda")
    out.parent.mkdir(parents=True, exist_ok=True)
    made_by = command or (f"nexus vehicle new {name} --from {source}" if source else f"nexus vehicle new {name}")
    out.write_text(vehicle_text(airframe, gains, made_by))
    return airframe, gains
