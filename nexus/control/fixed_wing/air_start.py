"""A plane's start in the air: where ``nexus run`` puts it before the first tick, trimmed to fly on.

A plane at rest on the scene's floor is below its stall speed and has no launch step yet, so a vehicle file
declares ``NexusAirStartAPI`` (on any prim; the Aerosonde's is its wing's): the airspeed [m/s] and the
height [m] above where the file places it. The start-up (:func:`nexus.runtime.startup.start`) then, instead
of settling the vehicle on its gear, lifts every world's vehicle by the height, pitches it to the trim's
angle of attack about its own heading (the file's, turned by any drawn ``start_yaw``), gives it the
airspeed along that heading, and makes the point below the start each world's NED origin
(:func:`nexus.plant.placement.place_in_air`). The surfaces start at the trim's deflections
(:meth:`AirStart.prepare`, before the state is reset; the plane's mission carries the start into the ring),
and the trim's row (servo commands and throttle) is in ``controls`` for the first tick, so the propeller turns
at its trim speed from the start (its motor is at its steady speed each tick: docs/fixed_wing.md); the
controller's own rows follow from the first tick on.

The trim is :func:`nexus.aero.trim.straight_and_level` at the start airspeed for the plant's mass and
gravity. A start slower than the stall speed ``√(2mg / (ρ S C_L,max))``, with ``C_L,max = C_L_0 +
C_L_alpha·stallAngle`` (the linear lift at the stall angle), is refused in one line naming the attribute.
"""

from __future__ import annotations

import math

import numpy as np

from nexus.aero.control_surfaces import ControlSurface
from nexus.aero.fixed_wing_forces import FIXED_WING_AERO_SPEC
from nexus.aero.propeller_advance import ADVANCE_RATIO_PROPELLER_SPEC
from nexus.aero.trim import Trim, straight_and_level
from nexus.core.errors import BuildError
from nexus.core.spec import Param, Spec
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.placement import place_in_air
from nexus.plant.usd_checks import nexus_apis
from nexus.schemas.reader import read_prim

AIR_START_SPEC = Spec(
    name="AirStart",
    schema="NexusAirStartAPI",
    noun="air start",
    doc="Where a plane starts a run: in the air, nexus:height above its place in the file, flying its heading at "
        "nexus:airspeed, trimmed straight and level (attitude, surfaces, throttle); the point below is the NED origin.",
    params=(
        Param("airspeed", "nexus:airspeed", "float", 25.0, "m/s", "Airspeed at the start, along the vehicle's heading",
              low=0.0, open_low=True),
        Param("height", "nexus:height", "float", 100.0, "m", "Height of the start above the vehicle's place in the file",
              low=0.0, open_low=True),
    ),
)


def stall_speed(wing: dict, mass: float, gravity: float) -> float:
    """The level-flight stall speed [m/s] of a wing's checked prim values: the linear lift at the stall angle."""
    lift_max = wing["C_L_0"] + wing["C_L_alpha"] * wing["stall_angle"]
    return math.sqrt(2.0 * mass * gravity / (wing["air_density"] * wing["wing_area"] * lift_max))


class AirStart:
    """A vehicle file's start in the air and the trim it starts at (:func:`air_start`).

    Not a stage: the plane's mission carries it into the ring (:class:`~.mission.PlaneMission`), where the
    start-up finds it (``air_start``) and :meth:`prepare` gives the surfaces their trim.
    """

    def __init__(self, name: str, airspeed: float, height: float, trim: Trim, throttle_channel: int):
        self.name, self.airspeed, self.height, self.trim = name, float(airspeed), float(height), trim
        self.throttle_channel = int(throttle_channel)
        #: The trim's row of servo commands and throttle (:meth:`prepare` fills the surfaces' slots).
        self.row = np.zeros(CONTROLS_WIDTH, dtype=np.float32)
        self.row[self.throttle_channel] = trim.throttle

    def prepare(self, ctx) -> None:
        """Each control surface starts at the trim's deflection (called from a component's ``prepare``: the
        state is reset after it)."""
        trims = {"aileron": self.trim.aileron, "elevator": self.trim.elevator, "rudder": self.trim.rudder}
        for component in ctx.components:
            if isinstance(component, ControlSurface) and component.role in trims:
                component.initial = float(trims[component.role])
                self.row[component.channel] = trims[component.role] / component.travel

    def place(self, loop, plant) -> np.ndarray:
        """Put every world's vehicle at its start (:func:`place_in_air`) and the trim's row in the ``controls`` the
        control stage writes, which the surfaces and the propeller read on the first tick (the controller runs
        after them); returns the NED origins [m, ENU]."""
        for stage in loop.plan.stages:
            if stage.kind == "control" and "controls" in loop.ios[id(stage)]:  # PX4's row gatherer writes none
                controls = loop.ios[id(stage)]["controls"]
                controls = getattr(controls, "array", controls)  # a host stage's port holds the device array
                controls.assign(np.tile(self.row, (controls.shape[0], 1)))
        return place_in_air(plant, self.height, self.airspeed, self.trim.pitch)


def air_start(stage, path, plant) -> AirStart | None:
    """The air start of the vehicle file ``stage`` (opened from ``path``) for ``plant``'s mass and gravity: its
    ``NexusAirStartAPI`` prim's, trimmed at its airspeed; None when it has none. A file without a wing or a
    propeller, or a start below the stall speed, is refused in one line naming the file, prim and attribute."""
    prims = [prim for prim in stage.Traverse() if AIR_START_SPEC.schema in nexus_apis(prim)]
    if not prims:
        return None
    if len(prims) > 1:
        raise BuildError(f"{path}: {prims[0].GetPath()} and {prims[1].GetPath()} both apply NexusAirStartAPI; keep one")
    prim = prims[0]
    values = read_prim(prim, AIR_START_SPEC, path)
    where = f"{path}: {prim.GetPath()}"
    wing = propeller = None
    for other in stage.Traverse():
        apis = nexus_apis(other)
        if FIXED_WING_AERO_SPEC.schema in apis:
            wing = read_prim(other, FIXED_WING_AERO_SPEC, path)
        if ADVANCE_RATIO_PROPELLER_SPEC.schema in apis:
            propeller = read_prim(other, ADVANCE_RATIO_PROPELLER_SPEC, path)
    if wing is None or propeller is None:
        missing = "wing (NexusFixedWingAeroAPI)" if wing is None else "propeller (NexusAdvanceRatioPropellerAPI)"
        raise BuildError(f"{where} applies NexusAirStartAPI, but the file has no {missing}; an air start is for a plane")
    mass, gravity = plant.mass, plant.gravity
    slowest = stall_speed(wing, mass, gravity)
    if values["airspeed"] < slowest:
        raise BuildError(f"{where}: nexus:airspeed {values['airspeed']:g} m/s is below the stall speed "
                         f"{slowest:.2f} m/s ({mass:g} kg); give a faster start")
    trim = straight_and_level(wing, propeller, mass, gravity, values["airspeed"])
    return AirStart(str(prim.GetPath()), values["airspeed"], values["height"], trim, propeller["channel"])


def required_air_start(stage, path, plant) -> AirStart:
    """:func:`air_start`, refusing a plane without one in one line naming the file and its wing's prim: at rest
    it is below its stall speed, and it has no launch step."""
    found = air_start(stage, path, plant)
    if found is None:
        wings = [str(prim.GetPath()) for prim in stage.Traverse() if FIXED_WING_AERO_SPEC.schema in nexus_apis(prim)]
        raise BuildError(f"{path}: {wings[0] if wings else 'the vehicle'} is a wing at rest, below its stall speed, "
                         "with no launch step; apply NexusAirStartAPI (nexus:airspeed [m/s], nexus:height [m]) or "
                         "NexusCatapultAPI (nexus:launchSpeed [m/s]) to a prim of the file, or let PX4 fly it from "
                         "the runway (--controller px4 --px4-mission: PX4's runway takeoff)")
    return found


__all__ = ["AIR_START_SPEC", "AirStart", "air_start", "required_air_start", "stall_speed"]
