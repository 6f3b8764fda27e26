"""Running a built ring's device stages tick after tick with one copy per tick of everything a tick writes.

A flight advances every signal and every declared state in place: one buffer
each, written again every tick, which a captured graph replays. A Warp tape
cannot carry a gradient back through such a buffer, because a kernel's
adjoint reads its inputs again and by then the buffer holds a later tick's
values. :class:`TickCopies` runs the same stages, with the same kernels, on
buffers of their own:

- every device signal a kept stage writes has one buffer per tick boundary:
  tick ``k`` (on slot ``i``) writes buffer ``i + 1``; a stage that reads the
  signal after its writer in ring order takes buffer ``i + 1``, one that reads
  it before (the ESC reads the controls the controller wrote on the tick
  before) takes buffer ``i``;
- every declared state of a kept stage's component has one array per
  boundary: ``io.state_in`` is boundary ``i``, ``io.state_out`` boundary
  ``i + 1`` (state ``in`` of tick k is state ``out`` of tick k - 1);
- a component that keeps state outside the engine's declared state (the
  physics solver's own arrays) says so by returning an :class:`ExternalCopies`
  from ``Component.tick_copies``: it allocates its own boundaries and per-tick
  scratch and points its stages at them before each tick (see that class).

So any device stage whose kernels are differentiable joins the gradient,
without the caller naming it.

Which stages run: the device stages of the ring, less the record, less the
writers of the signals the caller gives as tables (``given``, one row per
tick), and less the stages nothing needs. A stage that declares no output
acts through its component's own arrays (a force adds into the body wrench)
and is always kept; a stage with outputs is kept when one of them is among
``wanted`` or is read by a kept stage. A host stage cannot run on a tape: a
kept stage that reads a host stage's output is refused.

The clock is the one stage a taped run does not run: its outputs (``tick``,
``time``, ``time_ns``, ``running``) depend on no parameter, so they are
given as tables of the values the clock kernel writes on ticks 1 .. T
(:meth:`nexus.core.clock.Clock.tables`), as a caller may give any other
signal (the differentiable rollout gives the setpoint of its reference).
No world ends on a taped run: the clock's ``running`` is 1 throughout.

Slots: with ``slots`` < ``ticks`` the caller runs the ticks in segments that
reuse the same ``slots`` ticks of buffers (checkpointing): :meth:`carried`
and :meth:`checkpointed` name what one boundary hands the next.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import warp as wp

from nexus.core.errors import BuildError
from nexus.core.executors import run_stage
from nexus.core.signals import is_device_type
from nexus.core.stage_io import StageIO

if TYPE_CHECKING:
    from nexus.core.component import Component
    from nexus.core.loop import Loop
    from nexus.core.stage import Stage
    from nexus.core.wiring import Output


class ExternalCopies:
    """What a component keeps outside the engine's declared state, one copy per tick, for :class:`TickCopies`.

    A component returns one from ``Component.tick_copies()``. The executor asks it for ``slots + 1``
    boundaries (what one tick hands the next) and ``slots`` scratches (what one tick writes and no
    later tick reads, but a kernel's adjoint reads again), then, before each tick, calls :meth:`bind`
    with the tick's two boundaries and its scratch; :meth:`release` gives the component its live
    arrays back. The default methods hold nothing.
    """

    def boundary(self) -> Any:
        """New arrays for what one tick hands the next."""
        return None

    def scratch(self) -> Any:
        """New arrays that one tick writes and the next does not read."""
        return None

    def bind(self, before: Any, after: Any, scratch: Any, tape: wp.Tape | None) -> None:
        """Point the component's stages at ``before`` (what the tick reads), ``after`` (what it hands the next
        tick) and ``scratch``; ``tape`` is the tape being recorded (None when not recording)."""

    def start(self, boundary: Any, tape: wp.Tape | None) -> None:
        """Work that sets the first boundary up, on the tape before the first tick (None: not recording)."""

    def parameters_changed(self) -> None:
        """A parameter the component reads was set from the host: refresh what it derives from it."""

    def carried(self, boundary: Any) -> dict[str, wp.array]:
        """The boundary's arrays with a gradient, by name: the adjoint that reaches them goes on to the tick
        before."""
        return {}

    def checkpointed(self, boundary: Any) -> dict[str, wp.array]:
        """The boundary's arrays a tick reads before writing, by name: enough to run the next ticks again."""
        return {}

    def release(self) -> None:
        """Give the component back the arrays it flies with."""


def _differentiable(dtype: Any) -> bool:
    """Structs and floating-point types carry a gradient; integers do not."""
    if wp.types.type_is_struct(dtype):
        return True
    return getattr(dtype, "_wp_scalar_type_", dtype) in (wp.float16, wp.float32, wp.float64)


def _view(array: wp.array, shape: Sequence[int]) -> wp.array:
    if tuple(array.shape) == tuple(shape):
        return array
    return array[tuple(slice(0, n) for n in shape)]


class TickCopies:
    """A built ``loop``'s device stages over ``slots`` ticks of buffers of their own (see the module doc).

    ``given`` maps a signal to a table whose row ``k`` is its buffer on tick ``k`` (leading axis: ticks);
    the clock's are added (:meth:`Clock.tables`) for ``ticks`` ticks. ``wanted`` names the signals the
    caller reads (by name, or ``(signal, writer)``), so their writers are kept.
    """

    def __init__(self, loop: Loop, ticks: int, *, slots: int | None = None, given: Mapping[str, wp.array] | None = None,
                 wanted: Iterable = ()):
        loop.build()
        self.loop, self.device, self.worlds = loop, loop.device, loop.worlds
        self.ticks = int(ticks)
        self.slots = int(slots or ticks)
        self.given: dict[str, wp.array] = {**loop.clock.tables(self.ticks, self.worlds, self.device), **(given or {})}
        wanted = list(wanted)
        self.stages = self._keep(set(wanted))
        kept = {id(stage) for stage in self.stages}
        outputs = [o for o in loop.wiring.outputs if id(o.stage) in kept and o.on_device]
        position = {id(stage): n for n, stage in enumerate(self.stages)}
        #: Signal buffers, one per boundary, by output (``id``).
        self._signals: dict[int, list[wp.array]] = {}
        self._outputs: dict[int, Output] = {id(o): o for o in outputs}
        read = {id(o) for binding in loop.wiring.bindings if id(binding.stage) in kept for o in binding.outputs}
        wanted = set(wanted)
        for output in outputs:
            live = output.buffer
            if id(output) not in read and output.signal not in wanted and \
                    (output.signal, output.stage.component.name) not in wanted:
                # Read by no stage that runs and not by the caller (a rotor's body, published only when read):
                # the ring's own buffer, written in place if at all, with no gradient.
                self._signals[id(output)] = [live] * (self.slots + 1)
                continue
            grad = _differentiable(output.write.dtype)
            copies = [wp.zeros(live.shape, dtype=live.dtype, device=self.device, requires_grad=grad)
                      for _ in range(self.slots + 1)]
            wp.copy(copies[0], live)  # what the ring's start-up left there: the first tick's "before"
            self._signals[id(output)] = copies
        self.components: list[Component] = list(dict.fromkeys(stage.component for stage in self.stages))
        for component in self.components:
            own = [stage.name for stage in self.stages if stage.component is component]
            if len(own) > 1 and loop.states.of(component):
                # One state_in / state_out pair per tick: a second stage would read the state the tick began
                # with, not what the first stage wrote (in a flight both are one array).
                raise BuildError(f"component '{component.name}' declares state and runs {len(own)} stages "
                                 f"({', '.join(own)}); a taped run gives a component's state one copy per tick, "
                                 "so keep its state in one stage")
        #: Declared state, one array per boundary: component name -> state name -> arrays.
        self._states: dict[str, dict[str, list[wp.array]]] = {}
        for component in self.components:
            arrays = {}
            for name, live in loop.states.of(component).items():
                grad = _differentiable(live.dtype)
                copies = [wp.zeros(live.shape, dtype=live.dtype, device=self.device, requires_grad=grad)
                          for _ in range(self.slots + 1)]
                wp.copy(copies[0], live)
                arrays[name] = copies
            self._states[component.name] = arrays
        #: Components' own per-tick copies: component name -> (hook, boundaries, scratches).
        self._external: dict[str, tuple[ExternalCopies, list, list]] = {}
        for component in self.components:
            hook = component.tick_copies()
            if hook is not None:
                self._external[component.name] = (
                    hook, [hook.boundary() for _ in range(self.slots + 1)], [hook.scratch() for _ in range(self.slots)])
        #: Per stage: (signal, table) given per tick; (signal, output id, offset) read from a boundary, with the
        #: view shape; constants.
        self._plans = [self._plan(stage, position, kept) for stage in self.stages]
        #: Signals some stage reads before their writer runs in the tick: what boundary ``i`` hands tick ``i``.
        self._read_before = sorted({ref[1] for plan in self._plans for ref in plan[1] if ref[2] == 0})
        self._done = wp.zeros(self.worlds, dtype=wp.int32, device=self.device)

    # -- set-up ---------------------------------------------------------------------------------------------

    def _keep(self, wanted: set) -> list[Stage]:
        """The stages that run (see the module doc), in ring order."""
        loop = self.loop
        candidates = [s for s in loop.plan.stages if not s.host and s.kind != "record"
                      and s.component is not loop.clock]
        writes = {id(s): [o for o in loop.wiring.outputs if o.stage is s] for s in candidates}
        for stage in candidates:
            given = [o.signal for o in writes[id(stage)] if o.signal in self.given]
            if given and len(given) != len(writes[id(stage)]):
                others = sorted(o.signal for o in writes[id(stage)] if o.signal not in self.given)
                raise BuildError(f"{stage.where} writes {given}, which are given as tables, and also {others}; "
                                 "give all of its outputs or none")
        candidates = [s for s in candidates if not any(o.signal in self.given for o in writes[id(s)])]
        readers: dict[int, list] = {}
        for binding in loop.wiring.bindings:
            for output in binding.outputs:
                readers.setdefault(id(output), []).append(binding.stage)

        def wanted_output(output) -> bool:
            return output.signal in wanted or (output.signal, output.stage.component.name) in wanted

        kept: set[int] = {id(s) for s in candidates if not writes[id(s)]
                          or any(wanted_output(o) for o in writes[id(s)])}
        changed = True
        while changed:
            changed = False
            for stage in candidates:
                if id(stage) in kept:
                    continue
                if any(id(reader) in kept for o in writes[id(stage)] for reader in readers.get(id(o), [])):
                    kept.add(id(stage))
                    changed = True
        return [s for s in candidates if id(s) in kept]

    def _plan(self, stage: Stage, position: dict[int, int], kept: set[int]):
        """How stage ``stage`` finds its buffers each tick: given tables, boundary buffers, constants."""
        loop = self.loop
        arguments = loop.wiring.arguments[id(stage)]
        tables: list[tuple[str, wp.array, tuple]] = []
        refs: list[tuple[str, int, int, tuple, int | None]] = []  # (signal, output, offset, shape, list index)
        constants: dict[str, Any] = {}
        for output in loop.wiring.outputs:
            if output.stage is stage and output.on_device:
                refs.append((output.signal, id(output), 1, tuple(output.buffer.shape), None))
        for binding in loop.wiring.bindings:
            if binding.stage is not stage:
                continue
            read, argument = binding.read, arguments[binding.read.signal]
            if not binding.outputs:
                constants[read.signal] = argument
                continue
            for n, output in enumerate(binding.outputs):
                index = n if read.is_list else None
                shape = tuple((argument[n] if read.is_list else argument).shape)
                if output.signal in self.given:
                    if read.is_list:
                        raise BuildError(f"{stage.where} reads '{read.signal}' as a list; a given signal is one table")
                    tables.append((read.signal, self.given[output.signal], shape))
                elif not is_device_type(output.write.dtype) or output.stage.host:
                    raise BuildError(f"{stage.where} reads '{read.signal}' from {output.stage.where}, which cannot "
                                     "run on a tape; give the signal as a table")
                elif id(output.stage) not in kept:
                    raise BuildError(f"{stage.where} reads '{read.signal}' from {output.stage.where}, which the taped "
                                     "run leaves out (a record stage); give the signal as a table")
                else:
                    after = position[id(output.stage)] < position[id(stage)]
                    refs.append((read.signal, id(output), 1 if after else 0, shape, index))
        return stage, refs, tables, constants

    # -- buffers ----------------------------------------------------------------------------------------------

    def signal(self, name: str, boundary: int, writer: str | None = None) -> wp.array:
        """Boundary ``boundary``'s buffer of signal ``name`` (tick ``i`` writes boundary ``i + 1``)."""
        found = [o for key, o in self._outputs.items()
                 if o.signal == name and (writer is None or o.stage.component.name == writer)]
        if len(found) != 1:
            raise KeyError(f"signal '{name}' has {len(found)} writers among the taped stages; name one with writer=")
        return self._signals[id(found[0])][boundary]

    def state(self, component: Component, name: str, boundary: int) -> wp.array:
        """Boundary ``boundary``'s array of ``component``'s declared state ``name``."""
        return self._states[component.name][name][boundary]

    def external(self, component: Component, boundary: int | None = None, scratch: int | None = None) -> Any:
        """``component``'s own copies: its boundary ``boundary`` or its scratch ``scratch``."""
        _, boundaries, scratches = self._external[component.name]
        return boundaries[boundary] if boundary is not None else scratches[scratch]

    def hooks(self) -> list[ExternalCopies]:
        """Every component's :class:`ExternalCopies`."""
        return [hook for hook, _, _ in self._external.values()]

    def hook(self, component: Component) -> ExternalCopies:
        """``component``'s :class:`ExternalCopies` (the object ``Component.tick_copies`` returned)."""
        return self._external[component.name][0]

    # -- running ----------------------------------------------------------------------------------------------

    def start(self, tape: wp.Tape | None = None) -> None:
        """Every component's work on the first boundary (on the tape when recording), before tick 0."""
        for hook, boundaries, _ in self._external.values():
            hook.start(boundaries[0], tape)

    def tick(self, k: int, i: int | None = None, tape: wp.Tape | None = None) -> None:
        """Tick ``k`` on slot ``i`` (``k`` unless the ticks run in segments): reads boundary ``i``, writes ``i + 1``."""
        i = k if i is None else i
        for hook, boundaries, scratches in self._external.values():
            hook.bind(boundaries[i], boundaries[i + 1], scratches[i], tape)
        for stage, refs, tables, constants in self._plans:
            buffers: dict[str, Any] = dict(constants)
            for signal, table, shape in tables:
                buffers[signal] = _view(table[k], shape)
            for signal, output, offset, shape, index in refs:
                view = _view(self._signals[output][i + offset], shape)
                if index is None:
                    buffers[signal] = view
                else:
                    buffers.setdefault(signal, []).append(view)
            states = self._states.get(stage.component.name, {})
            io = StageIO(stage.name, buffers, self.device, self._done if stage.finishes else None, _no_finish,
                         self.loop.ios[id(stage)].unread,
                         state_in={name: arrays[i] for name, arrays in states.items()},
                         state_out={name: arrays[i + 1] for name, arrays in states.items()})
            run_stage(stage, io)

    def release(self) -> None:
        """Give every component its live arrays back (the loop can fly again)."""
        for hook in self.hooks():
            hook.release()

    def parameters_changed(self) -> None:
        """Tell every component a parameter was set from the host (see :meth:`ExternalCopies.parameters_changed`)."""
        for hook in self.hooks():
            hook.parameters_changed()

    # -- what a boundary carries --------------------------------------------------------------------------------

    def carried(self, boundary: int) -> list[tuple[str, wp.array]]:
        """Boundary ``boundary``'s arrays whose adjoint goes on to the tick before: signals read before their writer
        runs, declared state, the components' own (only arrays with a gradient)."""
        found = [(f"signal:{self._outputs[o].prim}:{self._outputs[o].signal}", self._signals[o][boundary])
                 for o in self._read_before]
        for component, arrays in self._states.items():
            found += [(f"state:{component}:{name}", copies[boundary]) for name, copies in arrays.items()]
        for component, (hook, boundaries, _) in self._external.items():
            found += [(f"external:{component}:{name}", a) for name, a in hook.carried(boundaries[boundary]).items()]
        return [(name, array) for name, array in found if array.grad is not None]

    def checkpointed(self, boundary: int) -> list[wp.array]:
        """Boundary ``boundary``'s arrays a tick reads before writing: what a checkpoint keeps to run on from it."""
        found = [self._signals[o][boundary] for o in self._read_before]
        for arrays in self._states.values():
            found += [copies[boundary] for copies in arrays.values()]
        for hook, boundaries, _ in self._external.values():
            found += list(hook.checkpointed(boundaries[boundary]).values())
        return found

    def arrays(self) -> list[wp.array]:
        """Every array of the slots (signals, declared state, the components' copies), each once."""
        return _arrays_in([list(self._signals.values()), [list(a.values()) for a in self._states.values()],
                           [(b, s) for _, b, s in self._external.values()]])

    def slot_arrays(self, i: int) -> list[wp.array]:
        """The arrays one more tick adds: boundary ``i + 1`` and scratch ``i`` (for estimates of memory)."""
        return _arrays_in([[copies[i + 1] for copies in self._signals.values() if copies[i + 1] is not copies[i]],
                           [[copies[i + 1] for copies in a.values()] for a in self._states.values()],
                           [(b[i + 1], s[i]) for _, b, s in self._external.values()]])


def _arrays_in(items) -> list[wp.array]:
    """The Warp arrays in ``items`` (arrays, objects holding arrays, dicts, lists and tuples of them), each once."""
    found: dict[int, wp.array] = {}

    seen: set[int] = set()

    def visit(item) -> None:
        if isinstance(item, wp.array):
            if item.ptr is not None:
                found.setdefault(item.ptr, item)
            return
        if id(item) in seen:
            return
        seen.add(id(item))
        if isinstance(item, dict):
            for value in item.values():
                visit(value)
        elif isinstance(item, (list, tuple)):
            for value in item:
                visit(value)
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            for value in vars(item).values():
                if isinstance(value, (wp.array, list, tuple, dict)) or hasattr(value, "__dict__"):
                    visit(value)

    visit(items)
    return list(found.values())


def _no_finish() -> None:
    raise BuildError("a host stage's finish() was called on a taped run; a taped run ends after its ticks")


__all__ = ["ExternalCopies", "TickCopies"]
