"""From ``--vehicle`` and ``--scene`` to the components of one ring.

Each Nexus prim of the vehicle file becomes a component, in file order,
through :data:`BUILDERS` (schema name -> builder). The physics component comes
first; the controller is chosen by name and takes the controller prim's path,
so connections to it (the ESCs' ``nexus:inputs:controls``) find it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nexus.core import Component
from nexus.core.errors import BuildError
from nexus.plant.esc import Esc
from nexus.plant.loading import load_plant
from nexus.plant.physics import Physics
from nexus.plant.plant import Plant
from nexus.plant.propeller import Propeller
from nexus.plant.usd_checks import nexus_apis
from nexus.sensors.builders import SENSOR_BUILDERS

log = logging.getLogger("nexus")

#: Controller choices for ``--controller``.
CONTROLLERS = ("hold",)
DEFAULT_CONTROLLER = "hold"
CONTROLLER_APIS = ("NexusPidControllerAPI",)


@dataclass
class PrimContext:
    """What a component builder gets besides its prim."""

    plant: Plant
    stage: object
    path: Path
    rotor_count: int

    def rotor_for_joint(self, joint: str):
        for rotor in self.plant.rotors:
            if rotor.joint_path == joint:
                return rotor
        raise BuildError(f"{self.path}: {joint} is not a rotor joint with a propeller")

    def rotor_for_body(self, body: str):
        for rotor in self.plant.rotors:
            if rotor.body_path == body:
                return rotor
        raise BuildError(f"{self.path}: {body} is not a rotor body with a propeller")


def connections_of(prim) -> dict[str, str]:
    """``nexus:inputs:<signal>`` relationships -> {signal: target prim path}."""
    found: dict[str, str] = {}
    for relationship in prim.GetRelationships():
        name = relationship.GetName()
        if name.startswith("nexus:inputs:"):
            targets = relationship.GetTargets()
            if targets:
                found[name[len("nexus:inputs:"):]] = str(targets[0].GetPrimPath())
    return found


def _esc(prim, ctx: PrimContext) -> Component:
    joint = str(prim.GetRelationship("nexus:joint").GetTargets()[0])
    return Esc(str(prim.GetPath()), ctx.plant, ctx.rotor_for_joint(joint), ctx.rotor_count, connections_of(prim))


def _propeller(prim, ctx: PrimContext) -> Component:
    body = str(prim.GetRelationship("nexus:body").GetTargets()[0])
    return Propeller(str(prim.GetPath()), ctx.plant, ctx.rotor_for_body(body))


#: Schema name -> builder of the component for a prim applying it.
BUILDERS: dict[str, Callable[[object, PrimContext], Component]] = {
    "NexusEscAPI": _esc,
    "NexusPropellerAPI": _propeller,
    **SENSOR_BUILDERS,
}


@dataclass
class Vehicle:
    """A loaded vehicle in a scene, ready to become a loop."""

    plant: Plant
    components: list[Component]
    controller: Component
    physics: Physics
    vehicle_path: Path
    scene_path: Path
    skipped: list[str] = field(default_factory=list)


def _controller(name: str, path: str) -> Component:
    if name == "hold":
        from nexus.control.hold import HoldControls

        return HoldControls(path)
    raise BuildError(f"unknown controller '{name}'; choose one of {', '.join(CONTROLLERS)}")


def assemble(
    vehicle: str | Path,
    scene: str | Path,
    *,
    device: str = "cpu",
    controller: str = DEFAULT_CONTROLLER,
    substeps: int = 1,
    decimal_year: float | None = None,
) -> Vehicle:
    """Load the files, then build every component the vehicle's prims declare."""
    if controller not in CONTROLLERS:
        raise BuildError(f"unknown controller '{controller}'; choose one of {', '.join(CONTROLLERS)}")
    plant, stage = load_plant(vehicle, scene, device)
    if decimal_year is not None:
        plant.decimal_year = float(decimal_year)
    physics = Physics(plant, substeps=substeps)
    ctx = PrimContext(plant, stage, plant.vehicle_path, len(plant.rotors))
    components: list[Component] = [physics]
    controller_path = None
    skipped: list[str] = []
    for prim in stage.Traverse():
        for api in nexus_apis(prim):
            if api in CONTROLLER_APIS:
                controller_path = str(prim.GetPath())
                continue
            builder = BUILDERS.get(api)
            if builder is None:
                skipped.append(f"{prim.GetPath()} ({api})")
                continue
            components.append(builder(prim, ctx))
    chosen = _controller(controller, controller_path or f"{stage.GetDefaultPrim().GetPath()}/controller")
    components.append(chosen)
    if skipped:
        log.warning("no component for these prims in this version of Nexus; skipped: %s", ", ".join(skipped))
    return Vehicle(plant, components, chosen, physics, plant.vehicle_path, plant.scene_path, skipped)
