"""Checking the whole graph of signals, then allocating one buffer per output.

Everything here happens before any stage runs. Problems are collected over
the whole ring and raised together as one :class:`BuildError`, each naming
both ends (the reader and the writer, or the stage and its signal).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import warp as wp

from nexus.core.errors import BuildError
from nexus.core.ports import DevicePort, HostSlot
from nexus.core.signals import NO_DEFAULT, Read, Write, is_device_type, type_name
from nexus.core.stage import Stage


class WiringRule:
    """A domain rule the wiring checks besides its own, so an error can name a missing role.

    The engine knows signals, not what they mean; a package that gives signals
    a meaning (an estimate needs an estimator) passes rules to the loop.
    """

    def missing_writer(self, stage: Stage, read: Read) -> str | None:
        """The problem to report when nothing writes ``read`` (None: the engine's own rule applies)."""
        return None

    def check(self, outputs: Sequence["Output"]) -> list[str]:
        """Problems with the wired outputs (each output knows its readers)."""
        return []


@dataclass
class Output:
    """One written signal: its writer, its buffer and who reads it."""

    stage: Stage
    write: Write
    order: tuple[int, int]
    buffer: Any = None
    readers: list[tuple[Stage, Read]] = field(default_factory=list)

    @property
    def signal(self) -> str:
        return self.write.signal

    @property
    def prim(self) -> str:
        return self.write.prim or self.stage.component.name

    @property
    def on_device(self) -> bool:
        return is_device_type(self.write.dtype)

    @property
    def where(self) -> str:
        return f"'{self.signal}' written by {self.stage.where}"


@dataclass
class Binding:
    """What one read resolved to: outputs (several for a list) or a constant default."""

    stage: Stage
    read: Read
    outputs: list[Output]
    constant: Any = None


@dataclass
class Wiring:
    outputs: list[Output]
    bindings: list[Binding]
    #: Per stage (by ``id``): signal name -> buffer, view, port or list of them.
    arguments: dict[int, dict[str, Any]]


def _check_declaration(stage: Stage, name: str, dtype: Any, shape: Any, verb: str, problems: list[str]) -> None:
    device_type = is_device_type(dtype)
    if not stage.host and not device_type:
        problems.append(
            f"{stage.where} {verb} signal '{name}' of host type {type_name(dtype)}; a device stage can only "
            "touch Warp structs and value types. Make the stage a host stage (host=True) or give the "
            "signal a Warp type."
        )
        return
    if device_type:
        if shape is None or len(shape) == 0:
            problems.append(
                f"{stage.where} {verb} device signal '{name}' ({type_name(dtype)}) with no shape; "
                "declare shape=(1,) for one value or (1, n) for a row."
            )
        elif shape[0] != 1:
            problems.append(
                f"{stage.where} {verb} device signal '{name}' with shape {tuple(shape)}: its leading axis is "
                f"{shape[0]}, but a device signal's leading axis must be 1, as in (1,) or (1, {shape[0]})."
            )


def _fits(read_shape: tuple[int, ...], write_shape: tuple[int, ...]) -> bool:
    return len(read_shape) == len(write_shape) and all(r <= w for r, w in zip(read_shape, write_shape))


def _np_dtype(dtype: Any) -> Any:
    return wp.dtype_to_numpy(getattr(dtype, "_wp_scalar_type_", dtype))


def _device_constant(dtype: Any, shape: tuple[int, ...], value: Any, device: str) -> wp.array:
    if wp.types.type_is_struct(dtype):
        return wp.array([value] * int(np.prod(shape)), dtype=dtype, device=device).reshape(shape)
    element = tuple(getattr(dtype, "_shape_", ()))
    data = np.broadcast_to(np.asarray(value, dtype=_np_dtype(dtype)), tuple(shape) + element)
    return wp.array(np.ascontiguousarray(data), dtype=dtype, device=device)


def world_shape(shape: tuple[int, ...], worlds: int) -> tuple[int, ...]:
    """A declared device shape (leading axis 1: one world) as allocated for ``worlds`` worlds."""
    return (int(worlds), *tuple(shape)[1:])


def _view(array: wp.array, shape: tuple[int, ...]) -> wp.array:
    if tuple(array.shape) == tuple(shape):
        return array
    return array[tuple(slice(0, n) for n in shape)]


def _fill(array: wp.array, dtype: Any, shape: tuple[int, ...], value: Any, where: str) -> None:
    """Write ``value`` into the leading ``shape`` part of ``array``."""
    try:
        source = _device_constant(dtype, shape, value, str(array.device))
    except Exception as error:  # a default that does not fit the type
        raise BuildError(f"the default of {where} does not fit {type_name(dtype)} of shape {shape}: {error}") from error
    wp.copy(_view(array, shape), source)


class _Resolver:
    def __init__(self, stages: Sequence[Stage], order: dict[int, tuple[int, int]], device: str,
                 rules: Sequence[WiringRule] = ()):
        self.stages = stages
        self.rules = tuple(rules)
        self.device = device
        self.problems: list[str] = []
        self.outputs: list[Output] = []
        self.by_signal: dict[str, list[Output]] = defaultdict(list)
        self.by_prim: dict[str, list[Output]] = defaultdict(list)
        for stage in stages:
            for write in stage.writes:
                output = Output(stage, write, order[id(stage)])
                self.outputs.append(output)
        # Writers of one signal are listed in the order their components were declared.
        for output in sorted(self.outputs, key=lambda o: o.order):
            self.by_signal[output.signal].append(output)
            self.by_prim[output.stage.component.name].append(output)
            if output.write.prim and output.write.prim != output.stage.component.name:
                self.by_prim[output.write.prim].append(output)

    def check_declarations(self) -> None:
        for stage in self.stages:
            seen: set[str] = set()
            for write in stage.writes:
                if write.signal in seen:
                    self.problems.append(f"{stage.where} writes signal '{write.signal}' twice; declare it once.")
                seen.add(write.signal)
                _check_declaration(stage, write.signal, write.dtype, write.shape, "writes", self.problems)
            for read in stage.reads:
                _check_declaration(stage, read.signal, read.element_type, read.shape, "reads", self.problems)

    def _compatible(self, stage: Stage, read: Read, output: Output) -> bool:
        if read.element_type != output.write.dtype:
            self.problems.append(
                f"type mismatch on signal '{read.signal}': {stage.where} reads "
                f"{type_name(read.dtype)}, but {output.stage.where} writes {type_name(output.write.dtype)}. "
                "Make the reader and the writer agree on one type."
            )
            return False
        if output.on_device and read.shape is not None and output.write.shape is not None:
            if not _fits(tuple(read.shape), tuple(output.write.shape)):
                self.problems.append(
                    f"{stage.where} reads '{read.signal}' with shape {tuple(read.shape)}, more than the "
                    f"buffer {tuple(output.write.shape)} that {output.stage.where} writes holds; a reader may "
                    "take only the leading part of its writer's buffer."
                )
                return False
        return True

    def _by_connection(self, stage: Stage, read: Read, target: str) -> list[Output]:
        at_target = self.by_prim.get(target, [])
        named = [o for o in at_target if o.signal == read.signal]
        if not named:
            # A body's or joint's prim: its one output, whatever its name.
            named = [o for o in at_target if o.write.prim == target]
        if len(named) == 1:
            return named
        connection = f"the connection nexus:inputs:{read.signal} of {stage.where} names '{target}'"
        if not at_target:
            self.problems.append(
                f"{connection}, but no component or prim of that name writes any signal. "
                "Point the connection at the prim of the component that writes it."
            )
        elif not named:
            written = sorted({o.signal for o in at_target})
            self.problems.append(
                f"{connection}, whose component writes no signal '{read.signal}' (it writes {written}). "
                "Point the connection at a prim that writes this signal."
            )
        else:
            self.problems.append(
                f"{connection}, which writes several matching signals "
                f"({[o.signal for o in named]}); name the signal's own prim."
            )
        return []

    def resolve(self) -> list[Binding]:
        bindings: list[Binding] = []
        for stage in self.stages:
            for read in stage.reads:
                binding = self._resolve_read(stage, read)
                if binding is not None:
                    bindings.append(binding)
        return bindings

    def _resolve_read(self, stage: Stage, read: Read) -> Binding | None:
        connections = stage.component.connections
        if read.is_list:
            writers = self.by_signal.get(read.signal, [])
        elif read.signal in connections:
            writers = self._by_connection(stage, read, connections[read.signal])
            if not writers:
                return None
        else:
            writers = self.by_signal.get(read.signal, [])
            if len(writers) > 1:
                names = ", ".join(o.stage.where for o in writers)
                self.problems.append(
                    f"{stage.where} reads '{read.signal}', which {len(writers)} stages write ({names}); "
                    f"add a connection nexus:inputs:{read.signal} naming one writer's prim, or read "
                    f"it as list[{type_name(read.dtype)}]."
                )
                return None
        if not writers and read.is_list:
            return Binding(stage, read, [], constant=[])  # every writer of none: an empty list
        if not writers:
            for rule in self.rules:
                problem = rule.missing_writer(stage, read)
                if problem is not None:
                    self.problems.append(problem)
                    return None
            if read.default is NO_DEFAULT:
                self.problems.append(
                    f"{stage.where} reads '{read.signal}', but no stage writes it and the reader gives no "
                    "default; add a component that writes it or give the input a default."
                )
                return None
            return Binding(stage, read, [], constant=read.default)
        usable = [o for o in writers if self._compatible(stage, read, o)]
        if len(usable) != len(writers):
            return None
        for output in usable:
            output.readers.append((stage, read))
        return Binding(stage, read, usable)

    def check_rules(self) -> None:
        for rule in self.rules:
            self.problems.extend(rule.check(self.outputs))


def _allocate(outputs: list[Output], bindings: list[Binding], device: str, worlds: int) -> None:
    for output in outputs:
        write = output.write
        if output.on_device:
            shape = world_shape(write.shape, worlds)
            output.buffer = wp.zeros(shape, dtype=write.dtype, device=device)
            if write.default is not NO_DEFAULT:
                _fill(output.buffer, write.dtype, shape, write.default, output.where)
        else:
            output.buffer = HostSlot(write.signal, None if write.default is NO_DEFAULT else write.default)
    # A reader's default fills the part of the buffer it takes until the writer first writes.
    for binding in bindings:
        read = binding.read
        if read.default is NO_DEFAULT or not binding.outputs:
            continue
        for output in binding.outputs:
            if output.on_device:
                shape = world_shape(read.shape or output.write.shape, worlds)
                _fill(output.buffer, output.write.dtype, shape, read.default, f"'{read.signal}' read by {binding.stage.where}")
            elif not output.buffer.written and output.buffer.value is None:
                output.buffer.value = read.default


def _argument(stage: Stage, read: Read, output: Output, worlds: int) -> Any:
    if not output.on_device:
        return output.buffer
    view = _view(output.buffer, world_shape(read.shape or output.write.shape, worlds))
    return DevicePort(view, output.write.dtype, read.signal) if stage.host else view


def _constant_argument(stage: Stage, read: Read, device: str, worlds: int) -> Any:
    if read.is_list:
        return []
    if is_device_type(read.element_type):
        array = _device_constant(read.element_type, world_shape(read.shape, worlds), read.default, device)
        value = DevicePort(array, read.element_type, read.signal) if stage.host else array
    else:
        value = HostSlot(read.signal, read.default)
    return value


def wire(stages: Sequence[Stage], order: dict[int, tuple[int, int]], device: str,
         rules: Sequence[WiringRule] = (), worlds: int = 1) -> Wiring:
    """Validate every declaration and connection; allocate buffers; bind arguments.

    Shapes are declared per world (leading axis 1); buffers get ``worlds`` along that axis.

    ``stages`` are in ring order; ``order[id(stage)]`` is its (component, stage)
    declaration index, which orders several writers of one signal. ``rules``
    add domain checks (see :class:`WiringRule`).
    """
    resolver = _Resolver(stages, order, device, rules)
    resolver.check_declarations()
    if resolver.problems:
        raise _problems_error(resolver.problems)
    bindings = resolver.resolve()
    resolver.check_rules()
    if resolver.problems:
        raise _problems_error(resolver.problems)

    _allocate(resolver.outputs, bindings, device, worlds)

    arguments: dict[int, dict[str, Any]] = {id(stage): {} for stage in stages}
    for output in resolver.outputs:
        stage = output.stage
        buffer = output.buffer
        if output.on_device and stage.host:
            buffer = DevicePort(buffer, output.write.dtype, output.signal)
        arguments[id(stage)][output.signal] = buffer
    for binding in bindings:
        stage, read = binding.stage, binding.read
        if not binding.outputs:
            value = _constant_argument(stage, read, device, worlds)
        elif read.is_list:
            value = [_argument(stage, read, output, worlds) for output in binding.outputs]
        else:
            value = _argument(stage, read, binding.outputs[0], worlds)
        arguments[id(stage)][read.signal] = value
    return Wiring(resolver.outputs, bindings, arguments)


def _problems_error(problems: list[str]) -> BuildError:
    if len(problems) == 1:
        return BuildError(problems[0])
    listed = "\n".join(f"  {index}. {text}" for index, text in enumerate(problems, 1))
    return BuildError(f"the ring cannot be built ({len(problems)} problems):\n{listed}")
