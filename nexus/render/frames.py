"""Frame files: every frame a render sensor wrote, losslessly, next to the record.

One Parquet dataset folder per sensor, ``frames/<sensor>.parquet/``, written
as the record is (closed part files, each renamed into place whole), so a run
that dies keeps every part it finished. One row per frame and world:
``tick`` (the tick the frame shows), ``time`` [s], ``world``, and one binary
column per array (``color``, ``depth``, ``range`` ...) holding the array's raw
bytes; the schema's metadata gives each array's shape and dtype, and the sensor's declared frame rate
[Hz] (``nexus.rate_hz``, when the writer was given it).
:func:`read_frames` turns a folder back into NumPy arrays; pandas reads it
directly (``pandas.read_parquet``).
"""

from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from nexus.record.durable import write_atomic
from nexus.record.parts import part_name

#: Frames kept in memory before a part is written.
FRAMES_PER_PART = 32


def sensor_file(name: str) -> str:
    """The folder name of sensor prim ``name``'s frames: its path without the leading slash, '/' as '.'."""
    return name.strip("/").replace("/", ".") + ".parquet"


class FrameWriter:
    """Keeps one sensor's frames and writes them a part at a time.

    A part is encoded and written by a thread of its own (pyarrow and the file
    system release the GIL), so the loop flies on while it is written; one part
    at most is in flight, and a write that failed raises at the next
    :meth:`flush` or at :meth:`close`, which waits for the last part.
    """

    def __init__(self, path: Path, worlds: int, rate_hz: float | None = None):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.worlds = worlds
        #: The sensor's declared frame rate [Hz], kept in each part's metadata (None: not known).
        self.rate_hz = rate_hz
        self.rows: list[tuple[int, float, dict]] = []
        self.parts = 0
        self.layout: dict[str, tuple[tuple[int, ...], str]] | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nexus-frames")
        self._writing: Future | None = None

    def add(self, tick: int, time_s: float, arrays: dict[str, np.ndarray]) -> None:
        if self.layout is None:
            self.layout = {k: (tuple(v.shape[1:]), str(v.dtype)) for k, v in arrays.items()}
        self.rows.append((int(tick), float(time_s), {k: np.ascontiguousarray(v) for k, v in arrays.items()}))
        if len(self.rows) >= FRAMES_PER_PART:
            self.flush()

    def flush(self) -> None:
        """Hand the frames kept so far to the writing thread as the next part."""
        if not self.rows:
            return
        rows, self.rows = self.rows, []
        self._wait()
        self._writing = self._pool.submit(self._write, rows, self.parts)
        self.parts += 1

    def _wait(self) -> None:
        """Wait for the part in flight; its error, if any, is raised here."""
        writing, self._writing = self._writing, None
        if writing is not None:
            writing.result()

    def _write(self, rows: list[tuple[int, float, dict]], index: int) -> None:
        ticks, times, worlds = [], [], []
        columns: dict[str, list[bytes]] = {name: [] for name in self.layout}
        for tick, time_s, arrays in rows:
            for world in range(self.worlds):
                ticks.append(tick)
                times.append(time_s)
                worlds.append(world)
                for name in self.layout:
                    columns[name].append(arrays[name][world].tobytes())
        table = pa.table({"tick": pa.array(ticks, pa.int64()), "time": pa.array(times, pa.float64()),
                          "world": pa.array(worlds, pa.int32()),
                          **{name: pa.array(values, pa.binary()) for name, values in columns.items()}})
        meta = {name: {"shape": list(shape), "dtype": dtype} for name, (shape, dtype) in self.layout.items()}
        extra = {} if self.rate_hz is None else {"nexus.rate_hz": repr(float(self.rate_hz))}
        table = table.replace_schema_metadata({"nexus.arrays": json.dumps(meta), **extra})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="lz4")
        write_atomic(self.path / part_name(index), sink.getvalue())

    def close(self) -> None:
        """Write what is kept and wait for it (safe twice)."""
        try:
            self.flush()
            self._wait()
        finally:
            self._pool.shutdown(wait=True)


def read_frames(path: str | Path) -> dict[str, np.ndarray]:
    """A frame folder as arrays: ``tick``, ``time``, ``world`` (one per row) and each array, stacked."""
    path = Path(path)
    parts = sorted(p for p in path.glob("part-*.parquet"))
    if not parts:
        raise FileNotFoundError(f"{path}: no frame parts (part-*.parquet) found")
    table = pa.concat_tables([pq.read_table(p) for p in parts])
    meta = json.loads(pq.read_schema(parts[0]).metadata[b"nexus.arrays"])
    out = {"tick": table["tick"].to_numpy(), "time": table["time"].to_numpy(), "world": table["world"].to_numpy()}
    for name, info in meta.items():
        raw = b"".join(table[name].to_pylist())
        out[name] = np.frombuffer(raw, dtype=info["dtype"]).reshape(-1, *info["shape"])
    return out
