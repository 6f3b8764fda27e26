"""Vehicle file + scene file -> one Newton model and the plant's shared arrays.

Both files are opened and checked first (:mod:`nexus.plant.usd_files`: syntax,
composition, units, Nexus's schemas, mass properties), and the ESC and
propeller prims are read against their specs (``ESC_SPEC``,
``PROPELLER_SPEC``, :func:`nexus.schemas.reader.read_prim`), so bad input
fails with the file, prim and attribute named before Newton parses anything.
Here are only the checks that span prims (two ESCs on one channel, a
propeller on the wrong body). What Newton warns about while loading goes to
the ``nexus`` logger.
"""

from __future__ import annotations

import math
from pathlib import Path

import newton
import numpy as np
from newton.actuators import ClampingDCMotor, DrivePD

from nexus.core.errors import BuildError
from nexus.plant.assets import resolve_asset
from nexus.plant.esc import ESC_SPEC
from nexus.plant.fleet import FleetLayout, place_fleet
from nexus.plant.newton_messages import newton_messages_to_nexus
from nexus.plant.rotor_geometry import check_vehicle
from nexus.plant.plant import GEODETIC_ORIGIN_SPEC, GeodeticOrigin, Plant, Rotor
from nexus.plant.propeller import PROPELLER_SPEC
from nexus.plant.usd_files import open_stage
from nexus.schemas.reader import read_connections, read_prim, where

__all__ = ["load_plant", "motor_envelope", "open_stage", "prims_with", "read_origin"]

#: The connection naming a propeller's rotor joint.
ROTOR_INPUT = "nexus:inputs:rotor"
#: A fixed wing's schemas (:mod:`nexus.aero`, a layer above): its wing, and the propeller that needs no rotor joint.
FIXED_WING_API = "NexusFixedWingAeroAPI"
FIXED_WING_PROPELLER_API = "NexusAdvanceRatioPropellerAPI"


def prims_with(stage, api: str) -> list:
    """Prims applying ``api``, in file order (the declaration order of their components)."""
    return [prim for prim in stage.Traverse() if prim.HasAPI(api)]


def read_origin(scene_stage, scene_path: Path) -> GeodeticOrigin:
    found = prims_with(scene_stage, GEODETIC_ORIGIN_SPEC.schema)
    if len(found) != 1:
        raise BuildError(
            f"{scene_path}: a scene needs exactly one prim with {GEODETIC_ORIGIN_SPEC.schema} "
            f"(latitude, longitude, altitude of its origin); found {len(found)}"
        )
    return GeodeticOrigin(**read_prim(found[0], GEODETIC_ORIGIN_SPEC, scene_path))


def motor_envelope(esc: dict) -> dict:
    """``ClampingDCMotor`` parameters from an ESC's motor: kv [rpm/V], voltage [V], resistance [Ω], current limit [A]."""
    torque_constant = 60.0 / (2.0 * math.pi * esc["kv"])  # [N·m/A]
    return {
        "saturation_effort": torque_constant * esc["voltage"] / esc["resistance"],  # stall torque [N·m]
        "velocity_limit": esc["kv"] * esc["voltage"] * 2.0 * math.pi / 60.0,  # no-load speed [rad/s]
        "max_motor_effort": torque_constant * esc["current_limit"],  # current-limited torque [N·m]
    }


def _read_escs(stage, path: Path) -> list[tuple[object, dict]]:
    """Every ESC prim with its checked values, and the checks between ESCs (before Newton: milliseconds)."""
    escs = [(prim, read_prim(prim, ESC_SPEC, path)) for prim in prims_with(stage, ESC_SPEC.schema)]
    channels: dict[int, str] = {}
    for prim, esc in escs:
        if esc["min_speed"] > esc["max_speed"]:
            raise BuildError(
                f"{where(prim, ESC_SPEC, path)}: nexus:minSpeed must lie in [0, nexus:maxSpeed = {esc['max_speed']:.7g}] "
                f"rad/s, got {esc['min_speed']:.7g}"
            )
        if esc["channel"] in channels:
            raise BuildError(
                f"{path}: ESC prims {channels[esc['channel']]} and {prim.GetPath()} both read nexus:channel "
                f"{esc['channel']}; give each ESC its own output"
            )
        channels[esc["channel"]] = str(prim.GetPath())
    return escs


def _read_propellers(stage, path: Path) -> list[tuple[object, dict, str]]:
    """Every propeller prim with its checked values and the rotor joint its ``nexus:inputs:rotor`` names."""
    found = []
    unspun = [str(prim.GetPath()) for prim in prims_with(stage, PROPELLER_SPEC.schema)
              if not prim.GetAttribute("nexus:spin").HasAuthoredValue()]
    if unspun:
        raise BuildError(f"{path}: propeller prims {', '.join(unspun)} have no nexus:spin; give each one its spin "
                         "direction seen from above (+1 counter-clockwise, -1 clockwise): the yaw the rotors give "
                         "depends on it")
    for prim in prims_with(stage, PROPELLER_SPEC.schema):
        values = read_prim(prim, PROPELLER_SPEC, path)
        joint = read_connections(prim, PROPELLER_SPEC, path, required=("rotor",))["rotor"]
        found.append((prim, values, joint))
    return found


def _replicated(builder: newton.ModelBuilder, worlds: int) -> newton.ModelBuilder:
    """``worlds`` copies of the scene and vehicle, one Newton world each, all at one origin.

    Copies never collide, so they share the origin: a non-zero spacing would move every
    world's coordinates and change its bits, and world ``i`` must fly as it would alone.
    """
    many = newton.ModelBuilder(up_axis=builder.up_axis, gravity=builder.gravity)
    newton.solvers.SolverMuJoCo.register_custom_attributes(many)
    many.replicate(builder, worlds, spacing=(0.0, 0.0, 0.0))
    return many


def load_plant(vehicle: str | Path, scene: str | Path, device: str = "cpu", worlds: int = 1, solver: str = "mujoco",
               requires_grad: bool = False, fleet: FleetLayout | None = None):
    """Resolve, check and load a vehicle into a scene. Returns ``(plant, vehicle_stage, scene_stage)``.

    With ``worlds`` > 1 the model holds that many copies of scene and vehicle, one Newton
    world each; every index the plant keeps (bodies, joints, rotors) is world 0's, and world
    ``w``'s is it plus ``w`` times the per-world count (``Plant.bodies_per_world`` ...).
    ``solver`` is ``mujoco`` or ``featherstone`` (:mod:`nexus.plant.solvers`); ``requires_grad`` gives the
    model's arrays gradients (a differentiable rollout, :mod:`nexus.diff`).

    ``fleet`` puts several copies of the vehicle in every world (:mod:`nexus.plant.fleet`): the plant then has
    ``worlds x vehicles`` slots, world after world, and slot ``s`` (vehicle ``s % vehicles`` of world
    ``s // vehicles``) has the index spaces a world of one vehicle has, so every stage serves slots as it serves
    worlds. With its ``contact`` the vehicles of a world share one Newton world and collide; without it each
    flies in a Newton world of its own (they cannot meet, and each computes the bits it would alone).
    """
    fleet = fleet or FleetLayout()
    vehicles, shared = fleet.vehicles, fleet.shared
    if shared and solver == "freeflyer":
        raise BuildError(f"--solver freeflyer --vehicles {vehicles}: the free-flyer solver has no contact between "
                         "vehicles; fly --solver mujoco, or --no-vehicle-contact")
    vehicle_path = resolve_asset("vehicle", vehicle)
    scene_path = resolve_asset("scene", scene)
    vehicle_stage = open_stage(vehicle_path)
    scene_stage = open_stage(scene_path)
    origin = read_origin(scene_stage, scene_path)

    root = vehicle_stage.GetDefaultPrim()
    if not root:
        raise BuildError(f"{vehicle_path}: the vehicle file needs a defaultPrim (its root prim, e.g. /vehicle)")

    esc_prims = _read_escs(vehicle_stage, vehicle_path)
    propeller_prims = _read_propellers(vehicle_stage, vehicle_path)

    builder = newton.ModelBuilder()
    # MuJoCo's own shape attributes (mjc:priority, mjc:solref, mjc:condim ...) are read from the files: a plane's
    # wheels take their friction from their own material over the ground's. Their defaults are MuJoCo's, so a file
    # that authors none flies the same bits.
    newton.solvers.SolverMuJoCo.register_custom_attributes(builder)
    try:
        with newton_messages_to_nexus(str(scene_path)):
            builder.add_usd(str(scene_path))
        scene_bodies, scene_joints = builder.body_count, builder.joint_count
        with newton_messages_to_nexus(str(vehicle_path)):
            imported = builder.add_usd(str(vehicle_path))
            per_vehicle = (builder.body_count, builder.joint_count, builder.joint_dof_count, builder.joint_coord_count)
            for _ in range(1, vehicles if shared else 1):  # the other vehicles of a shared world, after the first
                builder.add_usd(str(vehicle_path))
    except Exception as error:
        raise BuildError(f"Newton could not import {vehicle_path} into {scene_path}: {error}") from error
    body_index = dict(imported["path_body_map"])
    joint_index = dict(imported["path_joint_map"])
    if not body_index:
        raise BuildError(f"{vehicle_path}: no rigid body found; the base needs PhysicsRigidBodyAPI")
    base_path = min(body_index, key=body_index.get)

    escs_by_joint: dict[str, dict] = {}
    esc_paths: dict[str, str] = {}
    for prim, esc in esc_prims:
        joint = esc["joint"]
        if joint not in joint_index:
            raise BuildError(f"{vehicle_path}: ESC prim {prim.GetPath()} drives {joint}, which is not a joint Newton loaded")
        if joint in escs_by_joint:
            raise BuildError(
                f"{vehicle_path}: ESC prims {esc_paths[joint]} and {prim.GetPath()} both drive {joint} "
                "(nexus:joint); give each rotor joint one ESC"
            )
        escs_by_joint[joint], esc_paths[joint] = esc, str(prim.GetPath())

    rotors: list[Rotor] = []
    joint_q_start, joint_qd_start = builder.joint_q_start, builder.joint_qd_start
    for prim, propeller, joint in propeller_prims:
        at = f"{vehicle_path}: propeller prim {prim.GetPath()}"
        body = propeller["body"]
        if body not in body_index:
            raise BuildError(f"{at}: nexus:body {body} is not a rigid body Newton loaded")
        if joint not in escs_by_joint:
            raise BuildError(f"{at}: its rotor joint {joint} has no ESC prim driving it (nexus:joint)")
        if any(rotor.joint_path == joint for rotor in rotors):
            raise BuildError(f"{at}: another propeller already turns on {joint} ({ROTOR_INPUT}); give each rotor one")
        j = joint_index[joint]
        b = body_index[body]
        if builder.joint_child[j] != b:
            raise BuildError(
                f"{at}: nexus:body {body} is not the body its rotor joint {joint} turns; point nexus:body at the "
                "joint's physics:body1 (the rotor), or nexus:inputs:rotor at the joint that turns this body"
            )
        rotors.append(Rotor(
            index=len(rotors), joint_path=joint, body_path=body, joint=j, dof=joint_qd_start[j],
            coord=joint_q_start[j], body=b, spin=propeller["spin"], thrust_coefficient=propeller["thrust_coefficient"],
            torque_coefficient=propeller["torque_coefficient"],
            inertia=float(builder.body_inertia[b][2][2]), esc=escs_by_joint[joint],
        ))
    if vehicles > 1 and (scene_bodies or scene_joints):
        raise BuildError(f"{scene_path}: the scene has {scene_bodies} rigid bodies and {scene_joints} joints of its "
                         f"own; several vehicles in a world (--vehicles {vehicles}) need a scene of static shapes only")
    for k in range(vehicles if shared else 1):  # each vehicle of a shared world: its rotors, the first one's after
        for rotor in rotors:
            builder.add_actuator(
                DrivePD, index=rotor.dof + k * per_vehicle[2], kp=0.0, kd=rotor.esc["speed_gain"],
                clamping=[(ClampingDCMotor, motor_envelope(rotor.esc))],
            )
    per_world = per_vehicle
    copies = worlds if shared else worlds * vehicles  # Newton worlds
    if copies > 1:
        builder = _replicated(builder, copies)
    try:
        with newton_messages_to_nexus(str(vehicle_path)):
            model = builder.finalize(device=device, requires_grad=requires_grad)
    except Exception as error:
        raise BuildError(f"Newton could not build a model from {vehicle_path} in {scene_path}: {error}") from error
    gravity = float(np.linalg.norm(model.gravity.numpy().reshape(-1, 3)[0]))
    plant = Plant(
        model, vehicle_path=vehicle_path, scene_path=scene_path, body_index=body_index,
        joint_index=joint_index, rotors=rotors, base_path=base_path, origin=origin, gravity=gravity,
        worlds=worlds * vehicles, per_world=per_world, solver=solver, vehicles=vehicles, shared_worlds=shared,
    )
    # The ESC and propeller prims were read (and checked) once, here; their components reuse the values.
    place_fleet(plant, fleet, str(vehicle_path))
    plant.prim_values = {str(prim.GetPath()): values for prim, values in esc_prims}
    plant.prim_values.update({str(prim.GetPath()): values for prim, values, _ in propeller_prims})
    # Rotors that can fly the vehicle: one ESC each, authority on every axis, thrust to spare (one line each).
    # A fixed wing without rotors flies on its wing and its propeller instead: it needs one of each.
    wings = prims_with(vehicle_stage, FIXED_WING_API)
    if rotors or not wings:
        check_vehicle(plant)
    elif not prims_with(vehicle_stage, FIXED_WING_PROPELLER_API):
        raise BuildError(f"{vehicle_path}: fixed-wing prim {wings[0].GetPath()} ({FIXED_WING_API}) has no propeller to "
                         f"fly it and the vehicle has no rotors; add a prim with {FIXED_WING_PROPELLER_API}")
    return plant, vehicle_stage, scene_stage
