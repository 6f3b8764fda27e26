"""Vehicle file + scene file -> one Newton model and the plant's shared arrays.

Both files are checked against Nexus's schemas first, so a typo in a
``nexus:`` attribute fails with the file, prim and attribute named before
Newton parses anything.
"""

from __future__ import annotations

import math
from pathlib import Path

import newton
import numpy as np
from newton.actuators import ClampingDCMotor, DrivePD

from nexus import schemas
from nexus.core.errors import BuildError
from nexus.plant.assets import resolve_asset
from nexus.plant.plant import GeodeticOrigin, Plant, Rotor
from nexus.plant.usd_checks import check_stage


def open_stage(path: Path):
    """Open a USD file (Nexus schemas registered first) and check its Nexus prims."""
    schemas.register()
    from pxr import Usd  # noqa: PLC0415

    stage = Usd.Stage.Open(str(path))
    if stage is None:
        raise BuildError(f"{path}: USD could not open this file")
    check_stage(stage, path)
    return stage


def attr(prim, name: str):
    """An attribute's authored value or its schema fallback."""
    attribute = prim.GetAttribute(name)
    if not attribute:
        raise BuildError(f"prim {prim.GetPath()} has no attribute '{name}'; apply the schema that declares it")
    return attribute.Get()


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


def _check_esc(esc: dict, path: Path) -> None:
    where = f"{path}: ESC prim {esc['prim']}"
    for key in ("max_speed", "kv", "voltage", "resistance", "current_limit", "speed_gain"):
        if not esc[key] > 0.0:
            raise BuildError(f"{where}: {key} must be positive, got {esc[key]}")
    if not 0.0 <= esc["thrust_model_factor"] <= 1.0:
        raise BuildError(f"{where}: nexus:thrustModelFactor must lie in [0, 1], got {esc['thrust_model_factor']}")
    if esc["tau_up"] < 0.0 or esc["tau_down"] < 0.0:
        raise BuildError(f"{where}: motor time constants must not be negative")


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

    builder = newton.ModelBuilder()
    try:
        builder.add_usd(str(scene_path))
        imported = builder.add_usd(str(vehicle_path))
    except Exception as error:
        raise BuildError(f"Newton could not import {vehicle_path} into {scene_path}: {error}") from error
    body_index = dict(imported["path_body_map"])
    joint_index = dict(imported["path_joint_map"])
    if not body_index:
        raise BuildError(f"{vehicle_path}: no rigid body found; the base needs PhysicsRigidBodyAPI")
    base_path = min(body_index, key=body_index.get)

    escs_by_joint: dict[str, dict] = {}
    for prim in prims_with(vehicle_stage, "NexusEscAPI"):
        esc = _read_esc(prim)
        _check_esc(esc, vehicle_path)
        joint = target(prim, "nexus:joint", vehicle_path)
        if joint not in joint_index:
            raise BuildError(f"{vehicle_path}: ESC prim {prim.GetPath()} drives {joint}, which is not a joint Newton loaded")
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
        spin = int(attr(prim, "nexus:spin"))
        if spin not in (-1, 1):
            raise BuildError(f"{where}: nexus:spin must be +1 (counter-clockwise) or -1 (clockwise), got {spin}")
        kt, kq = float(attr(prim, "nexus:thrustCoefficient")), float(attr(prim, "nexus:torqueCoefficient"))
        if kt <= 0.0 or kq < 0.0:
            raise BuildError(f"{where}: thrust coefficient must be positive and torque coefficient non-negative")
        j = joint_index[joint]
        b = body_index[body]
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
    model = builder.finalize(device=device)
    gravity = float(np.linalg.norm(model.gravity.numpy().reshape(-1, 3)[0]))
    plant = Plant(
        model, vehicle_path=vehicle_path, scene_path=scene_path, body_index=body_index,
        joint_index=joint_index, rotors=rotors, base_path=base_path, origin=origin, gravity=gravity,
    )
    return plant, vehicle_stage, scene_stage
