"""Physics: clear the applied forces, step Newton's solver, publish the state.

Three stages of one component. ``clear`` zeroes body wrenches and joint
torques (the ESC, servos and propellers add into them). ``step`` runs the
rotor servos and the solver's step (``SolverMuJoCo`` by default,
``SolverFeatherstone`` with ``--solver featherstone``, which first collides
with Newton's collision pipeline) ``substeps`` times per tick, passing the one
observables container allocated before capture. ``state`` publishes
each body as ``body/<label>`` (``BodyState``) and each rotor joint as
``joints/<label>`` (position [rad], speed [rad/s]), skipping those no stage
reads (each launch is paid on every tick).

The observables requested are the union of ``solver_observables`` declared by
every component in the ring (the IMU declares ``body_qdd``); with none, the
solver computes no extra diagnostics and ``BodyState.accel`` stays zero.
Featherstone does not compute ``body_qdd``: the step stage then writes it
itself, as each body's step-average acceleration
(:func:`nexus.plant.solvers.step_average_acceleration`).

The plant's state lives in Newton's and MuJoCo Warp's own arrays, stepped in
place, not in state the spec declares: :meth:`Physics.external_state` names
every one of them a tick carries into the next, so a snapshot of the loop
restores the plant bit for bit. For a taped run (:mod:`nexus.core.taped`),
:class:`TapedPlant` gives those arrays one copy per tick (Featherstone only)
and the three stages run on the tick's copies.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import newton
import warp as wp

from nexus.core import Component, Read, Stage
from nexus.core.errors import BuildError
from nexus.core.spec import Output, Spec
from nexus.core.taped import ExternalCopies
from nexus.plant import newton_internals as internals
from nexus.plant.body_state import BodyState
from nexus.plant.plant import Plant
from nexus.plant.solvers import NEXUS_OBSERVABLES, step_average_acceleration

PHYSICS_SPEC = Spec(
    name="Physics",
    doc="Newton's MuJoCo solver stepping the vehicle: clears the applied forces, steps, publishes each body and "
        "rotor joint. Built for every vehicle, not from a prim.",
    outputs=(
        Output("body/{label}", BodyState, recorded=True,
               doc="The base body's state (world ENU, body FLU), under the base prim's name, e.g. body/base"),
        Output("body/{label}", BodyState, doc="Each other rigid body's state, under its prim's name"),
        Output("joints/{label}", wp.float32, (1, 2), doc="Each rotor joint's angle [rad] and speed [rad/s]"),
    ),
)
BASE_BODY, OTHER_BODY, ROTOR_JOINT = PHYSICS_SPEC.outputs

#: MuJoCo Warp's data that one step leaves for the next (everything else in ``mjw_data`` is recomputed
#: from qpos/qvel, which each step copies from Newton's state, before it is read). ``qacc_warmstart``
#: is the one the bits need: the constraint solver starts from the last step's accelerations, so a
#: step restored on the ground (contacts active) without it converges to other bits
#: (tests/test_snapshot.py). ``time`` is MuJoCo's own clock. ``qfrc_applied``, ``xfrc_applied``, ``ctrl``
#: and ``act`` are the other buffers Newton's ``SolverMuJoCo.reset`` treats as persistent; leaving them
#: out changes no bit of that test's flight, so they are carried only to be safe (a few bytes).
MUJOCO_CARRIED = ("qacc_warmstart", "qfrc_applied", "xfrc_applied", "ctrl", "act", "time")


@wp.kernel
def publish_body(
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    body_qdd: wp.array(dtype=wp.spatial_vector),
    body_com: wp.array(dtype=wp.vec3),
    body0: wp.int32,
    bodies_per_world: wp.int32,
    has_qdd: wp.int32,
    out: wp.array(dtype=BodyState),
):
    world = wp.tid()
    body = body0 + world * bodies_per_world
    twist = body_qd[body]
    state = BodyState()
    state.pose = body_q[body]
    state.velocity = wp.spatial_top(twist)
    state.angular_velocity = wp.spatial_bottom(twist)
    state.accel = wp.vec3(0.0)
    state.angular_accel = wp.vec3(0.0)
    if has_qdd != 0:
        acceleration = body_qdd[body]
        state.accel = wp.spatial_top(acceleration)
        state.angular_accel = wp.spatial_bottom(acceleration)
    state.com = body_com[body]
    out[world] = state


@wp.kernel
def clear_applied(body_f: wp.array(dtype=wp.spatial_vector), joint_f: wp.array(dtype=wp.float32)):
    """Zero the bodies' wrenches and the joints' torques: one graph node instead of two memsets, on CUDA only (not
    timed there: no GPU was lent); on the CPU two captured memsets replay about 7 times faster than this launch."""
    i = wp.tid()
    if i < body_f.shape[0]:
        body_f[i] = wp.spatial_vector()
    if i < joint_f.shape[0]:
        joint_f[i] = 0.0


@wp.kernel
def publish_joint(
    joint_q: wp.array(dtype=wp.float32),
    joint_qd: wp.array(dtype=wp.float32),
    coord: wp.int32,
    dof: wp.int32,
    coords_per_world: wp.int32,
    dofs_per_world: wp.int32,
    out: wp.array2d(dtype=wp.float32),
):
    world = wp.tid()
    out[world, 0] = joint_q[coord + world * coords_per_world]
    out[world, 1] = joint_qd[dof + world * dofs_per_world]


#: The done flag a world gets when its state stops being finite (1 is a mission's "done").
FAILED = wp.constant(2)


@wp.func
def keep_or_put_back(keep: bool, live: wp.array(dtype=Any), held: wp.array(dtype=Any), start: int, count: int):
    """Elements ``start .. start + count`` of ``live``: copied to ``held`` when ``keep``, else put back from it."""
    for k in range(count):
        if keep:
            held[start + k] = live[start + k]
        else:
            live[start + k] = held[start + k]


@wp.kernel
def hold_finished_worlds(
    running: wp.array(dtype=wp.int32),
    tick: wp.array(dtype=wp.int64),
    coords_per_world: wp.int32,
    dofs_per_world: wp.int32,
    bodies_per_world: wp.int32,
    copy_kept: wp.int32,
    joint_q: wp.array(dtype=wp.float32),
    joint_qd: wp.array(dtype=wp.float32),
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    held_joint_q: wp.array(dtype=wp.float32),
    held_joint_qd: wp.array(dtype=wp.float32),
    held_body_q: wp.array(dtype=wp.transform),
    held_body_qd: wp.array(dtype=wp.spatial_vector),
    done: wp.array(dtype=wp.int32),
    failed_tick: wp.array(dtype=wp.int64),
):
    """After the step: a flying world's finite state is kept; a finished world's is put back, so it
    stays where it ended while the others fly on. A flying world whose step left a non-finite value is
    put back to its last finite state and marked failed (done flag 2, with the tick).

    With ``copy_kept`` 1 the kept worlds are copied to the held arrays here, element by element; with 0 only
    the put-back worlds are touched, and four whole-array copies, live to held, follow the launch (they leave a
    put-back world as it is and keep every other one; :data:`HOLD_BY_COPY_WORLDS`)."""
    world = wp.tid()
    finite = int(1)
    for k in range(coords_per_world):
        if not wp.isfinite(joint_q[world * coords_per_world + k]):
            finite = 0
    for k in range(dofs_per_world):
        if not wp.isfinite(joint_qd[world * dofs_per_world + k]):
            finite = 0
    keep = running[world] != 0 and finite != 0
    if running[world] != 0 and finite == 0:
        done[world] = FAILED
        failed_tick[world] = tick[world]
    if copy_kept != 0 or not keep:
        keep_or_put_back(keep, joint_q, held_joint_q, world * coords_per_world, coords_per_world)
        keep_or_put_back(keep, joint_qd, held_joint_qd, world * dofs_per_world, dofs_per_world)
        keep_or_put_back(keep, body_q, held_body_q, world * bodies_per_world, bodies_per_world)
        keep_or_put_back(keep, body_qd, held_body_qd, world * bodies_per_world, bodies_per_world)


#: From this many worlds the hold runs as :func:`hold_finished_worlds` without its copy of the kept worlds and four
#: array copies (5 graph nodes, the copies at memory speed) instead of one launch that copies element by element:
#: at 1,024 worlds on the CPU about 30 µs against 100 µs; at one world the one launch is cheaper. Same bits.
HOLD_BY_COPY_WORLDS = 16
#: Whether a solver that can (the free-flyer's ``step_holding``) holds the finished worlds inside its step's launch
#: instead of :func:`hold_finished_worlds` after it: one launch a tick fewer (five from 16 worlds), the same bits
#: (``tests/plant/test_hold_in_step.py`` flies both).
HOLD_IN_STEP = True


class Physics(Component):
    """The plant's clear, step and state stages around one Newton solver (MuJoCo or Featherstone)."""

    spec = PHYSICS_SPEC

    def __init__(self, plant: Plant, substeps: int = 1, name: str = "/plant"):
        super().__init__(name)
        if int(substeps) < 1:
            raise BuildError(f"substeps must be a positive whole number, got {substeps}")
        self.plant = plant
        self.substeps = int(substeps)
        self.observables = None
        self.requested: frozenset[str] = frozenset()
        #: The taped run this component's stages are bound to (None: they fly the plant's live arrays).
        self._taped: TapedPlant | None = None
        model = plant.model
        self._bodies = [(path, index) for path, index in sorted(plant.body_index.items(), key=lambda item: item[1])]
        self._joints = [
            (rotor.joint_path, rotor.coord, rotor.dof) for rotor in plant.rotors
        ]
        self._body_com = model.body_com

    def signal_for_body(self, path: str) -> str:
        return f"body/{self.plant.body_label(path)}"

    def signal_for_joint(self, path: str) -> str:
        return f"joints/{self.plant.body_label(path)}"

    def _write(self, port: Output, path: str):
        """``port`` as this body's or joint's write: the template's ``{label}`` is the prim's name."""
        return replace(port, signal=port.signal.format(label=self.plant.body_label(path))).write(self, prim=path)

    def stages(self) -> list[Stage]:
        body_writes = tuple(self._write(BASE_BODY if p == self.plant.base_path else OTHER_BODY, p)
                            for p, _ in self._bodies)
        joint_writes = tuple(self._write(ROTOR_JOINT, p) for p, _, _ in self._joints)
        # The step reads each world's clock, to hold the worlds that are done or failed (see
        # ``hold_finished_worlds``), and can end a world whose state is no longer finite.
        step_reads = (Read("running", wp.int32, (1,), default=1), Read("tick", wp.int64, (1,)))
        return [
            Stage("clear", "clear", self._clear),
            Stage("step", "step", self._step, reads=step_reads, finishes=True),
            Stage("state", "state", self._publish, writes=body_writes + joint_writes),
        ]

    def prepare(self, ctx) -> None:
        if ctx.worlds != self.plant.worlds:
            # Every plant kernel launches over the plant's worlds and indexes the ring's per-world arrays
            # (``running``, ``tick``, the done flags, each signal) by world: in a ring of another world count
            # they read and write past those arrays' ends (on the CPU a corrupted heap that aborts later in
            # ``free``, after MuJoCo's nefc overflow warnings from the garbage state).
            raise BuildError(
                f"{self.plant.vehicle_path}: the plant flies {self.plant.worlds} world"
                f"{'s' if self.plant.worlds != 1 else ''} but the ring was built for {ctx.worlds}; build the Loop with "
                f"worlds={self.plant.worlds}, as assemble(..., worlds=N) was"
            )
        kinds: set[str] = set()
        for component in ctx.components:
            kinds.update(getattr(component, "solver_observables", ()) or ())
        solver = self.plant.solver
        own = NEXUS_OBSERVABLES.get(self.plant.solver_name, frozenset())  # what Nexus computes for this solver
        supported = set(solver.supported_observables) | own
        unsupported = sorted(kinds - supported)
        if unsupported:
            readers = [c.name for c in ctx.components if set(getattr(c, "solver_observables", ()) or ()) & set(unsupported)]
            raise BuildError(
                f"{readers} need solver observables {unsupported}, which --solver {self.plant.solver_name} does not "
                f"provide (it supports {sorted(supported)})"
            )
        self.requested = frozenset(kinds)
        asked = set(kinds) - own
        # Allocated once, before capture; every step gets this same container.
        self.observables = solver.observables(asked) if asked else None
        self.dt_sub = ctx.dt / self.substeps
        self._qdd = self.observables.body_qdd if self.observables is not None and "body_qdd" in asked else None
        #: With a solver that lacks ``body_qdd``: the twists before the step and the step-average acceleration.
        self._qd_before = self._own_qdd = None
        if "body_qdd" in kinds and "body_qdd" in own:
            body_qd = self.plant.state.body_qd
            self._qd_before = wp.zeros_like(body_qd)
            self._own_qdd = self._qdd = wp.zeros_like(body_qd)
        state = self.plant.state
        self._held = [wp.clone(a) for a in (state.joint_q, state.joint_qd, state.body_q, state.body_qd)]
        #: Whether the solver holds the finished worlds in its own step's launch (the free-flyer, one substep:
        #: the hold checks the state once a tick), rather than in ``hold_finished_worlds`` after it.
        self._hold_in_step = HOLD_IN_STEP and self.substeps == 1 and hasattr(self.plant.solver, "step_holding")
        #: The tick each world's state stopped being finite (-1: never) [int64, (worlds,)].
        self.failed_tick = wp.full(self.plant.worlds, -1, dtype=wp.int64, device=ctx.device)

    def external_state(self) -> dict[str, wp.array]:
        """Every array of plant state one tick hands the next, for snapshots (see the module doc).

        Newton's ``State`` (body poses, twists and wrenches, joint coordinates and speeds) and
        ``Control`` (joint torques, servo targets and feed-forward), the ESCs' lagged speed
        ``Plant.esc_speed`` (the plant's array rather than declared ESC state, because one fused
        launch updates every ESC's element of it), the NED origin start-up wrote, and MuJoCo
        Warp's carried data (:data:`MUJOCO_CARRIED`).
        """
        plant = self.plant
        arrays: dict[str, wp.array] = {}
        for owner, container in (("state", plant.state), ("control", plant.control)):
            for name, value in vars(container).items():
                if isinstance(value, wp.array):
                    arrays[f"{owner}.{name}"] = value
        arrays["esc_speed"] = plant.esc_speed
        for name, array in zip(("joint_q", "joint_qd", "body_q", "body_qd"), self._held):
            arrays[f"held.{name}"] = array
        arrays["failed_tick"] = self.failed_tick
        arrays["ned_origin"] = plant.ned_origin
        if self._own_qdd is not None:
            arrays["body_qdd"] = self._own_qdd
        if plant.solver_name == "freeflyer":  # the momentum and spins it carries (nexus.plant.freeflyer)
            for name, array in plant.solver.carried().items():
                arrays[f"freeflyer.{name}"] = array
        if plant.solver_name == "mujoco":
            data = plant.solver.mjw_data
            for name in MUJOCO_CARRIED:
                arrays[f"mujoco.{name}"] = getattr(data, name)
        return arrays

    def tick_copies(self) -> TapedPlant:
        """The plant's state one copy per tick, for a taped run (:class:`TapedPlant`; Featherstone only)."""
        return TapedPlant(self)

    def _clear(self, io) -> None:
        if self._taped is None:
            self.plant.servo_ran = False
        body_f, joint_f = self.plant.state.body_f, self.plant.control.joint_f
        if self._taped is not None or wp.get_device(io.device).is_cpu:
            # Memsets: nothing on a tape to carry back, and on the CPU a captured memset replays in about 0.01 µs
            # where a launch costs 0.1-0.2 µs (docs/benchmarking.md, "What bounds the one-world tick").
            body_f.zero_()
            joint_f.zero_()
            return
        wp.launch(clear_applied, max(body_f.shape[0], joint_f.shape[0]), inputs=[body_f, joint_f], device=io.device)

    def _step(self, io) -> None:
        if self._taped is not None:
            self._taped.step(io)
            return
        plant = self.plant
        if self._hold_in_step:
            self._servos()
            plant.solver.step_holding(plant.state, plant.control, self.dt_sub, self.observables, io["running"],
                                      io["tick"], io.done, self.failed_tick, int(FAILED))
            return
        if self._own_qdd is not None:
            wp.copy(self._qd_before, plant.state.body_qd)
        for substep in range(self.substeps):
            if substep:
                plant.control.joint_f.zero_()  # the servos add their torque afresh each substep
            self._servos()
            if plant.collision is not None:
                plant.collision.collide(plant.state, plant.contacts)
            plant.solver.step(plant.state, plant.state_out, plant.control, plant.contacts, self.dt_sub,
                              observables=self.observables)
        state = plant.state
        if self._own_qdd is not None:  # over the whole tick: the acceleration the IMU samples once a tick
            wp.launch(step_average_acceleration, state.body_qd.shape[0],
                      inputs=[self._qd_before, state.body_qd, 1.0 / (self.dt_sub * self.substeps)],
                      outputs=[self._own_qdd], device=io.device)
        by_copy = plant.worlds >= HOLD_BY_COPY_WORLDS
        live = (state.joint_q, state.joint_qd, state.body_q, state.body_qd)
        wp.launch(
            hold_finished_worlds, plant.worlds,
            inputs=[io["running"], io["tick"], plant.coords_per_world, plant.dofs_per_world, plant.bodies_per_world,
                    0 if by_copy else 1, *live, *self._held],
            outputs=[io.done, self.failed_tick], device=io.device,
        )
        if by_copy:
            for held, array in zip(self._held, live):
                wp.copy(held, array)

    def _servos(self) -> None:
        """The rotors' servos ahead of a (sub)step, unless this tick's ESC launch ran them (``esc_servo_all``)."""
        plant = self.plant
        if not plant.servo_ran:
            for actuator in plant.actuators:
                actuator.step(plant.state, plant.control, dt=self.dt_sub)
        plant.servo_ran = False

    def _publish(self, io) -> None:
        state = self.plant.state_out
        own = self._qdd if self._taped is None else self._taped.qdd
        qdd = own if own is not None else state.body_qd  # placeholder array when not requested
        has_qdd = 1 if own is not None else 0
        # Only what some stage reads is published: each launch costs time in every tick.
        worlds = self.plant.worlds
        for path, index in self._bodies:
            if not io.is_read(self.signal_for_body(path)):
                continue
            wp.launch(
                publish_body, worlds,
                inputs=[state.body_q, state.body_qd, qdd, self._body_com, index, self.plant.bodies_per_world, has_qdd],
                outputs=[io[self.signal_for_body(path)]], device=io.device,
            )
        for path, coord, dof in self._joints:
            if not io.is_read(self.signal_for_joint(path)):
                continue
            wp.launch(
                publish_joint, worlds,
                inputs=[state.joint_q, state.joint_qd, coord, dof, self.plant.coords_per_world, self.plant.dofs_per_world],
                outputs=[io[self.signal_for_joint(path)]], device=io.device,
            )


@wp.kernel
def copy_floats(source: wp.array(dtype=float), target: wp.array(dtype=float)):
    """``target`` <- ``source`` on the tape, with a kernel's adjoint (see :meth:`TapedPlant.start`)."""
    i = wp.tid()
    target[i] = source[i]


@dataclass
class PlantBoundary:
    """What one tick of the plant hands the next on a taped run: Newton's state and the ESCs' lagged speeds."""

    state: Any
    speed: wp.array


@dataclass
class PlantScratch:
    """What one tick of the plant writes and the next does not read, kept for the backward pass: Newton's control,
    the step-average acceleration, the wrench the step read, Featherstone's per-step arrays and the servos' force
    buffers (a kernel's adjoint re-reads its inputs; a buffer reused every step would hold the last step's by then)."""

    control: Any
    qdd: wp.array
    applied_wrench: wp.array
    solver: dict
    servos: list


class TapedPlant(ExternalCopies):
    """The plant's own state one copy per tick, for a taped run (:class:`nexus.core.taped.TickCopies`).

    Newton's ``State`` and the ESCs' lagged speeds are a tick's boundary; its ``Control``, the step-average
    acceleration, Featherstone's scratch arrays (mass matrix ``M``, Jacobian ``J``, ``P``, ``H`` and the
    Cholesky factor ``L``) and the rotor servos' force buffers are its scratch. :meth:`bind` points the plant
    (``state``, ``state_out``, ``control``, ``esc_speed``, ``esc_speed_out``), the solver and the servos at a
    tick's copies, so the ESC, propeller, servo and step stages write them without knowing; the step then
    runs Featherstone from one state into the next (no contact: a taped run starts in the air, contacts are
    not differentiated) and puts the applied wrench back before that step's adjoint (:meth:`_restorer`).

    The start (:meth:`start`, on the tape) derives the solver's inertia from the model's mass and inertia and
    the start's bodies from ``initial_q`` and ``initial_qd``, the start coordinates and speeds the gradient
    reaches (``init.*`` parameters).
    """

    def __init__(self, physics: Physics):
        plant = physics.plant
        if plant.solver_name != "featherstone":
            raise BuildError(f"a taped run steps Featherstone; this plant steps {plant.solver_name} "
                             "(use --solver featherstone)")
        if physics.substeps != 1:
            raise BuildError(f"a taped run steps the plant once a tick; this one takes {physics.substeps} substeps")
        self.physics, self.plant = physics, plant
        model = plant.model
        #: The start's joint coordinates and speeds, copied into the first boundary on the tape.
        self.initial_q = wp.clone(plant.state.joint_q, requires_grad=True)
        self.initial_qd = wp.clone(plant.state.joint_qd, requires_grad=True)
        self._live = (plant.state, plant.state_out, plant.control, plant.esc_speed, plant.esc_speed_out)
        solver = plant.solver
        self._live_solver = internals.featherstone_scratch(solver)
        self._live_servos = [internals.servo_forces(a) for a in plant.actuators]
        self._boundaries = 0
        self._model = model
        self.scratch_now: PlantScratch | None = None
        self._tape: wp.Tape | None = None

    @property
    def qdd(self) -> wp.array | None:
        """The bound tick's step-average acceleration (what the state stage publishes)."""
        return self.scratch_now.qdd if self.scratch_now is not None else None

    def boundary(self) -> PlantBoundary:
        plant, model = self.plant, self._model
        state = model.state(requires_grad=True)
        if self._boundaries:  # a state a step writes: Featherstone's per-state arrays, allocated now (counted)
            internals.allocate_featherstone_state(plant.solver, model, state)
        else:  # the first: the plant's start, as reset left it
            wp.copy(state.joint_q, plant.state.joint_q)
            wp.copy(state.joint_qd, plant.state.joint_qd)
        self._boundaries += 1
        speed = wp.clone(plant.esc_speed, requires_grad=True)
        return PlantBoundary(state, speed)

    def scratch(self) -> PlantScratch:
        model, solver, device = self._model, self.plant.solver, self.plant.device
        return PlantScratch(
            control=model.control(requires_grad=True),
            qdd=wp.zeros(model.body_count, dtype=wp.spatial_vector, device=device, requires_grad=True),
            applied_wrench=wp.zeros(model.body_count, dtype=wp.spatial_vector, device=device),  # no gradient
            solver={name: wp.zeros_like(array, requires_grad=True)
                    for name, array in internals.featherstone_scratch(solver).items()},
            servos=[tuple(wp.zeros_like(forces, requires_grad=True) for forces in internals.servo_forces(a))
                    for a in self.plant.actuators],
        )

    def bind(self, before: PlantBoundary, after: PlantBoundary, scratch: PlantScratch, tape) -> None:
        plant = self.plant
        plant.state, plant.state_out, plant.control = before.state, after.state, scratch.control
        plant.esc_speed, plant.esc_speed_out = before.speed, after.speed
        internals.bind_featherstone_scratch(plant.solver, scratch.solver)
        for actuator, (computed, applied) in zip(plant.actuators, scratch.servos):
            internals.bind_servo_forces(actuator, computed, applied)
        self.scratch_now, self._tape = scratch, tape
        self.physics._taped = self

    def start(self, boundary: PlantBoundary, tape) -> None:
        self.plant.solver.notify_model_changed(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)
        state, device = boundary.state, self.plant.device
        # A kernel, not wp.copy: the adjoint Warp 1.19 records for a taped wp.copy gave wrong gradients when
        # the backward pass was captured on the CPU (every tick's earlier adjoints changed); a kernel's adjoint
        # captures like any other launch.
        for target, initial in ((state.joint_q, self.initial_q), (state.joint_qd, self.initial_qd)):
            wp.launch(copy_floats, target.shape[0], inputs=[initial], outputs=[target], device=device)
        newton.eval_fk(self._model, state.joint_q, state.joint_qd, state)

    def parameters_changed(self) -> None:
        """Featherstone's inertia buffers follow the model's mass and inertia."""
        self.plant.solver.notify_model_changed(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)

    def carried(self, boundary: PlantBoundary) -> dict[str, wp.array]:
        arrays = {f"state.{name}": a for name, a in vars(boundary.state).items()
                  if isinstance(a, wp.array) and a.grad is not None}
        arrays["esc_speed"] = boundary.speed
        return arrays

    def checkpointed(self, boundary: PlantBoundary) -> dict[str, wp.array]:
        state = boundary.state
        return {"joint_q": state.joint_q, "joint_qd": state.joint_qd, "body_q": state.body_q,
                "body_qd": state.body_qd, "esc_speed": boundary.speed}

    def release(self) -> None:
        plant = self.plant
        plant.state, plant.state_out, plant.control, plant.esc_speed, plant.esc_speed_out = self._live
        internals.bind_featherstone_scratch(plant.solver, self._live_solver)
        for actuator, (computed, applied) in zip(plant.actuators, self._live_servos):
            internals.bind_servo_forces(actuator, computed, applied)
        self.scratch_now, self._tape = None, None
        self.physics._taped = None

    def step(self, io) -> None:
        """The step stage on a taped run: the servos, Featherstone from ``state`` into ``state_out``, the
        step-average acceleration."""
        plant, physics, device = self.plant, self.physics, io.device
        state, after, control, scratch = plant.state, plant.state_out, plant.control, self.scratch_now
        dt = physics.dt_sub
        for actuator in plant.actuators:
            actuator.step(state, control, dt=dt)
        if self._tape is not None:
            wp.copy(scratch.applied_wrench, state.body_f)  # no gradient: not on the tape
        plant.solver.step(state, after, control, None, dt)
        if self._tape is not None:
            self._tape.record_func(self._restorer(scratch.applied_wrench, after, control), [after.body_f_ext])
        wp.launch(step_average_acceleration, self._model.body_count, inputs=[state.body_qd, after.body_qd, 1.0 / dt],
                  outputs=[scratch.qdd], device=device)

    def _restorer(self, applied: wp.array, after, control):
        """What the tape runs, in the backward pass, just before the adjoints of the step that wrote ``after``:
        the applied wrenches put back into Featherstone's ``body_f_ext`` as the step read them.

        Featherstone's ``eval_rigid_tau`` (Newton 1.8) reads each body's applied wrench (world frame, at the
        centre of mass) from ``body_f_ext`` and writes the solve-frame wrench over it. Warp's adjoint of a
        kernel runs the kernel's forward code again first, so it read the converted wrench: the moment arm's
        adjoint (``cross(x_com, force)``) used minus the force, and the gradient of every rotor's moment with
        respect to the body's pose had the wrong sign. The wrench is rebuilt as the step built it: ``applied``
        (the state's ``body_f``, copied before the step, because the propellers' adjoint rewrites ``body_f``
        in the backward pass), then the free joints' ``joint_f``. The same bits as the forward pass read.
        """
        model, device = self._model, self.plant.device
        wrench = after.body_f_ext

        def restore() -> None:
            wp.copy(wrench, applied)
            if model.joint_count:
                internals.add_free_joint_wrenches(model, control.joint_f, wrench, device)

        return restore

