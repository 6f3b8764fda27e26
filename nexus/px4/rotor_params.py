"""The multicopter part of PX4's parameters for a vehicle's rotors: control allocation, hover thrust, rate gains.

What a multirotor (:mod:`nexus.px4.params`) and a standard VTOL's lift rotors (:mod:`nexus.px4.vtol_params`) share:
``CA_ROTORn_PX/PY/PZ`` (FRD metres from the centre of mass), ``CA_ROTORn_KM`` (the yaw moment per unit thrust,
positive counter-clockwise), ``CA_ROTORn_CT`` (the thrust at full command [N]) for each rotor in ESC channel order,
``MPC_THR_HOVER`` (the hover's thrust fraction, ``(ω_hover / ω_max)²``), ``THR_MDL_FAC`` (the ESCs' thrust model
factor) and the ``MC_*RATE_P/I`` gains, PX4's defaults scaled up to this vehicle's angular authority.
"""

from __future__ import annotations

import numpy as np

from nexus.plant.hover import hover_speed
from nexus.plant.plant import Plant
from nexus.plant.rotor_geometry import centre_of_mass, inertia_about, rotor_geometry, to_body_matrix

#: PX4's output function of motor 1 (``Motor1`` in its ``output_functions.yaml``); motor n is 100 + n.
MOTOR1_FUNCTION = 101

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



def rotor_parameters(plant: Plant) -> dict[str, float | int]:
    """The rotors' allocation rows, the hover thrust, the thrust model and the rate gains (the module's doc)."""
    rotors = sorted(plant.rotors, key=lambda r: r.esc["channel"])
    geometry = rotor_geometry(plant)
    params: dict[str, float | int] = {}
    for n, rotor in enumerate(geometry):
        params[f"CA_ROTOR{n}_PX"] = round(rotor.position[0], 4)
        params[f"CA_ROTOR{n}_PY"] = round(rotor.position[1], 4)
        params[f"CA_ROTOR{n}_PZ"] = round(rotor.position[2], 4)
        params[f"CA_ROTOR{n}_KM"] = round(rotor.yaw_moment, 5)
        params[f"CA_ROTOR{n}_CT"] = round(rotor.max_thrust, 3)
    first = rotors[0].esc
    # Collective thrust at hover: (ω_hover / ω_max)², before PX4's thrust curve.
    params["MPC_THR_HOVER"] = round((hover_speed(plant) / first["max_speed"]) ** 2, 4)
    params["THR_MDL_FAC"] = round(first["thrust_model_factor"], 3)
    params.update(rate_gains(plant, rotors, geometry))
    return params


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


__all__ = ["MOTOR1_FUNCTION", "PX4_RATE_GAINS", "rate_gains", "rotor_parameters"]
