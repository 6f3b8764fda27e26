"""Vehicle file + scene file -> one Newton model and the plant's shared arrays.

Both files are opened and checked first (:mod:`nexus.plant.usd_files`: syntax,
composition, units, Nexus's schemas, mass properties), and the ESCs' values
too, so bad input fails with the file, prim and attribute named before Newton
parses anything. What Newton warns about while loading goes to the ``nexus``
logger.
"""

from __future__ import annotations

import math
from pathlib import Path

import newton
import numpy as np
from newton.actuators import ClampingDCMotor, DrivePD

from nexus.core.errors import BuildError
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.assets import resolve_asset
from nexus.plant.newton_messages import newton_messages_to_nexus
from nexus.plant.plant import GeodeticOrigin, Plant, Rotor
from nexus.plant.usd_files import open_stage

__all__ = ["attr", "load_plant", "motor_envelope", "open_stage", "prims_with", "read_origin", "target"]


def attr(prim, name: str):
    """An attribute's authored value or its schema fallback."""
    attribute = prim.GetAttribute(name)
    value = attribute.Get() if attribute else None
    if value is None:
        source = prim.GetStage().GetRootLayer().realPath if prim.GetStage() else ""
        raise BuildError(
            f"{source}: prim {prim.GetPath()} has no value for '{name}'; apply the schema that declares it "
            "(its fallback then applies) or author the attribute"
        )
    return value


def target(prim, name: str, path: Path) -> str:
    """The single target of relationship ``name``, required."""
    relationship = prim.GetRelationship(name)
    targets = relationship.GetTargets() if relationship else []
    if len(targets) != 1:
        raise BuildError(f"{path}: prim {prim.GetPath()} needs exactly one target on '{name}', has {len(targets)}")
    return str(targets[0])


def prims_with(stage, api: str) -> list:
    """Prims applying ``api``, in file order (the declaration order of their components)."""
    return [prim for prim in stage.Traverse() if prim.HasAPI(api)]


def read_origin(scene_stage, scene_path: Path) -> GeodeticOrigin:
    found = prims_with(scene_stage, "NexusGeodeticOriginAPI")
    if len(found) != 1:
        raise BuildError(
            f"{scene_path}: a scene needs exactly one prim with NexusGeodeticOriginAPI "
            f"(latitude, longitude, altitude of its origin); found {len(found)}"
        )
    prim = found[0]
    origin = GeodeticOrigin(
        float(attr(prim, "nexus:latitude")), float(attr(prim, "nexus:longitude")), float(attr(prim, "nexus:altitude"))
    )
    if not -90.0 <= origin.latitude <= 90.0 or not -180.0 <= origin.longitude <= 180.0:
        raise BuildError(f"{scene_path}: prim {prim.GetPath()} has latitude/longitude out of range: {origin}")
    return origin


def motor_envelope(esc: dict) -> dict:
    """``ClampingDCMotor`` parameters from an ESC's motor: kv [rpm/V], voltage [V], resistance [Ω], current limit [A]."""
    torque_constant = 60.0 / (2.0 * math.pi * esc["kv"])  # [N·m/A]
    return {
        "saturation_effort": torque_constant * esc["voltage"] / esc["resistance"],  # stall torque [N·m]
        "velocity_limit": esc["kv"] * esc["voltage"] * 2.0 * math.pi / 60.0,  # no-load speed [rad/s]
        "max_motor_effort": torque_constant * esc["current_limit"],  # current-limited torque [N·m]
    }


def _read_esc(prim) -> dict:
    return {
        "prim": str(prim.GetPath()),
        "channel": int(attr(prim, "nexus:channel")),
        "min_speed": float(attr(prim, "nexus:minSpeed")),
        "max_speed": float(attr(prim, "nexus:maxSpeed")),
        "thrust_model_factor": float(attr(prim, "nexus:thrustModelFactor")),
        "tau_up": float(attr(prim, "nexus:motor:timeConstantUp")),
        "tau_down": float(attr(prim, "nexus:motor:timeConstantDown")),
        "kv": float(attr(prim, "nexus:motor:kv")),
        "voltage": float(attr(prim, "nexus:motor:voltage")),
        "resistance": float(attr(prim, "nexus:motor:resistance")),
        "current_limit": float(attr(prim, "nexus:motor:currentLimit")),
        "speed_gain": float(attr(prim, "nexus:motor:speedGain")),
    }


#: ESC dict key -> its attribute as authored, for messages.
ESC_ATTRIBUTES = {
    "channel": "nexus:channel",
    "min_speed": "nexus:minSpeed",
    "max_speed": "nexus:maxSpeed",
    "thrust_model_factor": "nexus:thrustModelFactor",
    "tau_up": "nexus:motor:timeConstantUp",
    "tau_down": "nexus:motor:timeConstantDown",
    "kv": "nexus:motor:kv",
    "voltage": "nexus:motor:voltage",
    "resistance": "nexus:motor:resistance",
    "current_limit": "nexus:motor:currentLimit",
    "speed_gain": "nexus:motor:speedGain",
}
_ESC_UNITS = {"max_speed": "rad/s", "kv": "rpm/V", "voltage": "V", "resistance": "Ω", "current_limit": "A",
              "speed_gain": "N·m·s/rad"}


def _check_esc(esc: dict, path: Path) -> None:
    where = f"{path}: ESC prim {esc['prim']}"
    for key, name in ESC_ATTRIBUTES.items():
        if key != "channel" and not math.isfinite(esc[key]):
            raise BuildError(f"{where}: {name} is {esc[key]}; author a finite number")
    if not 0 <= esc["channel"] < CONTROLS_WIDTH:
        raise BuildError(
            f"{where}: nexus:channel is {esc['channel']}; it must lie in 0..{CONTROLS_WIDTH - 1} "
            f"(the controls row has {CONTROLS_WIDTH} outputs; channel 0 is PX4's output 1)"
        )
    for key, unit in _ESC_UNITS.items():
        if not esc[key] > 0.0:
            raise BuildError(f"{where}: {ESC_ATTRIBUTES[key]} must be positive [{unit}], got {esc[key]}")
    if not 0.0 <= esc["min_speed"] <= esc["max_speed"]:
        raise BuildError(
            f"{where}: nexus:minSpeed must lie in [0, nexus:maxSpeed = {esc['max_speed']}] rad/s, got {esc['min_speed']}"
        )
    if not 0.0 <= esc["thrust_model_factor"] <= 1.0:
        raise BuildError(f"{where}: nexus:thrustModelFactor must lie in [0, 1], got {esc['thrust_model_factor']}")
    for key in ("tau_up", "tau_down"):
        if not esc[key] >= 0.0:
            raise BuildError(f"{where}: {ESC_ATTRIBUTES[key]} must not be negative [s], got {esc[key]}")


def load_plant(vehicle: str | Path, scene: str | Path, device: str = "cpu"):
    """Resolve, check and load a vehicle into a scene. Returns ``(plant, vehicle_stage, scene_stage)``."""
    vehicle_path = resolve_asset("vehicle", vehicle)
    scene_path = resolve_asset("scene", scene)
    vehicle_stage = open_stage(vehicle_path)
    scene_stage = open_stage(scene_path)
    origin = read_origin(scene_stage, scene_path)

    root = vehicle_stage.GetDefaultPrim()
    if not root:
        raise BuildError(f"{vehicle_path}: the vehicle file needs a defaultPrim (its root prim, e.g. /vehicle)")

    esc_prims = [(prim, _read_esc(prim)) for prim in prims_with(vehicle_stage, "NexusEscAPI")]
    channels: dict[int, str] = {}
    for _, esc in esc_prims:  # before Newton: a bad ESC fails in milliseconds
        _check_esc(esc, vehicle_path)
        if esc["channel"] in channels:
            raise BuildError(
                f"{vehicle_path}: ESC prims {channels[esc['channel']]} and {esc['prim']} both read nexus:channel "
                f"{esc['channel']}; give each ESC its own output"
            )
        channels[esc["channel"]] = esc["prim"]

    builder = newton.ModelBuilder()
    try:
        with newton_messages_to_nexus(str(scene_path)):
            builder.add_usd(str(scene_path))
        with newton_messages_to_nexus(str(vehicle_path)):
            imported = builder.add_usd(str(vehicle_path))
    except Exception as error:
        raise BuildError(f"Newton could not import {vehicle_path} into {scene_path}: {error}") from error
    body_index = dict(imported["path_body_map"])
    joint_index = dict(imported["path_joint_map"])
    if not body_index:
        raise BuildError(f"{vehicle_path}: no rigid body found; the base needs PhysicsRigidBodyAPI")
    base_path = min(body_index, key=body_index.get)

    escs_by_joint: dict[str, dict] = {}
    for prim, esc in esc_prims:
        joint = target(prim, "nexus:joint", vehicle_path)
        if joint not in joint_index:
            raise BuildError(f"{vehicle_path}: ESC prim {prim.GetPath()} drives {joint}, which is not a joint Newton loaded")
        if joint in escs_by_joint:
            raise BuildError(
                f"{vehicle_path}: ESC prims {escs_by_joint[joint]['prim']} and {prim.GetPath()} both drive {joint} "
                "(nexus:joint); give each rotor joint one ESC"
            )
        escs_by_joint[joint] = esc

    rotors: list[Rotor] = []
    joint_q_start, joint_qd_start = builder.joint_q_start, builder.joint_qd_start
    for prim in prims_with(vehicle_stage, "NexusPropellerAPI"):
        where = f"{vehicle_path}: propeller prim {prim.GetPath()}"
        body = target(prim, "nexus:body", vehicle_path)
        joint = target(prim, "nexus:inputs:rotor", vehicle_path)
        if body not in body_index:
            raise BuildError(f"{where}: nexus:body {body} is not a rigid body Newton loaded")
        if joint not in escs_by_joint:
            raise BuildError(f"{where}: its rotor joint {joint} has no ESC prim driving it (nexus:joint)")
        if any(rotor.joint_path == joint for rotor in rotors):
            raise BuildError(f"{where}: another propeller already turns on {joint} (nexus:inputs:rotor); give each rotor one")
        spin = int(attr(prim, "nexus:spin"))
        if spin not in (-1, 1):
            raise BuildError(f"{where}: nexus:spin must be +1 (counter-clockwise) or -1 (clockwise), got {spin}")
        diameter = float(attr(prim, "nexus:diameter"))
        if not 0.0 < diameter < math.inf:
            raise BuildError(f"{where}: nexus:diameter must be positive and finite [m], got {diameter:.7g}")
        kt, kq = float(attr(prim, "nexus:thrustCoefficient")), float(attr(prim, "nexus:torqueCoefficient"))
        if not (kt > 0.0 and math.isfinite(kt)):
            raise BuildError(f"{where}: nexus:thrustCoefficient must be positive and finite [N/(rad/s)²], got {kt}")
        if not (kq >= 0.0 and math.isfinite(kq)):
            raise BuildError(f"{where}: nexus:torqueCoefficient must be 0 or positive and finite [N·m/(rad/s)²], got {kq}")
        j = joint_index[joint]
        b = body_index[body]
        if builder.joint_child[j] != b:
            raise BuildError(
                f"{where}: nexus:body {body} is not the body its rotor joint {joint} turns; point nexus:body at the "
                "joint's physics:body1 (the rotor), or nexus:inputs:rotor at the joint that turns this body"
            )
        rotors.append(Rotor(
            index=len(rotors), joint_path=joint, body_path=body, joint=j, dof=joint_qd_start[j],
            coord=joint_q_start[j], body=b, spin=spin, thrust_coefficient=kt, torque_coefficient=kq,
            inertia=float(builder.body_inertia[b][2][2]), esc=escs_by_joint[joint],
        ))
    for rotor in rotors:
        builder.add_actuator(
            DrivePD, index=rotor.dof, kp=0.0, kd=rotor.esc["speed_gain"],
            clamping=[(ClampingDCMotor, motor_envelope(rotor.esc))],
        )
    try:
        with newton_messages_to_nexus(str(vehicle_path)):
            model = builder.finalize(device=device)
    except Exception as error:
        raise BuildError(f"Newton could not build a model from {vehicle_path} in {scene_path}: {error}") from error
    gravity = float(np.linalg.norm(model.gravity.numpy().reshape(-1, 3)[0]))
    plant = Plant(
        model, vehicle_path=vehicle_path, scene_path=scene_path, body_index=body_index,
        joint_index=joint_index, rotors=rotors, base_path=base_path, origin=origin, gravity=gravity,
    )
    return plant, vehicle_stage, scene_stage
