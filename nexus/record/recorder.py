"""The record stage: copies every recorded output into a preallocated device table each tick.

What is recorded is declared by the writers, not listed here: every device
output a stage declares with ``recorded=True`` (a spec's ``Output(...,
recorded=True)``) is tapped, plus the clock's ``time``. A signal one
component writes keeps its name as the prefix of its columns
(``imu.accel[0]``); when several components write one signal, each writer's
columns take ``<signal>/<last element of its prim path>`` (``imu/Imu.accel[0]``,
``imu/ImuQuiet.accel[0]``), so two IMUs on one vehicle are both in the record.

Row ``(tick - 1) mod capacity`` of a ``uint32`` table receives every tapped
buffer's bytes, so recording is one gather kernel per tick over all the taps
(one launch, one thread per tap, not one launch per signal: on a GPU each launch costs latency), inside
the graph, with no host work. The kernel reads each tap through its address,
kept in a small device array that lives as long as the recorder, so the
captured graph never reads a freed buffer. The host drains the table between replays before
the next replay could overwrite a row not yet drained, and at the end
(:class:`nexus.record.writer.RecordWriter`); so one replay may run at most
``capacity`` ticks (``max_ticks_per_replay``).

A tick replayed after the run has ended (``running`` = 0, see
:mod:`nexus.core.clock`) writes no row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage
from nexus.core.errors import BuildError
from nexus.record.layout import TapLayout

@dataclass(frozen=True)
class Tap:
    """One recorded output: its signal, type and shape, and which of the signal's writers it is.

    ``label`` prefixes its columns (empty: the signal's name); ``writer`` is its
    index among the ``writers`` components that write the signal, in the order
    they were declared (the order a ``list[T]`` reader gets them in).
    """

    signal: str
    dtype: Any
    shape: tuple[int, ...]
    label: str = ""
    writer: int = 0
    writers: int = 1


@wp.func_native("return ((const unsigned int*)address)[index];")
def word_at(address: wp.uint64, index: wp.int32) -> wp.uint32:
    """The 32-bit word ``index`` of the buffer at device ``address``."""
    ...


@wp.kernel
def gather_taps(
    addresses: wp.array(dtype=wp.uint64),
    starts: wp.array(dtype=wp.int32),
    tick: wp.array(dtype=wp.int64),
    running: wp.array(dtype=wp.int32),
    capacity: wp.int32,
    table: wp.array2d(dtype=wp.uint32),
):
    """Tap ``t``'s words into this tick's row, at ``starts[t]`` up to ``starts[t + 1]``.

    One thread per tap, not per word: on the CPU each thread of a launch costs
    about as much as copying a tap (97 words took 1.7 µs a tick one per thread,
    against 0.3 µs one per tap), and on a GPU ten threads of 30 copies are noise.
    """
    t = wp.tid()
    if running[0] == 0:
        return
    row = wp.int32((tick[0] - wp.int64(1)) % wp.int64(capacity))
    start = starts[t]
    for k in range(starts[t + 1] - start):
        table[row, start + k] = word_at(addresses[t], k)


def recorded_taps(components: Sequence[Component]) -> list[Tap]:
    """A :class:`Tap` for every recorded device output of ``components``, in declaration order.

    ``components`` must be the ring's components in the loop's order (the clock aside): the
    writer index of a signal several components write follows it.
    """
    written: list[tuple[Any, str]] = []  # (Write, the prim it belongs to)
    for component in components:
        for stage in component.stages():
            for write in stage.writes:
                written.append((write, write.prim or component.name))
    writers = Counter(write.signal for write, _ in written)
    seen: Counter = Counter()
    found: list[tuple[Any, str, int]] = []
    for write, prim in written:
        index = seen[write.signal]
        seen[write.signal] += 1
        if not write.recorded:
            continue
        if write.shape is None:
            raise BuildError(
                f"'{write.signal}' written by {prim} is marked recorded, but it is a host signal; the record "
                "taps device signals (Warp structs and value types) only: give it a Warp type or do not record it"
            )
        found.append((write, prim, index))
    taps = []
    for write, prim, index in found:
        label = ""
        if writers[write.signal] > 1:
            label = f"{write.signal}/{_short(prim, [p for w, p, _ in found if w.signal == write.signal])}"
        taps.append(Tap(write.signal, write.dtype, tuple(write.shape), label, index, writers[write.signal]))
    return taps


def _short(prim: str, prims: list[str]) -> str:
    """The last element of ``prim``'s path, or the whole path when another writer's ends the same."""
    last = prim.rstrip("/").rsplit("/", 1)[-1]
    same = [p for p in prims if p.rstrip("/").rsplit("/", 1)[-1] == last]
    return last if len(same) == 1 else prim.strip("/")


class Recorder(Component):
    """Taps ``taps`` (each written by some component of the ring) every tick; ``time`` always comes first.

    A tap is a :class:`Tap` or a ``(signal, dtype, shape)`` tuple for a signal one component writes.
    """

    def __init__(self, taps: Sequence[Tap | tuple], capacity: int = 10240, name: str = "/record"):
        super().__init__(name)
        if capacity < 1:
            raise BuildError(f"the record needs room for at least one row, got capacity {capacity}")
        self.capacity = int(capacity)
        taps = [t if isinstance(t, Tap) else Tap(*t) for t in taps]
        self.taps: list[Tap] = [Tap("time", wp.float64, (1,)), *[t for t in taps if t.signal != "time"]]
        self.layouts: list[TapLayout] = []
        offset = 0
        for tap in self.taps:
            layout = TapLayout(tap.signal, tap.dtype, tuple(tap.shape), offset, tap.label or None)
            self.layouts.append(layout)
            offset += layout.words
        self.width = offset
        self.table = None

    @classmethod
    def for_components(cls, components: Sequence[Component], **kw) -> Recorder:
        """Tap every recorded output of ``components`` (see :func:`recorded_taps`)."""
        return cls(recorded_taps(components), **kw)

    @property
    def columns(self) -> list[str]:
        """The prefix of each tap's columns, in row order (``time``, ``imu/Imu``, ``controls``, ...)."""
        return [layout.name for layout in self.layouts]

    def stages(self) -> list[Stage]:
        reads = [Read("tick", wp.int64, (1,)), Read("running", wp.int32, (1,), default=1)]
        signals: dict[str, Tap] = {}
        for tap in self.taps:
            first = signals.setdefault(tap.signal, tap)
            if tuple(first.shape) != tuple(tap.shape) or first.dtype != tap.dtype:
                raise BuildError(
                    f"the record taps '{tap.signal}' as {first.label} and {tap.label}, whose writers declare "
                    "different types or shapes; give every writer of one signal the same type and shape"
                )
        for signal, tap in signals.items():
            # A signal several components write is read as a list: every writer, in declaration order.
            dtype = list[tap.dtype] if tap.writers > 1 else tap.dtype
            reads.append(Read(signal, dtype, tap.shape))
        return [Stage("record", "record", self._run, reads=tuple(reads))]

    def prepare(self, ctx) -> None:
        self.table = wp.zeros((self.capacity, self.width), dtype=wp.uint32, device=ctx.device)
        # Where each tap's words are: allocated and filled here, outside any capture (an array
        # allocated while capturing may not outlive the capture), and read by every replay.
        io = ctx.io_of(self, "record")
        self._addresses = wp.array([self._words(self._buffer(io, tap), layout).ptr for tap, layout in zip(self.taps, self.layouts)],
                                   dtype=wp.uint64, device=ctx.device)
        self._starts = wp.array([t.offset for t in self.layouts] + [self.width], dtype=wp.int32, device=ctx.device)

    def _buffer(self, io, tap: Tap) -> wp.array:
        """The buffer of ``tap``'s writer: a list read holds every writer of the signal, in declaration order."""
        value = io[tap.signal]
        if not isinstance(value, list):
            return value
        if len(value) != tap.writers:
            raise BuildError(
                f"the record expected {tap.writers} writers of '{tap.signal}' but the ring has {len(value)}: "
                "build the recorder from the ring's own components (Recorder.for_components)"
            )
        return value[tap.writer]

    def _words(self, array: wp.array, layout: TapLayout) -> wp.array:
        if not array.is_contiguous:
            raise BuildError(f"the record can only tap whole buffers; '{layout.name}' is a view")
        return wp.array(ptr=array.ptr, dtype=wp.uint32, shape=(layout.words,), device=array.device)

    def _run(self, io) -> None:
        wp.launch(
            gather_taps, len(self.layouts),
            inputs=[self._addresses, self._starts, io["tick"], io["running"], self.capacity],
            outputs=[self.table], device=io.device,
        )

    @property
    def max_ticks_per_replay(self) -> int:
        """A replay must not write more rows than the table holds."""
        return self.capacity

    def drain(self, rows: int, first: int = 0) -> dict[str, np.ndarray]:
        """Columns of ``rows`` rows of the table from row ``first`` on, wrapping at the end (the host's copy)."""
        table = self.table.numpy()
        if first or rows > len(table) - first:
            table = table[(first + np.arange(rows)) % self.capacity]
        else:
            table = table[:rows]
        columns: dict[str, np.ndarray] = {}
        for layout in self.layouts:
            columns.update(layout.columns(table))
        return columns
