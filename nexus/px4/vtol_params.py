"""PX4 parameters that make PX4's standard-VTOL airframe fly a Nexus standard VTOL (``nexus px4 params`` on a file
with a wing and lift rotors).

The airframe is PX4's SITL ``1040_gazebo-classic_standard_vtol`` (``PX4_SYS_AUTOSTART=1040``): a quad-X of lift
motors, a pusher and surfaces, ``rc.vtol_defaults`` with ``VT_TYPE`` 2, flown over ``simulator_mavlink``, the
lockstep TCP link Nexus speaks. What differs for the vehicle file is set here, on top of what a plane gets
(:mod:`nexus.px4.plane_params`: the surfaces' types and torques, the fixed-wing speeds and trim, at the VTOL
mission's cruise airspeed) and what a multirotor's rotors get (:mod:`nexus.px4.rotor_params`: the lift rotors'
allocation rows, ``MPC_THR_HOVER``, ``THR_MDL_FAC``, the rate gains):

* ``MAV_TYPE`` 22 (a VTOL with fixed rotors), ``CA_AIRFRAME`` 2 (standard VTOL), ``VT_TYPE`` 2;
* ``CA_ROTOR_COUNT`` the lift rotors and the pusher; the pusher is the last rotor, its axis forward
  (``CA_ROTORn_AX`` 1, ``AZ`` 0), at the centre of mass (its thrust line: the aerodynamics stage applies it there),
  ``KM`` 0, ``CT`` its static thrust at full throttle [N] (the propeller's CT(J) and motor model at J = 0);
* the outputs (:class:`nexus.px4.plane_outputs.PlaneOutputs`): ``Motor1`` to ``Motor4`` on the lift ESCs' channels,
  ``Motor5`` the pusher's, ``Servo1`` to ``Servo3`` the surfaces';
* the transitions as the VTOL mission flies them (:func:`nexus.control.vtol.mission.vtol_mission`: the scene's
  ``NexusVtolMissionAPI`` prim, else the vehicle file's, else that schema's defaults): ``VT_ARSP_TRANS``, ``VT_ARSP_BLEND``, ``VT_TRANS_TIMEOUT``,
  ``VT_F_TRANS_THR`` 1 (full pusher), ``MIS_TAKEOFF_ALT``, ``MPC_LAND_SPEED``, ``NAV_ACC_RAD``;
* the plane's start and landing parameters that a vertical take-off and landing make moot are set so: no runway
  takeoff (``RWTO_TKOFF`` 0), no launch detection; the plane mission's glide slope and approach speed are left out.
"""

from __future__ import annotations

import warp as wp

from nexus.aero.propeller_advance import (ADVANCE_RATIO_PROPELLER_SPEC, PropellerModel, propeller_model,
                                          propeller_thrust_torque)
from nexus.control.vtol.mission import vtol_mission
from nexus.core.errors import BuildError
from nexus.plant.usd_checks import nexus_apis
from nexus.plant.usd_files import open_stage
from nexus.px4.plane_outputs import MAV_TYPE_VTOL_FIXEDROTOR, plane_outputs
from nexus.px4.plane_params import plane_parameters
from nexus.px4.rotor_params import rotor_parameters
from nexus.schemas.reader import read_prim

#: PX4's SITL standard-VTOL airframe that speaks the simulator link, and its control-allocation airframe.
AIRFRAME, SIM_MODEL = 1040, "gazebo-classic_standard_vtol"
CA_AIRFRAME_STANDARD_VTOL, VT_TYPE_STANDARD = 2, 2
#: Plane parameters a vertical landing makes moot: the plane mission's glide slope and approach airspeed.
PLANE_ONLY = ("FW_LND_ANG", "FW_LND_AIRSPD")


@wp.kernel
def static_thrust(model: PropellerModel, out: wp.array(dtype=wp.float32)):
    out[0] = propeller_thrust_torque(wp.float32(0.0), wp.float32(1.0), model)[0]


def pusher_static_thrust(propeller: dict) -> float:
    """The pusher's thrust at full throttle standing still [N] (its CT(J) and motor model at J = 0)."""
    out = wp.zeros(1, dtype=wp.float32, device="cpu")
    wp.launch(static_thrust, 1, inputs=[propeller_model(propeller)], outputs=[out], device="cpu")
    return float(out.numpy()[0])


def vtol_parameters(plant, stage) -> dict[str, float | int]:
    """``{NAME: value}`` for PX4's standard-VTOL airframe from the file ``stage`` and its ``plant`` (the module's doc)."""
    path = plant.vehicle_path
    scene = open_stage(plant.scene_path) if plant.scene_path is not None else stage
    mission = vtol_mission(stage, scene, path, plant.scene_path, None)  # the one --controller vtol flies
    params = plane_parameters(plant, stage, cruise=(mission.airspeed, f"{path}: {mission.name} nexus:airspeed"))
    for name in PLANE_ONLY:
        params.pop(name, None)
    outputs = plane_outputs(stage, path)
    lift = len(outputs.lift_channels)
    if lift != len(plant.rotors):
        raise BuildError(f"{path}: {len(plant.rotors)} rotors but {lift} ESCs; PX4's standard VTOL maps one motor "
                         "output to each lift rotor's ESC")
    propeller = next(read_prim(p, ADVANCE_RATIO_PROPELLER_SPEC, path) for p in stage.Traverse()
                     if ADVANCE_RATIO_PROPELLER_SPEC.schema in nexus_apis(p))
    params.update({"MAV_TYPE": MAV_TYPE_VTOL_FIXEDROTOR, "CA_AIRFRAME": CA_AIRFRAME_STANDARD_VTOL,
                   "VT_TYPE": VT_TYPE_STANDARD, "CA_ROTOR_COUNT": lift + 1})
    params.update(rotor_parameters(plant))
    params.update({f"CA_ROTOR{lift}_PX": 0.0, f"CA_ROTOR{lift}_PY": 0.0, f"CA_ROTOR{lift}_PZ": 0.0,
                   f"CA_ROTOR{lift}_AX": 1.0, f"CA_ROTOR{lift}_AY": 0.0, f"CA_ROTOR{lift}_AZ": 0.0,
                   f"CA_ROTOR{lift}_KM": 0.0, f"CA_ROTOR{lift}_CT": round(pusher_static_thrust(propeller), 3)})
    functions = outputs.functions()
    for n in range(16):
        params[f"PWM_MAIN_FUNC{n + 1}"] = functions.get(n, 0)
    params["VT_ARSP_TRANS"] = round(mission.transition_airspeed, 2)
    params["VT_ARSP_BLEND"] = round(mission.blend_airspeed, 2)
    params["VT_TRANS_TIMEOUT"] = round(mission.transition_timeout, 2)
    params["VT_F_TRANS_THR"] = 1.0
    params["MIS_TAKEOFF_ALT"] = round(mission.takeoff_height, 2)
    params["MPC_LAND_SPEED"] = round(mission.land_speed, 2)
    params["NAV_ACC_RAD"] = round(mission.acceptance_radius, 2)
    params["RWTO_TKOFF"], params["FW_LAUN_DETCN_ON"] = 0, 0
    return params


__all__ = ["AIRFRAME", "SIM_MODEL", "pusher_static_thrust", "vtol_parameters"]
