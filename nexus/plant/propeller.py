"""The propeller: thrust and drag torque on its rotor body from the rotor's speed.

Thrust ``kT·ω²`` acts along the rotor's spin axis (body +z); the drag torque
``kQ·ω·|ω|`` opposes the spin. Both are added to the rotor body's applied
wrench (world frame, at its centre of mass) for the step that follows.
"""

from __future__ import annotations

import warp as wp

from nexus.core import Component, Stage
from nexus.plant.plant import Plant, Rotor


@wp.kernel
def propeller_wrench(
    joint_qd: wp.array(dtype=wp.float32),
    body_q: wp.array(dtype=wp.transform),
    dof: wp.int32,
    body: wp.int32,
    thrust_coefficient: wp.float32,
    torque_coefficient: wp.float32,
    body_f: wp.array(dtype=wp.spatial_vector),
):
    omega = joint_qd[dof]
    rotation = wp.transform_get_rotation(body_q[body])
    thrust = wp.quat_rotate(rotation, wp.vec3(0.0, 0.0, thrust_coefficient * omega * omega))
    drag = wp.quat_rotate(rotation, wp.vec3(0.0, 0.0, -torque_coefficient * omega * wp.abs(omega)))
    body_f[body] = body_f[body] + wp.spatial_vector(thrust, drag)


class Propeller(Component):
    """One propeller, one force stage."""

    def __init__(self, name: str, plant: Plant, rotor: Rotor):
        super().__init__(name)
        self.plant, self.rotor = plant, rotor

    def stages(self) -> list[Stage]:
        return [Stage("propeller", "force", self._run)]

    def _run(self, io) -> None:
        state, rotor = self.plant.state, self.rotor
        wp.launch(
            propeller_wrench,
            dim=1,
            inputs=[state.joint_qd, state.body_q, rotor.dof, rotor.body, rotor.thrust_coefficient, rotor.torque_coefficient],
            outputs=[state.body_f],
            device=io.device,
        )
