"""``DIR/sweep.parquet``: one row per point, rewritten whole (atomically) as points finish.

Columns: ``point`` (its id), one column per varied parameter (named as in the
sweep file), ``status`` and ``exit_reason`` of its run, ``error``, ``wall_s``
(the point's whole time in its worker: build, flight, files [s]),
``flight_wall_s`` (the flight alone, run.json's ``wall_time_s`` [s]),
``sim_time_s``, ``ticks``, ``rtf``, the figures of :mod:`nexus.sweep.figures`,
``folder`` (``runs/<id>``, relative to DIR), ``host``, ``resumed`` (taken
from an earlier session by ``--resume``, not flown again), ``worlds_failed``
(for a point of many worlds, how many of them failed: state gone non-finite;
null for a one-world point; a point of many worlds gives its worst world's
figures), and, only in a sweep whose
points fly PX4, ``px4_instance`` (K) and ``ulog`` (PX4's log of the flight, in
the run folder).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa

from nexus.record.durable import write_atomic
from nexus.record.writer import encode
from nexus.sweep.figures import FIGURES, PLANE_FIGURES

SWEEP_TABLE = "sweep.parquet"
#: Columns after the parameters, in order.
RESULT_COLUMNS = ("status", "exit_reason", "error", "wall_s", "flight_wall_s", "sim_time_s", "ticks",
                  *(name for name, _ in FIGURES), *(name for name, _ in PLANE_FIGURES), "folder", "host", "resumed",
                  "px4_instance", "ulog", "worlds_failed")
#: Columns of a sweep whose points fly PX4 (left out of a table where no point has them).
PX4_COLUMNS = ("px4_instance", "ulog")
#: Columns of a sweep whose points fly a plane's mission (left out of a table where no point has them).
PLANE_COLUMNS = tuple(name for name, _ in PLANE_FIGURES)
#: Statuses of a point whose run did what it was asked.
OK_STATUSES = ("finished",)


def _column(values: list) -> pa.Array:
    """One parameter's values as a typed column: numbers, booleans or text (lists become JSON text)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.array(values, type=pa.bool_())
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.array(values, type=pa.int64())
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64())
    return pa.array([None if v is None else (v if isinstance(v, str) else json.dumps(v)) for v in values],
                    type=pa.string())


def _number(value) -> float:
    return math.nan if value is None else float(value)


def write_table(folder: Path, parameters: list[str], rows: list[dict]) -> Path:
    """Write sweep.parquet for ``rows`` (each with ``values`` and the result fields)."""
    columns: dict[str, pa.Array] = {"point": pa.array([r["point"] for r in rows], type=pa.string())}
    for name in parameters:
        columns[name] = _column([r.get("values", {}).get(name) for r in rows])
    floats = ("wall_s", "flight_wall_s", "sim_time_s", *(name for name, _ in FIGURES), *PLANE_COLUMNS)
    px4 = any(r.get(name) is not None for r in rows for name in PX4_COLUMNS)
    plane = any(name in r for r in rows for name in PLANE_COLUMNS)
    for name in RESULT_COLUMNS:
        if (name in PX4_COLUMNS and not px4) or (name in PLANE_COLUMNS and not plane):
            continue
        if name in floats:
            columns[name] = pa.array([_number(r.get(name)) for r in rows], type=pa.float64())
        elif name in ("ticks", "px4_instance", "worlds_failed"):
            columns[name] = pa.array([r.get(name) for r in rows], type=pa.int64())
        elif name == "resumed":
            columns[name] = pa.array([bool(r.get(name)) for r in rows], type=pa.bool_())
        else:
            columns[name] = pa.array([None if r.get(name) is None else str(r.get(name)) for r in rows], type=pa.string())
    table = pa.Table.from_arrays(list(columns.values()), names=list(columns))
    path = Path(folder) / SWEEP_TABLE
    write_atomic(path, encode(table))
    return path
