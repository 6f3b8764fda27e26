"""A sharded run's record joined while its shards fly: ``OUT/record.parquet/`` written part by part.

Each shard (:mod:`nexus.runtime.shards`) drains its own record into parts, as
one process does: ticks in order, worlds in order within a tick, its ``world``
counted from its own world 0. Its parts end at ticks of their own (a drain
comes when the table is full or two seconds of wall time have passed), so the
shards' parts do not line up. :class:`RecordJoin` keeps, for each shard, the
rows it has read and not yet written, and the sim time of the last of them.
Every shard still flying will write only later ticks, so every row at or
before the earliest of those times (over the shards still flying) is final:
those rows are taken from every shard, ordered by time and then by world (the
order one process writes), and written as the next part once a part's worth
(``record_capacity`` ticks of all worlds) is ready or two seconds have passed.
A shard that has ended holds nothing back.

A shard's next part is read only once every row read from it before is
ready to write, so the parent holds at most one part per shard in memory
(and a part's worth ready to write), never the whole record, even when one
shard flies far ahead of another; and a run killed at any moment leaves
``OUT/record.parquet/`` as whole parts of the ticks joined so far (the rest stay in each shard's own folder).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from nexus.record.durable import write_atomic
from nexus.record.parts import part_name, part_paths
from nexus.record.writer import DRAIN_EVERY_S, encode


class RecordJoin:
    """record.parquet of several shards' records, written as their parts appear.

    ``sources`` holds each shard's record folder and its first world in the run; ``part_rows`` is how many
    rows a full part holds; ``shield()`` is entered around each write (signals wait there).
    """

    def __init__(self, record: Path, sources: Sequence[tuple[Path, int]], part_rows: int,
                 shield: Callable[[], AbstractContextManager] = nullcontext, every_s: float | None = None):
        self.record = Path(record)
        self.sources = list(sources)
        self.part_rows = max(1, int(part_rows))
        self.shield = shield
        self.every_s = DRAIN_EVERY_S if every_s is None else every_s
        self.read = [0] * len(self.sources)  # parts read so far, per shard
        self.held: list[list[pa.Table]] = [[] for _ in self.sources]  # rows read, not yet final, per shard
        self.last_time: list[float | None] = [None] * len(self.sources)  # sim time [s] of each shard's last row read
        self.ready: list[pa.Table] = []  # final rows, in order, not yet written
        self.ready_rows = 0
        self.parts = 0
        self.rows = 0
        #: Sim time [s] of the last row written (None before the first).
        self.written_time: float | None = None
        self.last_write = time.monotonic()

    def pull(self, ended: Sequence[bool]) -> bool:
        """Read the shards' new parts and write what is final; True when a part was written.

        ``ended[i]``: shard i's process has ended (read before this call, so all its parts are on disk). A
        shard's next part is read only once every row read from it before has been taken, so the parent holds
        at most one part per shard, however far one shard flies ahead of another."""
        while True:
            read = False
            for index, (folder, start) in enumerate(self.sources):
                paths = part_paths(folder) if not self.held[index] else []
                while not self.held[index] and self.read[index] < len(paths):  # an empty part holds nothing back
                    self._take(index, start, pq.read_table(paths[self.read[index]]))
                    self.read[index] += 1
                    read = True
            # Shards that may still write rows: flying, or with a part not read yet. Each of their later rows
            # comes after the last row read from it.
            open_ = [i for i in range(len(self.sources))
                     if not ended[i] or self.read[i] < len(part_paths(self.sources[i][0]))]
            if any(self.last_time[i] is None for i in open_):
                break  # a shard that may still write has read out no tick yet: no row is final
            taken = self._release(min((self.last_time[i] for i in open_), default=np.inf))
            if not (read or taken):
                break
        flying = not all(ended)
        wrote = False
        while self.ready_rows >= self.part_rows:
            self._write(self.part_rows)
            wrote = True
        if self.ready_rows and (not flying or time.monotonic() - self.last_write >= self.every_s):
            self._write(self.ready_rows)
            wrote = True
        return wrote

    def finish(self) -> None:
        """Every shard has ended: write what is left (and the columns-only part 0 if nothing was written)."""
        self.pull([True] * len(self.sources))
        if self.ready_rows:
            self._write(self.ready_rows)
        if not self.parts:
            self.record.mkdir(parents=True, exist_ok=True)
            with self.shield():
                write_atomic(self.record / part_name(0), encode(pa.table({})))  # a build that failed everywhere
            self.parts = 1

    def _take(self, index: int, start: int, table: pa.Table) -> None:
        if not table.num_columns:
            return  # a failed build's part: no columns
        if "world" in table.column_names and start:
            at = table.column_names.index("world")
            world = pc.add(table.column("world"), pa.scalar(start, table.schema.field("world").type))
            table = table.set_column(at, "world", world)
        if not self.parts:  # part 0: the columns, before any row, as one process writes it
            self.record.mkdir(parents=True, exist_ok=True)
            with self.shield():
                write_atomic(self.record / part_name(0), encode(table.slice(0, 0)))
            self.parts = 1
        if table.num_rows:
            self.held[index].append(table)
            self.last_time[index] = float(table.column("time")[-1].as_py())

    def _release(self, limit: float) -> bool:
        """Move every held row at or before ``limit`` [s] to ``ready``, in one process's order; True if any."""
        taken = []
        for index, tables in enumerate(self.held):
            kept = []
            for table in tables:
                times = table.column("time").to_numpy()
                cut = int(np.searchsorted(times, limit, side="right"))
                if cut:
                    taken.append(table.slice(0, cut))
                if cut < table.num_rows:
                    kept.append(table.slice(cut))
            self.held[index] = kept
        if not taken:
            return False
        rows = pa.concat_tables(taken)
        order = pc.sort_indices(rows, sort_keys=[("time", "ascending"), ("world", "ascending")])
        rows = rows.take(order)
        self.ready.append(rows)
        self.ready_rows += rows.num_rows
        return True

    def _write(self, count: int) -> None:
        rows = pa.concat_tables(self.ready) if len(self.ready) > 1 else self.ready[0]
        part, rest = rows.slice(0, count), rows.slice(count)
        with self.shield():  # the part and the counts stay in step
            write_atomic(self.record / part_name(self.parts), encode(part))
            self.parts += 1
            self.rows += part.num_rows
            self.written_time = float(part.column("time")[-1].as_py())
            self.ready = [rest] if rest.num_rows else []
            self.ready_rows = rest.num_rows
            self.last_write = time.monotonic()
