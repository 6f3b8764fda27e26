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
(one launch, one thread per world, not one launch per signal: on a GPU each launch costs latency), inside
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
from nexus.record.layout import TapLayout, transposed

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


@wp.func_native("""
#if defined(__CUDA_ARCH__)
for (int k = 0; k < count; ++k) table.data[index + k] = ((const unsigned int*)address)[first + k];
#else
memcpy(table.data + index, ((const unsigned int*)address) + first, (size_t)count * 4);
#endif
""")
def copy_words(table: wp.array2d(dtype=wp.uint32), index: wp.int64, address: wp.uint64, first: wp.int32,
               count: wp.int32):
    """Words ``first`` .. ``first + count`` of the buffer at ``address`` to the table's words from flat ``index`` on
    (one ``memcpy`` a tap on the CPU: a world's row of the default flight, 132 words, in 0.2 µs where a loop of
    32-bit copies took 0.4)."""
    ...


@wp.kernel
def gather_taps(
    addresses: wp.array(dtype=wp.uint64),
    starts: wp.array(dtype=wp.int32),
    tick: wp.array(dtype=wp.int64),
    running: wp.array(dtype=wp.int32),
    capacity: wp.int32,
    every: wp.int64,
    width: wp.int32,
    table: wp.array2d(dtype=wp.uint32),
):
    """Every tap's words of world ``w`` into this tick's row of the world; tap ``t`` at ``starts[t]`` up to ``starts[t + 1]``.

    One thread per world, not per tap or per word: on the CPU each thread of a launch costs about
    as much as copying a few taps (16 worlds of 31 taps: 9.3 µs a tick one thread per tap and
    world, 2.9 µs one per world), and on a GPU a world's row is a few hundred bytes.
    Only every ``every``-th tick is kept; a world's row sits ``w * width`` words into the slot.
    """
    w = wp.tid()
    if running[w] == 0:
        return
    now = tick[w]
    if now % every != wp.int64(0):
        return
    slot = wp.int32((now / every - wp.int64(1)) % wp.int64(capacity))
    row = wp.int64(slot) * wp.int64(table.shape[1]) + wp.int64(w * width)  # the table is contiguous, row-major
    for t in range(addresses.shape[0]):
        start = starts[t]
        words = starts[t + 1] - start
        copy_words(table, row + wp.int64(start), addresses[t], w * words, words)


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


#: The most memory the device table of a many-world record takes [bytes]; its slots shrink to fit.
TABLE_BYTES = 64 * 1024 * 1024


class Recorder(Component):
    """Taps ``taps`` (each written by some component of the ring) every tick; ``time`` always comes first.

    A tap is a :class:`Tap` or a ``(signal, dtype, shape)`` tuple for a signal one component writes.
    """

    def __init__(self, taps: Sequence[Tap | tuple], capacity: int = 40960, name: str = "/record", every: int = 1,
                 table_bytes: int = TABLE_BYTES):
        super().__init__(name)
        if capacity < 1:
            raise BuildError(f"the record needs room for at least one row, got capacity {capacity}")
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise BuildError(f"--record-every takes a whole number of ticks, 1 or more; got {every!r}")
        #: Slots the table holds (one recorded tick of every world each); :meth:`prepare` may lower it
        #: so that the table of many worlds stays within ``table_bytes``.
        self.capacity = int(capacity)
        #: Every ``every``-th tick is recorded (ticks every, 2 every, ...).
        self.every = int(every)
        self.table_bytes = int(table_bytes)
        self.worlds = 1
        #: Vehicles in each world: with more than one, ``world`` and ``vehicle`` columns name each row's slot.
        self.vehicles = 1
        self._ticks = None
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
        """The prefix of each tap's columns, in row order (``time``, ``imu/Imu``, ``controls``, ...); with
        many worlds (known once prepared) ``world`` follows ``time``, and ``vehicle`` follows it with several
        vehicles a world, as in :meth:`drain`'s columns."""
        names = [layout.name for layout in self.layouts]
        if self.worlds == 1:
            return names
        return [names[0], "world", *(["vehicle"] if self.vehicles > 1 else []), *names[1:]]

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
        self.worlds = ctx.worlds
        self.vehicles = int(getattr(ctx, "vehicles", 1))
        if self.worlds > 1:  # one slot holds every world's row: keep the table's memory bounded
            self.capacity = max(1, min(self.capacity, self.table_bytes // (4 * self.width * self.worlds)))
        self.table = wp.zeros((self.capacity, self.width * self.worlds), dtype=wp.uint32, device=ctx.device)
        # Where each tap's words are: allocated and filled here, outside any capture (an array
        # allocated while capturing may not outlive the capture), and read by every replay.
        io = ctx.io_of(self, "record")
        self._ticks = io["tick"]
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
            gather_taps, self.worlds,
            inputs=[self._addresses, self._starts, io["tick"], io["running"], self.capacity, wp.int64(self.every),
                    self.width],
            outputs=[self.table], device=io.device,
        )

    @property
    def max_ticks_per_replay(self) -> int:
        """A replay must not write more slots than the table holds."""
        return self.capacity * self.every

    def slots_in(self, first_tick: int, ticks: int) -> int:
        """Slots the ticks ``first_tick + 1 .. first_tick + ticks`` fill (the recorded ticks among them)."""
        return (first_tick + ticks) // self.every - first_tick // self.every

    def drain(self, rows: int, first: int = 0, first_tick: int | None = None) -> dict[str, np.ndarray]:
        """Columns of ``rows`` slots of the table from slot ``first`` on, wrapping at the end (the host's copy).

        With many worlds a slot holds one row per world, and the columns get a ``world`` column
        after ``time``. Given ``first_tick`` (the tick count before the first slot's tick), a world's
        rows after the tick it ended (the clock's ``tick`` of each world) are left out.
        """
        table = self.table.numpy()
        if first or rows > len(table) - first:
            table = table[(first + np.arange(rows)) % self.capacity]
        else:
            table = table[:rows]
        if self.worlds > 1:
            table = table.reshape(rows * self.worlds, self.width)
        columns: dict[str, np.ndarray] = {}
        words = transposed(table)  # one row per word: most columns are then views, with no copy
        for layout in self.layouts:
            found = layout.word_columns(words)
            columns.update(found if found is not None else layout.columns(table))
        if self.worlds == 1:
            return columns
        world = np.tile(np.arange(self.worlds, dtype=np.int32), rows)  # the slot: a world, or a world's vehicle
        slot = world
        if self.vehicles > 1:
            world, vehicle = np.divmod(slot, np.int32(self.vehicles))
            columns = {"time": columns.pop("time"), "world": world, "vehicle": vehicle, **columns}
        else:
            columns = {"time": columns.pop("time"), "world": world, **columns}
        if first_tick is not None:
            slot_tick = (first_tick // self.every + 1 + np.repeat(np.arange(rows), self.worlds)) * self.every
            keep = slot_tick <= self._ticks.numpy()[slot]
            if not keep.all():
                columns = {name: values[keep] for name, values in columns.items()}
        return columns
