"""The differentiable rollout: the PID flight's kernels over T ticks, one state per tick, on a ``wp.Tape``.

Each tick runs what the eager ring runs, in ring order and with the same
kernels, on arrays of its own:

    ESC (``esc_command_all``) -> propellers (``propeller_wrench_all``) -> rotor servos
    (Newton's actuators) -> ``SolverFeatherstone.step`` -> step-average body acceleration
    -> ``publish_body`` -> IMU (``sample_imu``) -> truth estimator -> PID (``pid_control``)

Tick k reads state k and writes state k + 1 (plant state, ESC speeds, PID
integrators, sensor schedules and IMU bias, the controls row), so no array
is written twice and the tape can carry every gradient back. Scratch arrays
that Newton's servos and Featherstone reuse every step (its mass matrix and
Cholesky factor, the servos' force buffers) are also given one copy per tick:
a kernel's adjoint re-reads its inputs, and a reused buffer would hold the
last step's values by then.

What differs from a run: no clock or guidance stage (times and setpoints are
tables fixed before the tape, since no parameter changes them), no ground
contact (start in the air: contact forces are not differentiated), no
magnetometer, barometer or GPS (nothing in the PID ring reads them), and no
record. The components are the vehicle's own, built and prepared by an eager
:class:`~nexus.core.Loop`, so their parameters, seeds and reset values are a
run's.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.assembly import assemble
from nexus.control.pid import PidController, PidState, pid_control
from nexus.core import Loop
from nexus.core.errors import BuildError
from nexus.diff.losses import ENERGY_TRACKING_WEIGHT, LOSSES, add_power_loss, add_tracking_loss
from nexus.diff.params import (
    AXES, PID_GAINS, Slot, canonical, element_slot, known_names, pid_slot, unknown_parameter,
)
from nexus.diff.references import Reference, reference_for
from nexus.diff.refusals import refuse_undifferentiable
from nexus.estimation.pose_twist import PoseTwist
from nexus.estimation.truth import TruthEstimator, truth_estimate
from nexus.guidance.setpoint import Setpoint
from nexus.plant.body_state import BodyState
from nexus.plant.esc import Esc, esc_command_all
from nexus.plant.frames import attitude_ned_frd_np, yaw_ned_np
from nexus.plant.hover import command_for_speed, hover_speed
from nexus.plant.physics import publish_body
from nexus.plant.propeller import Propeller, propeller_wrench_all
from nexus.plant.solvers import step_average_acceleration
from nexus.roles import FLIGHT_RULES
from nexus.sensors.imu import Imu, sample_imu
from nexus.sensors.samples import ImuSample

#: Height of the start above the ground [m] unless a rollout asks for another: in the air, clear of contact.
DEFAULT_START_HEIGHT = 1.0


class Trajectory:
    """A rollout's per-tick values as NumPy arrays, leading axes (tick, world).

    ``position`` [m, NED from the start], ``velocity`` [m/s, NED], ``attitude``
    (FRD->NED quaternion x, y, z, w), ``rates`` [rad/s, FRD], ``controls`` (the
    first four ESC commands written by the PID), ``speed`` [rad/s] (each ESC's
    lagged speed), ``accel`` and ``gyro`` (the IMU's samples [m/s², rad/s, FRD]),
    ``goal`` [m, NED] and ``yaw_goal`` [rad].
    """

    def __init__(self, rollout: Rollout):
        est = np.stack([a.numpy() for a in rollout.estimates])
        self.position = np.array(est["position"])
        self.velocity = np.array(est["velocity"])
        self.attitude = np.array(est["attitude"])
        self.rates = np.array(est["rates"])
        self.controls = np.stack([a.numpy()[:, :4] for a in rollout.controls[1:]])
        self.speed = np.stack([a.numpy().reshape(rollout.worlds, -1) for a in rollout.speeds[1:]])
        imu = np.stack([a.numpy() for a in rollout.imu_samples])
        self.accel = np.array(imu["accel"])
        self.gyro = np.array(imu["gyro"])
        self.goal = rollout.reference.position
        self.yaw_goal = rollout.reference.yaw


class Rollout:
    """``ticks`` ticks of the PID flight on Featherstone, differentiable with respect to named parameters.

    ``worlds`` copies fly at once (each from its own start: ``start_offsets``
    [m, world ENU], one row per world, added to the start); a loss is their mean.
    ``loss`` names the reference the vehicle follows and the loss measured
    (:data:`nexus.diff.losses.LOSSES`); ``reference`` replaces the table.
    ``noise`` False zeroes the IMU's noise; True draws it from the run's
    ``seed`` (the gradient is then of that one noise realisation).
    ``controller`` and ``solver`` exist to be refused: only ``pid`` on
    ``featherstone`` is differentiable. ``capture`` replays graphs after the
    first run (see :meth:`forward`). ``window`` truncates back-propagation
    through time: a loss term's gradient reaches back at most to the start of
    its window of that many ticks (against gradients that grow over long
    horizons); None goes through the whole rollout.
    """

    def __init__(
        self,
        ticks: int,
        *,
        worlds: int = 1,
        vehicle: str = "astro_max_base",
        scene: str = "empty",
        tick_hz: float = 250.0,
        loss: str = "altitude",
        reference: Reference | None = None,
        start_height: float = DEFAULT_START_HEIGHT,
        start_offsets=None,
        noise: bool = False,
        seed: int = 0,
        device: str = "cpu",
        controller: str = "pid",
        solver: str = "featherstone",
        capture: bool = True,
        window: int | None = None,
    ):
        if isinstance(ticks, bool) or not isinstance(ticks, int) or ticks < 1:
            raise BuildError(f"a rollout needs a whole number of ticks, 1 or more; got {ticks!r}")
        if isinstance(worlds, bool) or not isinstance(worlds, int) or worlds < 1:
            raise BuildError(f"a rollout needs a whole number of worlds, 1 or more; got {worlds!r}")
        if loss not in LOSSES:
            raise BuildError(f"--loss {loss}: unknown loss; choose one of {', '.join(LOSSES)}")
        if not start_height > 0.2:
            raise BuildError(f"start height {start_height} m: a rollout starts in the air (no contact is "
                             "differentiated); give more than 0.2 m")
        if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
            raise BuildError(f"--window {window!r}: give a whole number of ticks, 1 or more (or none: the whole rollout)")
        refuse_undifferentiable(solver, controller, vehicle, scene, device)
        #: Truncated back-propagation: the gradient of a loss term goes back at most to the start of its
        #: window of ``window`` ticks (None: through the whole rollout).
        self.truncate = window is not None and window < ticks
        self.window = window if self.truncate else ticks
        self.tapes: list[wp.Tape] = []
        self.ticks, self.worlds, self.loss_name, self._noise, self.device = ticks, worlds, loss, bool(noise), device
        self.vehicle = assemble(vehicle, scene, device=device, worlds=worlds, solver="featherstone", requires_grad=True)
        # Built (checked, allocated, prepared) but never ticked: the rollout runs its kernels itself.
        self.loop = Loop(self.vehicle.components, device=device, tick_hz=tick_hz, seed=seed, mode="eager",
                         rules=FLIGHT_RULES, worlds=worlds)
        self.loop.build()
        self.dt = self.loop.dt_ns * 1e-9
        reference = reference or reference_for(loss, ticks, self.dt)
        if len(reference.position) != ticks or len(reference.yaw) != ticks:
            raise BuildError(f"the reference holds {len(reference.position)} ticks for a rollout of {ticks}")
        self._find_components()
        self._start_state(start_height, start_offsets)
        #: The goals as flown: the reference's headings are relative to the start heading.
        self.reference = Reference(np.asarray(reference.position, dtype=np.float64),
                                   np.asarray(reference.yaw, dtype=np.float64) + self.start_heading)
        self._allocate()
        self._slots = self._make_slots()
        self._grads_of_ticks: list[wp.array] = []
        self.tape: wp.Tape | None = None
        self.loss = wp.zeros(1, dtype=float, device=device, requires_grad=True)
        #: Replay captured graphs after the first run (False: launch kernel by kernel every time).
        self.capture = bool(capture)
        self._graphs: dict[str, object] = {}
        self._warm: set[str] = set()
        self._recorded = False

    # -- set-up ----------------------------------------------------------------------------

    def _find_components(self) -> None:
        comps = self.loop.components
        self.plant = self.vehicle.plant
        self.physics = self.vehicle.physics
        self.pid = next(c for c in comps if isinstance(c, PidController))
        self.esc = next(c for c in comps if isinstance(c, Esc))
        self.propeller = next(c for c in comps if isinstance(c, Propeller))
        self.estimator = next(c for c in comps if isinstance(c, TruthEstimator))
        self.imu = next((c for c in comps if isinstance(c, Imu) and c.body == "base"), None)
        if self.esc.leader is not self.esc or self.propeller.leader is not self.propeller:
            raise BuildError(f"{self.plant.vehicle_path}: the rollout drives the ESCs and propellers as one launch "
                             "each; this vehicle's do not fuse (they read different controls or share a body)")
        for array in (self.pid.params, self.esc.fused[7], self.esc.fused[8], self.propeller.fused[3]):
            array.requires_grad = True

    def _start_state(self, height: float, offsets) -> None:
        """Hover ``height`` [m] above the origin (plus each world's offset), rotors at hover speed."""
        plant, n = self.plant, self.worlds
        start = np.zeros((n, 3))
        start[:, 2] = height
        if offsets is not None:
            offsets = np.asarray(offsets, dtype=np.float64)
            if offsets.shape != (n, 3):
                raise BuildError(f"start offsets of shape {offsets.shape}: give one (x, y, z) row [m] per world, "
                                 f"shape ({n}, 3)")
            start = start + offsets
        self.start = start
        self.hover_speed = hover_speed(plant)
        self.hover_command = command_for_speed(plant, self.hover_speed)
        plant.reset(base_position=start, rotor_speed=self.hover_speed)
        plant.ned_origin.assign(start.astype(np.float32))
        base_rotation = plant.state.body_q.numpy()[plant.base][3:]
        #: The base's heading at the start [rad, NED] (the vehicle file's front points east: π/2).
        self.start_heading = float(yaw_ned_np(attitude_ned_frd_np(base_rotation)))

    def _allocate(self) -> None:
        """One array per tick for everything a tick writes; tables for time and setpoints."""
        model, n, t, dev = self.plant.model, self.worlds, self.ticks, self.device
        plant = self.plant
        self.states = [model.state(requires_grad=True) for _ in range(t + 1)]
        wp.copy(self.states[0].joint_q, plant.state.joint_q)
        wp.copy(self.states[0].joint_qd, plant.state.joint_qd)
        self.initial_q = wp.clone(plant.state.joint_q)
        self.initial_qd = wp.clone(plant.state.joint_qd)
        self.sim_controls = [model.control(requires_grad=True) for _ in range(t)]
        rotors = len(plant.rotors)
        self.speeds = [wp.zeros(n * rotors, dtype=float, device=dev, requires_grad=True) for _ in range(t + 1)]
        self.speeds[0].assign(np.full(n * rotors, self.hover_speed, dtype=np.float32))
        self.qdd = [wp.zeros(model.body_count, dtype=wp.spatial_vector, device=dev, requires_grad=True)
                    for _ in range(t)]
        self.bodies = [wp.zeros(n, dtype=BodyState, device=dev, requires_grad=True) for _ in range(t)]
        self.estimates = [wp.zeros(n, dtype=PoseTwist, device=dev, requires_grad=True) for _ in range(t)]
        self.imu_samples = [wp.zeros(n, dtype=ImuSample, device=dev, requires_grad=True) for _ in range(t)]
        self.pid_states = [wp.zeros((n, 1), dtype=PidState, device=dev, requires_grad=True) for _ in range(t + 1)]
        self.controls = [wp.zeros((n, 16), dtype=float, device=dev, requires_grad=True) for _ in range(t + 1)]
        first = np.zeros((n, 16), dtype=np.float32)
        first[:, :rotors] = self.hover_command
        self.controls[0].assign(first)
        self.truth_schedules = [wp.zeros((n, 3), dtype=wp.int64, device=dev) for _ in range(t + 1)]
        self.imu_schedules = [wp.zeros((n, 3), dtype=wp.int64, device=dev) for _ in range(t + 1)]
        bias = self.loop.states.of(self.imu)["bias"] if self.imu is not None else None
        self.imu_bias = [wp.zeros((n, 2), dtype=wp.vec3, device=dev, requires_grad=True) for _ in range(t + 1)]
        if bias is not None:
            wp.copy(self.imu_bias[0], bias)
        # The clock's values for ticks 1 .. t (tick k+1 is the k-th of the rollout), as the clock kernel writes them.
        count = np.arange(1, t + 1, dtype=np.int64)
        now_ns = count * self.loop.dt_ns
        self.tick_table = wp.array(np.repeat(count[:, None], n, 1), dtype=wp.int64, device=dev)
        self.time_ns_table = wp.array(np.repeat(now_ns[:, None], n, 1), dtype=wp.int64, device=dev)
        self.time_table = wp.array(np.repeat((now_ns.astype(np.float64) / 1.0e9)[:, None], n, 1), dtype=wp.float64,
                                   device=dev)
        goals = []
        for k in range(t):
            for _ in range(n):
                s = Setpoint()
                s.position = wp.vec3(*(float(x) for x in self.reference.position[k]))
                s.yaw = float(self.reference.yaw[k])
                goals.append(s)
        self.setpoint_table = wp.array(goals, dtype=Setpoint, device=dev).reshape((t, n))
        self.armed = wp.ones(n, dtype=wp.int32, device=dev)
        # Newton's per-step scratch, one copy per tick (see the module doc).
        solver = plant.solver
        self._solver_scratch = [{name: wp.zeros_like(getattr(solver, name), requires_grad=True)
                                 for name in ("M", "J", "P", "H", "L")} for _ in range(t)]
        self._servo_scratch = [[(wp.zeros_like(a._computed_forces, requires_grad=True),
                                 wp.zeros_like(a._applied_forces, requires_grad=True)) for a in plant.actuators]
                               for _ in range(t)]

    def _make_slots(self) -> dict[str, Slot]:
        plant, n = self.plant, self.worlds
        slots: dict[str, Slot] = {}
        for gain in PID_GAINS:
            for axis in ("x", "y", "z"):
                name = f"pid.{gain}.{axis}"
                slots[name] = pid_slot(name, self.pid.params, gain, AXES[axis])
        model = plant.model
        bases = [plant.base + w * plant.bodies_per_world for w in range(n)]
        slots["mass"] = element_slot("mass", model.body_mass, [(b,) for b in bases], "kg")
        for i, axis in enumerate(("xx", "yy", "zz")):
            slots[f"inertia.{axis}"] = element_slot(f"inertia.{axis}", model.body_inertia, [(b, i, i) for b in bases],
                                                    "kg m^2")
        for i in range(len(plant.rotors)):
            slots[f"rotor{i + 1}.kt"] = element_slot(f"rotor{i + 1}.kt", self.propeller.fused[3], [(i,)],
                                                     "N/(rad/s)^2")
        rotors = range(len(plant.rotors))
        slots["esc.tau_up"] = element_slot("esc.tau_up", self.esc.fused[7], [(i,) for i in rotors], "s")
        slots["esc.tau_down"] = element_slot("esc.tau_down", self.esc.fused[8], [(i,) for i in rotors], "s")
        q0 = plant._base_coord
        d0 = plant._base_dof
        for i, axis in enumerate("xyz"):
            coords = [(q0 + w * plant.coords_per_world + i,) for w in range(n)]
            dofs = [(d0 + w * plant.dofs_per_world + i,) for w in range(n)]
            slots[f"init.{axis}"] = element_slot(f"init.{axis}", self.initial_q, coords, "m")
            slots[f"init.v{axis}"] = element_slot(f"init.v{axis}", self.initial_qd, dofs, "m/s")
        return slots

    @property
    def noise(self) -> bool:
        """Whether the IMU draws its noise (from the run's seed); changing it drops the captured graphs."""
        return self._noise

    @noise.setter
    def noise(self, value: bool) -> None:
        self._noise = bool(value)
        self._graphs.clear()
        self._warm.clear()

    # -- parameters ------------------------------------------------------------------------

    def slot(self, name: str) -> Slot:
        found = self._slots.get(canonical(name))
        if found is None:
            raise unknown_parameter(name, len(self.plant.rotors))
        return found

    @property
    def parameter_names(self) -> list[str]:
        return known_names(len(self.plant.rotors))

    def get(self, name: str) -> float:
        """A parameter's current value (world 0's where each world holds a copy)."""
        slot = self.slot(name)
        return slot.get(slot.array.numpy())

    def set(self, name: str, value: float) -> None:
        """Set a parameter everywhere it lives (every world, every ESC it is shared by)."""
        slot = self.slot(name)
        host = slot.array.numpy().copy()
        slot.put(host, float(value))
        slot.array.assign(host)
        if slot.array is self.plant.model.body_mass or slot.array is self.plant.model.body_inertia:
            self.plant.solver._update_body_inertial_buffers()

    def gradient(self, name: str) -> float:
        """d loss / d parameter after :meth:`backward` (the sum over the elements that share it)."""
        slot = self.slot(name)
        if slot.array.grad is None:
            return 0.0
        return slot.grad(slot.array.grad.numpy())

    # -- running ---------------------------------------------------------------------------

    def forward(self, record: bool = False) -> float:
        """Run the ticks and the loss (recorded on the tape when ``record``); returns the loss.

        A taped run launches kernel by kernel. The first plain run does too (it also lets Featherstone
        allocate its per-state arrays); later plain runs replay a graph captured from the same launches,
        which costs a fraction of the Python launch overhead and gives the same bits on the CPU.
        """
        key = "tape" if record else "plain"
        # A taped run is never captured: measured, the gradients of a tape recorded while capturing
        # differed from the eager tape's (the loss was the same); not understood yet (docs/differentiable.md).
        if not self.capture or record:
            self._execute(record)
        elif key not in self._graphs and key not in self._warm:
            self._execute(record)
            self._warm.add(key)
        else:
            if key not in self._graphs:
                with wp.ScopedCapture(device=self.device) as capture:
                    self._execute(record)
                self._graphs[key] = capture.graph
            wp.capture_launch(self._graphs[key])
        self._recorded = record
        return float(self.loss.numpy()[0])

    def _execute(self, record: bool) -> None:
        self.loss.zero_()
        if not record:
            self._start()
            for k in range(self.ticks):
                self._tick(k)
                self._add_loss(k)
            return
        # One tape per window (the whole rollout without ``window``), so backward() can cut the
        # gradient at a window's first tick.
        self.tapes = []
        for first in range(0, self.ticks, self.window):
            tape = wp.Tape()
            with tape:
                if first == 0:
                    self._start()
                for k in range(first, min(first + self.window, self.ticks)):
                    self._tick(k)
                    self._add_loss(k)
            self.tapes.append(tape)
        self.tape = self.tapes[0]

    def backward(self) -> None:
        """Carry the loss back to every parameter (after ``forward(record=True)``); gradients start from zero."""
        if not self._recorded or self.tape is None:
            raise RuntimeError("backward() needs forward(record=True) first")
        self._backward()

    def _backward(self) -> None:
        # Every gradient from zero: a tape zeroes only the adjoints it has handed out, and an array a
        # kernel adds into (a body's wrench) keeps its gradient after a backward pass.
        for tape in self.tapes:
            tape.zero()
        self._grads_of_ticks = [a for a in self._tick_arrays() if a.grad is not None]
        for array in [*self._grad_roots(), *self._grads_of_ticks]:
            array.grad.zero_()
        for index in range(len(self.tapes) - 1, -1, -1):
            self.tapes[index].backward(loss=self.loss)
            if self.truncate and index > 0:
                self._cut(index * self.window)

    def _cut(self, k: int) -> None:
        """Drop the gradient that reached tick ``k``'s carried state, so it goes no further back."""
        carried = [*vars(self.states[k]).values(), self.speeds[k], self.pid_states[k], self.controls[k],
                   self.imu_bias[k]]
        for array in carried:
            if isinstance(array, wp.array) and array.grad is not None:
                array.grad.zero_()

    def _grad_roots(self) -> list[wp.array]:
        """Arrays the tape reads but no recorded launch writes (parameters, the model): their gradients
        accumulate unless zeroed."""
        model = self.plant.model
        roots = [a for a in vars(model).values() if isinstance(a, wp.array) and a.grad is not None]
        roots += [slot.array for slot in self._slots.values()]
        return [a for a in dict.fromkeys(roots) if a.grad is not None]

    def value_and_gradients(self, names) -> tuple[float, dict[str, float]]:
        """The loss and its gradient with respect to each of ``names``."""
        for name in names:
            self.slot(name)
        value = self.forward(record=True)
        self.backward()
        return value, {name: self.gradient(name) for name in names}

    def _tick_arrays(self) -> list[wp.array]:
        """Every per-tick array (Newton's states and controls with Featherstone's per-state arrays, signals,
        component state, scratch), each once."""
        per_tick = [*self.states, *self.sim_controls, *self.speeds, *self.qdd, *self.bodies, *self.estimates,
                    *self.imu_samples, *self.pid_states, *self.controls, *self.truth_schedules, *self.imu_schedules,
                    *self.imu_bias]
        for scratch in self._solver_scratch:
            per_tick += list(scratch.values())
        for servos in self._servo_scratch:
            per_tick += [a for pair in servos for a in pair]
        arrays: dict[int, wp.array] = {}
        for item in per_tick:
            for value in ([item] if isinstance(item, wp.array) else vars(item).values()):
                if isinstance(value, wp.array) and value.ptr is not None:
                    arrays.setdefault(value.ptr, value)
        return list(arrays.values())

    def bytes_per_tick(self) -> float:
        """Memory the rollout keeps per tick [bytes]: every per-tick array and its gradient, averaged."""
        total = 0
        for array in self._tick_arrays():
            total += array.capacity + (array.grad.capacity if array.grad is not None else 0)
        return total / self.ticks

    def trajectory(self) -> Trajectory:
        """The last forward run's values per tick, on the host."""
        return Trajectory(self)

    def _start(self) -> None:
        """On the tape: the derived inertia (from mass and inertia) and the start state's bodies."""
        import newton  # noqa: PLC0415

        self.plant.solver._update_body_inertial_buffers()
        s0 = self.states[0]
        wp.copy(s0.joint_q, self.initial_q)
        wp.copy(s0.joint_qd, self.initial_qd)
        newton.eval_fk(self.plant.model, s0.joint_q, s0.joint_qd, s0)

    def _tick(self, k: int) -> None:
        plant, solver, dev, n = self.plant, self.plant.solver, self.device, self.worlds
        state, after, control = self.states[k], self.states[k + 1], self.sim_controls[k]
        rotors = len(plant.rotors)
        dt_sub = self.physics.dt_sub
        state.body_f.zero_()
        control.joint_f.zero_()
        esc = self.esc
        wp.launch(esc_command_all, dim=(n, rotors),
                  inputs=[self.controls[k], *esc.fused, esc.dt, *esc._strides, self.speeds[k]],
                  outputs=[self.speeds[k + 1], control.joint_target_qd, control.joint_act], device=dev)
        prop = self.propeller
        wp.launch(propeller_wrench_all, dim=(n, rotors),
                  inputs=[state.joint_qd, state.body_q, *prop.fused, *prop._strides, self.time_ns_table[k],
                          prop._variation],
                  outputs=[state.body_f], device=dev)
        for actuator, (computed, applied) in zip(plant.actuators, self._servo_scratch[k]):
            actuator._computed_forces, actuator._applied_forces = computed, applied
            actuator.step(state, control, dt=dt_sub)
        for name, array in self._solver_scratch[k].items():
            setattr(solver, name, array)
        solver.step(state, after, control, None, dt_sub)
        wp.launch(step_average_acceleration, model_bodies(plant),
                  inputs=[state.body_qd, after.body_qd, 1.0 / (dt_sub * self.physics.substeps)],
                  outputs=[self.qdd[k]], device=dev)
        wp.launch(publish_body, n,
                  inputs=[after.body_q, after.body_qd, self.qdd[k], plant.model.body_com, plant.base,
                          plant.bodies_per_world, 1],
                  outputs=[self.bodies[k]], device=dev)
        times = (self.time_table[k], self.time_ns_table[k])
        if self.imu is not None:
            imu = self.imu
            noise = imu._noise_args if self.noise else [wp.vec3(0.0), wp.vec3(0.0), 0.0, 0.0]
            wp.launch(sample_imu, n,
                      inputs=[self.bodies[k], *times, self.tick_table[k], wp.int64(imu.period_ns),
                              self.imu_schedules[k], self.imu_schedules[k + 1], imu.gravity, imu.mount, *noise,
                              imu.seeds, imu.noise_scale, self.imu_bias[k], self.imu_bias[k + 1]],
                      outputs=[self.imu_samples[k]], device=dev)
        est = self.estimator
        wp.launch(truth_estimate, n,
                  inputs=[self.bodies[k], plant.ned_origin, *times, wp.int64(est.period_ns), self.truth_schedules[k],
                          self.truth_schedules[k + 1]],
                  outputs=[self.estimates[k]], device=dev)
        pid = self.pid
        wp.launch(pid_control, dim=n,
                  inputs=[self.estimates[k], self.setpoint_table[k], self.armed, pid.params, self.pid_states[k],
                          float(pid.dt), pid.rotor_count],
                  outputs=[self.pid_states[k + 1], self.controls[k + 1]], device=dev)

    def _add_loss(self, k: int) -> None:
        scale = 1.0 / (self.ticks * self.worlds)
        kind = {"altitude": 0, "yaw": 1, "figure8": 2, "energy": 2}[self.loss_name]
        weight = ENERGY_TRACKING_WEIGHT if self.loss_name == "energy" else 1.0
        wp.launch(add_tracking_loss, self.worlds,
                  inputs=[self.estimates[k], self.setpoint_table[k], kind, scale * weight], outputs=[self.loss],
                  device=self.device)
        if self.loss_name == "energy":
            wp.launch(add_power_loss, self.worlds,
                      inputs=[self.speeds[k + 1], self.esc.fused[9], len(self.plant.rotors), scale],
                      outputs=[self.loss], device=self.device)


def model_bodies(plant) -> int:
    return plant.model.body_count


__all__ = ["DEFAULT_START_HEIGHT", "Rollout", "Trajectory"]
