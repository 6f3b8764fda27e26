"""Ground effect: a rotor near the ground makes more thrust for the same speed.

Cheeseman and Bennett (1955, ARC R&M 3021), from the method of images on a
rotor over a plane: ``T_IGE / T_OGE = 1 / (1 - (R / (4 z))²)`` at equal
power, with ``R`` the rotor radius and ``z`` its height above the ground.
Nexus applies it as a thrust ratio at equal rotor speed, as RotorPy and
gym-pybullet-drones do.

The formula grows without bound as ``z`` falls to ``R / 4``, where no rotor
flies; Cheeseman and Bennett compared it with measurements down to about
half a radius. The height is therefore held at ``z / R >= 0.5``
(:data:`LEAST_HEIGHT_RATIO`), which caps the ratio at 4/3.

``z`` is the height of the rotor body's origin above the ground plane
``z = 0`` of the world (every shipped scene's ground, and the one the
rangefinder assumes); an obstacle under a rotor is not seen. Thrust stays
along the rotor's axis: the formula is for a level rotor, and is applied to
a tilted one unchanged.

A force stage after the propellers: it adds ``(ratio - 1)`` times the
propeller's thrust (the same ``kT·ω²``, the same drawn factors and rotor
fault) along the rotor's axis, so the total is ``ratio`` times the thrust.
It exists only where a propeller prim applies ``NexusGroundEffectAPI`` and
authors ``nexus:rotorRadius``: a vehicle without it keeps its bits.

A variation file draws each world's ``ground_effect_scale`` (one for every
rotor, or one per rotor): it multiplies the extra thrust, so a world flies
``1 + scale·(ratio - 1)`` times the propeller's thrust (0: no ground effect,
1: Cheeseman and Bennett). A vehicle without ground effect refuses it.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage
from nexus.core.arrays import NamedArrays
from nexus.core.errors import BuildError
from nexus.core.spec import Spec, positive
from nexus.plant.plant import Plant, Rotor
from nexus.plant.propeller import ROTOR_VARIATION_ARRAYS, RotorVariation, rotor_factor, rotor_variation, variation_arrays
from nexus.schemas.reader import read_prim, where
from nexus.vocab import drawn

#: The least height over radius the formula is used at (below it, held there): ratio at most 4/3.
LEAST_HEIGHT_RATIO = 0.5
#: Height of the ground plane under every rotor [m, world z].
GROUND_HEIGHT = 0.0

GROUND_EFFECT_SPEC = Spec(
    name="GroundEffect",
    schema="NexusGroundEffectAPI",
    noun="ground effect",
    doc="Ground effect on a propeller's thrust (Cheeseman and Bennett): thrust times 1 / (1 - (R / 4z)^2), with R "
        "the rotor radius and z the rotor's height above the ground plane z = 0, z / R held at 0.5 or more (ratio "
        "at most 4/3). Apply it on a prim that applies NexusPropellerAPI and author nexus:rotorRadius.",
    params=(
        positive("rotor_radius", "nexus:rotorRadius", 0.2667, "m",
                 "Rotor radius R, hub centre to blade tip; must be authored where the schema is applied"),
    ),
    stage="ground_effect",
    kind="force",
    arrays=ROTOR_VARIATION_ARRAYS,
)


@wp.func
def ground_effect_ratio(height: wp.float32, radius: wp.float32) -> wp.float32:
    """Thrust in ground effect over thrust out of it at ``height`` [m] for rotor radius ``radius`` [m]."""
    k = 1.0 / (4.0 * wp.max(height / radius, wp.float32(LEAST_HEIGHT_RATIO)))
    return 1.0 / (1.0 - k * k)


#: Each world's drawn strength of the ground effect (docs/ground_effect.md).
GROUND_EFFECT_DRAWS = (
    drawn.Drawn("ground_effect_scale", "-", "multiplies each rotor's extra thrust in ground effect, ratio - 1 "
                "(0: none, 1: Cheeseman and Bennett)", ">= 0", per_rotor_allowed=True, accepts=drawn.non_negative,
                on_rotors=True),
)


def effect_scales(ctx, worlds: int, rotors: int):
    """Each world's and rotor's drawn ``ground_effect_scale`` (1 where none is drawn) [float32, (worlds, rotors)]."""
    rows = []
    for w in range(worlds):
        value = ctx.values_of(w).get("ground_effect_scale", 1.0) if hasattr(ctx, "values_of") else 1.0
        rows.append(list(value) if isinstance(value, (list, tuple)) else [value] * rotors)
    return wp.array(np.asarray(rows, dtype=np.float32).reshape(worlds, rotors), dtype=wp.float32, device=ctx.device)


@wp.func
def add_rotor_ground_effect(world: int, rotor: int, dof: int, body: int, thrust_coefficient: wp.float32,
                            radius: wp.float32, scale: wp.float32, now_ns: wp.int64, variation: RotorVariation,
                            joint_qd: wp.array(dtype=wp.float32), body_q: wp.array(dtype=wp.transform),
                            body_f: wp.array(dtype=wp.spatial_vector)):
    """Add ``(ratio - 1)·kT·ω²`` along rotor body ``body``'s +z to its wrench (``dof``, ``body``: this world's)."""
    omega = joint_qd[dof]
    kt = thrust_coefficient * rotor_factor(variation.thrust_scale, world, rotor, now_ns, variation.fail_ns,
                                           variation.fail_rotor, variation.fail_fraction)
    pose = body_q[body]
    height = wp.transform_get_translation(pose)[2] - wp.float32(GROUND_HEIGHT)
    extra = (ground_effect_ratio(height, radius) - 1.0) * scale * kt * omega * omega
    push = wp.quat_rotate(wp.transform_get_rotation(pose), wp.vec3(0.0, 0.0, extra))
    body_f[body] = body_f[body] + wp.spatial_vector(push, wp.vec3(0.0))


@wp.kernel
def add_ground_effect(
    # Model:
    rotor: wp.int32,
    dof: wp.int32,
    body: wp.int32,
    thrust_coefficient: wp.float32,
    radius: wp.float32,
    dofs_per_world: wp.int32,
    bodies_per_world: wp.int32,
    variation: RotorVariation,
    scale: wp.array2d(dtype=wp.float32),
    # Data in:
    joint_qd: wp.array(dtype=wp.float32),
    body_q: wp.array(dtype=wp.transform),
    time_ns: wp.array(dtype=wp.int64),
    # Data out:
    body_f: wp.array(dtype=wp.spatial_vector),
):
    world = wp.tid()
    add_rotor_ground_effect(world, rotor, dof + world * dofs_per_world, body + world * bodies_per_world,
                            thrust_coefficient, radius, scale[world, rotor], time_ns[world], variation, joint_qd,
                            body_q, body_f)


@wp.kernel
def add_ground_effect_all(
    # Model:
    rotor: wp.array(dtype=wp.int32),
    dof: wp.array(dtype=wp.int32),
    body: wp.array(dtype=wp.int32),
    thrust_coefficient: wp.array(dtype=wp.float32),
    radius: wp.array(dtype=wp.float32),
    dofs_per_world: wp.int32,
    bodies_per_world: wp.int32,
    variation: RotorVariation,
    scale: wp.array2d(dtype=wp.float32),
    # Data in:
    joint_qd: wp.array(dtype=wp.float32),
    body_q: wp.array(dtype=wp.transform),
    time_ns: wp.array(dtype=wp.int64),
    # Data out:
    body_f: wp.array(dtype=wp.spatial_vector),
):
    """Every rotor's ground effect in one launch, one thread per rotor and world, each on a body of its own."""
    world, i = wp.tid()
    add_rotor_ground_effect(world, rotor[i], dof[i] + world * dofs_per_world, body[i] + world * bodies_per_world,
                            thrust_coefficient[i], radius[i], scale[world, rotor[i]], time_ns[world], variation,
                            joint_qd, body_q, body_f)


@drawn.draws(*GROUND_EFFECT_DRAWS)
class GroundEffect(Component):
    """The ground effect on one propeller's rotor: one force stage; a plant's ground effects launch as one."""

    spec = GROUND_EFFECT_SPEC

    @classmethod
    def from_draws(cls, ring) -> None:
        """Nothing joins the ring (each ground effect reads its worlds' draws); a vehicle without one refuses them."""
        if not any(isinstance(c, GroundEffect) for c in ring.components):
            raise BuildError("the variation draws ground_effect_scale, but no propeller of the vehicle has ground "
                             "effect; apply NexusGroundEffectAPI with nexus:rotorRadius to its propeller prims "
                             "(docs/ground_effect.md) or drop it")
        return None

    def __init__(self, name: str, plant: Plant, rotor: Rotor, rotor_radius: float):
        super().__init__(name)
        self.plant, self.rotor, self.rotor_radius = plant, rotor, float(rotor_radius)

    @classmethod
    def from_prim(cls, prim, values, ctx) -> GroundEffect:
        """The ground effect of the propeller on the same prim (its ``nexus:body``)."""
        path = str(prim.GetPath())
        # The prim is a propeller's too: ``values`` may be the propeller's, so read this spec's own.
        values = read_prim(prim, cls.spec, ctx.path)
        here = where(prim, cls.spec, ctx.path)
        attribute = prim.GetAttribute("nexus:rotorRadius")
        if not (attribute and attribute.HasAuthoredValue()):
            raise BuildError(f"{here}: nexus:rotorRadius is not authored; give the rotor radius [m], e.g. "
                             "float nexus:rotorRadius = 0.2667")
        propeller = ctx.plant.prim_values.get(path)
        if not prim.HasAPI("NexusPropellerAPI") or propeller is None:
            raise BuildError(f"{here}: NexusGroundEffectAPI acts on a propeller; apply it on a prim that applies "
                             "NexusPropellerAPI")
        # Named apart from the propeller that shares its prim (component names are unique).
        return cls(f"{path}/groundEffect", ctx.plant, ctx.rotor_for_body(propeller["body"], path),
                   values["rotor_radius"])

    def stages(self) -> list[Stage]:
        # The clock, for a rotor that fails at a drawn time (the propeller's factors, applied here too).
        return [Stage(self.spec.stage, self.spec.kind, self._run, reads=(Read("time_ns", wp.int64, (1,)),))]

    #: One launch for all the plant's ground effects (False: one launch each, the reference tests compare with).
    fuse = True

    def prepare(self, ctx) -> None:
        # Like the propellers: on distinct bodies, one launch from the first one's stage, the same bits as one each.
        group = [c for c in ctx.components if isinstance(c, GroundEffect) and c.plant is self.plant]
        distinct = len({c.rotor.body for c in group}) == len(group)
        self.leader = group[0] if (GroundEffect.fuse and len(group) > 1 and distinct) else None
        plant, rotor = self.plant, self.rotor
        variation = rotor_variation(ctx, len(plant.rotors))
        strides = [plant.dofs_per_world, plant.bodies_per_world, variation, effect_scales(ctx, ctx.worlds, len(plant.rotors))]
        #: The drawn factors, by name, of a ground effect that launches (the gym redraws them).
        self.arrays = NamedArrays(f"ground effect {self.name}", GROUND_EFFECT_SPEC.arrays,
                                  **variation_arrays(variation if self.leader in (None, self) else None))
        if self.leader is None:
            self._args = [rotor.index, rotor.dof, rotor.body, rotor.thrust_coefficient, self.rotor_radius, *strides]
        elif self.leader is self:

            def column(values, dtype=wp.float32):
                return wp.array(values, dtype=dtype, device=ctx.device)

            self._args = [column([c.rotor.index for c in group], wp.int32), column([c.rotor.dof for c in group], wp.int32),
                          column([c.rotor.body for c in group], wp.int32),
                          column([c.rotor.thrust_coefficient for c in group]), column([c.rotor_radius for c in group]),
                          *strides]
            self._count = len(group)

    def share_thrust_coefficients(self, rotors: wp.array, thrust_coefficients: wp.array) -> None:
        """Read each rotor's kT from ``thrust_coefficients`` (the propellers' fused array, rotor ``rotors[i]`` at
        ``i``) instead of a copy, so a differentiable rollout's ``rotor<i>.kt`` moves this thrust too."""
        if self.leader is not None and self.leader is not self:
            return  # the leader's launch reads them
        if self.leader is None or self._args[0].numpy().tolist() != rotors.numpy().tolist():
            raise BuildError(f"{self.plant.vehicle_path}: ground effect {self.name}: a differentiable rollout reads "
                             "the ground effect's kT from the propellers' own, which needs NexusGroundEffectAPI on "
                             "every propeller prim (one launch over them all); apply it on each or on none")
        self._args[3] = thrust_coefficients

    def _run(self, io) -> None:
        if self.leader is not None and self.leader is not self:
            return  # the first ground effect's launch drove this one
        state = self.plant.state
        kernel, dim = ((add_ground_effect, self.plant.worlds) if self.leader is None
                       else (add_ground_effect_all, (self.plant.worlds, self._count)))
        wp.launch(kernel, dim=dim, inputs=[*self._args, state.joint_qd, state.body_q, io["time_ns"]],
                  outputs=[state.body_f], device=io.device)
