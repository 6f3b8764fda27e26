"""The record on disk: ``record.parquet/`` is a folder of whole Parquet parts, read as one table.

Each drain of the device table becomes one part, ``part-000001.parquet``,
``part-000002.parquet``, ... (ticks in order, part after part), written by
:func:`nexus.record.durable.write_atomic`. Part 0 has the columns and no
rows, written before the first tick, so even a run killed at once leaves a
record with its schema. A process killed mid-drain leaves at most a hidden
``.part-*.tmp`` file, which no reader sees. pyarrow, pandas and polars read
the folder as one table::

    pyarrow.parquet.read_table("OUT/record.parquet")
    pandas.read_parquet("OUT/record.parquet")
    polars.read_parquet("OUT/record.parquet/*.parquet")
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

RECORD = "record.parquet"


def part_name(index: int) -> str:
    return f"part-{index:06d}.parquet"


def part_paths(record: Path) -> list[Path]:
    """The record's visible parts, in tick order (hidden temporary files are not parts)."""
    record = Path(record)
    return sorted(p for p in record.glob("part-*.parquet") if p.is_file())


def is_record(record: Path) -> bool:
    """Whether ``record`` is a record folder with at least its first part (or an older one-file record)."""
    record = Path(record)
    return record.is_file() or (record.is_dir() and bool(part_paths(record)))


def read_record(record: Path) -> pa.Table:
    """Every part of ``record`` as one table, parts in order.

    Raises :class:`OSError` or :class:`pyarrow.ArrowException` for a missing
    folder or a part that is no Parquet file.
    """
    record = Path(record)
    if record.is_file():  # a record written before records were folders: one Parquet file
        return pq.read_table(record)
    if not record.is_dir():
        raise FileNotFoundError(f"{record} is not a record folder (a folder of part-*.parquet files)")
    parts = part_paths(record)
    if not parts:
        raise FileNotFoundError(f"{record} holds no part-*.parquet file")
    tables = [pq.read_table(part) for part in parts]
    tables = [t for t in tables if t.num_columns] or tables[:1]  # a failed build's part has no columns
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def record_bytes(record: Path) -> int:
    """Bytes on disk of the record's visible parts."""
    record = Path(record)
    if record.is_file():
        return record.stat().st_size
    return sum(p.stat().st_size for p in part_paths(record)) if record.is_dir() else 0


def record_rows(record: Path) -> int:
    """Ticks the record holds, from its parts' footers (reads no column)."""
    record = Path(record)
    parts = [record] if record.is_file() else part_paths(record)
    return sum(pq.read_metadata(part).num_rows for part in parts)
