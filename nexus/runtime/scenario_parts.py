"""What a scenario adds to a flight's ring, for :func:`nexus.runtime.flight.build_flight`.

``RunConfig.scenario`` holds the part of a scenario file that RunConfig's own fields cannot say (the
mission steps, the gusts, the controller's gain factors), as JSON-ready data, so a run folder flown from a
scenario replays from its run.json alone and a sweep point's id covers it. The faults and the start are
fixed variation values (``run.json``'s ``world_values``), handed to their owners as a variation file's
draws. Every component made here declares its place in the ring (:mod:`nexus.core.ring`); none is put
into a list at a position.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nexus.air.drag import Drag
from nexus.air.gust import Gust, toward
from nexus.air.wind_field import WindField
from nexus.control import registry
from nexus.core import Component
from nexus.core.errors import BuildError
from nexus.core.ring import placed
from nexus.guidance.fleet_mission import FleetMission, Route
from nexus.guidance.steps import StepMission
from nexus.plant.fleet import FleetLayout
from nexus.plant.ground_contact import GroundContact
from nexus.runtime.fault_trigger import FaultTrigger
from nexus.runtime.params import variation_names
from nexus.sensors.faults import SensorFaults
from nexus.sensors.sensor import Sensor
from nexus.worlds.drawn import draw_values

@dataclass
class ScenarioParts:
    """The components a scenario adds, and whether its steps take the place of the scene's guidance."""

    components: list[Component] = field(default_factory=list)
    replaces_guidance: bool = False


def scenario_parts(ring: dict, plant, components: list, controller: Component, controller_name: str,
                   fleet: FleetLayout | None = None) -> ScenarioParts:
    """Its steps (in place of the scene's guidance), drag for a vehicle without its own, a stage for each sensor
    fault past the first, the stage that fires ``when`` faults and the contact count a ``contact`` check
    reads; scales the controller's gains (``controller_name``: its registered name) when it is in
    ``components`` (a replay's recorded controls have none to scale). A fleet's routes (``routes``, one per
    vehicle, flown with ``fleet``'s line) take the guidance's place as the steps do."""
    parts = ScenarioParts()
    steps = ring.get("steps") or []
    routes = ring.get("routes") or []
    if routes:
        parts.replaces_guidance = True
        made = [Route.from_table(route) for route in routes]
        parts.components.append(placed(FleetMission(made, fleet or FleetLayout(), where=ring.get("name", "scenario")),
                                       "guidance"))
    elif steps:
        parts.replaces_guidance = True
        parts.components.append(placed(StepMission(steps), "guidance"))
    if ring.get("gain_scale") and controller in components:
        scale_gains(controller, controller_name, ring["gain_scale"])
    if ring.get("drag"):
        if any(isinstance(c, Drag) for c in components):
            raise BuildError(f"{plant.vehicle_path}: the vehicle has its own drag prim; remove the scenario's "
                             "environment.drag_area and environment.rotor_drag")
        drag = Drag("/scenario/drag", plant, **{k: tuple(v) if isinstance(v, list) else v
                                                for k, v in ring["drag"].items()})
        parts.components.append(placed(drag, "scenario"))
    sensors = [c for c in components if isinstance(c, Sensor)]
    for index, fault in enumerate(ring.get("sensor_faults") or ()):  # past the first: one stage each, own sensor
        values = {"sensor_fault_time": fault["time"], "sensor_fault_sensor": fault["sensor"],
                  "sensor_fault_mode": fault["mode"]}
        faults = SensorFaults(sensors, [values] * plant.worlds, name=f"/scenario/sensor_faults/{index + 1}")
        parts.components.append(placed(faults, "fault", sequence=index))
    after_faults = len(ring.get("sensor_faults") or ())
    if ring.get("triggers"):  # faults fired by a condition, measured after the mission's step began
        parts.components.append(placed(FaultTrigger(plant, ring["triggers"]), "fault", sequence=after_faults))
    if ring.get("contact"):  # what a contact check reads, beside the faults
        parts.components.append(placed(GroundContact(plant), "fault", sequence=after_faults + 1))
    return parts


def scale_gains(controller: Component, controller_name: str, factors: dict) -> None:
    """Scale the controller's gains by name: its registration names the gains it has
    (:attr:`nexus.control.registry.Controller.gains`), and the controller scales them (``scale_gains``)."""
    entry = registry.get(controller_name)
    if not entry.gains:
        scalable = " or ".join(f'"{c.name}"' for c in registry.controllers().values() if c.gains)
        raise BuildError(f"the scenario's controller.gain_scale scales the PID's gains, but {controller.name} is a "
                         f"{type(controller).__name__}, which has none; fly controller {scalable} or drop gain_scale")
    controller.scale_gains(factors)


def with_gusts(ring: dict, plant, air: WindField | None) -> WindField | None:
    """The air with the scenario's gusts added (made when the scene has none); None without air or gusts."""
    gusts = ring.get("gusts") or []
    if not gusts:
        return air
    if air is None:
        air = WindField(body=plant.body_label(plant.base_path))
    air.gusts = (*air.gusts, *(Gust(g["start"], g["duration"], g["amplitude"], toward(g["direction"]))
                               for g in gusts))
    return air


def scenario_variation(options, plant, components) -> list[dict] | None:
    """Each world's values: those drawn from ``options.vary`` (if any) with the scenario's fixed ones over them;
    None when the scenario fixes none (the run draws as it would without a scenario)."""
    fixed = options.scenario.get("values") or {}
    if not fixed:
        return None
    names = variation_names(options.vehicle)
    drawn = draw_values(options, plant, components, names=names) if options.vary else [{}] * options.worlds
    return [{**values, **fixed} for values in drawn]
