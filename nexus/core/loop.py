"""The tick loop: components in, a validated, allocated and planned ring out.

Building does everything that can fail before any stage runs: it collects the
components' stages, orders them by ring kind, checks the whole graph of
signals, allocates every buffer, plans the segments, lets components prepare
their own state, and (in captured mode) captures each device segment.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import warp as wp

from nexus.core.build_context import BuildContext
from nexus.core.clock import Clock
from nexus.core.component import Component
from nexus.core.errors import BuildError, NexusError, RunError
from nexus.core.executors import EXECUTORS, run_stage
from nexus.core.planner import Plan, plan_segments
from nexus.core.ring import RING_ORDER, is_known_kind, kind_rank
from nexus.core.rng import RngTree
from nexus.core.schedule import due_table
from nexus.core.stage import Stage
from nexus.core.stage_io import StageIO
from nexus.core.state import StateStore, TickState, put_back, take
from nexus.core.wiring import WiringRule, Wiring, wire

log = logging.getLogger("nexus")

MODES = tuple(EXECUTORS)

#: Ticks one replay runs when the ring is one graph: enough to make the launch and the
#: loop's Python negligible next to the tick, few enough that the ticks replayed after
#: "done" cost little. Components bound it (``max_ticks_per_replay``: the record's table).
DEFAULT_TICKS_PER_REPLAY = 16
#: Whether a one-world captured ring on the CPU skips a scheduled stage's launch on ticks it has no sample due
#: (:mod:`nexus.core.schedule`); False launches it every tick, as the reference tests compare with.
SKIP_BETWEEN_SAMPLES = True
#: Hidden knob for tests and measurements: ticks per replay, as a whole number.
TICKS_PER_REPLAY_ENV = "NEXUS_TICKS_PER_REPLAY"
#: The control tick rate [Hz] unless a run asks for another (``nexus.runtime.config.RunConfig.tick_hz``).
DEFAULT_TICK_HZ = 250.0


def tick_ns(tick_hz: float) -> int:
    """The control tick [ns] for a rate [Hz]; it must be a whole number of nanoseconds."""
    if not tick_hz or tick_hz <= 0:
        raise BuildError(f"the tick rate must be positive, got {tick_hz} Hz")
    dt_ns = round(1e9 / tick_hz)
    if abs(dt_ns * tick_hz - 1e9) > 1e-6 * 1e9 / tick_hz:
        raise BuildError(
            f"a tick rate of {tick_hz} Hz is not a whole number of nanoseconds per tick; "
            "choose a rate that divides 1e9, such as 250, 400 or 500 Hz"
        )
    return dt_ns


@dataclass(frozen=True)
class RunResult:
    ticks: int
    #: Sim time at the end [s].
    sim_time: float
    #: ``done`` when a stage ended the run, ``ticks`` when the tick budget ran out.
    reason: str


class Loop:
    """A ring of stages on one device.

    ``mode`` is ``captured`` (graphs replayed each tick, the default) or
    ``eager`` (stage by stage, the debugging reference). A captured ring with
    no host stage replays ``ticks_per_replay`` ticks per launch; the loop
    chooses it (:data:`DEFAULT_TICKS_PER_REPLAY`, bounded by each component's
    ``max_ticks_per_replay``) unless a test asks for a number.
    """

    def __init__(
        self,
        components: Sequence[Component],
        *,
        device: str = "cpu",
        tick_hz: float = DEFAULT_TICK_HZ,
        seed: int = 0,
        mode: str = "captured",
        ticks_per_replay: int | None = None,
        rules: Sequence[WiringRule] = (),
        worlds: int = 1,
        first_world: int = 0,
        variation: Sequence[dict] = (),
        vehicles: int = 1,
        first_vehicle: int = 0,
    ):
        if mode not in EXECUTORS:
            raise BuildError(f"unknown execution mode '{mode}': choose one of {', '.join(MODES)}")
        self.device = device
        self.mode = mode
        self.dt_ns = tick_ns(tick_hz)
        self.rng = RngTree(seed)
        if isinstance(worlds, bool) or not isinstance(worlds, int) or worlds < 1:
            raise BuildError(f"a ring needs at least one world, got {worlds!r}")
        #: Worlds flown at once: the leading axis of every device signal and state array.
        self.worlds = int(worlds)
        #: The run-wide index of world 0 of this ring (a world flown alone keeps its index's random tree).
        self.first_world = int(first_world)
        if isinstance(vehicles, bool) or not isinstance(vehicles, int) or vehicles < 1 or self.worlds % vehicles:
            raise BuildError(f"{worlds} slots do not hold {vehicles!r} vehicles a world; give a divisor of the slots")
        #: Vehicles in each world: slot ``s`` is vehicle ``s % vehicles`` of world ``s // vehicles``.
        self.vehicles = int(vehicles)
        #: The index of this ring's vehicle 0 within its world (a vehicle flown alone keeps its random tree).
        self.first_vehicle = int(first_vehicle)
        if variation and len(variation) != self.worlds:
            raise BuildError(f"the variation holds {len(variation)} worlds' values for a ring of {self.worlds} worlds")
        self.variation = tuple(dict(v) for v in variation)
        self.clock = Clock(self.dt_ns)
        self.components: list[Component] = [self.clock, *components]
        self.ticks = 0
        self._finish_requested = False
        self._built = False
        self._executor = None
        if ticks_per_replay is None and os.environ.get(TICKS_PER_REPLAY_ENV):
            ticks_per_replay = int(os.environ[TICKS_PER_REPLAY_ENV])
        if ticks_per_replay is not None and int(ticks_per_replay) < 1:
            raise BuildError(f"ticks per replay must be at least 1, got {ticks_per_replay}")
        self._requested_ticks_per_replay = ticks_per_replay
        #: Domain rules the wiring checks besides its own (e.g. "a controller reading the estimate
        #: needs an estimator"), so their errors name the missing role; see :class:`WiringRule`.
        self.rules = tuple(rules)

    # -- build ---------------------------------------------------------------------------

    def _collect(self) -> tuple[list[Stage], dict[int, tuple[int, int]]]:
        problems: list[str] = []
        names: set[str] = set()
        stages: list[Stage] = []
        order: dict[int, tuple[int, int]] = {}
        for component_index, component in enumerate(self.components):
            if component.name in names:
                problems.append(f"two components are named '{component.name}'; give each a unique name.")
            names.add(component.name)
            declared = list(component.stages() or [])
            if not declared:
                problems.append(
                    f"component '{component.name}' ({type(component).__name__}) states no stages; "
                    "every component must declare at least one stage."
                )
            for stage_index, stage in enumerate(declared):
                stage.component = component
                if not is_known_kind(stage.kind):
                    problems.append(
                        f"stage '{stage.name}' of '{component.name}' has unknown kind '{stage.kind}'; "
                        f"the ring knows {', '.join(RING_ORDER)}."
                    )
                    continue
                stages.append(stage)
                order[id(stage)] = (component_index, stage_index)
        if problems:
            if len(problems) == 1:
                raise BuildError(problems[0])
            raise BuildError("the ring cannot be built:\n" + "\n".join(f"  - {p}" for p in problems))
        stages.sort(key=lambda stage: (kind_rank(stage.kind), order[id(stage)]))
        return stages, order

    def build(self) -> Loop:
        """Validate, allocate, plan and prepare; capture in captured mode. Idempotent."""
        if self._built:
            return self
        wp.init()
        stages, order = self._collect()
        self._check_worlds(stages)
        self.wiring: Wiring = wire(stages, order, self.device, self.rules, worlds=self.worlds)
        self.plan: Plan = plan_segments(stages)
        if self.mode != "captured":  # eager runs every stage every tick
            self.plan = replace(self.plan, hosts_idle_between=False)
        self.plan = replace(self.plan, ticks_per_replay=self._choose_ticks_per_replay(), worlds=self.worlds,
                            vehicles=self.vehicles)
        self._hosts = tuple(stage for stage in self.plan.stages if stage.host)
        #: Ticks from the next on that every host stage leaves alone (None: ask them again).
        self._idle_left: int | None = None
        #: One flag per world: 0 flying, 1 done (its mission ended), 2 failed (see the health stage).
        self.done_flag = wp.zeros(self.worlds, dtype=wp.int32, device=self.device)
        # On the CPU a NumPy view of the flags' own memory, made once: a view costs more than the check.
        self._done_host = self.done_flag.numpy() if self.done_flag.device.is_cpu else None
        self.clock.done = self.done_flag
        self._watch_done_flag = any(stage.finishes and not stage.host for stage in stages)
        self.states = StateStore(self.components, self.device, worlds=self.worlds)
        self.ios: dict[int, StageIO] = {
            id(stage): StageIO(
                stage.name,
                self.wiring.arguments[id(stage)],
                self.device,
                self.done_flag if stage.finishes else None,
                self.request_finish,
                frozenset(o.signal for o in self.wiring.outputs if o.stage is stage and not o.readers),
                state_in=self.states.of(stage.component),
            )
            for stage in stages
        }
        context = BuildContext(
            device=self.device, dt_ns=self.dt_ns, rng=self.rng, components=tuple(self.components),
            stage_ios=tuple((stage, self.ios[id(stage)]) for stage in stages), states=self.states,
            worlds=self.worlds, first_world=self.first_world, variation=self.variation,
            vehicles=self.vehicles, first_vehicle=self.first_vehicle,
        )
        self._context = context
        for component in self.components:
            component.prepare(context)
        self.states.reset(context)
        log.info(self.plan.text())
        self._executor = EXECUTORS[self.mode](self.plan, self.ios, self.device, self.plan.ticks_per_replay,
                                              conditions=self._scheduled())
        self._tick_buffer = next(o.buffer for o in self.wiring.outputs if o.signal == "tick" and o.stage.component is self.clock)
        self._built = True
        return self

    def _scheduled(self) -> dict[int, wp.array]:
        """The scheduled stages' flags (stage id -> a one-element view of the clock's table), after each has been
        handed to the clock (:mod:`nexus.core.schedule`). Only a one-world captured ring on the CPU skips: there
        a launch costs about 0.1 µs whatever its kernel does; with many worlds any world may be due, and a GPU
        graph's cost is another matter."""
        if self.mode != "captured" or self.worlds != 1 or not wp.get_device(self.device).is_cpu or not SKIP_BETWEEN_SAMPLES:
            return {}
        entries = []
        for stage in self.plan.stages:
            if stage.host or stage.schedule is None or stage.schedule_period is None:
                continue
            period = int(stage.schedule_period())
            io = self.ios[id(stage)]
            schedule_in, schedule_out = io.state_in.get(stage.schedule), io.state_out.get(stage.schedule)
            if period <= 0 or schedule_in is None or schedule_out is None or schedule_in.ptr != schedule_out.ptr:
                continue  # every tick, or not advanced in place: it runs every tick
            entries.append((stage, schedule_in.ptr, period))
        if not entries:
            return {}
        table = due_table([(address, period) for _, address, period in entries], self.device)
        self.clock.due = table
        return {id(stage): table.flags[k:k + 1] for k, (stage, _, _) in enumerate(entries)}

    def _check_worlds(self, stages: Sequence[Stage]) -> None:
        """A host stage that serves one world cannot fly in a ring of many."""
        if self.worlds == 1:
            return
        single = [stage.where for stage in stages if stage.host and not stage.batched]
        if single:
            raise BuildError(
                f"{', '.join(single)} serves one world, but this ring flies {self.worlds}; fly it with one world "
                "(--worlds 1), or use a controller and guidance that run on the device or serve every world at once"
            )

    def _choose_ticks_per_replay(self) -> int:
        if self.mode != "captured" or (self.plan.has_host_stage and not self.plan.hosts_idle_between):
            return 1
        ticks = self._requested_ticks_per_replay or DEFAULT_TICKS_PER_REPLAY
        for component in self.components:
            bound = getattr(component, "max_ticks_per_replay", None)
            if bound is not None:
                ticks = min(ticks, int(bound))
        return max(1, int(ticks))

    @property
    def ticks_per_replay(self) -> int:
        """Ticks one :meth:`advance` runs at most."""
        self.build()
        return self.plan.ticks_per_replay

    @property
    def nodes_per_tick(self) -> int | None:
        """Graph nodes (kernel launches, copies, memsets) one tick replays; None when eager or unknown."""
        self.build()
        return self._executor.nodes_per_tick

    # -- signals ----------------------------------------------------------------------

    def output(self, signal: str, writer: str | None = None):
        """The buffer of ``signal`` (a Warp array or a host slot), for tests and tools.

        ``writer`` names the writing component when several write the signal.
        """
        self.build()
        found = [
            o for o in self.wiring.outputs
            if o.signal == signal and (writer is None or o.stage.component.name == writer)
        ]
        if len(found) != 1:
            writers = [o.stage.component.name for o in self.wiring.outputs if o.signal == signal]
            raise KeyError(f"signal '{signal}' has writers {writers}; name one with writer=")
        return found[0].buffer

    # -- tick state ---------------------------------------------------------------------

    def _device_state(self) -> dict[str, wp.array]:
        arrays: dict[str, wp.array] = {"loop:done": self.done_flag}
        for output in self.wiring.outputs:
            if output.on_device:
                arrays[f"signal:{output.prim}:{output.signal}"] = output.buffer
        arrays.update({f"state:{key}": array for key, array in self.states.arrays().items()})
        for component in self.components:
            for name, array in component.external_state().items():
                arrays[f"external:{component.name}:{name}"] = array
        return arrays

    def _host_state(self) -> dict[str, object]:
        return {
            f"{output.prim}:{output.signal}": output.buffer.value
            for output in self.wiring.outputs if not output.on_device
        }

    def snapshot(self) -> TickState:
        """A copy of the whole tick state: signals, declared state, the plant's solver state, the tick count.

        Host stages that keep their own state in Python (an autopilot link, an
        MPC warm start) are outside it: a ring with a host stage refuses.
        """
        self.build()
        hosts = [stage.where for stage in self.plan.stages if stage.host]
        if hosts:
            raise RunError(f"a snapshot covers device state only; this ring has host stages: {', '.join(hosts)}")
        wp.synchronize_device(self.device)
        return take(self.ticks, self._finish_requested, self._device_state(), self._host_state())

    def restore(self, snapshot: TickState) -> None:
        """Put the tick state back as :meth:`snapshot` took it; the next ticks repeat it bit for bit."""
        self.build()
        put_back(snapshot, self._device_state())
        for output in self.wiring.outputs:
            if not output.on_device:
                output.buffer.value = snapshot.host[f"{output.prim}:{output.signal}"]
        wp.synchronize_device(self.device)
        self.ticks = snapshot.ticks
        self._finish_requested = snapshot.finished

    def reset_state(self) -> None:
        """Give every declared state array its reset value again (signals and plant are left alone)."""
        self.build()
        self.states.reset(self._context)

    # -- running ------------------------------------------------------------------------

    def request_finish(self) -> None:
        """Called by a stage to end the run once the current tick completes."""
        self._finish_requested = True

    @property
    def finished(self) -> bool:
        return self._finish_requested

    def cancel_finish(self) -> None:
        """Forget a finish a stage asked for: the caller handles a world's end itself (a training environment
        resets the worlds that ended and flies on)."""
        self._finish_requested = False

    def run_kinds(self, kinds: Iterable[str], first: bool = False) -> None:
        """Run the stages of ``kinds`` once, eagerly, in ring order (start-up sampling).

        ``first``: the start-up's own pass, which runs each stage's ``start``
        hook just before the stage.
        """
        self.build()
        wanted = set(kinds)
        for stage in self.plan.stages:
            if stage.kind in wanted:
                io = self.ios[id(stage)]
                if first and stage.start is not None:
                    try:
                        stage.start(io)
                    except NexusError:
                        raise
                    except Exception as error:
                        raise RunError(f"the start of {stage.where} failed: {type(error).__name__}: {error}") from error
                run_stage(stage, io)
        self._idle_left = None

    def tick(self) -> bool:
        """Run one tick; True when a stage has asked to end the run."""
        self.build()
        self._executor.tick()
        self._idle_left = None
        return self._after(1)

    def advance(self, limit: int) -> bool:
        """Run up to ``min(limit, ticks_per_replay)`` ticks with one replay; True once the run has ended.

        With fewer than ``ticks_per_replay`` ticks left it runs one tick (the
        one-tick graph), so a run stops exactly at its tick budget. When a
        device stage ends the run inside a replay, the replay's later ticks run
        but change nothing reported (the clock stops, the record skips them),
        and :attr:`ticks` is the tick that ended the run.

        In a ring whose host stages say which ticks they leave alone, a tick
        some host stage has work on runs cut at the host stages; the ticks they
        all leave alone (up to ``ticks_per_replay``) run as the device stages'
        own graph, which computes the same bits.
        """
        self.build()
        if self.plan.hosts_idle_between:
            if self._idle_left is None:  # the host stages have run since the last ask
                self._idle_left = min(int(stage.idle_ticks()) for stage in self._hosts)
            ticks = min(self._idle_left, int(limit), self.plan.ticks_per_replay)
            if ticks >= 1:
                self._executor.device_ticks(ticks)
                self._idle_left -= ticks
                return self._after(ticks)
            self._executor.tick()
            self._idle_left = None
            return self._after(1)
        if limit >= self.plan.ticks_per_replay > 1:
            self._executor.replay()
            return self._after(self.plan.ticks_per_replay)
        self._executor.tick()
        return self._after(1)

    def _after(self, ticks: int) -> bool:
        if self._watch_done_flag and not self._finish_requested and self._all_done():
            self._finish_requested = True
            # Each world's clock stopped at the tick that ended it; the run lasted as long as the last.
            self.ticks = int(self._tick_buffer.numpy().max())
            return True
        self.ticks += ticks
        return self._finish_requested

    def _all_done(self) -> bool:
        """Whether every world has ended (one world: its flag read as a number, no NumPy reduction)."""
        flags = self._done_now()
        return flags.item(0) != 0 if flags.size == 1 else bool(flags.all())

    def _done_now(self):
        """The done flags as they are now (on the CPU, the view made once)."""
        return self._done_host if self._done_host is not None else self.done_flag.numpy()

    def world_ticks(self) -> "np.ndarray":
        """Ticks each world has flown (a finished world's stopped at the tick that ended it) [int64, (worlds,)]."""
        self.build()
        return self._tick_buffer.numpy().copy()

    def world_done(self) -> "np.ndarray":
        """Each world's done flag: 0 flying, 1 done, 2 failed [int32, (worlds,)]."""
        self.build()
        return self.done_flag.numpy().copy()

    def run(self, ticks: int) -> RunResult:
        """Run up to ``ticks`` ticks, stopping early after a tick that ends the run."""
        self.build()
        left = int(ticks)
        while left > 0:
            before = self.ticks
            if self.advance(left):
                return RunResult(self.ticks, self.sim_time, "done")
            left -= self.ticks - before
        return RunResult(self.ticks, self.sim_time, "ticks")

    def check_end(self) -> None:
        """Ask every component whether the run that just ended did its job (see ``Component.check_end``)."""
        for component in self.components:
            component.check_end()

    def close(self) -> None:
        """Let every component release its outside resources; safe to call more than once."""
        for component in self.components:
            try:
                component.close()
            except Exception:  # one component's failure to close must not hide another's
                log.exception("closing %s failed", component.name)

    @property
    def sim_time(self) -> float:
        """Sim time [s] after the ticks run so far."""
        return self.ticks * self.dt_ns * 1e-9
