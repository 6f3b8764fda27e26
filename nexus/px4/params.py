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

import numpy as np
from pxr import Usd

from nexus.core.errors import BuildError
from nexus.plant.hover import hover_speed
from nexus.plant.plant import Plant
from nexus.plant.rotor_geometry import centre_of_mass, inertia_about, rotor_geometry, to_body_matrix
from nexus.plant.usd_checks import nexus_apis
from nexus.px4.plane_params import plane_parameters

#: PX4's actuator outputs for motors; a quad uses the first four.
MAX_ROTORS = 12

#: PX4's output function of motor 1 (``Motor1`` in its ``output_functions.yaml``); motor n is 100 + n.
MOTOR1_FUNCTION = 101

#: MAVLink's MAV_TYPE for a multirotor of this many rotors (quadrotor, hexarotor, octorotor).
MAV_TYPES = {4: 2, 6: 13, 8: 14}

#: The Iris that PX4's SITL rate gains are tuned for (Gazebo Classic's model): full thrust
#: per rotor 5.84e-6·1100² [N], PX4's moment coefficient for it 0.05 [m], rotor arms 0.1515
#: forward and 0.245 / 0.1875 sideways [m], inertia (0.029125, 0.029125, 0.055225) [kg·m²].
IRIS_ROTOR_THRUST = 5.84e-6 * 1100.0**2
IRIS_KM = 0.05
IRIS_ARM_Y = (0.245, 0.1875)
IRIS_ARM_X = 0.1515
IRIS_INERTIA = (0.029125, 0.029125, 0.055225)
#: PX4's default rate gains (P, I) for roll, pitch and yaw.
PX4_RATE_GAINS = {"ROLL": (0.15, 0.2), "PITCH": (0.15, 0.2), "YAW": (0.2, 0.1)}


def px4_parameters(plant: Plant) -> dict[str, float | int]:
    """``{NAME: value}`` for PX4 from the vehicle's rotors, ESCs and mass (a plane's: :mod:`nexus.px4.plane_params`)."""
    stage = Usd.Stage.Open(str(plant.vehicle_path))
    if is_plane(stage) and plant.rotors:
        raise BuildError(f"{plant.vehicle_path}: a wing and lift rotors make a standard VTOL, and PX4's standard-VTOL "
                         "airframe (MAV_TYPE 22, its transitions and output mapping) is not derived from a vehicle file "
                         "yet; fly it with --controller vtol (docs/fixed_wing.md, \"A standard VTOL\")")
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
    geometry = rotor_geometry(plant)
    params: dict[str, float | int] = {"CA_ROTOR_COUNT": len(rotors)}
    if len(rotors) in MAV_TYPES:
        params["MAV_TYPE"] = MAV_TYPES[len(rotors)]
    for n, rotor in enumerate(geometry):
        params[f"CA_ROTOR{n}_PX"] = round(rotor.position[0], 4)
        params[f"CA_ROTOR{n}_PY"] = round(rotor.position[1], 4)
        params[f"CA_ROTOR{n}_PZ"] = round(rotor.position[2], 4)
        params[f"CA_ROTOR{n}_KM"] = round(rotor.yaw_moment, 5)
        params[f"CA_ROTOR{n}_CT"] = round(rotor.max_thrust, 3)
    for n in range(len(rotors)):
        # PX4 SITL's simulator link sends what its output driver (``pwm_out_sim``, parameter prefix
        # PWM_MAIN) puts on each channel; a channel with no function stays at 0. The SITL airframe
        # (``none_iris``) assigns motors 1-4 only, so rotors 5 and up need their channels assigned.
        params[f"PWM_MAIN_FUNC{n + 1}"] = MOTOR1_FUNCTION + n
    first = rotors[0].esc
    # Collective thrust at hover: (ω_hover / ω_max)², before PX4's thrust curve.
    params["MPC_THR_HOVER"] = round((hover_speed(plant) / first["max_speed"]) ** 2, 4)
    params["THR_MDL_FAC"] = round(first["thrust_model_factor"], 3)
    params.update(rate_gains(plant, rotors, geometry))
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


def rate_gains(plant: Plant, rotors, geometry) -> dict[str, float]:
    """PX4's default rate gains scaled by how much less angular acceleration a unit of torque
    command gives this vehicle than the Iris they were tuned on."""
    inertia = inertia_about(plant, centre_of_mass(plant), to_body_matrix(plant))
    thrust = [g.max_thrust for g in geometry]
    arms = [np.abs(g.position) for g in geometry]
    authority = {
        "ROLL": sum(t * a[1] for t, a in zip(thrust, arms)) / inertia[0],
        "PITCH": sum(t * a[0] for t, a in zip(thrust, arms)) / inertia[1],
        "YAW": sum(t * abs(g.yaw_moment) for t, g in zip(thrust, geometry)) / inertia[2],
    }
    iris = {
        "ROLL": 2 * IRIS_ROTOR_THRUST * sum(IRIS_ARM_Y) / IRIS_INERTIA[0],
        "PITCH": 4 * IRIS_ROTOR_THRUST * IRIS_ARM_X / IRIS_INERTIA[1],
        "YAW": 4 * IRIS_ROTOR_THRUST * IRIS_KM / IRIS_INERTIA[2],
    }
    gains: dict[str, float] = {}
    for axis, (p, i) in PX4_RATE_GAINS.items():
        scale = max(1.0, iris[axis] / authority[axis])  # only ever raise: never detune a stiffer vehicle
        gains[f"MC_{axis}RATE_P"] = round(p * scale, 3)
        gains[f"MC_{axis}RATE_I"] = round(i * scale, 3)
    return gains


def environment_lines(params: dict[str, float | int]) -> list[str]:
    return [f"PX4_PARAM_{name}={value}" for name, value in params.items()]
