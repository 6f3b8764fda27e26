"""Draining the record table to ``record.parquet`` between replays and at the end."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from nexus.record.recorder import Recorder


class RecordWriter:
    """Appends the recorder's rows to a Parquet file, one row group per drain.

    Call :meth:`after_tick` after every tick: it drains when the table is full.
    :meth:`close` drains what is left; it is safe to call after a failure.
    """

    def __init__(self, path: Path, recorder: Recorder):
        self.path = Path(path)
        self.recorder = recorder
        self.pending = 0
        self.rows_written = 0
        self._writer: pq.ParquetWriter | None = None

    def after_tick(self) -> None:
        self.pending += 1
        if self.pending == self.recorder.capacity:
            self.drain()

    def drain(self) -> None:
        if self.pending == 0:
            return
        table = pa.table(self.recorder.drain(self.pending))
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, table.schema)
        self._writer.write_table(table)
        self.rows_written += self.pending
        self.pending = 0

    def close(self) -> None:
        try:
            self.drain()
            if self._writer is None:  # no tick ran: still leave a file with the columns
                pq.write_table(pa.table(self.recorder.drain(0)), self.path)
        finally:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
