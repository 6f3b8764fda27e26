"""Drag from the air's velocity relative to the vehicle: rotor drag and quadratic body drag on the base body.

With ``a`` the air's velocity relative to the base's centre of mass (``wind`` less the
base's velocity, world frame):

* **rotor drag** (the induced drag of a spinning rotor moving edgewise through the air;
  Gazebo's motor model's ``rotorDragCoefficient``): each rotor adds ``c |omega_i| a_perp,i``,
  ``a_perp,i`` being ``a`` less its part along that rotor's spin axis;
* **body drag**: ``1/2 rho Cd_k A_k |a_k| a_k`` along each body axis k (FLU) of the base.

Both act on the air's side (with the relative air), at the base's centre of mass: the
moment a rotor's drag makes about it is left out. The component exists only when the
vehicle file has a prim applying ``NexusDragAPI``; a ring without a wind field reads
still air (``wind`` defaults to zero).
"""

from __future__ import annotations

import warp as wp

from nexus.core import Component
from nexus.core.arrays import ArrayDecl, NamedArrays
from nexus.core.spec import Input, Param, Spec, non_negative, positive
from nexus.plant.plant import Plant

DRAG_SPEC = Spec(
    name="Drag",
    schema="NexusDragAPI",
    noun="drag",
    doc="Drag on the vehicle's base body from the air's velocity relative to it: each spinning rotor's drag "
        "(rotor drag coefficient times rotor speed times the in-plane relative air velocity) and quadratic body "
        "drag per body axis (1/2 rho Cd A |a| a).",
    params=(
        non_negative("rotor_drag_coefficient", "nexus:rotorDragCoefficient", 0.0, "N/((m/s)(rad/s))",
                     "Rotor drag per rotor speed and in-plane air speed (Gazebo's rotorDragCoefficient; "
                     "8.06428e-05 for PX4's x500)"),
        Param("body_drag_area", "nexus:bodyDragArea", "float3", (0.0, 0.0, 0.0), "m^2",
              "The base's reference areas facing its x (forward), y (left) and z (up) axes", low=0.0),
        Param("body_drag_coefficient", "nexus:bodyDragCoefficient", "float3", (1.0, 1.0, 1.0), "-",
              "The base's drag coefficients along x, y and z", low=0.0),
        positive("air_density", "nexus:airDensity", 1.225, "kg/m^3", "Air density (1.225: ISA sea level)"),
    ),
    inputs=(Input("wind", wp.vec3, default=wp.vec3(0.0, 0.0, 0.0),
                  doc="The air's velocity at the base [m/s], world ENU; still air when no wind field writes it"),),
    stage="drag",
    kind="force",
    arrays=(
        ArrayDecl("rotor_drag", "float32, one element", "N/((m/s)(rad/s))", "The rotor drag coefficient the kernel reads",
                  gradient=True, rollout="drag.rotor", param="rotor_drag_coefficient"),
        ArrayDecl("body_drag_coefficient", "vec3, one element", "-", "The body's drag coefficients the kernel reads",
                  gradient=True, rollout="drag.cd.{axis}", param="body_drag_coefficient", axes=("x", "y", "z")),
    ),
)


@wp.kernel
def add_drag(
    # In:
    wind: wp.array(dtype=wp.vec3),
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    joint_qd: wp.array(dtype=wp.float32),
    # Model:
    base: wp.int32,
    rotor_body: wp.array(dtype=wp.int32),
    rotor_dof: wp.array(dtype=wp.int32),
    bodies_per_world: wp.int32,
    dofs_per_world: wp.int32,
    rotor_drag: wp.array(dtype=wp.float32),
    body_drag_coefficient: wp.array(dtype=wp.vec3),
    half_rho_area: wp.vec3,
    # Out:
    body_f: wp.array(dtype=wp.spatial_vector),
):
    world = wp.tid()
    b = base + world * bodies_per_world
    air = wind[world] - wp.spatial_top(body_qd[b])
    force = wp.vec3(0.0)
    for i in range(rotor_body.shape[0]):
        axis = wp.quat_rotate(wp.transform_get_rotation(body_q[rotor_body[i] + world * bodies_per_world]),
                              wp.vec3(0.0, 0.0, 1.0))
        in_plane = air - wp.dot(air, axis) * axis
        force = force + rotor_drag[0] * wp.abs(joint_qd[rotor_dof[i] + world * dofs_per_world]) * in_plane
    rotation = wp.transform_get_rotation(body_q[b])
    a = wp.quat_rotate_inv(rotation, air)
    half_rho_cd_area = wp.cw_mul(body_drag_coefficient[0], half_rho_area)
    body = wp.cw_mul(half_rho_cd_area, wp.vec3(wp.abs(a[0]) * a[0], wp.abs(a[1]) * a[1], wp.abs(a[2]) * a[2]))
    force = force + wp.quat_rotate(rotation, body)
    body_f[b] = body_f[b] + wp.spatial_vector(force, wp.vec3(0.0))


class Drag(Component):
    """The drag on one vehicle's base body, one kernel a tick over the worlds (see the module doc)."""

    spec = DRAG_SPEC

    def __init__(self, name: str, plant: Plant, **params):
        super().__init__(name)
        self.plant = plant
        self.values = {**self.spec.defaults(), **params}

    @classmethod
    def from_prim(cls, prim, values, ctx) -> Drag:
        return cls(str(prim.GetPath()), ctx.plant, **values)

    def prepare(self, ctx) -> None:
        v, plant = self.values, self.plant
        half_rho = 0.5 * float(v["air_density"])
        #: The rotor drag coefficient and the body's drag coefficients, in arrays of one element so that a
        #: differentiable rollout can ask for their gradients (``drag.rotor``, ``drag.cd.x|y|z``).
        self.arrays = NamedArrays(
            f"drag {self.name}", DRAG_SPEC.arrays,
            rotor_drag=wp.array([float(v["rotor_drag_coefficient"])], dtype=wp.float32, device=ctx.device),
            body_drag_coefficient=wp.array([wp.vec3(*(float(c) for c in v["body_drag_coefficient"]))], dtype=wp.vec3,
                                           device=ctx.device),
        )
        self._model = [
            plant.base,
            wp.array([r.body for r in plant.rotors] or [0], dtype=wp.int32, device=ctx.device)[:len(plant.rotors)],
            wp.array([r.dof for r in plant.rotors] or [0], dtype=wp.int32, device=ctx.device)[:len(plant.rotors)],
            plant.bodies_per_world, plant.dofs_per_world, self.arrays.rotor_drag, self.arrays.body_drag_coefficient,
            wp.vec3(*(half_rho * a for a in v["body_drag_area"])),
        ]

    def run(self, io) -> None:
        state = self.plant.state
        wp.launch(add_drag, self.plant.worlds, inputs=[io["wind"], state.body_q, state.body_qd, state.joint_qd,
                                                       *self._model],
                  outputs=[state.body_f], device=io.device)
