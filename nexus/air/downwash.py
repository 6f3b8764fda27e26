"""Downwash: the air a hovering rotor above drives down through the rotors of the vehicle below.

**The source.** A scene prim applying ``NexusDownwashSourceAPI`` stands for a
vehicle hovering at the prim's position: ``nexus:downwash:rotors`` discs of
radius ``nexus:downwash:rotorRadius`` [m], evenly spaced on a circle of radius
``nexus:downwash:armLength`` [m] (the first at 45°, as on a quad-x; one disc
at the centre when the arm is 0), sharing the thrust ``nexus:downwash:thrust``
[N]. Each disc blows straight down (world -z).

**One disc's jet** (thrust ``T``, radius ``R``, ``v_h = √(T / (2 ρ π R²))``),
at ``Δz`` below the disc and ``r`` off its axis:

* on the axis near the disc, the actuator disc's own velocity,
  ``v_h·(1 + Δz / √(Δz² + R²))``: ``v_h`` in the disc, 2 ``v_h`` in the fully
  contracted slipstream, falling to 0 above it (momentum theory, Leishman
  ch. 2);
* further down, a turbulent round jet: the centreline speed decays as
  ``2 v_h · B·d / Δz`` with ``d = √2·R`` the contracted slipstream's diameter
  and ``B = 5.8``; the jet takes over where it is the slower (about
  ``B·d = 8.2 R`` below the disc). Its profile across is Gaussian,
  ``exp(-ln2 · r² / r½²)``, with half-width ``r½ = S·Δz``, ``S = 0.094``,
  held at ``S·B·d`` (0.77 R, about the contracted slipstream's radius) nearer
  the disc. ``B`` and ``S`` are Hussein, Capp and George's round-jet
  measurements (J. Fluid Mech. 258, 1994; Pope, *Turbulent Flows*, Table 5.1).
  Jain et al. (ICUAS 2019) model a multirotor's downwash with this form (a
  centreline speed falling as 1/Δz, a Gaussian in r/Δz); Bauersfeld et al.
  (RA-L 2025) measured that the whole vehicle's flow is such a jet from about
  2.5 vehicle sizes below it. Nearer, Nexus keeps each rotor's own jet.

**Several discs.** Where the jets of several discs meet, their momentum
fluxes add, not their velocities: the speed is ``√(Σ U_i²)``, so four
merged rotor jets become one jet of the whole thrust (four equal jets on
one axis: twice one jet's speed, √4, as one jet of four times the thrust).
This is Nexus's own closure, not a published fit.

**At each rotor of the vehicle** (a propeller with ``NexusRotorInflowAPI``),
the axial inflow ``w`` is the jet's velocity along the rotor's -axis, averaged
over the rotor's disc with Radon's 7-point rule (the centre, weight 1/4,
and six points at ``√(2/3)·R``, weight 1/8 each: exact for polynomials of
degree 5 over a disc: Abramowitz and Stegun §25.4, the circle's 7-point
formula), and the rotor's thrust follows :mod:`nexus.plant.rotor_inflow`:
this stage adds ``T(w) - kT·ω²``
along its axis, on its own body, so a vehicle partly under a jet feels a
moment too. Nothing here divides by a distance that can be zero: ``R > 0``,
``max(Δz, B·d) > 0``; a source of thrust 0 blows nothing.

A propeller with ``nexus:inflow:vehicleMotion`` counts its own velocity
along its axis too, ``w += v·axis`` (a climbing rotor loses thrust; the
same closed form). The jet's push on the body (its drag) is not modelled:
docs/downwash.md.

It is in the ring only when the scene has a source or a propeller counts its
own motion; a vehicle under a source must apply ``NexusRotorInflowAPI`` on
every propeller (refused otherwise, in one line). Without either, nothing
changes: the ring keeps its bits.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import warp as wp
from pxr import UsdGeom

from nexus.core import Component, Read, Stage
from nexus.core.errors import BuildError
from nexus.core.spec import Param, Spec, non_negative, positive
from nexus.plant.plant import Plant
from nexus.plant.propeller import RotorVariation, rotor_factor, rotor_variation
from nexus.plant.rotor_inflow import AIR_DENSITY, ROTOR_INFLOW_SPEC, blade_pitch, thrust_change
from nexus.schemas.reader import read_prim, where

log = logging.getLogger(__name__)

#: The round jet's centreline decay constant B and spreading rate S (Hussein, Capp and George 1994).
JET_DECAY = 5.8
JET_SPREAD = 0.094
#: How many half-widths off its axis another vehicle's rotor jet is still summed (past it: under 1.4e-11 of it).
JET_REACH = 6.0
LN2 = math.log(2.0)
#: Radon's 7-point rule over a unit disc: the ring's radius and the weights of the centre and of each ring point.
RING_RADIUS = math.sqrt(2.0 / 3.0)
CENTRE_WEIGHT = 0.25
RING_WEIGHT = 0.125

DOWNWASH_SOURCE_SPEC = Spec(
    name="DownwashSource",
    schema="NexusDownwashSourceAPI",
    noun="downwash source",
    doc="A scene prim standing for a vehicle hovering at its position: rotor discs that blow a round jet straight "
        "down, whose axial speed at each rotor of the vehicle (propellers with NexusRotorInflowAPI) lowers that "
        "rotor's thrust (blade-element momentum theory).",
    params=(
        non_negative("thrust", "nexus:downwash:thrust", 0.0, "N",
                     "The source's whole thrust, shared by its discs (a hovering vehicle's weight)"),
        positive("rotor_radius", "nexus:downwash:rotorRadius", 0.0254, "m", "Each disc's radius"),
        Param("rotors", "nexus:downwash:rotors", "int", 1, "-", "How many discs share the thrust", low=1, high=16),
        non_negative("arm_length", "nexus:downwash:armLength", 0.0, "m",
                     "The discs' distance from the prim's position, in the horizontal plane (0: one disc there)"),
    ),
)


@wp.func
def jet_speed(thrust: wp.float32, radius: wp.float32, below: wp.float32, off_axis: wp.float32,
              density: wp.float32) -> wp.float32:
    """The downward air speed [m/s] of one disc's jet (thrust [N], radius [m]) ``below`` [m] its disc (negative:
    above it) and ``off_axis`` [m] from its axis (see the module)."""
    hover = wp.sqrt(wp.max(thrust, wp.float32(0.0)) / (2.0 * density * wp.float32(math.pi) * radius * radius))
    core = wp.float32(JET_DECAY * math.sqrt(2.0)) * radius  # B·d: where the jet's decay takes over
    centre = hover * (1.0 + below / wp.sqrt(below * below + radius * radius))
    if below > core:
        centre = wp.min(centre, 2.0 * hover * core / below)
    half = wp.float32(JET_SPREAD) * wp.max(below, core)
    return centre * wp.exp(-wp.float32(LN2) * off_axis * off_axis / (half * half))


@wp.struct
class Fleet:
    """The other vehicles of a world as downwash sources: each rotor of each, at its hub, blowing its thrust."""

    #: Vehicles in each world (1: none but the vehicle itself, nothing to add).
    vehicles: wp.int32
    #: Every rotor of a vehicle (slot 0's indices): its body, its DOF, kT [N/(rad/s)^2] and disc radius [m].
    body: wp.array(dtype=wp.int32)
    dof: wp.array(dtype=wp.int32)
    thrust_coefficient: wp.array(dtype=wp.float32)
    radius: wp.array(dtype=wp.float32)
    bodies_per_world: wp.int32
    dofs_per_world: wp.int32


def fleet_of(vehicles: int, rotors: list, radii: list[float], bodies_per_world: int, dofs_per_world: int,
             device: str) -> Fleet:
    """A :class:`Fleet` of ``vehicles`` a world, each with ``rotors`` (:class:`~nexus.plant.plant.Rotor`, slot 0's
    indices) of disc radius ``radii`` [m]."""
    fleet = Fleet()
    fleet.vehicles = int(vehicles)
    fleet.body = wp.array([r.body for r in rotors], dtype=wp.int32, device=device)
    fleet.dof = wp.array([r.dof for r in rotors], dtype=wp.int32, device=device)
    fleet.thrust_coefficient = wp.array([r.thrust_coefficient for r in rotors], dtype=wp.float32, device=device)
    fleet.radius = wp.array(radii, dtype=wp.float32, device=device)
    fleet.bodies_per_world, fleet.dofs_per_world = int(bodies_per_world), int(dofs_per_world)
    return fleet


def no_fleet(device: str) -> Fleet:
    """One vehicle a world: no other vehicle blows on it."""
    return fleet_of(1, [], [], 0, 0, device)


@wp.func
def air_speed_at(point: wp.vec3, disc_position: wp.array(dtype=wp.vec3), disc_thrust: wp.array(dtype=wp.float32),
                 disc_radius: wp.array(dtype=wp.float32), density: wp.float32, fleet: Fleet, world: wp.int32,
                 own: wp.int32, body_q: wp.array(dtype=wp.transform), joint_qd: wp.array(dtype=wp.float32)
                 ) -> wp.float32:
    """The downward air speed [m/s] at ``point`` (world) from every disc, their momentum fluxes added: the scene's
    sources, then each rotor of every other vehicle of world ``world`` (``own`` is the vehicle asking) as a disc
    blowing its still-air thrust kT·ω² straight down from its hub."""
    square = wp.float32(0.0)
    for k in range(disc_position.shape[0]):
        d = disc_position[k] - point
        u = jet_speed(disc_thrust[k], disc_radius[k], d[2], wp.sqrt(d[0] * d[0] + d[1] * d[1]), density)
        square += u * u
    for j in range(fleet.vehicles):
        if j != own:
            slot = world * fleet.vehicles + j
            for r in range(fleet.body.shape[0]):
                hub = wp.transform_get_translation(body_q[fleet.body[r] + slot * fleet.bodies_per_world])
                omega = joint_qd[fleet.dof[r] + slot * fleet.dofs_per_world]
                d = hub - point
                off = d[0] * d[0] + d[1] * d[1]
                # Past JET_REACH half-widths off its axis a jet's profile is below exp(-ln2·36) = 1.4e-11 of its
                # centre: nothing a float32 sum of speeds keeps. Most rotors of a spread fleet are that far.
                core = wp.float32(JET_DECAY * math.sqrt(2.0)) * fleet.radius[r]
                reach = wp.float32(JET_SPREAD * JET_REACH) * wp.max(d[2], core)
                if off < reach * reach:
                    u = jet_speed(fleet.thrust_coefficient[r] * omega * omega, fleet.radius[r], d[2], wp.sqrt(off),
                                  density)
                    square += u * u
    return wp.sqrt(square)


@wp.func
def disc_inflow(hub: wp.vec3, axis: wp.vec3, radius: wp.float32, disc_position: wp.array(dtype=wp.vec3),
                disc_thrust: wp.array(dtype=wp.float32), disc_radius: wp.array(dtype=wp.float32),
                density: wp.float32, fleet: Fleet, world: wp.int32, own: wp.int32,
                body_q: wp.array(dtype=wp.transform), joint_qd: wp.array(dtype=wp.float32)) -> wp.float32:
    """The axial inflow w [m/s] (down through the disc positive) over a rotor disc at ``hub`` with spin axis
    ``axis`` (unit, world), averaged by Radon's 7-point rule, from the scene's sources and the other vehicles of
    world ``world`` (:class:`Fleet`). The ring's points are laid out from the axis and the world's x (or y)
    axis, not the spinning blades, so the average does not turn with the rotor."""
    reference = wp.vec3(1.0, 0.0, 0.0)
    if wp.abs(axis[0]) > 0.9:
        reference = wp.vec3(0.0, 1.0, 0.0)
    e1 = wp.normalize(reference - wp.dot(reference, axis) * axis)
    e2 = wp.cross(axis, e1)
    # The jets blow along world -z: their velocity along the rotor's -axis is u·axis_z.
    total = wp.float32(CENTRE_WEIGHT) * air_speed_at(hub, disc_position, disc_thrust, disc_radius, density, fleet,
                                                     world, own, body_q, joint_qd)
    ring = wp.float32(RING_RADIUS) * radius
    for j in range(6):
        angle = wp.float32(j) * wp.float32(math.pi / 3.0)
        point = hub + ring * (wp.cos(angle) * e1 + wp.sin(angle) * e2)
        total += wp.float32(RING_WEIGHT) * air_speed_at(point, disc_position, disc_thrust, disc_radius, density,
                                                        fleet, world, own, body_q, joint_qd)
    return total * axis[2]


@wp.kernel
def add_downwash(
    # Model:
    rotor: wp.array(dtype=wp.int32),
    dof: wp.array(dtype=wp.int32),
    body: wp.array(dtype=wp.int32),
    radius: wp.array(dtype=wp.float32),
    lift_slope_solidity: wp.array(dtype=wp.float32),
    pitch: wp.array(dtype=wp.float32),
    vehicle_motion: wp.array(dtype=wp.int32),
    dofs_per_world: wp.int32,
    bodies_per_world: wp.int32,
    variation: RotorVariation,
    disc_position: wp.array(dtype=wp.vec3),
    disc_thrust: wp.array(dtype=wp.float32),
    disc_radius: wp.array(dtype=wp.float32),
    density: wp.float32,
    fleet: Fleet,
    # Data in:
    joint_qd: wp.array(dtype=wp.float32),
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    time_ns: wp.array(dtype=wp.int64),
    # Data out:
    body_f: wp.array(dtype=wp.spatial_vector),
):
    """Each rotor's thrust change in the sources' downwash, one thread per slot (a world's vehicle) and rotor (each
    its own body)."""
    world, i = wp.tid()
    b = body[i] + world * bodies_per_world
    pose = body_q[b]
    axis = wp.quat_rotate(wp.transform_get_rotation(pose), wp.vec3(0.0, 0.0, 1.0))
    w = disc_inflow(wp.transform_get_translation(pose), axis, radius[i], disc_position, disc_thrust, disc_radius,
                    density, fleet, world / fleet.vehicles, world % fleet.vehicles, body_q, joint_qd)
    if vehicle_motion[i] != 0:  # the rotor's own climb: the air flows down through its disc at v·axis
        w = w + wp.dot(wp.spatial_top(body_qd[b]), axis)
    factor = rotor_factor(variation.thrust_scale, world, rotor[i], time_ns[world], variation.fail_ns,
                          variation.fail_rotor, variation.fail_fraction)
    change = factor * thrust_change(joint_qd[dof[i] + world * dofs_per_world], w, radius[i],
                                    lift_slope_solidity[i], pitch[i], density)
    body_f[b] = body_f[b] + wp.spatial_vector(change * axis, wp.vec3(0.0))


def source_discs(position, values: dict) -> list[tuple[tuple[float, float, float], float, float]]:
    """One source prim's discs: (position [m, world], thrust [N], radius [m]) each."""
    count, arm = int(values["rotors"]), float(values["arm_length"])
    discs = []
    for k in range(count):
        angle = (k + 0.5) * 2.0 * math.pi / count if arm > 0.0 else 0.0
        at = (position[0] + arm * math.cos(angle), position[1] + arm * math.sin(angle), position[2])
        discs.append((at, float(values["thrust"]) / count, float(values["rotor_radius"])))
    return discs


def _rotor_inflows(plant: Plant, vehicle_stage, scene_path: Path, first_source: str | None) -> list[tuple]:
    """Each rotor's (rotor, radius, σ·a, counts its own motion), from the vehicle's propeller prims applying
    NexusRotorInflowAPI (``first_source``: the scene's first source, which needs them on every propeller)."""
    by_body = {}
    for path, values in plant.prim_values.items():
        prim = vehicle_stage.GetPrimAtPath(path)
        if not (prim and prim.HasAPI("NexusPropellerAPI")):
            continue
        if not prim.HasAPI(ROTOR_INFLOW_SPEC.schema):
            if first_source is None:
                continue
            raise BuildError(f"{scene_path}: {first_source} applies NexusDownwashSourceAPI, but propeller prim {path} "
                             f"of {plant.vehicle_path} has no NexusRotorInflowAPI; apply it on every propeller with "
                             "nexus:inflow:rotorRadius (docs/downwash.md)")
        here = where(prim, ROTOR_INFLOW_SPEC, plant.vehicle_path)
        attribute = prim.GetAttribute("nexus:inflow:rotorRadius")
        if not (attribute and attribute.HasAuthoredValue()):
            raise BuildError(f"{here}: nexus:inflow:rotorRadius is not authored; give the rotor radius [m], e.g. "
                             "float nexus:inflow:rotorRadius = 0.023")
        inflow = read_prim(prim, ROTOR_INFLOW_SPEC, plant.vehicle_path)
        by_body[values["body"]] = (inflow["rotor_radius"], inflow["solidity"] * inflow["lift_slope"],
                                   bool(inflow["vehicle_motion"]))
    return [(rotor, *by_body[rotor.body_path]) for rotor in plant.rotors if rotor.body_path in by_body]


def _fleet_downwash(plant: Plant, vehicle_stage) -> bool:
    """Whether the vehicles of a world blow on each other: several share a world and every propeller says its
    disc (NexusRotorInflowAPI). Without the discs they fly without it, and the log says so."""
    if plant.vehicles < 2 or not plant.shared_worlds:
        return False
    propellers = [path for path in plant.prim_values if vehicle_stage.GetPrimAtPath(path).HasAPI("NexusPropellerAPI")]
    bare = [path for path in propellers if not vehicle_stage.GetPrimAtPath(path).HasAPI(ROTOR_INFLOW_SPEC.schema)]
    if bare:
        log.warning("%s: the %d vehicles of a world fly without each other's downwash: propeller prim %s has no "
                    "NexusRotorInflowAPI (apply it on every propeller with nexus:inflow:rotorRadius, "
                    "docs/downwash.md)", plant.vehicle_path, plant.vehicles, bare[0])
        return False
    return True


class Downwash(Component):
    """The scene's downwash sources (and the rotors' own climb) acting on the vehicle's rotors: one force stage."""

    spec = DOWNWASH_SOURCE_SPEC

    def __init__(self, name: str, plant: Plant, discs: list[tuple], rotors: list[tuple], fleet: bool = False):
        super().__init__(name)
        self.plant, self.discs, self.rotors = plant, discs, rotors
        #: The other vehicles of each world blow on this one's rotors too (several vehicles sharing a world).
        self.fleet = bool(fleet)

    @classmethod
    def from_prim(cls, prim, values, ctx):
        raise BuildError(f"{ctx.path}: {prim.GetPath()} applies NexusDownwashSourceAPI in a vehicle file; a "
                         "downwash source stands for another vehicle: put it in the scene (docs/downwash.md)")

    @classmethod
    def from_scene(cls, scene_stage, vehicle_stage, plant: Plant) -> Downwash | None:
        """The scene's sources acting on the vehicle; None when the scene has none and no propeller counts its own
        motion (the ring keeps its bits)."""
        scene_path = Path(plant.scene_path)
        prims = [p for p in scene_stage.Traverse() if p.HasAPI(DOWNWASH_SOURCE_SPEC.schema)]
        fleet = _fleet_downwash(plant, vehicle_stage)
        if not prims:
            rotors = _rotor_inflows(plant, vehicle_stage, scene_path, None)
            if fleet:
                return cls(f"{plant.vehicle_path}:fleetDownwash", plant, [], rotors, fleet=True)
            rotors = [r for r in rotors if r[3]]
            return cls(f"{plant.vehicle_path}:rotorInflow", plant, [], rotors) if rotors else None
        cache = UsdGeom.XformCache()
        discs = []
        for prim in prims:
            values = read_prim(prim, DOWNWASH_SOURCE_SPEC, scene_path)
            discs += source_discs(cache.GetLocalToWorldTransform(prim).ExtractTranslation(), values)
        rotors = _rotor_inflows(plant, vehicle_stage, scene_path, str(prims[0].GetPath()))
        if not rotors:
            raise BuildError(f"{scene_path}: {prims[0].GetPath()} applies NexusDownwashSourceAPI, but "
                             f"{plant.vehicle_path} has no propeller (NexusPropellerAPI) for its downwash to act on")
        return cls(str(prims[0].GetPath()), plant, discs, rotors, fleet=fleet)

    def stages(self) -> list[Stage]:
        # The clock, for a rotor that fails at a drawn time (the propeller's factors, applied here too).
        return [Stage("downwash", "force", self._run, reads=(Read("time_ns", wp.int64, (1,)),))]

    def prepare(self, ctx) -> None:
        plant, device = self.plant, ctx.device

        def column(values, dtype=wp.float32):
            return wp.array(values, dtype=dtype, device=device)

        rotors = [r[0] for r in self.rotors]
        self._args = [
            column([r.index for r in rotors], wp.int32), column([r.dof for r in rotors], wp.int32),
            column([r.body for r in rotors], wp.int32), column([r[1] for r in self.rotors]),
            column([r[2] for r in self.rotors]),
            column([blade_pitch(r.thrust_coefficient, radius, s) for r, radius, s, _ in self.rotors]),
            column([int(r[3]) for r in self.rotors], wp.int32),
            plant.dofs_per_world, plant.bodies_per_world, rotor_variation(ctx, len(plant.rotors)),
            wp.array(np.asarray([d[0] for d in self.discs], dtype=np.float32).reshape(-1, 3), dtype=wp.vec3,
                     device=device),
            column([d[1] for d in self.discs]), column([d[2] for d in self.discs]), AIR_DENSITY,
            self._fleet(device),
        ]

    def _fleet(self, device: str) -> Fleet:
        """Every rotor of a vehicle as a source for the others of its world (none without a fleet)."""
        if not self.fleet:
            return no_fleet(device)
        return fleet_of(self.plant.vehicles, [r[0] for r in self.rotors], [r[1] for r in self.rotors],
                        self.plant.bodies_per_world, self.plant.dofs_per_world, device)

    def _run(self, io) -> None:
        state = self.plant.state
        wp.launch(add_downwash, dim=(self.plant.worlds, len(self.rotors)),
                  inputs=[*self._args, state.joint_qd, state.body_q, state.body_qd, io["time_ns"]],
                  outputs=[state.body_f],
                  device=io.device)
