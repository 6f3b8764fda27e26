"""The ESC: a rotor's control value in [0, 1] -> a speed target for its motor servo.

The command first passes PX4's thrust model, ``thrust = (1 - f)·u + f·u²``
(``f`` = ``nexus:thrustModelFactor``, PX4's ``THR_MDL_FAC``), so that thrust,
which grows with speed squared, is what the command scales:
``ω_cmd = ω_max·√thrust``. A first-order lag with separate up and down time
constants models the ESC's and motor's response. The ESC writes the lagged
speed as the servo's velocity target and the propeller's drag at that speed
as the servo's feed-forward torque, so the servo holds the speed without a
steady error; the DC-motor envelope (``ClampingDCMotor``) caps the torque.
"""

from __future__ import annotations

import warp as wp

from nexus.core import Component, Read, Stage
from nexus.core.errors import BuildError
from nexus.core.types import CONTROLS_WIDTH
from nexus.plant.plant import Plant, Rotor


@wp.kernel
def esc_command(
    controls: wp.array2d(dtype=wp.float32),
    channel: wp.int32,
    rotor: wp.int32,
    dof: wp.int32,
    spin: wp.float32,
    min_speed: wp.float32,
    max_speed: wp.float32,
    thrust_model_factor: wp.float32,
    tau_up: wp.float32,
    tau_down: wp.float32,
    torque_coefficient: wp.float32,
    dt: wp.float32,
    speed: wp.array(dtype=wp.float32),
    target_qd: wp.array(dtype=wp.float32),
    feedforward: wp.array(dtype=wp.float32),
):
    u = wp.clamp(controls[0, channel], 0.0, 1.0)
    thrust = (1.0 - thrust_model_factor) * u + thrust_model_factor * u * u
    commanded = wp.max(min_speed, max_speed * wp.sqrt(thrust))
    if u <= 0.0:
        commanded = 0.0  # disarmed or cut: the motor stops
    current = speed[rotor]
    tau = tau_up
    if commanded < current:
        tau = tau_down
    lagged = current + (commanded - current) * dt / (tau + dt)
    speed[rotor] = lagged
    target_qd[dof] = spin * lagged
    feedforward[dof] = spin * torque_coefficient * lagged * lagged


class Esc(Component):
    """One ESC, one command stage. Reads the leading ``rotor_count`` of the ``controls`` row."""

    def __init__(self, name: str, plant: Plant, rotor: Rotor, rotor_count: int, connections=None):
        super().__init__(name, connections)
        self.plant, self.rotor = plant, rotor
        self.width = max(rotor_count, rotor.esc["channel"] + 1)
        if not 0 <= rotor.esc["channel"] < CONTROLS_WIDTH:
            raise BuildError(
                f"{plant.vehicle_path}: ESC prim {name}: nexus:channel is {rotor.esc['channel']}; "
                f"it must lie in 0..{CONTROLS_WIDTH - 1} (the controls row has {CONTROLS_WIDTH} outputs)"
            )
        if self.width > CONTROLS_WIDTH:
            raise BuildError(f"{plant.vehicle_path}: {rotor_count} rotors, but the controls row has {CONTROLS_WIDTH} outputs")

    def stages(self) -> list[Stage]:
        reads = (Read("controls", wp.float32, (1, self.width), default=0.0),)
        return [Stage("esc", "command", self._run, reads=reads)]

    def prepare(self, ctx) -> None:
        self.dt = ctx.dt

    def _run(self, io) -> None:
        esc, rotor, control = self.rotor.esc, self.rotor, self.plant.control
        wp.launch(
            esc_command,
            dim=1,
            inputs=[
                io["controls"], esc["channel"], rotor.index, rotor.dof, float(rotor.spin), esc["min_speed"],
                esc["max_speed"], esc["thrust_model_factor"], esc["tau_up"], esc["tau_down"],
                rotor.torque_coefficient, self.dt,
            ],
            outputs=[self.plant.esc_speed, control.joint_target_qd, control.joint_act],
            device=io.device,
        )
