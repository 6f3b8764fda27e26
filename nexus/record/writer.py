"""Draining the record table to ``record.parquet`` between replays and at the end."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from nexus.record.recorder import Recorder

#: No dictionary encoding: a record's columns are nearly all distinct floats, for which the
#: dictionary is pure cost; LZ4 instead of Snappy. The default flight's whole table (10,240 rows,
#: 84 columns) writes in 6.5 ms and 1,368 kB, against 18.1 ms and 1,872 kB with pyarrow's defaults
#: (`python tools/stage_costs.py`, docs/benchmarking.md).
PARQUET_OPTIONS = {"use_dictionary": False, "compression": "lz4"}


class RecordWriter:
    """Appends the recorder's rows to a Parquet file, one row group per drain.

    Before a replay of ``k`` ticks call :meth:`make_room` (``k``): it drains
    when those ticks could overwrite rows not yet drained; after it, call
    :meth:`add` with the ticks it ran. :meth:`after_tick` does both for one
    tick. With a capacity that is a multiple of ``k`` the table drains exactly
    when full, whatever ``k``, so the file is the same byte for byte.
    :meth:`close` drains what is left; it is safe to call after a failure.
    """

    def __init__(self, path: Path, recorder: Recorder):
        self.path = Path(path)
        self.recorder = recorder
        self.pending = 0
        self.rows_written = 0
        self._writer: pq.ParquetWriter | None = None

    def make_room(self, ticks: int) -> None:
        """Drain now if ``ticks`` more rows could overwrite rows not yet drained."""
        if self.pending + ticks > self.recorder.capacity:
            self.drain()

    def add(self, ticks: int) -> None:
        """Count ``ticks`` rows the record stage has written since the last call."""
        self.pending += ticks
        if self.pending > self.recorder.capacity:
            raise RuntimeError(
                f"the record table ({self.recorder.capacity} rows) overflowed: {self.pending} rows were not drained"
            )

    def after_tick(self) -> None:
        self.add(1)
        if self.pending == self.recorder.capacity:
            self.drain()

    def drain(self) -> None:
        if self.pending == 0:
            return
        # Row (tick - 1) mod capacity holds a tick: the first pending tick is rows_written + 1.
        table = pa.table(self.recorder.drain(self.pending, self.rows_written % self.recorder.capacity))
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, table.schema, **PARQUET_OPTIONS)
        self._writer.write_table(table)
        self.rows_written += self.pending
        self.pending = 0

    def close(self) -> None:
        try:
            self.drain()
            if self._writer is None:  # no tick ran: still leave a file with the columns
                pq.write_table(pa.table(self.recorder.drain(0)), self.path, **PARQUET_OPTIONS)
        finally:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
