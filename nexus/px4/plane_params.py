"""PX4 parameters that make PX4's fixed-wing airframe fly a Nexus plane (``nexus px4 params`` on a plane).

The airframe is PX4's SITL ``1030_gazebo-classic_plane`` (``PX4_SYS_AUTOSTART=1030``, or
``PX4_SIM_MODEL=gazebo-classic_plane``): the fixed-wing airframe that starts ``simulator_mavlink``, the
lockstep TCP link Nexus speaks (the ``gz_*`` planes use the Gazebo bridge instead). It loads
``rc.fw_defaults`` (``MAV_TYPE`` 1, fixed-wing control allocation) and tunes for Gazebo's 1.5 kg plane; what
differs for the vehicle file is set here:

* the outputs (:mod:`nexus.px4.plane_outputs`): ``CA_SV_CS_COUNT``, each surface's ``CA_SV_CSi_TYPE`` and
  ``CA_SV_CSi_TRQ_R/P/Y``, and ``PWM_MAIN_FUNCn`` for all 16 channels (the file's channels, the rest
  disabled, clearing the airframe's own layout), ``PWM_MAIN_REV`` 0;
* the speeds [m/s]: ``FW_AIRSPD_TRIM`` the airspeed the plane's mission cruises at (the vehicle file's
  ``NexusPlaneMissionAPI`` prim, else the scene's, else that schema's default, 25 m/s: what the
  ``fixed_wing`` stack flies); ``FW_AIRSPD_STALL`` the wing's level stall
  speed (:func:`nexus.control.fixed_wing.air_start.stall_speed`); ``FW_AIRSPD_MIN`` 1.3 × stall (the usual
  margin above stall of an approach speed); ``FW_AIRSPD_MAX`` the fastest level flight at full throttle
  (the largest airspeed at which :func:`nexus.aero.trim.straight_and_level` finds a trim, to 0.1 m/s);
* the trim (:func:`nexus.aero.trim.straight_and_level` at ``FW_AIRSPD_TRIM``): ``FW_THR_TRIM`` its throttle, ``FW_THR_MIN`` 0 and ``FW_THR_MAX`` 1 (the airframe's 0.6
  is below the Aerosonde's trim throttle), and ``TRIM_ROLL``, ``TRIM_PITCH``, ``TRIM_YAW`` the trim's
  servo values in PX4's sign (deflection / travel, times the sign of :data:`SURFACE_KINDS`).

* the mission's landing and the start: ``FW_LND_ANG`` the glide slope [deg], ``FW_LND_AIRSPD`` the approach
  airspeed, ``NAV_ACC_RAD`` the acceptance radius (PX4 reads a fixed wing's from it, not from the item),
  ``RWTO_TKOFF`` 1 for a plane with no start (no air start, no catapult: it rests on its wheels and PX4's runway
  takeoff rolls it off), else 0; ``FW_LAUN_DETCN_ON`` 1 with a catapult (its push is the launch PX4 detects);
  ``NAV_DLL_ACT`` 0 (the airframe's return on a lost data link makes PX4 refuse to arm without a ground station);
  without a rangefinder ``FW_LND_USETER`` and ``FW_LND_ABORT`` 0 (PX4 would abort a mission landing that finds no
  terrain estimate).

* ``ASPD_FALLBACK`` 1 where the file's gains prim sets ``nexus:airspeedFallback`` (once the airspeed is invalid, fly
  the ground speed less the wind, as the ``fixed_wing`` stack then does), else 0 (PX4's default).

The air start (where a run puts the plane) is not a parameter; whether the file has one decides ``RWTO_TKOFF``.

A vehicle's own ``px4Parameters`` (:func:`nexus.px4.params.pinned_parameters`) replace any of these.
"""

from __future__ import annotations

import logging
import math

from pxr import Usd

from nexus.aero.fixed_wing_forces import FIXED_WING_AERO_SPEC
from nexus.aero.propeller_advance import ADVANCE_RATIO_PROPELLER_SPEC
from nexus.aero.trim import straight_and_level
from nexus.control.fixed_wing.air_start import stall_speed
from nexus.control.fixed_wing.catapult import has_catapult
from nexus.control.fixed_wing.gains import vehicle_gains
from nexus.control.fixed_wing.mission import PLANE_MISSION_SPEC
from nexus.core.errors import BuildError, NexusError
from nexus.plant.usd_checks import nexus_apis
from nexus.px4.plane_outputs import MAV_TYPE_FIXED_WING, SURFACE_KINDS, plane_outputs
from nexus.schemas.reader import read_prim
from nexus.sensors.rangefinder import RANGEFINDER_SPEC

log = logging.getLogger("nexus")

#: A rangefinder's schema: PX4 can flare on its terrain estimate.
RANGEFINDER_SCHEMA = "NexusRangefinderAPI"
#: The air start's schema: a plane released in the air takes off from no runway.
AIR_START_SCHEMA = "NexusAirStartAPI"
#: PX4 aborts a landing whose terrain is not measured this long [s] after the final began
#: (``TERRAIN_ALT_FIRST_MEASUREMENT_TIMEOUT`` in PX4's fixed-wing mode manager).
TERRAIN_FIRST_MEASUREMENT_S = 10.0
#: PX4's SITL fixed-wing airframe on the simulator_mavlink link, and its model name.
AIRFRAME, SIM_MODEL = 1030, "gazebo-classic_plane"
#: PX4's ``CA_AIRFRAME`` for a fixed wing.
CA_AIRFRAME_FIXED_WING = 1
#: FW_AIRSPD_MIN over the stall speed.
MIN_OVER_STALL = 1.3
#: PX4 has 16 output channels (``PWM_MAIN_FUNC1`` .. ``16``).
OUTPUT_CHANNELS = 16
#: Where the search for the fastest level flight stops [m/s], and its resolution.
FASTEST_SEARCH_TOP, FASTEST_RESOLUTION = 200.0, 0.1


def plane_parameters(plant, stage, cruise: tuple[float, str] | None = None) -> dict[str, float | int]:
    """``{NAME: value}`` for PX4's fixed-wing airframe from the plane file ``stage`` and its ``plant``; ``cruise``
    (an airspeed [m/s] and where it comes from) in place of the plane mission's (a standard VTOL's mission)."""
    path = plant.vehicle_path
    outputs = plane_outputs(stage, path)
    wing, propeller = _wing_and_propeller(stage, path)
    if wing is None or propeller is None:
        raise BuildError(f"{path}: a plane needs a wing (NexusFixedWingAeroAPI) and a propeller "
                         "(NexusAdvanceRatioPropellerAPI) for PX4's fixed-wing parameters")
    cruise, where = cruise or mission_airspeed(stage, path, plant.scene_path)
    stall = stall_speed(wing, plant.mass, plant.gravity)
    if MIN_OVER_STALL * stall >= cruise:
        raise BuildError(f"{where} {cruise:g} m/s is not above PX4's minimum airspeed {MIN_OVER_STALL:g} x stall = "
                         f"{MIN_OVER_STALL * stall:.2f} m/s (FW_AIRSPD_MIN); fly the mission faster")
    try:
        trim = straight_and_level(wing, propeller, plant.mass, plant.gravity, cruise)
    except NexusError as error:
        raise BuildError(f"{where} {cruise:g} m/s: PX4's trim (FW_THR_TRIM, TRIM_PITCH) needs a level trim there: "
                         f"{error}") from None
    params: dict[str, float | int] = {"MAV_TYPE": MAV_TYPE_FIXED_WING, "CA_AIRFRAME": CA_AIRFRAME_FIXED_WING,
                                      "CA_ROTOR_COUNT": 1, "CA_SV_CS_COUNT": len(outputs.surfaces)}
    for i, surface in enumerate(outputs.surfaces):
        kind = surface.kind
        params[f"CA_SV_CS{i}_TYPE"] = kind.px4_type
        for axis, torque in zip("RPY", kind.torque):
            params[f"CA_SV_CS{i}_TRQ_{axis}"] = torque
    functions = outputs.functions()
    for n in range(OUTPUT_CHANNELS):
        params[f"PWM_MAIN_FUNC{n + 1}"] = functions.get(n, 0)
    params["PWM_MAIN_REV"] = 0
    params["FW_AIRSPD_STALL"] = round(stall, 2)
    params["FW_AIRSPD_MIN"] = round(MIN_OVER_STALL * stall, 2)
    params["FW_AIRSPD_TRIM"] = round(cruise, 2)
    params["FW_AIRSPD_MAX"] = fastest_level_flight(wing, propeller, plant.mass, plant.gravity, cruise)
    params["FW_THR_TRIM"] = round(float(trim.throttle), 4)
    params["FW_THR_MIN"], params["FW_THR_MAX"] = 0.0, 1.0
    # The landing the mission flies (its glide slope and approach speed), and the start: a catapult's push is a
    # launch PX4 detects; a plane with neither a catapult nor an air start rests on its wheels, and PX4's runway
    # takeoff (the airframe's RWTO_TKOFF 1) rolls it off.
    landing, _ = mission_values(stage, path, plant.scene_path)
    params["FW_LND_ANG"] = round(math.degrees(float(landing["glide_slope"])), 2)
    params["FW_LND_AIRSPD"] = round(float(landing["approach_airspeed"]), 2)
    catapult = has_catapult(stage)
    released = any(AIR_START_SCHEMA in nexus_apis(prim) for prim in stage.Traverse())
    params["RWTO_TKOFF"] = 0 if catapult or released else 1
    params["FW_LAUN_DETCN_ON"] = 1 if catapult else 0
    # The airframe's data-link-loss action (2: return) makes PX4 refuse to arm without a ground station's heartbeat
    # ("Preflight Fail: No connection to the GCS"); the multirotors' SITL airframe has 0, as here.
    params["NAV_DLL_ACT"] = 0
    # PX4 flares on its terrain estimate (FW_LND_USETER 1) and aborts a mission landing that finds no terrain within
    # 10 s (FW_LND_ABORT 3): a plane without a rangefinder lands on the landing point's altitude instead, no abort.
    rangefinders = [prim for prim in stage.Traverse() if RANGEFINDER_SCHEMA in nexus_apis(prim)]
    if not rangefinders:
        params["FW_LND_USETER"], params["FW_LND_ABORT"] = 0, 0
    else:
        warn_short_rangefinder(rangefinders[0], path, landing)
    # A fixed wing's waypoint acceptance radius (PX4 reads an item's own only on a multicopter): the mission's.
    params["NAV_ACC_RAD"] = round(float(landing["acceptance_radius"]), 2)
    # Once the airspeed is invalid: the ground speed less the wind (1) where the file's own stack flies it, else none.
    params["ASPD_FALLBACK"] = 1 if vehicle_gains(stage, path).airspeed_fallback else 0
    deflections = {"aileron": trim.aileron, "elevator": trim.elevator, "rudder": trim.rudder}
    names = {"aileron": "TRIM_ROLL", "elevator": "TRIM_PITCH", "rudder": "TRIM_YAW"}
    for surface in outputs.surfaces:
        servo = SURFACE_KINDS[surface.role].sign * float(deflections[surface.role]) / surface.travel
        params[names[surface.role]] = round(servo, 4)
    return params


def warn_short_rangefinder(prim, path, landing: dict) -> None:
    """Warn when PX4 would abort the mission's landing for want of terrain: it needs a valid distance within
    :data:`TERRAIN_FIRST_MEASUREMENT_S` of the final's start (``FW_LND_ABORT``'s "terrain not found"), when the
    glide from ``approachHeight`` at ``approachAirspeed`` (calm air) is still this high."""
    reach = float(read_prim(prim, RANGEFINDER_SPEC, path)["max_distance"])
    height = float(landing["approach_height"]) - (TERRAIN_FIRST_MEASUREMENT_S * float(landing["approach_airspeed"])
                                                  * math.tan(float(landing["glide_slope"])))
    if reach < height:
        log.warning("%s: %s nexus:maxDistance %g m: PX4 needs the ground measured within %g s of the final's start, "
                    "when the glide is still %.1f m up, or it aborts the landing (FW_LND_ABORT); give a longer "
                    "reach (a LightWare SF11/C laser reads to 100 m) or set FW_LND_ABORT to 0", path, prim.GetPath(),
                    reach, TERRAIN_FIRST_MEASUREMENT_S, height)


def mission_airspeed(stage, path, scene_path) -> tuple[float, str]:
    """The airspeed [m/s] the plane's mission cruises at, and where it comes from (for errors): the vehicle file's
    ``NexusPlaneMissionAPI`` prim, else the scene's, else the schema's default."""
    values, where = mission_values(stage, path, scene_path)
    return float(values["airspeed"]), f"{where} nexus:airspeed"


def mission_values(stage, path, scene_path) -> tuple[dict, str]:
    """The plane mission's values (every :data:`PLANE_MISSION_SPEC` parameter) and where they come from: the
    vehicle file's ``NexusPlaneMissionAPI`` prim, else the scene's, else the schema's defaults."""
    for where, opened in ((path, stage), (scene_path, None)):
        if where is None:
            continue
        found = opened if opened is not None else Usd.Stage.Open(str(where))
        for prim in found.Traverse() if found else ():
            if PLANE_MISSION_SPEC.schema in nexus_apis(prim):
                return read_prim(prim, PLANE_MISSION_SPEC, where), f"{where}: {prim.GetPath()}"
    return {p.key: p.default for p in PLANE_MISSION_SPEC.all_params}, f"{path}: the default plane mission's"


def fastest_level_flight(wing: dict, propeller: dict, mass: float, gravity: float, trimmed: float) -> float:
    """The largest airspeed [m/s], to 0.1 below, at which the plane trims straight and level with throttle ≤ 1."""
    low, high = float(trimmed), FASTEST_SEARCH_TOP
    if _trims(wing, propeller, mass, gravity, high):
        return high
    while high - low > FASTEST_RESOLUTION / 4:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if _trims(wing, propeller, mass, gravity, middle) else (low, middle)
    return round(int(low / FASTEST_RESOLUTION) * FASTEST_RESOLUTION, 1)


def _trims(wing, propeller, mass, gravity, airspeed: float) -> bool:
    try:
        straight_and_level(wing, propeller, mass, gravity, airspeed)
    except NexusError:
        return False
    return True


def _wing_and_propeller(stage, path) -> tuple[dict, dict]:
    wing = propeller = None
    for prim in stage.Traverse():
        apis = nexus_apis(prim)
        if FIXED_WING_AERO_SPEC.schema in apis:
            wing = read_prim(prim, FIXED_WING_AERO_SPEC, path)
        if ADVANCE_RATIO_PROPELLER_SPEC.schema in apis:
            propeller = read_prim(prim, ADVANCE_RATIO_PROPELLER_SPEC, path)
    return wing, propeller


__all__ = ["AIRFRAME", "SIM_MODEL", "fastest_level_flight", "plane_parameters"]
