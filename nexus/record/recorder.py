"""The record stage: copies chosen signals into a preallocated device table each tick.

Row ``(tick - 1) mod capacity`` of a ``uint32`` table receives every tapped
buffer's bytes, so recording is one gather kernel per tick over all the taps
(one launch, not one per signal: on a GPU each launch costs latency), inside
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

from collections.abc import Sequence
from typing import Any

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage
from nexus.core.errors import BuildError
from nexus.record.layout import TapLayout

#: What the record taps by default, when some component writes it.
DEFAULT_TAPS = ("time", "body/base", "imu", "mag", "baro", "gps", "estimate", "setpoint", "armed", "controls")


@wp.func_native("return ((const unsigned int*)address)[index];")
def word_at(address: wp.uint64, index: wp.int32) -> wp.uint32:
    """The 32-bit word ``index`` of the buffer at device ``address``."""
    ...


@wp.kernel
def gather_words(
    addresses: wp.array(dtype=wp.uint64),
    starts: wp.array(dtype=wp.int32),
    taps: wp.int32,
    tick: wp.array(dtype=wp.int64),
    running: wp.array(dtype=wp.int32),
    capacity: wp.int32,
    table: wp.array2d(dtype=wp.uint32),
):
    """Word ``k`` of this tick's row: from the tap whose words start at or before ``k``."""
    k = wp.tid()
    if running[0] == 0:
        return
    tap = wp.int32(0)
    for t in range(1, taps):
        if k >= starts[t]:
            tap = t
    row = wp.int32((tick[0] - wp.int64(1)) % wp.int64(capacity))
    table[row, k] = word_at(addresses[tap], k - starts[tap])


def writers_of(components: Sequence[Component]) -> dict[str, tuple[Any, tuple[int, ...]]]:
    """Signal -> (type, shape) for every device signal the components write (first writer wins)."""
    found: dict[str, tuple[Any, tuple[int, ...]]] = {}
    for component in components:
        for stage in component.stages():
            for write in stage.writes:
                if write.shape is not None and write.signal not in found:
                    found[write.signal] = (write.dtype, tuple(write.shape))
    return found


class Recorder(Component):
    """Taps ``signals`` (each must be written by some component) every tick."""

    def __init__(self, taps: Sequence[tuple[str, Any, tuple[int, ...]]], capacity: int = 10240, name: str = "/record"):
        super().__init__(name)
        if capacity < 1:
            raise BuildError(f"the record needs room for at least one row, got capacity {capacity}")
        self.capacity = int(capacity)
        self.layouts: list[TapLayout] = []
        offset = 0
        for signal, dtype, shape in [("time", wp.float64, (1,)), *[t for t in taps if t[0] != "time"]]:
            layout = TapLayout(signal, dtype, tuple(shape), offset)
            self.layouts.append(layout)
            offset += layout.words
        self.width = offset
        self.table = None

    @classmethod
    def for_components(cls, components: Sequence[Component], signals: Sequence[str] = DEFAULT_TAPS, **kw) -> Recorder:
        """Tap each of ``signals`` that some component writes, with its writer's type and shape."""
        written = writers_of(components)
        written.setdefault("time", (wp.float64, (1,)))
        return cls([(s, *written[s]) for s in signals if s in written], **kw)

    def stages(self) -> list[Stage]:
        reads = [Read("tick", wp.int64, (1,)), Read("running", wp.int32, (1,), default=1)] + [Read(t.signal, t.dtype, t.shape) for t in self.layouts]
        return [Stage("record", "record", self._run, reads=tuple(reads))]

    def prepare(self, ctx) -> None:
        self.table = wp.zeros((self.capacity, self.width), dtype=wp.uint32, device=ctx.device)
        # Where each tap's words are: allocated and filled here, outside any capture (an array
        # allocated while capturing may not outlive the capture), and read by every replay.
        io = ctx.io_of(self, "record")
        self._addresses = wp.array([self._words(io[t.signal], t).ptr for t in self.layouts], dtype=wp.uint64, device=ctx.device)
        self._starts = wp.array([t.offset for t in self.layouts], dtype=wp.int32, device=ctx.device)

    def _words(self, array: wp.array, layout: TapLayout) -> wp.array:
        if not array.is_contiguous:
            raise BuildError(f"the record can only tap whole buffers; '{layout.signal}' is a view")
        return wp.array(ptr=array.ptr, dtype=wp.uint32, shape=(layout.words,), device=array.device)

    def _run(self, io) -> None:
        wp.launch(
            gather_words, self.width,
            inputs=[self._addresses, self._starts, len(self.layouts), io["tick"], io["running"], self.capacity],
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
