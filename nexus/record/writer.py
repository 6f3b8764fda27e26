"""Draining the record table to ``record.parquet/`` between replays and at the end, one whole part a drain."""

from __future__ import annotations

import time
from pathlib import Path
from contextlib import nullcontext
from typing import Callable, ContextManager

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from nexus.record.durable import WriteFailed, failure, write_atomic
from nexus.record.parts import part_name
from nexus.record.recorder import Recorder

#: No dictionary encoding: a record's columns are nearly all distinct floats, for which the
#: dictionary is pure cost; LZ4 instead of Snappy. The default flight's whole table (10,240 rows,
#: 84 columns) writes in 6.5 ms and 1,368 kB, against 18.1 ms and 1,872 kB with pyarrow's defaults
#: (`python tools/stage_costs.py`, docs/benchmarking.md). Min/max statistics only for ``time`` and
#: ``world``, the columns a reader filters a dataset by: for every column they cost a quarter of the
#: encoding (16 worlds: 11.7 µs a tick with them, 9.0 without).
#: Rows are handed to the column writers in batches of a whole default table (pyarrow's default, 1,024, costs
#: about 10 % more to encode 40,960 rows; the pages and values are the same).
PARQUET_OPTIONS = {"use_dictionary": False, "compression": "lz4", "write_statistics": ["time", "world"],
                   "write_batch_size": 40960}

#: The longest wall time [s] between drains while ticks wait: a killed run loses at most this much.
DRAIN_EVERY_S = 2.0


def columns_table(columns: dict[str, np.ndarray]) -> pa.Table:
    """The record's columns as a pyarrow table, viewing each NumPy buffer in place.

    Built from buffers rather than with ``pa.table``: that one imports pandas
    when it is installed (half a second, once per process, paid inside the
    flight's first drain).
    """
    arrays = []
    for values in columns.values():
        values = np.ascontiguousarray(values)
        if values.dtype == np.bool_:  # Arrow packs booleans in bits
            arrays.append(pa.array(values))
        else:
            arrays.append(pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values),
                                                [None, pa.py_buffer(values)]))
    return pa.Table.from_arrays(arrays, names=list(columns)) if arrays else pa.schema([]).empty_table()


def encode(table: pa.Table) -> pa.Buffer:
    """``table`` as the bytes of one Parquet file."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **PARQUET_OPTIONS)
    return sink.getvalue()


class RecordWriter:
    """Appends the recorder's rows to the record folder, one part file per drain.

    Before a replay of ``k`` ticks call :meth:`make_room` (``k``): it drains
    when those ticks could overwrite rows not yet drained, or when
    ``drain_every_s`` [s] of wall time (:data:`DRAIN_EVERY_S` unless given)
    have passed since the last drain; after
    it, call :meth:`add` with the ticks it ran. :meth:`after_tick` does both
    for one tick. :meth:`close` drains what is left; it is safe to call after
    a failure. ``on_drain(ticks_written, rows_written)`` runs after each drain
    (the run rewrites run.json there). ``shield()`` is entered around each
    drain (the run holds SIGINT and SIGTERM back there, :mod:`nexus.runtime.stopping`).

    A drain that cannot write raises :class:`~nexus.record.durable.WriteFailed`
    (``disk-full`` or ``write-failed``); the parts before it stay whole and the
    writer writes nothing more.
    """

    def __init__(self, path: Path, recorder: Recorder, *, on_drain: Callable[[int, int], None] | None = None,
                 drain_every_s: float | None = None,
                 shield: Callable[[], ContextManager] = nullcontext):
        self.path = Path(path)
        self.recorder = recorder
        self.on_drain = on_drain
        #: Read here, not bound as a default: a test that needs drains only when the table is full sets the module's.
        self.drain_every_s = DRAIN_EVERY_S if drain_every_s is None else drain_every_s
        self.shield = shield
        self.pending = 0
        #: Ticks drained so far (a tick of many worlds, or one not recorded, is still one tick).
        self.ticks_written = 0
        #: Rows in the parts so far: one per recorded tick and world.
        self.rows_written = 0
        self.parts = 0
        self.failed: WriteFailed | None = None
        try:
            self.path.mkdir(exist_ok=True)
        except OSError as error:
            raise failure(error, self.path.parent, f"the record folder {self.path.name}/", 4096) from None
        self._write(columns_table(recorder.drain(0)))  # part 0: the columns, before any tick
        self.last_drain = time.monotonic()

    def _slots(self, ticks: int) -> int:
        return self.recorder.slots_in(self.ticks_written, ticks)

    def make_room(self, ticks: int) -> None:
        """Drain now if ``ticks`` more ticks could overwrite slots not yet drained, or the last drain is old."""
        if self._slots(self.pending + ticks) > self.recorder.capacity or (
            self.pending and time.monotonic() - self.last_drain >= self.drain_every_s
        ):
            self.drain()

    def add(self, ticks: int) -> None:
        """Count ``ticks`` ticks the record stage has run since the last call."""
        self.pending += ticks
        if self._slots(self.pending) > self.recorder.capacity:
            raise RuntimeError(
                f"the record table ({self.recorder.capacity} slots) overflowed: {self._slots(self.pending)} slots "
                "were not drained"
            )

    def after_tick(self) -> None:
        self.add(1)
        if self._slots(self.pending) == self.recorder.capacity:
            self.drain()

    def drain(self) -> None:
        if self.pending == 0 or self.failed is not None:
            return
        with self.shield():  # a signal now waits: the part and the count of rows written stay in step
            recorder = self.recorder
            # Slot (tick / every - 1) mod capacity holds a recorded tick: the first pending one follows
            # the ticks drained so far.
            slots = self._slots(self.pending)
            table = columns_table(recorder.drain(slots, (self.ticks_written // recorder.every) % recorder.capacity,
                                                 first_tick=self.ticks_written)) if slots else None
            if table is not None and table.num_rows:
                self._write(table)
                self.rows_written += table.num_rows
            self.ticks_written += self.pending
            self.pending = 0
            self.last_drain = time.monotonic()
            if self.on_drain is not None:
                self.on_drain(self.ticks_written, self.rows_written)

    def _write(self, table: pa.Table) -> None:
        data = encode(table)
        name = part_name(self.parts)
        try:
            write_atomic(self.path / name, data)
        except OSError as error:
            self.failed = failure(error, self.path, f"record part {name} ({table.num_rows} ticks)", data.size)
            raise self.failed from None
        self.parts += 1

    def close(self) -> None:
        """Drain what is left (nothing once a write has failed)."""
        self.drain()
