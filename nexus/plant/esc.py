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
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.plant import Plant, Rotor


@wp.func
def lagged_speed(
    u_raw: wp.float32,
    current: wp.float32,
    min_speed: wp.float32,
    max_speed: wp.float32,
    thrust_model_factor: wp.float32,
    tau_up: wp.float32,
    tau_down: wp.float32,
    dt: wp.float32,
) -> wp.float32:
    """The rotor speed target [rad/s] after the thrust model and the lag, from the command ``u_raw``."""
    u = wp.clamp(u_raw, 0.0, 1.0)
    thrust = (1.0 - thrust_model_factor) * u + thrust_model_factor * u * u
    commanded = wp.max(min_speed, max_speed * wp.sqrt(thrust))
    if u <= 0.0:
        commanded = 0.0  # disarmed or cut: the motor stops
    tau = tau_up
    if commanded < current:
        tau = tau_down
    return current + (commanded - current) * dt / (tau + dt)


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
    lagged = lagged_speed(controls[0, channel], speed[rotor], min_speed, max_speed, thrust_model_factor, tau_up, tau_down, dt)
    speed[rotor] = lagged
    target_qd[dof] = spin * lagged
    feedforward[dof] = spin * torque_coefficient * lagged * lagged


@wp.kernel
def esc_command_all(
    controls: wp.array2d(dtype=wp.float32),
    channel: wp.array(dtype=wp.int32),
    rotor: wp.array(dtype=wp.int32),
    dof: wp.array(dtype=wp.int32),
    spin: wp.array(dtype=wp.float32),
    min_speed: wp.array(dtype=wp.float32),
    max_speed: wp.array(dtype=wp.float32),
    thrust_model_factor: wp.array(dtype=wp.float32),
    tau_up: wp.array(dtype=wp.float32),
    tau_down: wp.array(dtype=wp.float32),
    torque_coefficient: wp.array(dtype=wp.float32),
    dt: wp.float32,
    speed: wp.array(dtype=wp.float32),
    target_qd: wp.array(dtype=wp.float32),
    feedforward: wp.array(dtype=wp.float32),
):
    """Every ESC of a plant in one launch, one thread per ESC (same arithmetic as ``esc_command``)."""
    i = wp.tid()
    r = rotor[i]
    lagged = lagged_speed(
        controls[0, channel[i]], speed[r], min_speed[i], max_speed[i], thrust_model_factor[i], tau_up[i], tau_down[i], dt
    )
    speed[r] = lagged
    target_qd[dof[i]] = spin[i] * lagged
    feedforward[dof[i]] = spin[i] * torque_coefficient[i] * lagged * lagged


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
        # The plant's ESCs that read the same controls run as one launch, from the first one's stage
        # (a kernel launch costs about as much as the ESC's arithmetic; see docs/benchmarking.md).
        group = [c for c in ctx.components if isinstance(c, Esc) and c.plant is self.plant]
        same_source = len({c.connections.get("controls") for c in group}) == 1
        self.leader = group[0] if (Esc.fuse and len(group) > 1 and same_source) else None
        self._controls_ptr = None
        if self.leader is self:
            rotors = [c.rotor for c in group]

            def column(values, dtype):
                return wp.array(values, dtype=dtype, device=ctx.device)

            self.fused = [
                column([r.esc["channel"] for r in rotors], wp.int32),
                column([r.index for r in rotors], wp.int32),
                column([r.dof for r in rotors], wp.int32),
                column([float(r.spin) for r in rotors], wp.float32),
                *[column([r.esc[key] for r in rotors], wp.float32)
                  for key in ("min_speed", "max_speed", "thrust_model_factor", "tau_up", "tau_down")],
                column([r.torque_coefficient for r in rotors], wp.float32),
            ]

    #: One launch for all the plant's ESCs (False: one launch each, the reference tests compare with).
    fuse = True

    def _run(self, io) -> None:
        control = self.plant.control
        if self.leader is self:
            self._controls_ptr = io["controls"].ptr
            wp.launch(
                esc_command_all, dim=len(self.fused[0]),
                inputs=[io["controls"], *self.fused, self.dt],
                outputs=[self.plant.esc_speed, control.joint_target_qd, control.joint_act],
                device=io.device,
            )
            return
        if self.leader is not None:
            if io["controls"].ptr != self.leader._controls_ptr:
                raise BuildError(f"ESC {self.name} reads other controls than {self.leader.name}, whose launch drives it")
            return  # the first ESC's launch drove this one
        esc, rotor = self.rotor.esc, self.rotor
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
