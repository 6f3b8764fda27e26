"""From ``--vehicle`` and ``--scene`` to the components of one ring.

Each Nexus prim of the vehicle file becomes a component: the schema index
(:mod:`nexus.schemas.catalog`) names the component class of each applied
schema, :func:`nexus.schemas.reader.read_prim` reads and checks the prim
against the class's spec, and the class's ``from_prim`` makes the component.
Each declares its place in the ring (:mod:`nexus.core.ring`): the physics,
the vehicle's parts at their prims' places in the file, the scene's guidance at
its prims' places in the scene, and the controller, chosen by name, which takes
the controller prim's path, so connections to it (the ESCs'
``nexus:inputs:controls``) find it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from nexus.air.downwash import Downwash
from nexus.control import registry
from nexus.control.fixed_wing.air_start import required_air_start
from nexus.control.fixed_wing.catapult import check_one_start, has_catapult
from nexus.control.fixed_wing.controller import FixedWingController
from nexus.control.fixed_wing.mission import plane_mission
from nexus.control.registry import DEFAULT_CONTROLLER, ControllerOptions
from nexus.control.vtol.controller import VtolController
from nexus.control.vtol.mission import vtol_mission
from nexus.core import Component
from nexus.core.errors import BuildError
from nexus.core.ring import compose, placed
from nexus.estimation.truth import TruthEstimator
from nexus.guidance import MissionGuidance, MissionProfile
from nexus.guidance.tracking import TRACKING_APIS, FigureEightGuidance, WaypointsGuidance
from nexus.plant.fleet import FleetLayout
from nexus.plant.loading import load_plant
from nexus.plant.physics import Physics
from nexus.plant.plant import Plant
from nexus.plant.usd_checks import nexus_apis
from nexus.schemas.catalog import component_class, index
from nexus.schemas.reader import read_prim

log = logging.getLogger("nexus")

#: The controllers (``--controller``'s choices, whether each reads a setpoint or brings its own estimator) are
#: registered beside their classes: :mod:`nexus.control.registry`.
CONTROLLER_APIS = ("NexusPidControllerAPI",)
MISSION_APIS = ("NexusMissionAPI",)
#: The schema that makes a vehicle file a plane (:func:`vehicle_kind`).
WING_API, ESC_API = "NexusFixedWingAeroAPI", "NexusEscAPI"
#: ``--mission`` choices: the scene's own profile, or the same mission shortened to under 10 s.
MISSIONS = ("scene", "short")


@dataclass
class PrimContext:
    """What a component builder gets besides its prim."""

    plant: Plant
    stage: object
    path: Path
    rotor_count: int

    def rotor_for_joint(self, joint: str, prim: str = ""):
        """The loaded rotor turning on ``joint`` (an ESC's ``nexus:joint``); ``prim`` names the asker in errors."""
        for rotor in self.plant.rotors:
            if rotor.joint_path == joint:
                return rotor
        raise BuildError(
            f"{self.path}: {f'ESC prim {prim}: nexus:joint ' if prim else ''}{joint} is not a rotor joint with a "
            "propeller; add a prim with NexusPropellerAPI whose nexus:inputs:rotor targets it"
        )

    def rotor_for_body(self, body: str, prim: str = ""):
        """The loaded rotor of ``body`` (a propeller's ``nexus:body``); ``prim`` names the asker in errors."""
        for rotor in self.plant.rotors:
            if rotor.body_path == body:
                return rotor
        raise BuildError(f"{self.path}: {f'propeller prim {prim}: nexus:body ' if prim else ''}{body} is not a rotor "
                         "body with a propeller")


#: Schemas whose components are built by hand rather than by their class's ``from_prim`` (none left:
#: the ESC and the propeller build from their specs too).
BUILDERS: dict[str, Callable[[object, PrimContext], Component]] = {}


class UnknownSchema(LookupError):
    """A prim applies a Nexus schema this version of Nexus builds nothing for."""


def build_component(api: str, prim, ctx: PrimContext) -> Component | None:
    """The component a prim applying ``api`` becomes: its spec's checked values, then ``from_prim``.

    None for a schema that builds no component (a shared base such as
    ``NexusSensorAPI``); :class:`UnknownSchema` for a schema this version does not know.
    """
    builder = BUILDERS.get(api)
    if builder is not None:
        return builder(prim, ctx)
    if api not in index():
        raise UnknownSchema(api)
    cls = component_class(api)
    if cls is None:
        return None
    values = ctx.plant.prim_values.get(str(prim.GetPath()))  # read already, to build the model
    return cls.from_prim(prim, values if values is not None else read_prim(prim, cls.spec, ctx.path), ctx)


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


#: The vehicle's estimator prims, left out of the rings of controllers that bring their own.
ESTIMATOR_APIS = ("NexusTruthEstimatorAPI", "NexusEkfAPI")
#: ``--estimator``: the vehicle file's own, or this schema's component built from its estimator prim.
ESTIMATORS = {"vehicle": None, "truth": "NexusTruthEstimatorAPI", "ekf": "NexusEkfAPI"}


def _writes(component: Component, signal: str) -> bool:
    spec = getattr(component, "spec", None)
    return spec is not None and any(output.signal == signal for output in spec.all_outputs)


def vehicle_kind(stage) -> str:
    """``plane`` for a vehicle file with a wing (a prim applying ``NexusFixedWingAeroAPI``), ``vtol`` for one with a
    wing and lift rotors (a prim applying ``NexusEscAPI``), else ``multirotor``
    (:data:`nexus.control.registry.VEHICLE_KINDS`)."""
    apis = {api for prim in stage.Traverse() for api in nexus_apis(prim)}
    if WING_API in apis:
        return registry.VTOL if ESC_API in apis else registry.PLANE
    return registry.MULTIROTOR


def _missions(scene, ctx: PrimContext, mission: str) -> list[Component]:
    """The scene's mission prims, then its tracking prims, as guidance components (``short``: the first
    shortened). Each is read against its class's spec with the scene file as the file errors name."""
    classes = {cls.spec.schema: cls for cls in (MissionGuidance, FigureEightGuidance, WaypointsGuidance)}
    scene_ctx = replace(ctx, path=ctx.plant.scene_path)
    found = []
    for apis in (MISSION_APIS, TRACKING_APIS):
        for prim in scene.Traverse():
            for cls in (classes[a] for a in nexus_apis(prim) if a in apis):
                found.append(cls.from_prim(prim, read_prim(prim, cls.spec, scene_ctx.path), scene_ctx))
    if mission == "short":
        if not found:
            raise BuildError(f"{ctx.plant.scene_path}: --mission short shortens the scene's mission, but it has none")
        found = [MissionGuidance(found[0].name, MissionProfile.short())]
    return [placed(guidance, "guidance", sequence=at) for at, guidance in enumerate(found)]


def assemble(
    vehicle: str | Path,
    scene: str | Path,
    *,
    device: str = "cpu",
    controller: str = DEFAULT_CONTROLLER,
    substeps: int = 1,
    decimal_year: float | None = None,
    controller_options: ControllerOptions | dict | None = None,
    mission: str = "scene",
    worlds: int = 1,
    solver: str = "mujoco",
    requires_grad: bool = False,
    estimator: str = "vehicle",
    fleet: FleetLayout | None = None,
) -> Vehicle:
    """Load the files, then build every component the vehicle's prims declare (``worlds`` copies of the plant).

    ``controller`` is a registered controller's name (:mod:`nexus.control.registry`); ``controller_options``
    its options, typed or as a table (None: its defaults). ``estimator`` (one of :data:`ESTIMATORS`) builds
    the vehicle's estimator prims as that estimator, read against its schema (unauthored attributes: defaults).
    """
    registry.get(controller)  # an unknown name is refused before any file is read
    if estimator not in ESTIMATORS:
        raise BuildError(f"unknown estimator '{estimator}'; choose one of {', '.join(ESTIMATORS)}")
    if mission not in MISSIONS:
        raise BuildError(f"unknown mission '{mission}'; choose one of {', '.join(MISSIONS)}")
    plant, stage, scene_stage = load_plant(vehicle, scene, device, worlds=worlds, solver=solver,
                                           requires_grad=requires_grad, fleet=fleet)
    # The controller for this kind of vehicle (the default's name on a plane: the plane's default); the
    # options given were made for the name asked for, so a controller chosen in its place takes its defaults.
    entry = registry.for_vehicle(controller, vehicle_kind(stage), str(plant.vehicle_path))
    options = entry.make_options(controller_options if entry.name == controller else None)
    if decimal_year is not None:
        plant.decimal_year = float(decimal_year)
    physics = Physics(plant, substeps=substeps)
    ctx = PrimContext(plant, stage, plant.vehicle_path, len(plant.rotors))
    components: list[Component] = [placed(physics, "physics")]
    controller_prim = None
    skipped: list[str] = []
    for prim in stage.Traverse():
        for api in nexus_apis(prim):
            if api in CONTROLLER_APIS:
                controller_prim = prim
                continue
            # A controller with its own estimator (PX4) skips the vehicle's, unless a policy reads it or the run
            # asks for the EKF by name: then Nexus's filter flies beside it as a recorded observer.
            if api in ESTIMATOR_APIS and entry.own_estimator and not options.reads_guidance() and estimator != "ekf":
                continue
            if api in ESTIMATOR_APIS and ESTIMATORS[estimator] is not None:
                api = ESTIMATORS[estimator]
            try:
                component = build_component(api, prim, ctx)
            except UnknownSchema:
                skipped.append(f"{prim.GetPath()} ({api})")
                continue
            if component is not None:
                components.append(placed(component, "part", sequence=len(components)))  # its place in the file
    downwash = Downwash.from_scene(scene_stage, stage, plant)  # None without a NexusDownwashSourceAPI prim
    if downwash is not None:  # after the vehicle's parts: its force adds to the propellers'
        components.append(placed(downwash, "part", sequence=len(components)))
    if entry.reads_setpoint or options.reads_guidance():
        components += _missions(scene_stage, ctx, mission)
    controller_path = str(controller_prim.GetPath()) if controller_prim else f"{stage.GetDefaultPrim().GetPath()}/controller"
    chosen = placed(entry.build(controller_prim, controller_path, ctx, options), "controller")
    if isinstance(chosen, FixedWingController):  # a plane's mission writes its task (the scene's, the file's, a default)
        mission_guidance = plane_mission(stage, scene_stage, plant.vehicle_path, plant.scene_path, chosen)
        check_one_start(stage, plant.vehicle_path)
        if not has_catapult(stage):  # a catapult is one of the file's parts; the start-up settles the plane
            mission_guidance.air_start = required_air_start(stage, plant.vehicle_path, plant)
        components.append(placed(mission_guidance, "guidance"))
    if isinstance(chosen, VtolController):  # a VTOL's mission writes its loops' setpoint, task and switches
        chosen.mission = vtol_mission(stage, scene_stage, plant.vehicle_path, plant.scene_path, chosen)
        components.append(placed(chosen.mission, "guidance"))
    if isinstance(chosen, (FixedWingController, VtolController)) and not any(_writes(c, "estimate") for c in components):
        # A plane's file without an estimator prim flies on the truth.
        truth = TruthEstimator(f"{stage.GetDefaultPrim().GetPath()}/truth", plant.ned_origin, body=plant.base_path)
        components.append(placed(truth, "part", sequence=len(components)))
    components.append(chosen)
    if skipped:
        log.warning("no component for these prims in this version of Nexus; skipped: %s", ", ".join(skipped))
    return Vehicle(plant, compose(components), chosen, physics, plant.vehicle_path, plant.scene_path, skipped)
