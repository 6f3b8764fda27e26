"""The ESC: a rotor's control value in [0, 1] -> a speed target for its motor servo.

The command first passes PX4's thrust model, ``thrust = (1 - f)·u + f·u²``
(``f`` = ``nexus:thrustModelFactor``, PX4's ``THR_MDL_FAC``), so that thrust,
which grows with speed squared, is what the command scales:
``ω_cmd = ω_max·√thrust``. A first-order lag with separate up and down time
constants models the ESC's and motor's response. The ESC writes the lagged
speed as the servo's velocity target and the propeller's drag at that speed
as the servo's feed-forward torque, so the servo holds the speed without a
steady error; the DC-motor envelope (``ClampingDCMotor``) caps the torque.

The lagged speed is the plant's array ``Plant.esc_speed``, not state the
spec declares: the ESCs of one plant run as one launch over that one array
(see :meth:`Esc.prepare`), and the physics component hands it to snapshots
(``Physics.external_state``). The ESC reads ``Plant.esc_speed`` and writes
``Plant.esc_speed_out``: the same array in a flight, one tick's and the next's
on a taped run (:class:`nexus.plant.physics.TapedPlant`).
"""

from __future__ import annotations

import numpy as np
import warp as wp
from newton.actuators import ClampingDCMotor, DrivePD

from nexus.core import Component, Stage
from nexus.core.arrays import ArrayDecl, NamedArrays
from nexus.core.errors import BuildError
from nexus.core.spec import Input, Param, Relation, Spec, positive
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.physics import Physics
from nexus.plant.plant import Plant, Rotor
from nexus.plant.safe_math import safe_sqrt
from nexus.schemas.reader import read_connections
from nexus.vocab import drawn

#: Keys of the ESC's command parameters (the motor's parameters go to Newton's actuator, see loading.py).
COMMAND_KEYS = ("channel", "min_speed", "max_speed", "thrust_model_factor", "tau_up", "tau_down")



ESC_SPEC = Spec(
    name="Esc",
    schema="NexusEscAPI",
    noun="ESC",
    doc="An electronic speed controller and its motor. It turns one element of the `controls` row (a value in "
        "[0, 1]) into a rotor speed target for the revolute joint named by `nexus:joint`: the target follows the "
        "command through first-order lags (`nexus:motor:timeConstantUp` when speeding up, "
        "`nexus:motor:timeConstantDown` when slowing down) and a DC-motor speed servo drives the joint towards it. "
        "Command to speed: with f = nexus:thrustModelFactor and u the command, the normalised thrust is "
        "t = (1 - f) u + f u^2 (PX4's THR_MDL_FAC model) and the speed target is maxSpeed sqrt(t), at least "
        "minSpeed while u > 0 and 0 at u = 0. f = 1 makes speed linear in the command, f = 0 makes thrust linear "
        "in it. The motor's torque envelope follows from kv, voltage, resistance and currentLimit: torque constant "
        "Kt = 60 / (2 pi kv) [N m/A], no-load speed kv voltage 2 pi / 60 [rad/s], stall torque Kt voltage / "
        "resistance [N m], torque limit Kt currentLimit [N m].",
    params=(
        Param("channel", "nexus:channel", "int", 0, "-",
              f"Index into the controls row, 0-based; the row has {CONTROLS_WIDTH} outputs and channel 0 is "
              "PX4's output 1", low=0, high=CONTROLS_WIDTH - 1),
        Param("min_speed", "nexus:minSpeed", "float", 0.0, "rad/s",
              "Least rotor speed while armed and commanded above 0, magnitude; at most nexus:maxSpeed", low=0.0),
        positive("max_speed", "nexus:maxSpeed", 1100.0, "rad/s", "Rotor speed at command 1, magnitude"),
        Param("thrust_model_factor", "nexus:thrustModelFactor", "float", 0.0, "-",
              "Thrust model factor f (PX4's THR_MDL_FAC); see the class doc", low=0.0, high=1.0),
        positive("tau_up", "nexus:motor:timeConstantUp", 0.0125, "s", "Time constant of the speed target when it rises"),
        positive("tau_down", "nexus:motor:timeConstantDown", 0.025, "s",
                 "Time constant of the speed target when it falls"),
        positive("kv", "nexus:motor:kv", 1000.0, "rpm/V", "Motor velocity constant"),
        positive("voltage", "nexus:motor:voltage", 14.8, "V", "Supply voltage"),
        positive("resistance", "nexus:motor:resistance", 0.1, "ohm", "Phase-to-phase winding resistance"),
        positive("current_limit", "nexus:motor:currentLimit", 30.0, "A", "ESC current limit"),
        positive("speed_gain", "nexus:motor:speedGain", 0.01, "N m s/rad",
                 "Gain of the speed servo: torque per unit speed error"),
    ),
    relations=(Relation("joint", "nexus:joint", "The rotor's revolute joint (one target)"),),
    inputs=(
        Input("controls", wp.float32, (1, CONTROLS_WIDTH), default=0.0, connectable=True,
              doc="The prim whose stage writes the `controls` signal (a controller)."),
    ),
    stage="esc",
    kind="command",
    arrays=(
        ArrayDecl("tau_up", "float32, one per ESC of the plant's fused launch (component order)", "s",
                  "Each ESC's rising time constant as the launch reads it", gradient=True, rollout="esc.tau_up",
                  param="tau_up"),
        ArrayDecl("tau_down", "float32, one per ESC of the plant's fused launch (component order)", "s",
                  "Each ESC's falling time constant as the launch reads it", gradient=True, rollout="esc.tau_down",
                  param="tau_down"),
        ArrayDecl("torque_coefficient", "float32, one per ESC of the plant's fused launch (component order)",
                  "N m/(rad/s)^2", "Each ESC's rotor drag-torque coefficient (its feed-forward torque)"),
        ArrayDecl("lag_scale", "float32, one per world", "-",
                  "Each world's factor on both time constants (the draw esc_lag_scale; 1 leaves them exact)"),
    ),
)


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
    commanded = wp.max(min_speed, max_speed * safe_sqrt(thrust))
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
    lag_scale: wp.array(dtype=wp.float32),
    rotors: wp.int32,
    dofs_per_world: wp.int32,
    speed_in: wp.array(dtype=wp.float32),
    speed: wp.array(dtype=wp.float32),
    target_qd: wp.array(dtype=wp.float32),
    feedforward: wp.array(dtype=wp.float32),
):
    world = wp.tid()
    r = rotor + world * rotors
    d = dof + world * dofs_per_world
    lag = lag_scale[world]
    lagged = lagged_speed(controls[world, channel], speed_in[r], min_speed, max_speed, thrust_model_factor, tau_up * lag,
                          tau_down * lag, dt)
    speed[r] = lagged
    target_qd[d] = spin * lagged
    feedforward[d] = spin * torque_coefficient * lagged * lagged


@wp.struct
class EscGroup:
    """What the launch that drives a plant's ESCs reads besides the controls and the lagged speeds.

    One element per ESC (component order): the controls element each reads, its rotor's index, joint DOF, spin and
    drag-torque coefficient, and its command parameters (:data:`ESC_SPEC`); then each world's factor on the time
    constants (``esc_lag_scale``), the plant's rotors and DOFs per world and the tick [s]."""

    channel: wp.array(dtype=wp.int32)
    rotor: wp.array(dtype=wp.int32)
    dof: wp.array(dtype=wp.int32)
    spin: wp.array(dtype=wp.float32)
    min_speed: wp.array(dtype=wp.float32)
    max_speed: wp.array(dtype=wp.float32)
    thrust_model_factor: wp.array(dtype=wp.float32)
    tau_up: wp.array(dtype=wp.float32)
    tau_down: wp.array(dtype=wp.float32)
    torque_coefficient: wp.array(dtype=wp.float32)
    lag_scale: wp.array(dtype=wp.float32)
    rotors: wp.int32
    dofs_per_world: wp.int32
    dt: wp.float32


@wp.func
def command_group_esc(
    group: EscGroup,
    i: int,
    world: int,
    controls: wp.array2d(dtype=wp.float32),
    speed_in: wp.array(dtype=wp.float32),
    speed: wp.array(dtype=wp.float32),
    target_qd: wp.array(dtype=wp.float32),
    feedforward: wp.array(dtype=wp.float32),
):
    """ESC ``i`` of ``group`` in ``world``: its lagged speed, the servo's speed target and its feed-forward torque,
    the arithmetic of ``esc_command``."""
    r = group.rotor[i] + world * group.rotors
    d = group.dof[i] + world * group.dofs_per_world
    lag = group.lag_scale[world]
    lagged = lagged_speed(
        controls[world, group.channel[i]], speed_in[r], group.min_speed[i], group.max_speed[i],
        group.thrust_model_factor[i], group.tau_up[i] * lag, group.tau_down[i] * lag, group.dt
    )
    speed[r] = lagged
    target_qd[d] = group.spin[i] * lagged
    feedforward[d] = group.spin[i] * group.torque_coefficient[i] * lagged * lagged


@wp.kernel
def esc_command_all(
    controls: wp.array2d(dtype=wp.float32),
    group: EscGroup,
    speed_in: wp.array(dtype=wp.float32),
    speed: wp.array(dtype=wp.float32),
    target_qd: wp.array(dtype=wp.float32),
    feedforward: wp.array(dtype=wp.float32),
):
    """Every ESC of a plant in one launch, one thread per ESC and world (same arithmetic as ``esc_command``).

    The lagged speed is read from ``speed_in`` and written to ``speed``: a run passes the plant's one
    array as both, a differentiable rollout one array per tick (:mod:`nexus.diff`)."""
    world, i = wp.tid()
    command_group_esc(group, i, world, controls, speed_in, speed, target_qd, feedforward)


@wp.struct
class Servo:
    """The rotors' speed servo (Newton's ``DrivePD`` clamped by ``ClampingDCMotor``), run inside the ESCs' launch.

    ``element`` maps (world, ESC of the group) to the actuator's element; every other array is the actuator's
    own (its gains, its envelope, its index maps), so a change to them reaches this launch as it reaches Newton's.
    """

    element: wp.array2d(dtype=wp.int32)
    pos_indices: wp.array(dtype=wp.uint32)
    vel_indices: wp.array(dtype=wp.uint32)
    target_pos_indices: wp.array(dtype=wp.uint32)
    effort_indices: wp.array(dtype=wp.uint32)
    kp: wp.array(dtype=wp.float32)
    kd: wp.array(dtype=wp.float32)
    const_effort: wp.array(dtype=wp.float32)
    saturation_effort: wp.array(dtype=wp.float32)
    velocity_limit: wp.array(dtype=wp.float32)
    max_motor_effort: wp.array(dtype=wp.float32)


@wp.func
def servo_effort(servo: Servo, i: int, current_pos: wp.array(dtype=wp.float32),
                 current_vel: wp.array(dtype=wp.float32), target_pos: wp.array(dtype=wp.float32),
                 target_vel: wp.array(dtype=wp.float32), feedforward: wp.array(dtype=wp.float32),
                 output: wp.array(dtype=wp.float32)):
    """Element ``i`` of the servo, as Newton 1.8's actuator step computes it (``_pd_effort_kernel``, then
    ``_clamp_dc_motor_kernel``, then ``_scatter_add_kernel``), operation for operation, so the bits are the same."""
    vel_idx = servo.vel_indices[i]
    position_error = target_pos[servo.target_pos_indices[i]] - current_pos[servo.pos_indices[i]]
    velocity_error = target_vel[vel_idx] - current_vel[vel_idx]
    const_e = float(0.0)
    if servo.const_effort:
        const_e = servo.const_effort[i]
    ff = feedforward[vel_idx]
    effort = const_e + ff + servo.kp[i] * position_error + servo.kd[i] * velocity_error
    sat = servo.saturation_effort[i]
    vel_lim = servo.velocity_limit[i]
    max_e = servo.max_motor_effort[i]
    corner = vel_lim
    if sat > 0.0:
        ratio = max_e / sat
        if ratio == ratio:
            corner = vel_lim * (1.0 + ratio)
    vel = wp.clamp(current_vel[vel_idx], -corner, corner)
    effort_max = wp.min(sat * (1.0 - vel / vel_lim), max_e)
    effort_min = wp.max(sat * (-1.0 - vel / vel_lim), -max_e)
    applied = wp.clamp(effort, effort_min, effort_max)
    idx = servo.effort_indices[i]
    output[idx] = output[idx] + applied


@wp.kernel
def esc_servo_all(
    controls: wp.array2d(dtype=wp.float32),
    group: EscGroup,
    speed_in: wp.array(dtype=wp.float32),
    servo: Servo,
    joint_q: wp.array(dtype=wp.float32),
    joint_qd: wp.array(dtype=wp.float32),
    joint_target_q: wp.array(dtype=wp.float32),
    speed: wp.array(dtype=wp.float32),
    target_qd: wp.array(dtype=wp.float32),
    feedforward: wp.array(dtype=wp.float32),
    joint_f: wp.array(dtype=wp.float32),
):
    """Every ESC of a plant and its servo in one launch, one thread per world: ``esc_command_all``'s arithmetic,
    then the servo's torque on each rotor joint (what the step stage's actuator would add before the solver)."""
    world = wp.tid()
    for i in range(group.channel.shape[0]):
        command_group_esc(group, i, world, controls, speed_in, speed, target_qd, feedforward)
    for i in range(group.channel.shape[0]):
        servo_effort(servo, servo.element[world, i], joint_q, joint_qd, joint_target_q, target_qd, feedforward,
                     joint_f)


def fusable_servo(plant: Plant, dofs: list[int], substeps: int) -> Servo | None:
    """The rotors' servo as one :class:`Servo` the ESCs' launch can run, or None where it must stay the step's.

    Only for one explicit ``DrivePD`` + ``ClampingDCMotor`` actuator (as :mod:`nexus.plant.loading` adds) on
    exactly these joints (in the explicit effort mode Newton builds it in; Nexus never switches it), stepped once
    a tick on the live arrays: not with substeps (the step runs the servo
    each substep on that substep's speed) and not on Featherstone (a taped run steps the servo on a tick's own
    copies, :class:`nexus.plant.physics.TapedPlant`)."""
    if substeps != 1 or plant.solver_name == "featherstone" or len(plant.actuators) != 1:
        return None
    actuator = plant.actuators[0]
    clamps = list(actuator.clamping)
    plain = (type(actuator.drive) is DrivePD and len(clamps) == 1 and type(clamps[0]) is ClampingDCMotor
             and actuator.delay is None and not actuator.drive.is_stateful()
             and (actuator.state_pos_attr, actuator.state_vel_attr) == ("joint_q", "joint_qd")
             and (actuator.control_target_pos_attr, actuator.control_target_vel_attr,
                  actuator.control_feedforward_attr, actuator.control_output_attr) ==
             ("joint_target_q", "joint_target_qd", "joint_act", "joint_f")
             and actuator.control_computed_output_attr in (None, "joint_f"))
    if not plain:
        return None
    index = actuator.indices.numpy()
    per_world = [d + w * plant.dofs_per_world for w in range(plant.worlds) for d in dofs]
    if sorted(index.tolist()) != sorted(per_world) or len(set(index.tolist())) != len(index):
        return None
    where = {int(d): i for i, d in enumerate(index)}
    element = np.array([where[d] for d in per_world], dtype=np.int32).reshape(plant.worlds, len(dofs))
    drive, clamp = actuator.drive, clamps[0]
    servo = Servo()
    servo.element = wp.array(element, dtype=wp.int32, device=plant.device)
    servo.pos_indices, servo.vel_indices = actuator.pos_indices, actuator.indices
    servo.target_pos_indices, servo.effort_indices = actuator.target_pos_indices, actuator.effort_indices
    servo.kp, servo.kd = drive.kp, drive.kd
    servo.const_effort = drive.const_effort
    servo.saturation_effort, servo.velocity_limit = clamp.saturation_effort, clamp.velocity_limit
    servo.max_motor_effort = clamp.max_motor_effort
    return servo


@drawn.draws(drawn.Drawn("esc_lag_scale", "-", "multiplies the ESC speed time constants", "> 0",
                         accepts=drawn.positive, on_rotors=True))
class Esc(Component):
    """One ESC, one command stage. Reads the leading ``rotor_count`` of the ``controls`` row.

    ``params`` holds the command's parameters (:data:`COMMAND_KEYS`) as the
    spec read them; the rotor gives the joint's DOF, the spin and the drag.
    """

    spec = ESC_SPEC

    def __init__(self, name: str, plant: Plant, rotor: Rotor, rotor_count: int, params: dict, connections=None):
        super().__init__(name, connections)
        self.plant, self.rotor = plant, rotor
        self.params = {key: params[key] for key in COMMAND_KEYS}
        self.width = max(rotor_count, self.params["channel"] + 1)
        if self.width > CONTROLS_WIDTH:
            raise BuildError(f"{plant.vehicle_path}: {rotor_count} rotors, but the controls row has {CONTROLS_WIDTH} outputs")

    @classmethod
    def from_prim(cls, prim, values, ctx) -> Esc:
        """The ESC of the rotor joint ``nexus:joint`` names, reading ``controls`` from ``nexus:inputs:controls``."""
        path = str(prim.GetPath())
        return cls(path, ctx.plant, ctx.rotor_for_joint(values["joint"], path), ctx.rotor_count, values,
                   read_connections(prim, cls.spec, ctx.path))

    def stages(self) -> list[Stage]:
        reads = (self.spec.inputs[0].read(self, (1, self.width)),)
        return [Stage(self.spec.stage, self.spec.kind, self._run, reads=reads)]

    def prepare(self, ctx) -> None:
        self.dt = ctx.dt
        # ``--vary esc_lag_scale``: each world's factor on both time constants (1 leaves them exact).
        lag_scale = wp.array(ctx.varied("esc_lag_scale", 1.0).astype("float32"), dtype=wp.float32, device=ctx.device)
        plant = self.plant
        self._strides = [lag_scale, len(plant.rotors), plant.dofs_per_world]
        # The plant's ESCs that read the same controls run as one launch, from the first one's stage
        # (a kernel launch costs about as much as the ESC's arithmetic; see docs/benchmarking.md).
        group = [c for c in ctx.components if c.spec is ESC_SPEC and c.plant is self.plant]
        same_source = len({c.connections.get("controls") for c in group}) == 1
        self.leader = group[0] if (Esc.fuse and len(group) > 1 and same_source) else None
        self._controls_ptr = None
        #: The fused launch's per-ESC columns, by :class:`EscGroup` field (the leader's).
        columns: dict[str, wp.array] = {}
        if self.leader is self:

            def column(values, dtype):
                return wp.array(values, dtype=dtype, device=ctx.device)

            columns = {
                "channel": column([c.params["channel"] for c in group], wp.int32),
                "rotor": column([c.rotor.index for c in group], wp.int32),
                "dof": column([c.rotor.dof for c in group], wp.int32),
                "spin": column([float(c.rotor.spin) for c in group], wp.float32),
                **{key: column([c.params[key] for c in group], wp.float32)
                   for key in ("min_speed", "max_speed", "thrust_model_factor", "tau_up", "tau_down")},
                "torque_coefficient": column([c.rotor.torque_coefficient for c in group], wp.float32),
            }
        self._columns, self._fused_count = columns, len(group)
        #: The rotors' servo when this ESC's launch runs it (the step stage then leaves it out: ``Plant.servo_ran``).
        self._servo = None
        if self.leader is self and Esc.fuse_servo:
            substeps = [c.substeps for c in ctx.components if isinstance(c, Physics) and c.plant is plant]
            self._servo = fusable_servo(plant, [c.rotor.dof for c in group], max(substeps, default=1))
        #: The arrays the spec declares, by name: this ESC's per-world lag scale; the fused launch's leader also
        #: holds the group's time constants and torque coefficients (one element per ESC of the group).
        self.arrays = NamedArrays(f"ESC {self.name}", ESC_SPEC.arrays, lag_scale=lag_scale,
                                  **{k: columns[k] for k in ("tau_up", "tau_down", "torque_coefficient") if k in columns})

    #: One launch for all the plant's ESCs (False: one launch each, the reference tests compare with).
    fuse = True
    #: The fused launch also runs the rotors' servo, one thread per world (False: the step stage's actuator does).
    fuse_servo = True

    def _group(self) -> EscGroup:
        """The fused launch's columns as one :class:`EscGroup`, made at each launch: a struct holds its arrays as they
        were when set, so one made once would miss a gradient buffer given to them later (:mod:`nexus.diff`)."""
        group = EscGroup()
        for name, array in self._columns.items():
            setattr(group, name, array)
        group.lag_scale, group.rotors, group.dofs_per_world = self._strides
        group.dt = self.dt
        return group

    def _run(self, io) -> None:
        control = self.plant.control
        if self.leader is self and self._servo is not None:
            self._controls_ptr = io["controls"].ptr
            state = self.plant.state
            wp.launch(
                esc_servo_all, dim=self.plant.worlds,
                inputs=[io["controls"], self._group(), self.plant.esc_speed, self._servo,
                        state.joint_q, state.joint_qd, control.joint_target_q],
                outputs=[self.plant.esc_speed_out, control.joint_target_qd, control.joint_act, control.joint_f],
                device=io.device,
            )
            self.plant.servo_ran = True
            return
        if self.leader is self:
            self._controls_ptr = io["controls"].ptr
            wp.launch(
                esc_command_all, dim=(self.plant.worlds, self._fused_count),
                inputs=[io["controls"], self._group(), self.plant.esc_speed],
                outputs=[self.plant.esc_speed_out, control.joint_target_qd, control.joint_act],
                device=io.device,
            )
            return
        if self.leader is not None:
            if io["controls"].ptr != self.leader._controls_ptr:
                raise BuildError(f"ESC {self.name} reads other controls than {self.leader.name}, whose launch drives it")
            return  # the first ESC's launch drove this one
        esc, rotor = self.params, self.rotor
        wp.launch(
            esc_command,
            dim=self.plant.worlds,
            inputs=[
                io["controls"], esc["channel"], rotor.index, rotor.dof, float(rotor.spin), esc["min_speed"],
                esc["max_speed"], esc["thrust_model_factor"], esc["tau_up"], esc["tau_down"],
                rotor.torque_coefficient, self.dt, *self._strides, self.plant.esc_speed,
            ],
            outputs=[self.plant.esc_speed_out, control.joint_target_qd, control.joint_act],
            device=io.device,
        )
