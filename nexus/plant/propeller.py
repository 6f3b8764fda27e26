"""The propeller: thrust and drag torque on its rotor body from the rotor's speed.

Thrust ``kT·ω²`` acts along the rotor's spin axis (body +z); the drag torque
``kQ·ω·|ω|`` opposes the spin. Both are added to the rotor body's applied
wrench (world frame, at its centre of mass) for the step that follows.

The rotor's speed is read from the plant's state (the joint that
``nexus:inputs:rotor`` names), not from a signal: the propeller runs between
the ESC and the solver step, on the state the step will advance.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage
from nexus.core.arrays import ArrayDecl, NamedArrays
from nexus.core.clock import at_ns
from nexus.core.spec import Input, Param, Relation, Spec
from nexus.plant.plant import Plant, Rotor
from nexus.vocab import drawn
from nexus.vocab.faults import Fault, FaultKey, declare_faults

#: The drawn factors a rotor force reads, by name (each launch's own :class:`RotorVariation`; the gym redraws them).
ROTOR_VARIATION_ARRAYS = (
    ArrayDecl("thrust_scale", "float32, (worlds, rotors)", "-", "Each world's drawn factor on each rotor's thrust"),
    ArrayDecl("drag_scale", "float32, (worlds, rotors)", "-", "Each world's drawn factor on each rotor's drag torque"),
)

PROPELLER_SPEC = Spec(
    name="Propeller",
    schema="NexusPropellerAPI",
    noun="propeller",
    doc="A propeller on a rotor body. Each tick it applies thrust kT w^2 along the rotor's +z axis and a drag "
        "torque -spin kQ w^2 about it, where w is the speed of the joint named by `nexus:inputs:rotor` (spin "
        "times that speed is the magnitude).",
    params=(
        Param("thrust_coefficient", "nexus:thrustCoefficient", "float", 5.84e-06, "N/(rad/s)^2",
              "Thrust coefficient kT: thrust per squared rotor speed", low=0.0, open_low=True),
        Param("torque_coefficient", "nexus:torqueCoefficient", "float", 9.344e-08, "N m/(rad/s)^2",
              "Torque coefficient kQ: drag torque per squared rotor speed", low=0.0),
        Param("spin", "nexus:spin", "int", 1, "-",
              "Spin direction seen from above: +1 counter-clockwise (positive about body +z), -1 clockwise",
              choices=(-1, 1)),
        Param("diameter", "nexus:diameter", "float", 0.254, "m", "Propeller diameter; informative",
              low=0.0, open_low=True),
    ),
    relations=(Relation("body", "nexus:body", "The rotor rigid body that receives thrust and drag torque (one target)"),),
    inputs=(
        Input("rotor", wp.float32, connectable=True,
              doc="The revolute joint whose speed drives this propeller (one target); read from the plant's state."),
    ),
    stage="propeller",
    kind="force",
    arrays=(
        ArrayDecl("rotor", "int32, one per propeller of the plant's fused launch (component order)", "-",
                  "Each propeller's rotor index in the plant"),
        ArrayDecl("thrust_coefficient", "float32, one per propeller of the plant's fused launch (component order)",
                  "N/(rad/s)^2", "Each propeller's thrust coefficient as the launch reads it", gradient=True,
                  rollout="rotor{n}.kt", param="thrust_coefficient"),
        *ROTOR_VARIATION_ARRAYS,
    ),
)


@wp.func
def add_propeller_wrench(body_f: wp.array(dtype=wp.spatial_vector), body: wp.int32, rotation: wp.quat, omega: wp.float32,
                         thrust_coefficient: wp.float32, torque_coefficient: wp.float32):
    """Add thrust ``kT·ω²`` along the body's +z and drag ``-kQ·ω·|ω|`` about it to ``body``'s wrench."""
    thrust = wp.quat_rotate(rotation, wp.vec3(0.0, 0.0, thrust_coefficient * omega * omega))
    drag = wp.quat_rotate(rotation, wp.vec3(0.0, 0.0, -torque_coefficient * omega * wp.abs(omega)))
    body_f[body] = body_f[body] + wp.spatial_vector(thrust, drag)


@wp.func
def rotor_factor(scale: wp.array2d(dtype=wp.float32), world: int, rotor: int, now_ns: wp.int64,
                 fail_ns: wp.array(dtype=wp.int64), fail_rotor: wp.array(dtype=wp.int32),
                 fail_fraction: wp.array(dtype=wp.float32)) -> wp.float32:
    """World ``world``'s factor on rotor ``rotor``'s coefficient: its drawn scale, times the fraction left
    once the rotor has failed (``--vary rotor_fail_*``). Exactly 1 without a variation."""
    factor = scale[world, rotor]
    if rotor == fail_rotor[world] and now_ns >= fail_ns[world]:
        factor = factor * fail_fraction[world]
    return factor


@wp.struct
class RotorVariation:
    """Each world's drawn factors and rotor fault, shared by every propeller of a plant."""

    thrust_scale: wp.array2d(dtype=wp.float32)
    drag_scale: wp.array2d(dtype=wp.float32)
    fail_ns: wp.array(dtype=wp.int64)
    fail_rotor: wp.array(dtype=wp.int32)
    fail_fraction: wp.array(dtype=wp.float32)


@wp.func
def add_varied_wrench(body_f: wp.array(dtype=wp.spatial_vector), body_q: wp.array(dtype=wp.transform),
                      joint_qd: wp.array(dtype=wp.float32), world: int, rotor: int, dof: int, body: int,
                      thrust_coefficient: wp.float32, torque_coefficient: wp.float32, now_ns: wp.int64,
                      v: RotorVariation):
    kt = thrust_coefficient * rotor_factor(v.thrust_scale, world, rotor, now_ns, v.fail_ns, v.fail_rotor, v.fail_fraction)
    kq = torque_coefficient * rotor_factor(v.drag_scale, world, rotor, now_ns, v.fail_ns, v.fail_rotor, v.fail_fraction)
    add_propeller_wrench(body_f, body, wp.transform_get_rotation(body_q[body]), joint_qd[dof], kt, kq)


@wp.kernel
def propeller_wrench(
    joint_qd: wp.array(dtype=wp.float32),
    body_q: wp.array(dtype=wp.transform),
    rotor: wp.int32,
    dof: wp.int32,
    body: wp.int32,
    thrust_coefficient: wp.float32,
    torque_coefficient: wp.float32,
    dofs_per_world: wp.int32,
    bodies_per_world: wp.int32,
    time_ns: wp.array(dtype=wp.int64),
    variation: RotorVariation,
    body_f: wp.array(dtype=wp.spatial_vector),
):
    world = wp.tid()
    add_varied_wrench(body_f, body_q, joint_qd, world, rotor, dof + world * dofs_per_world, body + world * bodies_per_world,
                      thrust_coefficient, torque_coefficient, time_ns[world], variation)


@wp.kernel
def propeller_wrench_all(
    joint_qd: wp.array(dtype=wp.float32),
    body_q: wp.array(dtype=wp.transform),
    rotor: wp.array(dtype=wp.int32),
    dof: wp.array(dtype=wp.int32),
    body: wp.array(dtype=wp.int32),
    thrust_coefficient: wp.array(dtype=wp.float32),
    torque_coefficient: wp.array(dtype=wp.float32),
    dofs_per_world: wp.int32,
    bodies_per_world: wp.int32,
    time_ns: wp.array(dtype=wp.int64),
    variation: RotorVariation,
    body_f: wp.array(dtype=wp.spatial_vector),
):
    """Every propeller of a plant in one launch, one thread per world (a thread costs about as much as a
    propeller's arithmetic on the CPU), each propeller on a body of its own."""
    world = wp.tid()
    now_ns = time_ns[world]
    for i in range(rotor.shape[0]):
        add_varied_wrench(body_f, body_q, joint_qd, world, rotor[i], dof[i] + world * dofs_per_world,
                          body[i] + world * bodies_per_world, thrust_coefficient[i], torque_coefficient[i], now_ns,
                          variation)


def variation_arrays(variation: RotorVariation | None) -> dict:
    """The arrays of :data:`ROTOR_VARIATION_ARRAYS` in ``variation`` by name (none without one)."""
    if variation is None:
        return {}
    return {"thrust_scale": variation.thrust_scale, "drag_scale": variation.drag_scale}


def rotor_variation(ctx, rotors: int) -> RotorVariation:
    """Each world's drawn thrust and drag factors and rotor fault, as device arrays (ones and no fault by default)."""
    worlds = ctx.worlds

    def per_rotor(name: str):
        rows = []
        for w in range(worlds):
            value = ctx.values_of(w).get(name, 1.0)
            rows.append(list(value) if isinstance(value, (list, tuple)) else [value] * rotors)
        return wp.array(np.asarray(rows, dtype=np.float32).reshape(worlds, rotors), dtype=wp.float32, device=ctx.device)

    fail_ns = [at_ns(ctx.values_of(w).get("rotor_fail_time", math.inf)) for w in range(worlds)]
    v = RotorVariation()
    v.thrust_scale = per_rotor("thrust_scale")
    v.drag_scale = per_rotor("drag_scale")
    v.fail_ns = wp.array(np.asarray(fail_ns, dtype=np.int64), dtype=wp.int64, device=ctx.device)
    v.fail_rotor = wp.array(ctx.varied("rotor_fail_index", -1).astype(np.int32), dtype=wp.int32, device=ctx.device)
    v.fail_fraction = wp.array(ctx.varied("rotor_fail_fraction", 0.0).astype(np.float32), dtype=wp.float32, device=ctx.device)
    return v


#: Each world's drawn factors on the rotors' coefficients and its rotor failure (read by :func:`rotor_variation`).
ROTOR_DRAWS = (
    drawn.Drawn("thrust_scale", "-", "multiplies each rotor's thrust coefficient", "> 0", per_rotor_allowed=True,
                accepts=drawn.positive, on_rotors=True),
    drawn.Drawn("drag_scale", "-", "multiplies each rotor's drag-torque coefficient", ">= 0",
                per_rotor_allowed=True, accepts=drawn.non_negative, on_rotors=True),
    drawn.Drawn("rotor_fail_time", "s", "sim time a rotor fails (inf: no failure in this world)", ">= 0",
                allow_inf=True, accepts=drawn.non_negative, on_rotors=True),
    drawn.Drawn("rotor_fail_index", "-", "which rotor fails (0-based); default 0", "an integer in 0..rotors-1",
                kind="int", on_rotors=True),
    drawn.Drawn("rotor_fail_fraction", "-", "the failed rotor's thrust that remains; default 0", "in [0, 1]",
                accepts=drawn.unit_interval, on_rotors=True),
    drawn.Drawn("rotor_fail_probability", "-", "chance a world gets the rotor failure at all; default 1",
                "in [0, 1]", accepts=drawn.unit_interval, on_rotors=True),
)
#: A world gets the rotor failure with its drawn probability (stream ``vary/rotor_fail_occurs/<world>``).
ROTOR_FAILURE = drawn.Occurrence("rotor_fail_time", "rotor_fail_probability", "rotor_fail_occurs",
                                 {"rotor_fail_index": 0, "rotor_fail_fraction": 0.0})
#: A scenario's ``[[fault]] kind = "rotor"``: from its time on, rotor ``rotor`` keeps ``fraction`` of its thrust.
ROTOR_FAULT = Fault("rotor", "a rotor fails: from then on it keeps a fraction of its thrust and drag torque",
                    time="rotor_fail_time", once="a scenario fails one rotor", keys=(
                        FaultKey("rotor", "rotor_fail_index", "-", "which rotor fails (0-based)", 0, kind="int",
                                 allowed=drawn.non_negative, fix="give the rotor's index, 0 or more"),
                        FaultKey("fraction", "rotor_fail_fraction", "-", "the failed rotor's thrust that remains", 0.0,
                                 allowed=drawn.unit_interval)))


@declare_faults(ROTOR_FAULT)
@drawn.draws(*ROTOR_DRAWS, occurrences=(ROTOR_FAILURE,))
class Propeller(Component):
    """One propeller, one force stage. The loaded rotor carries its coefficients and spin
    (:func:`nexus.plant.loading.load_plant` read them with this spec), which the ESC and the
    hover command use too."""

    spec = PROPELLER_SPEC

    def __init__(self, name: str, plant: Plant, rotor: Rotor):
        super().__init__(name)
        self.plant, self.rotor = plant, rotor

    @classmethod
    def from_prim(cls, prim, values, ctx) -> Propeller:
        """The propeller of the rotor body ``nexus:body`` names."""
        path = str(prim.GetPath())
        return cls(path, ctx.plant, ctx.rotor_for_body(values["body"], path))

    def stages(self) -> list[Stage]:
        # The clock, for a rotor that fails at a drawn time (``--vary rotor_fail_time``).
        return [Stage(self.spec.stage, self.spec.kind, self._run, reads=(Read("time_ns", wp.int64, (1,)),))]

    #: One launch for all the plant's propellers (False: one launch each, the reference tests compare with).
    fuse = True

    def prepare(self, ctx) -> None:
        # Propellers on distinct bodies run as one launch from the first one's stage (no two threads
        # add to one body's wrench, so the order of the additions, and the bits, are those of 4 launches).
        group = [c for c in ctx.components if c.spec is PROPELLER_SPEC and c.plant is self.plant]
        distinct = len({c.rotor.body for c in group}) == len(group)
        self.leader = group[0] if (Propeller.fuse and len(group) > 1 and distinct) else None
        plant = self.plant
        variation = None
        if self.leader in (None, self):  # the propellers that launch (a fused group's first one)
            self._variation = variation = rotor_variation(ctx, len(plant.rotors))
            self._strides = [plant.dofs_per_world, plant.bodies_per_world]
        #: The fused launch's per-propeller columns, in ``propeller_wrench_all``'s argument order (the leader's).
        columns: dict[str, wp.array] = {}
        if self.leader is self:
            rotors = [c.rotor for c in group]
            columns = {
                "rotor": wp.array([r.index for r in rotors], dtype=wp.int32, device=ctx.device),
                "dof": wp.array([r.dof for r in rotors], dtype=wp.int32, device=ctx.device),
                "body": wp.array([r.body for r in rotors], dtype=wp.int32, device=ctx.device),
                "thrust_coefficient": wp.array([r.thrust_coefficient for r in rotors], dtype=wp.float32,
                                               device=ctx.device),
                "torque_coefficient": wp.array([r.torque_coefficient for r in rotors], dtype=wp.float32,
                                               device=ctx.device),
            }
        self._fused, self._fused_count = tuple(columns.values()), len(group)
        #: The arrays the spec declares, by name: the fused launch's leader holds the group's rotor indices and
        #: thrust coefficients (one element per propeller of the group), a propeller that launches (the leader or
        #: one not fused) its drawn factors; the others hold none.
        self.arrays = NamedArrays(f"propeller {self.name}", PROPELLER_SPEC.arrays,
                                  **{k: columns[k] for k in ("rotor", "thrust_coefficient") if k in columns},
                                  **variation_arrays(variation))

    def fault_clocks(self) -> dict:
        """The per-world fail times [ns] this propeller's launch reads, for a fault fired by a condition
        (:mod:`nexus.scenario.fault_trigger` writes its firing time into them)."""
        variation = getattr(self, "_variation", None)
        return {"rotor": [variation.fail_ns]} if variation is not None else {}

    def _run(self, io) -> None:
        state, rotor = self.plant.state, self.rotor
        if self.leader is self:
            wp.launch(
                propeller_wrench_all, dim=self.plant.worlds,
                inputs=[state.joint_qd, state.body_q, *self._fused, *self._strides, io["time_ns"], self._variation],
                outputs=[state.body_f], device=io.device,
            )
            return
        if self.leader is not None:
            return  # the first propeller's launch drove this one
        wp.launch(
            propeller_wrench,
            dim=self.plant.worlds,
            inputs=[state.joint_qd, state.body_q, rotor.index, rotor.dof, rotor.body, rotor.thrust_coefficient,
                    rotor.torque_coefficient, *self._strides, io["time_ns"], self._variation],
            outputs=[state.body_f],
            device=io.device,
        )
