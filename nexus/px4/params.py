"""PX4 parameters that make PX4's mixer and hover estimate match a Nexus vehicle.

PX4's SITL airframe ``none_iris`` assumes a 1.5 kg Iris. For another vehicle
PX4 needs its rotor geometry (control allocation: ``CA_ROTORn_PX/PY/PZ`` in
FRD metres from the centre of mass, ``CA_ROTORn_KM`` the yaw moment per unit
thrust, positive for a counter-clockwise rotor, ``CA_ROTORn_CT`` the thrust
at full command), its hover thrust (``MPC_THR_HOVER``, collective thrust in
[0, 1] before the thrust curve) and its thrust curve (``THR_MDL_FAC``, the
ESC's thrust model factor). PX4 SITL reads them at start-up from environment
variables ``PX4_PARAM_<NAME>=value``.

A vehicle modelled on a PX4 airframe file may pin what that file sets: its root
prim's ``customData`` dictionary ``px4Parameters`` (``{NAME: value}``) replaces
the derived values. PX4's Gazebo x500 is such a vehicle: its airframe
``4001_gz_x500`` allocates for rotors at (±0.13, ±0.22/±0.20) m with KM ±0.05
while its model's rotors sit at (±0.174, ±0.174) m with a moment constant of
0.016 m, and PX4 SITL flies the model with the airframe's numbers.

PX4's output driver in SITL drives only the channels whose ``PWM_MAIN_FUNCn``
names a motor; ``none_iris`` names four. Every rotor's channel is assigned
here, so a hexacopter's fifth and sixth rotors get PX4's commands.
"""

from __future__ import annotations

from pxr import Usd

from nexus.core.errors import BuildError
from nexus.plant.plant import Plant
from nexus.plant.usd_checks import nexus_apis
from nexus.px4.plane_params import plane_parameters
from nexus.px4.rotor_params import MOTOR1_FUNCTION, rotor_parameters
from nexus.px4.vtol_params import vtol_parameters

#: PX4's actuator outputs for motors; a quad uses the first four.
MAX_ROTORS = 12

#: MAVLink's MAV_TYPE for a multirotor of this many rotors (quadrotor, hexarotor, octorotor).
MAV_TYPES = {4: 2, 6: 13, 8: 14}


def px4_parameters(plant: Plant) -> dict[str, float | int]:
    """``{NAME: value}`` for PX4 from the vehicle's rotors, ESCs and mass (a plane's: :mod:`nexus.px4.plane_params`,
    a standard VTOL's: :mod:`nexus.px4.vtol_params`)."""
    stage = Usd.Stage.Open(str(plant.vehicle_path))
    if is_plane(stage) and plant.rotors:
        return {**vtol_parameters(plant, stage), **pinned_parameters(plant.vehicle_path)}
    if is_plane(stage):
        return {**plane_parameters(plant, stage), **pinned_parameters(plant.vehicle_path)}
    rotors = sorted(plant.rotors, key=lambda r: r.esc["channel"])
    if len(rotors) > MAX_ROTORS:
        raise BuildError(f"PX4 mixes at most {MAX_ROTORS} rotors; {plant.vehicle_path} has {len(rotors)}")
    channels = [r.esc["channel"] for r in rotors]
    if channels != list(range(len(rotors))):
        raise BuildError(
            f"{plant.vehicle_path}: ESC channels must be 0..{len(rotors) - 1} to map onto PX4's motor outputs, got {channels}"
        )
    params: dict[str, float | int] = {"CA_ROTOR_COUNT": len(rotors)}
    if len(rotors) in MAV_TYPES:
        params["MAV_TYPE"] = MAV_TYPES[len(rotors)]
    params.update(rotor_parameters(plant))
    for n in range(len(rotors)):
        # PX4 SITL's simulator link sends what its output driver (``pwm_out_sim``, parameter prefix
        # PWM_MAIN) puts on each channel; a channel with no function stays at 0. The SITL airframe
        # (``none_iris``) assigns motors 1-4 only, so rotors 5 and up need their channels assigned.
        params[f"PWM_MAIN_FUNC{n + 1}"] = MOTOR1_FUNCTION + n
    params.update(pinned_parameters(plant.vehicle_path))
    return params


#: The schema that makes a vehicle file a plane: a wing.
WING_SCHEMA = "NexusFixedWingAeroAPI"


def is_plane(stage) -> bool:
    """Whether the vehicle file ``stage`` is a plane (a prim applies :data:`WING_SCHEMA`)."""
    return any(WING_SCHEMA in nexus_apis(prim) for prim in stage.Traverse())


#: The root prim's customData key holding the PX4 parameters an airframe file pins.
PINNED_KEY = "px4Parameters"


def pinned_parameters(vehicle_path) -> dict[str, float | int]:
    """``{NAME: value}`` from the vehicle file's root prim (``customData = {dictionary px4Parameters = {...}}``)."""

    stage = Usd.Stage.Open(str(vehicle_path))
    root = stage.GetDefaultPrim() if stage else None
    pinned = (root.GetCustomDataByKey(PINNED_KEY) if root else None) or {}
    out: dict[str, float | int] = {}
    for name, value in pinned.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not name.replace("_", "").isalnum():
            raise BuildError(f"{vehicle_path}: prim {root.GetPath()} customData {PINNED_KEY}: '{name}' = {value!r}; "
                             "each entry must be a PX4 parameter name with a number (int or double)")
        out[name] = value if isinstance(value, int) else round(float(value), 6)
    return out


def environment_lines(params: dict[str, float | int]) -> list[str]:
    return [f"PX4_PARAM_{name}={value}" for name, value in params.items()]
