"""The differentiable rollout: the vehicle's own ring over T ticks, one copy per tick, on a ``wp.Tape``.

The ticks are the ring's: :class:`nexus.core.taped.TickCopies` runs the built
ring's planned device stages, in ring order and with their own kernels, on
buffers of their own, one per tick for every signal written and every
declared state (tick k reads boundary k and writes boundary k + 1), so no
array is written twice and the tape carries every gradient back. For the PID
flight on Featherstone that is

    ESC -> propellers -> (any other force stage) -> rotor servos and Featherstone's step
    -> publish the base body -> IMU -> truth estimator -> PID

The plant keeps its state in Newton's own arrays; the physics component gives
them one copy per tick itself (:class:`nexus.plant.physics.TapedPlant`: Newton's
state and control, Featherstone's scratch, the servos' buffers, the wrench the
step's adjoint needs back, the inertia update). This module knows none of it:
it keeps the losses, the parameters, the checkpointing and the graphs.

With ``checkpoint=k`` the rollout keeps one segment of k ticks' arrays (reused
segment after segment) and, at every k-th tick, a checkpoint of what a tick
reads before writing (``TickCopies.checkpointed``). The backward pass re-runs
each segment from its checkpoint on a fresh tape, last segment first, and
hands the adjoint that reached the segment's first tick to the previous
segment's last (``TickCopies.carried``): the same kernels on the same inputs,
so the same gradient bit for bit on the CPU.

What differs from a run: the estimator is the truth estimator whatever the
vehicle declares (the EKF's gates and resets are not differentiable steps); the clock and the setpoints are tables fixed before
the tape (no parameter changes them; the reference replaces the guidance), no
ground contact (start in the air: contact forces are not differentiated), no
stage nothing needs (the magnetometer, barometer and GPS feed only the record),
and no record. The components are the vehicle's own, built and prepared by an
eager :class:`~nexus.core.Loop`, so their parameters, seeds and reset values
are a run's.
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import fields

import numpy as np
import warp as wp

from nexus.runtime.assembly import assemble
from nexus.air.drag import DRAG_SPEC
from nexus.control.pid import PID_SPEC
from nexus.core import Loop
from nexus.core.device import resolve_device
from nexus.core.errors import BuildError
from nexus.core.taped import TickCopies
from nexus.diff.losses import ENERGY_TRACKING_WEIGHT, LOSSES, add_power_loss, add_tracking_loss
from nexus.diff.params import Slot, declared_slot, element_slot, known_names, rollout_name, unknown_parameter
from nexus.diff.references import Reference, reference_for
from nexus.diff.refusals import refuse_undifferentiable
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint
from nexus.plant.esc import ESC_SPEC
from nexus.plant.frames import attitude_ned_frd_np, yaw_ned_np
from nexus.plant.ground_effect import GROUND_EFFECT_SPEC
from nexus.plant.hover import command_for_speed, hover_speed
from nexus.plant.propeller import PROPELLER_SPEC
from nexus.runtime.config import RunConfig
from nexus.runtime.roles import FLIGHT_RULES
from nexus.sensors.imu import IMU_SPEC
from nexus.sensors.samples import ImuSample

#: RunConfig's field defaults: a rollout given no vehicle, scene or tick rate flies the default run's.
RUN_DEFAULTS = {f.name: f.default for f in fields(RunConfig)}

#: Height of the start above the ground [m] unless a rollout asks for another: in the air, clear of contact.
DEFAULT_START_HEIGHT = 1.0

#: With ``checkpoint="auto"`` and no ``memory_budget``, a rollout checkpoints when keeping every tick would take
#: more than this fraction of the memory available (the device's free memory; on the CPU, MemAvailable).
DEFAULT_MEMORY_FRACTION = 0.25

#: Taped runs (and backward passes) made kernel by kernel before the next is captured as a graph. On the CPU a
#: capture is slow: Warp records each launch's arguments from Python (53,700 µs a tick for the taped forward and
#: the backward pass of a 2,500-tick rollout, against 9,600 µs kernel by kernel and 310 µs replayed), so a rollout
#: that is called once or twice never pays for one; from about the eighth call on the graphs have paid for
#: themselves. ``nexus optimize`` captures only where its steps reach that far (:data:`TAPED_CAPTURE_PAYS_FROM`).
EAGER_TAPED_RUNS = 2
#: Calls of a taped rollout from which capturing its graphs saves time on the CPU (see :data:`EAGER_TAPED_RUNS`).
TAPED_CAPTURE_PAYS_FROM = 8
#: Host memory the taped forward's and the backward pass's graphs take on the CPU [bytes a tick]: Warp's record of
#: each launch (measured 480 MB for 2,500 ticks kept, 400 MB checkpointed every 50).
CPU_GRAPH_BYTES_PER_TICK = 190_000

log = logging.getLogger("nexus")


def available_memory(device: str) -> int:
    """Bytes free for a rollout on ``device``: the GPU's free memory, or the host's MemAvailable."""
    dev = wp.get_device(device)
    if dev.is_cuda:
        return int(dev.free_memory)
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


#: Host memory a Warp array costs besides its data [bytes]: its Python object and allocation (measured on the CPU,
#: Warp 1.19: 1.99 kB an array, 3.93 kB with its gradient). A tick's arrays are small (20.5 kB of data in about 90
#: arrays and gradients), so on the CPU this, not the data, is most of what a kept tick costs.
ARRAY_OVERHEAD_BYTES = 2000
#: Host memory the tape costs per tick recorded [bytes]: its launches' records (measured 36.7 kB a tick while
#: recording) and the backward pass's (15.1 kB), on the CPU over 2,500 ticks.
TAPE_BYTES_PER_TICK = 52_000


def array_bytes(array: wp.array) -> int:
    """An array's bytes and its gradient's."""
    return array.capacity + (array.grad.capacity if array.grad is not None else 0)


def array_memory(array: wp.array) -> int:
    """An array's and its gradient's bytes with their objects' overhead (:data:`ARRAY_OVERHEAD_BYTES` each)."""
    return array_bytes(array) + ARRAY_OVERHEAD_BYTES * (1 + (array.grad is not None))


class Trajectory:
    """A rollout's per-tick values as NumPy arrays, leading axes (tick, world).

    ``position`` [m, NED from the start], ``velocity`` [m/s, NED], ``attitude``
    (FRD->NED quaternion x, y, z, w), ``rates`` [rad/s, FRD], ``controls`` (the
    ESC commands written by the PID, one per rotor), ``speed`` [rad/s] (each ESC's
    lagged speed), ``accel`` and ``gyro`` (the IMU's samples [m/s², rad/s, FRD]),
    ``goal`` [m, NED] and ``yaw_goal`` [rad].
    """

    def __init__(self, rollout: Rollout):
        est, imu, controls, speed = rollout._history()
        self.position = np.array(est["position"])
        self.velocity = np.array(est["velocity"])
        self.attitude = np.array(est["attitude"])
        self.rates = np.array(est["rates"])
        self.controls = controls[:, :, : len(rollout.plant.rotors)]
        self.speed = speed
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
    ``featherstone`` is differentiable. ``capture`` replays the plain forward
    as a graph after its first run; ``capture_tape`` (default: as ``capture``)
    replays the taped forward and the backward pass as graphs from their third
    call (see :meth:`forward`). ``window`` truncates back-propagation
    through time: a loss term's gradient reaches back at most to the start of
    its window of that many ticks (against gradients that grow over long
    horizons); None goes through the whole rollout.

    ``checkpoint`` k keeps one segment of k ticks' arrays and a checkpoint of
    the carried state every k ticks instead of every tick's arrays; the
    backward pass runs each segment again from its checkpoint (the same
    gradient and trajectory, bit for bit on the CPU, for about 1 + 1/(number
    of segments) forward passes more). None keeps every tick. ``"auto"``
    checkpoints every ⌈√ticks⌉ ticks when keeping every tick would take more
    than ``memory_budget`` bytes (default: :data:`DEFAULT_MEMORY_FRACTION` of
    the memory available), and logs that it does.
    """

    def __init__(
        self,
        ticks: int,
        *,
        worlds: int = 1,
        vehicle: str = RUN_DEFAULTS["vehicle"],
        scene: str = RUN_DEFAULTS["scene"],
        tick_hz: float = RUN_DEFAULTS["tick_hz"],
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
        capture_tape: bool | None = None,
        window: int | None = None,
        checkpoint: int | str | None = "auto",
        memory_budget: float | None = None,
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
        if checkpoint not in ("auto", None) and (isinstance(checkpoint, bool) or not isinstance(checkpoint, int)
                                                  or checkpoint < 1):
            raise BuildError(f"--checkpoint {checkpoint!r}: give a whole number of ticks, 1 or more, 'auto' or "
                             "none (keep every tick)")
        if memory_budget is not None and not memory_budget > 0:
            raise BuildError(f"--memory-budget {memory_budget!r}: give a number of bytes above 0")
        refuse_undifferentiable(solver, controller, vehicle, scene, device)
        #: Truncated back-propagation: the gradient of a loss term goes back at most to the start of its
        #: window of ``window`` ticks (None: through the whole rollout).
        self.truncate = window is not None and window < ticks
        self.window = window if self.truncate else ticks
        self.tapes: list[wp.Tape] = []
        self.ticks, self.worlds, self.loss_name, self._noise, self.device = ticks, worlds, loss, bool(noise), device
        # On the truth estimator whatever the vehicle declares: the EKF's gates, fault latches and resets are steps
        # in the state, so its gradients are not checked against central differences (docs/differentiable.md).
        self.vehicle = assemble(vehicle, scene, device=device, worlds=worlds, solver="featherstone", requires_grad=True,
                                estimator="truth")
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
        self._tables()
        one_tick = self._copies(1).slot_arrays(0)
        #: What keeping every tick would hold [bytes]: one tick's arrays (and gradients) times the ticks.
        self.full_bytes = sum(array_bytes(a) for a in one_tick) * ticks
        #: What keeping every tick would cost in memory [bytes], estimated: the arrays' data, their objects, the tape
        #: (see :data:`ARRAY_OVERHEAD_BYTES`); what ``checkpoint="auto"`` compares with the budget.
        self.full_memory = (sum(array_memory(a) for a in one_tick) + TAPE_BYTES_PER_TICK) * ticks
        #: Checkpoint every this many ticks (None: every tick's arrays are kept).
        self.checkpoint = self._choose_checkpoint(checkpoint, memory_budget)
        #: Ticks per segment: the arrays kept are one segment's, reused segment after segment.
        self.segment = self.checkpoint or ticks
        self._allocate()
        self._slots = self._make_slots()
        self._grads_of_ticks: list[wp.array] = []
        self.tape: wp.Tape | None = None
        #: The forward pass's tapes still valid for backward(): (first tick, tape, loss array) per window.
        self._kept: list[tuple[int, wp.Tape, wp.array]] | None = None
        self.loss = wp.zeros(1, dtype=float, device=device, requires_grad=True)
        # Loss terms of a segment run again in backward() go here (the loss is not counted twice).
        self._replay_loss = wp.zeros(1, dtype=float, device=device, requires_grad=True)
        #: Replay captured graphs after the first run (False: launch kernel by kernel every time).
        self.capture = bool(capture)
        #: Replay the taped forward and the backward pass as graphs from the third taped call on.
        self.capture_tape = self.capture if capture_tape is None else bool(capture_tape)
        self._graphs: dict[str, object] = {}
        #: Runs made kernel by kernel so far, by kind (plain, tape, backward).
        self._eager_runs: dict[str, int] = {}
        self._recorded = False
        #: The tape the ticks are being recorded on (None when not recording).
        self._taping: wp.Tape | None = None

    # -- set-up ----------------------------------------------------------------------------

    def _find_components(self) -> None:
        """The components the rollout reads arrays of, picked by their specs; their arrays by declared name."""
        comps = self.loop.components
        self.plant = self.vehicle.plant
        self.physics = self.vehicle.physics
        self.pid = next(c for c in comps if c.spec is PID_SPEC)
        self.esc = next(c for c in comps if c.spec is ESC_SPEC)
        self.propeller = next(c for c in comps if c.spec is PROPELLER_SPEC)
        self.imu = next((c for c in comps if c.spec is IMU_SPEC and c.body == "base"), None)
        if self.imu is not None:
            self.imu.set_noise(self._noise)
        if self.esc.leader is not self.esc or self.propeller.leader is not self.propeller:
            raise BuildError(f"{self.plant.vehicle_path}: the rollout drives the ESCs and propellers as one launch "
                             "each; this vehicle's do not fuse (they read different controls or share a body)")
        #: The vehicle's drag (None: no drag prim): its coefficients are parameters (``drag.rotor``, ``drag.cd.*``).
        self.drag = next((c for c in comps if c.spec is DRAG_SPEC), None)
        #: The components whose declared arrays hold the rollout's parameters (the drag's only when there is one).
        self.differentiated = [c for c in (self.pid, self.esc, self.propeller, self.drag) if c is not None]
        #: Any other part whose spec declares rollout names with its arrays (a force of one's own, registered with
        #: nexus.schemas.catalog.register): its names are the rollout's too (one instance of its spec each).
        known = (PID_SPEC, ESC_SPEC, PROPELLER_SPEC, DRAG_SPEC)  # those above (fused groups: their leaders)
        self.own_parts = [c for c in comps if c.spec is not None and not any(c.spec is s for s in known)
                          and c.spec.gradient_names()]
        self.differentiated += self.own_parts
        for component in self.differentiated:
            for name in component.arrays.gradient():
                component.arrays[name].requires_grad = True
        # The ground effect's extra thrust is ratio - 1 times the propellers' kT: read the same array, so that
        # a rotor's kt set here (and its gradient) reaches the ground effect too.
        for effect in comps:
            if effect.spec is GROUND_EFFECT_SPEC and effect.plant is self.plant:
                effect.share_thrust_coefficients(self.propeller.arrays.rotor, self.propeller.arrays.thrust_coefficient)

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
        plant.set_ned_origin(start)
        base_rotation = plant.state.body_q.numpy()[plant.base][3:]
        #: The base's heading at the start [rad, NED] (the vehicle file's front points east: π/2).
        self.start_heading = float(yaw_ned_np(attitude_ned_frd_np(base_rotation)))

    def _choose_checkpoint(self, checkpoint, budget: float | None) -> int | None:
        """The checkpoint interval asked for, or the automatic one (see the class doc); None: keep every tick."""
        if checkpoint is None:
            return None
        if checkpoint != "auto":
            return checkpoint if checkpoint < self.ticks else None
        limit = budget if budget is not None else DEFAULT_MEMORY_FRACTION * available_memory(self.device)
        every = math.isqrt(self.ticks - 1) + 1  # ⌈√ticks⌉
        if self.full_memory <= limit or every >= self.ticks:
            return None
        source = "the memory budget" if budget is not None else \
            f"{DEFAULT_MEMORY_FRACTION:.0%} of the memory available on {self.device}"
        log.info("rollout of %d ticks: keeping every tick would take about %.1f MB (%.1f MB of arrays), more than "
                 "%s (%.1f MB); checkpointing every %d ticks", self.ticks, self.full_memory / 1e6,
                 self.full_bytes / 1e6, source, limit / 1e6, every)
        return every

    def _tables(self) -> None:
        """The setpoint of every tick (row k: tick k's, one per world), the armed flag and the mission phase (-1:
        no mission flown), given to the ring in place of its guidance."""
        t, n, dev = self.ticks, self.worlds, self.device
        goals = []
        for k in range(t):
            for _ in range(n):
                s = Setpoint()
                s.position = wp.vec3(*(float(x) for x in self.reference.position[k]))
                s.yaw = float(self.reference.yaw[k])
                goals.append(s)
        self.setpoint_table = wp.array(goals, dtype=Setpoint, device=dev).reshape((t, n))
        self.armed_table = wp.ones((t, n), dtype=wp.int32, device=dev)
        self.phase_table = wp.full((t, n), -1, dtype=wp.int32, device=dev)

    def _copies(self, slots: int) -> TickCopies:
        """The ring's device stages over ``slots`` ticks of buffers, the guidance's outputs given as tables."""
        wanted = ["estimate", "controls", *((("imu", self.imu.name),) if self.imu is not None else ())]
        return TickCopies(self.loop, self.ticks, slots=slots, wanted=wanted,
                          given={"setpoint": self.setpoint_table, "armed": self.armed_table,
                                 "mission_phase": self.phase_table})

    def _allocate(self) -> None:
        """One segment's arrays (every tick's without checkpointing), the checkpoints, the trajectory's copies."""
        n, t, dev = self.worlds, self.ticks, self.device
        rotors = len(self.plant.rotors)
        #: The ring's device stages over one segment's ticks: tick first + i reads boundary i, writes boundary i + 1.
        self.ring = self._copies(self.segment)
        self.plant_copies = self.ring.hook(self.physics)
        first = np.zeros((n, 16), dtype=np.float32)
        first[:, :rotors] = self.hover_command
        self.controls[0].assign(first)
        #: Checkpoint s: the carried values at tick s · checkpoint (values only, no gradients). The first holds
        #: the start (the state arrays are set again by the start on the tape).
        self._checkpoints: list[list[wp.array]] = []
        #: Per-tick copies of what the trajectory reports (a segment's arrays are reused): estimate, IMU sample,
        #: controls row and ESC speeds written by each tick; none without checkpointing.
        self._history_arrays: list[wp.array] = []
        if self.checkpoint:
            count = len(self._segments())
            self._checkpoints = [[wp.zeros(a.shape, dtype=a.dtype, device=dev) for a in self._checkpointed(0)]
                                 for _ in range(count)]
            self._save(0, 0)
            self._history_arrays = [wp.zeros(t * n, dtype=PoseTwist, device=dev),
                                    wp.zeros(t * n, dtype=ImuSample, device=dev),
                                    wp.zeros(t * n * 16, dtype=float, device=dev),
                                    wp.zeros(t * n * rotors, dtype=float, device=dev)]

    # -- a segment's arrays, by what they hold (boundary i: what tick first + i reads) -------------------------

    def _boundaries(self, read) -> list[wp.array]:
        return [read(i) for i in range(self.segment + 1)]

    @property
    def states(self) -> list:
        """Newton's state at each boundary of the segment."""
        return self._boundaries(lambda i: self.ring.external(self.physics, boundary=i).state)

    @property
    def speeds(self) -> list[wp.array]:
        """The ESCs' lagged speeds at each boundary [rad/s]."""
        return self._boundaries(lambda i: self.ring.external(self.physics, boundary=i).speed)

    @property
    def controls(self) -> list[wp.array]:
        """The controls row at each boundary (boundary 0: the start's hover command)."""
        return self._boundaries(lambda i: self.ring.signal("controls", i))

    @property
    def pid_states(self) -> list[wp.array]:
        """The PID's state at each boundary."""
        return self._boundaries(lambda i: self.ring.state(self.pid, "pid", i))

    @property
    def bodies(self) -> list[wp.array]:
        """The base body each tick of the segment published."""
        return [self.ring.signal(self.physics.signal_for_body(self.plant.base_path), i + 1)
                for i in range(self.segment)]

    @property
    def estimates(self) -> list[wp.array]:
        """The estimate each tick of the segment wrote."""
        return [self.ring.signal("estimate", i + 1) for i in range(self.segment)]

    @property
    def imu_samples(self) -> list[wp.array]:
        """The base IMU's sample each tick of the segment wrote."""
        return [self.ring.signal("imu", i + 1, writer=self.imu.name) for i in range(self.segment)]

    def _make_slots(self) -> dict[str, Slot]:
        plant, n = self.plant, self.worlds
        slots: dict[str, Slot] = {}
        rotors = len(plant.rotors)
        # The names the components' specs declare with their arrays (PID gains, rotor kt, ESC lags, drag).
        for component in self.differentiated:
            for declared in component.spec.gradient_names(rotors if component not in self.own_parts else 1):
                slots[declared.name] = declared_slot(declared, component.arrays[declared.array])
        model = plant.model
        bases = [plant.base + w * plant.bodies_per_world for w in range(n)]
        slots["mass"] = element_slot("mass", model.body_mass, [(b,) for b in bases], "kg")
        for i, axis in enumerate(("xx", "yy", "zz")):
            slots[f"inertia.{axis}"] = element_slot(f"inertia.{axis}", model.body_inertia, [(b, i, i) for b in bases],
                                                    "kg m^2")
        q0 = plant.base_coord
        d0 = plant.base_dof
        start = self.plant_copies
        for i, axis in enumerate("xyz"):
            coords = [(q0 + w * plant.coords_per_world + i,) for w in range(n)]
            dofs = [(d0 + w * plant.dofs_per_world + i,) for w in range(n)]
            slots[f"init.{axis}"] = element_slot(f"init.{axis}", start.initial_q, coords, "m")
            slots[f"init.v{axis}"] = element_slot(f"init.v{axis}", start.initial_qd, dofs, "m/s")
        return slots

    @property
    def noise(self) -> bool:
        """Whether the IMU draws its noise (from the run's seed); changing it drops the captured graphs."""
        return self._noise

    @noise.setter
    def noise(self, value: bool) -> None:
        self._noise = bool(value)
        if self.imu is not None:
            self.imu.set_noise(self._noise)
        self._graphs.clear()
        self._eager_runs.clear()

    # -- parameters ------------------------------------------------------------------------

    def slot(self, name: str) -> Slot:
        found = self._slots.get(rollout_name(name, self.plant.vehicle_path))
        if found is None:
            raise unknown_parameter(name, len(self.plant.rotors), self.plant.vehicle_path)
        return found

    @property
    def parameter_names(self) -> list[str]:
        own = [n.name for c in self.own_parts for n in c.spec.gradient_names()]
        return known_names(len(self.plant.rotors), self.drag is not None) + own

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
        self.ring.parameters_changed()

    def gradient(self, name: str) -> float:
        """d loss / d parameter after :meth:`backward` (the sum over the elements that share it)."""
        slot = self.slot(name)
        if slot.array.grad is None:
            return 0.0
        return slot.grad(slot.array.grad.numpy())

    # -- running ---------------------------------------------------------------------------

    def forward(self, record: bool = False) -> float:
        """Run the ticks and the loss (recorded on the tape when ``record``); returns the loss.

        With ``capture`` the first plain run launches kernel by kernel (and lets Featherstone allocate
        its per-state arrays); the second is captured as a graph and later ones replay it. With
        ``capture_tape`` the taped run and :meth:`backward` do the same from their third call (see
        :data:`EAGER_TAPED_RUNS`). A replay costs a fraction of the Python launch overhead and gives
        the same bits on the CPU.
        """
        key = "tape" if record else "plain"
        self._run(key, lambda: self._execute(record), self.capture_tape if record else self.capture)
        self.ring.release()  # the vehicle's components fly their own arrays again
        self._recorded = record
        return float(self.loss.numpy()[0])

    @property
    def captured(self) -> set[str]:
        """The kinds of run replayed as graphs so far, among ``plain``, ``tape`` and ``backward``."""
        return set(self._graphs)

    def _run(self, key: str, work, capture: bool) -> None:
        """``work()`` kernel by kernel at first; then captured once as the graph ``key`` and replayed from then on.

        The taped forward and the backward pass are two graphs: the backward graph walks the tapes that
        the taped forward's capture recorded (the ones :attr:`tapes` holds from then on), over the same
        arrays the forward graph writes, so replaying the two in turn is a taped run and its backward
        pass (bit for bit on the CPU: ``tests/diff/test_captured_gradients.py``).
        """
        eager = self._eager_runs.get(key, 0)
        if not capture or (key not in self._graphs and eager < (1 if key == "plain" else EAGER_TAPED_RUNS)):
            work()
            self._eager_runs[key] = eager + 1
            return
        if key not in self._graphs:
            if key != "plain":  # seconds on the CPU: say why this call takes longer than the last
                log.info("capturing the %s of the %d-tick rollout as a graph (once: later calls replay it)",
                         "taped forward" if key == "tape" else "backward pass", self.ticks)
            with wp.ScopedCapture(device=self.device) as graph:
                work()
            self._graphs[key] = graph.graph
        wp.capture_launch(self._graphs[key])

    def _segments(self) -> list[tuple[int, int]]:
        """(first tick, end tick) of each segment: one for the whole rollout without checkpointing."""
        return [(first, min(first + self.segment, self.ticks)) for first in range(0, self.ticks, self.segment)]

    def _execute(self, record: bool) -> None:
        self.loss.zero_()
        self._kept = None
        segments = self._segments()
        for index, (first, end) in enumerate(segments):
            if self.checkpoint:
                self._restore(index)
            if record and index == len(segments) - 1:
                # The last segment (the whole rollout without checkpointing) on tapes that backward() uses
                # as they are; the segments before it are run again from their checkpoints.
                self._kept = self._record(first, end, self.loss, history=True)
            else:
                if first == 0:
                    self._start()
                for k in range(first, end):
                    self._tick(k, k - first, history=True)
                    self._add_loss(k, k - first, self.loss)
            if self.checkpoint and index + 1 < len(segments):
                self._save(index + 1, end - first)
        self.tapes = [tape for _, tape, _ in self._kept or []]
        self.tape = self.tapes[0] if self.tapes else None

    def _record(self, first: int, end: int, loss: wp.array, history: bool) -> list[tuple[int, wp.Tape, wp.array]]:
        """Ticks ``first`` .. ``end`` - 1 of one segment on tapes, one per window (so backward() can cut the
        gradient at a window's first tick); (first tick, tape, loss array) each."""
        pieces = []
        start = first
        while start < end:
            stop = min(end, (start // self.window + 1) * self.window)
            tape = wp.Tape()
            self._taping = tape
            try:
                with tape:
                    if start == 0:
                        self._start()
                    for k in range(start, stop):
                        self._tick(k, k - first, history)
                        self._add_loss(k, k - first, loss)
            finally:
                self._taping = None
            pieces.append((start, tape, loss))
            start = stop
        return pieces

    def backward(self) -> None:
        """Carry the loss back to every parameter (after ``forward(record=True)``); gradients start from zero."""
        if not self._recorded:
            raise RuntimeError("backward() needs forward(record=True) first")
        self._run("backward", self._backward, self.capture_tape)
        self.ring.release()

    def _backward(self) -> None:
        kept = self._kept
        if self.checkpoint:
            self._kept = None  # the segment's arrays will hold the first segment's ticks by the end
        # Every gradient from zero: a tape zeroes only the adjoints it has handed out, and an array a
        # kernel adds into (a body's wrench) keeps its gradient after a backward pass.
        for _, tape, _ in kept or []:
            tape.zero()
        self._grads_of_ticks = [a for a in self._tick_arrays() if a.grad is not None]
        for array in [*self._grad_roots(), *self._grads_of_ticks]:
            array.grad.zero_()
        segments = self._segments()
        for index in range(len(segments) - 1, -1, -1):
            first, end = segments[index]
            if index == len(segments) - 1 and kept is not None:
                pieces = kept
            else:
                # Hand the segment the adjoint that reached the next segment's first tick, then run it again
                # from its checkpoint on fresh tapes (its loss terms into a scratch loss). In that order: a
                # wp.copy on a tape copies the gradient too (the start's copy would overwrite boundary 0's).
                if index < len(segments) - 1:
                    self._carry(end - first)
                self._restore(index)
                pieces = self._record(first, end, self._replay_loss, history=False)
            for start, tape, loss in reversed(pieces):
                tape.backward(loss=loss)
                if self.truncate and start > 0 and start % self.window == 0:
                    self._cut(start - first)

    def _carried(self, i: int) -> list[tuple[str, wp.array]]:
        """Boundary ``i``'s arrays whose adjoint goes on to the tick before (``TickCopies.carried``)."""
        return self.ring.carried(i)

    def _carry(self, i: int) -> None:
        """Before a segment's backward pass: the adjoint left at boundary 0 by the segment after it goes to
        boundary ``i`` (this segment's last); every other gradient of the segment's arrays starts from zero."""
        given = dict(self._carried(0))
        kept = set()
        for name, array in self._carried(i):
            if name in given:
                wp.copy(array.grad, given[name].grad)
            else:
                array.grad.zero_()  # Featherstone's per-state arrays: no tick reads those of the state it starts from
            kept.add(array.grad.ptr)
        for array in self._tick_arrays():
            if array.grad is not None and array.grad.ptr not in kept:
                array.grad.zero_()

    def _checkpointed(self, i: int) -> list[wp.array]:
        """Boundary ``i``'s arrays a checkpoint keeps: what the next tick reads before writing."""
        return self.ring.checkpointed(i)

    def _save(self, index: int, i: int) -> None:
        """Checkpoint ``index`` <- boundary ``i`` (values only)."""
        for kept, array in zip(self._checkpoints[index], self._checkpointed(i)):
            wp.copy(kept, array)

    def _restore(self, index: int) -> None:
        """Boundary 0 <- checkpoint ``index`` (values only: the checkpoint has no gradient to copy)."""
        for kept, array in zip(self._checkpoints[index], self._checkpointed(0)):
            wp.copy(array, kept)

    def _cut(self, i: int) -> None:
        """Drop the gradient that reached boundary ``i``'s carried state, so it goes no further back."""
        for _, array in self._carried(i):
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
        """Every per-tick array of the segment (of the rollout without checkpointing), each once."""
        return self.ring.arrays()

    def bytes_held(self) -> int:
        """Memory the rollout holds for its ticks [bytes]: the per-tick arrays kept (one segment's with
        checkpointing) and their gradients, the checkpoints, the trajectory's copies, the time and setpoint
        tables."""
        return sum(array_bytes(a) for a in self._held_arrays())

    def bytes_per_tick(self) -> float:
        """:meth:`bytes_held` over the ticks [bytes]."""
        return self.bytes_held() / self.ticks

    def memory_estimate(self) -> int:
        """Memory the rollout costs for its ticks [bytes], estimated: :meth:`bytes_held` with the arrays' objects
        and the tape of the ticks recorded at once (a segment's with checkpointing), as for ``full_memory``."""
        return sum(array_memory(a) for a in self._held_arrays()) + TAPE_BYTES_PER_TICK * self.segment

    def graph_memory_estimate(self) -> int | None:
        """Host memory the taped forward's and backward pass's graphs will take once captured [bytes], estimated;
        0 without ``capture_tape``; None on CUDA (device graphs, not measured)."""
        if not self.capture_tape:
            return 0
        return CPU_GRAPH_BYTES_PER_TICK * self.ticks if wp.get_device(self.device).is_cpu else None

    def _held_arrays(self) -> list[wp.array]:
        tables = [*self.ring.given.values()]
        return [*self._tick_arrays(), *(a for kept in self._checkpoints for a in kept), *self._history_arrays, *tables]

    def trajectory(self) -> Trajectory:
        """The last forward run's values per tick, on the host."""
        return Trajectory(self)

    def _history(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Estimates, IMU samples, controls rows (tick, world, 16) and ESC speeds (tick, world, rotor) of the
        last forward run."""
        t, n = self.ticks, self.worlds
        if self._history_arrays:
            est, imu, controls, speeds = (a.numpy() for a in self._history_arrays)
            return est.reshape(t, n), imu.reshape(t, n), controls.reshape(t, n, 16), speeds.reshape(t, n, -1)
        return (np.stack([a.numpy() for a in self.estimates]), np.stack([a.numpy() for a in self.imu_samples]),
                np.stack([a.numpy() for a in self.controls[1:]]),
                np.stack([a.numpy().reshape(n, -1) for a in self.speeds[1:]]))

    def _start(self) -> None:
        """On the tape when recording: each component's work on the first boundary (the plant's derived inertia
        and start bodies)."""
        self.ring.start(self._taping)

    def _tick(self, k: int, i: int, history: bool = False) -> None:
        """Tick ``k`` of the rollout on slot ``i`` of the segment's arrays (``i`` = ``k`` without checkpointing);
        ``history`` copies what the trajectory reports (with checkpointing)."""
        self.ring.tick(k, i, self._taping)
        if history and self._history_arrays:
            n, rotors = self.worlds, len(self.plant.rotors)
            estimates, samples, controls, speeds = self._history_arrays
            wp.copy(estimates, self.ring.signal("estimate", i + 1), dest_offset=k * n, count=n)
            if self.imu is not None:
                wp.copy(samples, self.ring.signal("imu", i + 1, writer=self.imu.name), dest_offset=k * n, count=n)
            wp.copy(controls, self.ring.signal("controls", i + 1), dest_offset=k * n * 16, count=n * 16)
            wp.copy(speeds, self.ring.external(self.physics, boundary=i + 1).speed, dest_offset=k * n * rotors,
                    count=n * rotors)

    def _add_loss(self, k: int, i: int, loss: wp.array) -> None:
        scale = 1.0 / (self.ticks * self.worlds)
        kind = {"altitude": 0, "yaw": 1, "figure8": 2, "energy": 2}[self.loss_name]
        weight = ENERGY_TRACKING_WEIGHT if self.loss_name == "energy" else 1.0
        wp.launch(add_tracking_loss, self.worlds,
                  inputs=[self.ring.signal("estimate", i + 1), self.setpoint_table[k], kind, scale * weight],
                  outputs=[loss], device=self.device)
        if self.loss_name == "energy":
            wp.launch(add_power_loss, self.worlds,
                      inputs=[self.ring.external(self.physics, boundary=i + 1).speed,
                              self.esc.arrays.torque_coefficient,
                              len(self.plant.rotors), scale],
                      outputs=[loss], device=self.device)

    @classmethod
    def from_config(cls, config, ticks: int | None = None, *, loss: str = "altitude", **settings) -> Rollout:
        """The rollout of the flight ``config`` (a :class:`nexus.runtime.config.RunConfig`) describes, with its own settings.

        The vehicle, scene, tick rate, seed, worlds, controller, solver and device come from ``config`` (its
        device resolved: ``auto`` takes the GPU when one is present); ``ticks`` None flies its duration
        (``config.duration_s`` times its tick rate, rounded). ``loss`` and ``settings`` are the rollout's own
        (``window``, ``checkpoint``, ``memory_budget``, ``capture``, ``capture_tape``, ``noise``, ``reference``,
        ``start_height``, ``start_offsets``). A setting of ``config`` the rollout cannot fly is refused.
        """
        if config.substeps != 1:
            raise BuildError(f"substeps {config.substeps}: the differentiable rollout steps the solver once per "
                             "tick; give substeps 1")
        if config.vary is not None:
            raise BuildError(f"vary {config.vary}: the differentiable rollout draws no variation; give none "
                             "(its parameters are set with Rollout.set)")
        if ticks is None:
            ticks = int(round(config.duration_s * config.tick_hz))
        return cls(ticks, worlds=config.worlds, vehicle=config.vehicle, scene=config.scene, tick_hz=config.tick_hz,
                   seed=config.seed, device=resolve_device(config.device), controller=config.controller,
                   solver=config.solver, loss=loss, **settings)



__all__ = ["DEFAULT_MEMORY_FRACTION", "DEFAULT_START_HEIGHT", "Rollout", "Trajectory", "available_memory"]
