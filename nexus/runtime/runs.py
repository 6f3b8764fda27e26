"""Run folders found under a folder, with how each ended: what ``nexus runs`` lists.

A run folder is one that holds a ``run.json``. Its status comes from that
file: ``finished``, ``failed``, ``interrupted``, ``terminated``, or
``running``, which means the process still flies (its pid lives on this
machine) or was killed (``killed`` here). A run.json that does not parse is
listed as ``unreadable``; it cannot come from a run of this version, which
replaces the file atomically.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nexus.record.parts import RECORD, is_record, record_bytes, record_rows
from nexus.runtime.run_file import RUNNING, final_status, process_alive
from nexus.runtime.run_folder import RunFolder

#: A run's files, in the order closing messages list them.
RUN_FILES = ("run.json", RECORD, "summary.parquet", "run.log", "mission.json")


@dataclass
class RunRow:
    folder: Path
    status: str
    ticks: int | None
    sim_time_s: float | None
    exit_reason: str | None
    #: Bytes of the run's files on disk (record parts, run.json, run.log).
    size: int
    error: str | None = None


def whole_files(folder: Path) -> list[str]:
    """The run files in ``folder`` that a reader can open whole (a JSON run.json, a readable record)."""
    folder = Path(folder)
    found = []
    for name in RUN_FILES:
        path = folder / name
        if name == RECORD:
            whole = _rows(path) is not None
        elif name.endswith(".json"):
            whole = RunFolder(folder).json_object(name) is not None
        else:
            whole = path.is_file()
        if whole:
            found.append(name)
    frames = folder / "frames"
    if frames.is_dir() and any(frames.glob("*.parquet/part-*.parquet")):
        found.append("frames/")
    return found


def _rows(record: Path) -> int | None:
    """Ticks the record holds, or None when it is missing or a part does not read."""
    if not is_record(record):
        return None
    try:
        return record_rows(record)
    except Exception:  # noqa: BLE001 (pyarrow raises several types for a damaged part)
        return None


def _size(folder: Path) -> int:
    total = record_bytes(folder / RECORD)
    for name in ("run.json", "run.log", "mission.json"):
        path = folder / name
        if path.is_file():
            total += path.stat().st_size
    return total


def describe(folder: Path) -> RunRow:
    """The :class:`RunRow` of one run folder."""
    folder = Path(folder)
    info = RunFolder(folder).peek_info()
    if info is None:
        return RunRow(folder, "unreadable", None, None, None, _size(folder), "run.json does not parse")
    status = info.get("status") or final_status(info.get("exit_reason"))  # older runs wrote no status
    if status == RUNNING and not process_alive(info):
        status = "killed"
    ticks = info.get("ticks")
    held = _rows(folder / RECORD) if status in (RUNNING, "killed") else None
    if held is not None:  # the record may be a drain ahead of run.json
        ticks = held
    return RunRow(folder, status, ticks, info.get("sim_time_s"), info.get("exit_reason"), _size(folder), info.get("error"))


def find_runs(root: Path) -> list[RunRow]:
    """Every run folder at or under ``root``, sorted by path."""
    root = Path(root)
    folders = sorted({p.parent for p in root.rglob("run.json")})
    return [describe(folder) for folder in folders]
