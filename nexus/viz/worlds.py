"""A run of many worlds (``nexus run --worlds N``), read back for ``nexus plot`` and ``nexus view``.

Such a run flies N vehicles at once. Its record holds one row per recorded
tick per world, sorted by tick then world, with an int32 ``world`` column;
``summary.parquet`` holds one row per world (how it ended, its errors, the
Monte Carlo values it drew). A record written before worlds existed has no
``world`` column: all its rows are world 0. With ``record_mode: summary``
there is no record at all, only the summary.

:func:`load_worlds` reads what the overview figures and the viewer need from
every world (time, base pose, setpoint position), part by part and column by
column so that 1,024 worlds stay a few hundred MB; :func:`world_run` reads
one world's whole record as a :class:`~nexus.viz.run_data.RunData`, so the
one-vehicle figures draw it unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from nexus.runtime.run_file import partial_note
from nexus.runtime.run_folder import SUMMARY, RunFolder, first_world, world_count
from nexus.viz.errors import RunFolderError
from nexus.viz.run_data import REQUIRED_COLUMNS, RunData

#: The per-world figures of ``summary.parquet`` the report draws as distributions: column, label, unit.
FIGURES = (("done_time", "done time", "s"), ("max_altitude_error", "max altitude error", "m"),
           ("max_yaw_error", "max yaw error", "deg"), ("landing_error", "landing error", "m"))
#: How a world ended (``exit_reason`` in summary.parquet), in display order.
EXIT_REASONS = ("done", "duration", "battery-empty", "failed")
POSE = tuple(f"body/base.pose[{i}]" for i in range(7))
SETPOINT = tuple(f"setpoint.position[{i}]" for i in range(3))


def reasons_present(reasons: np.ndarray) -> list[str]:
    """The exit reasons that occur in ``reasons``: EXIT_REASONS' order first, then any others sorted."""
    found = set(reasons.tolist())
    return [r for r in EXIT_REASONS if r in found] + sorted(found - set(EXIT_REASONS))


def is_many_worlds(folder: Path) -> bool:
    """Whether RUN flew several worlds, or kept only its summary: the worlds report and viewer show it."""
    run = RunFolder(folder)
    info = run.peek_info()
    if info is None:
        return False
    return world_count(info) > 1 or (not run.has_record() and run.has_summary())


def check_world(folder: Path, world: int, worlds: int) -> int:
    """``world`` when it is one of RUN's worlds; else :class:`RunFolderError` naming the run and the valid range."""
    if not 0 <= world < worlds:
        valid = "0 (it flew one world)" if worlds == 1 else f"0..{worlds - 1} (it flew {worlds} worlds)"
        raise RunFolderError(f"--world {world} is not a world of {folder}: give a world in {valid}")
    return world


@dataclass
class Tracks:
    """Every world's recorded path, rows grouped by world (world 0's rows first), each world's in time order."""

    #: Sim time of each row [s], shape (rows,).
    time: np.ndarray
    #: Row offsets: world w's rows are ``start[w]:start[w + 1]``, shape (worlds + 1,).
    start: np.ndarray
    #: Base position, world ENU [m], shape (rows, 3), float32.
    position: np.ndarray
    #: Base attitude, Warp (x, y, z, w) quaternion, shape (rows, 4), float32.
    quaternion: np.ndarray
    #: Setpoint position, NED from the NED origin [m], shape (rows, 3); None when not recorded.
    setpoint: np.ndarray | None

    @property
    def worlds(self) -> int:
        return len(self.start) - 1

    def rows(self, world: int) -> slice:
        return slice(int(self.start[world]), int(self.start[world + 1]))

    def ticks(self) -> np.ndarray:
        """The recorded times of all worlds together, sorted, each once [s]."""
        return np.unique(self.time)

    def rows_at(self, ticks: np.ndarray) -> np.ndarray:
        """Per tick and world, the world's last row at or before the tick (its first before it starts), (ticks, worlds).

        -1 for a world with no row at all. When every world recorded every tick this is just the record's grid.
        """
        index = np.full((len(ticks), self.worlds), -1, dtype=np.int64)
        for w in range(self.worlds):
            rows = self.rows(w)
            if rows.stop > rows.start:
                at = np.searchsorted(self.time[rows], ticks, side="right") - 1
                index[:, w] = rows.start + np.clip(at, 0, rows.stop - rows.start - 1)
        return index


@dataclass
class WorldsRun:
    folder: Path
    #: run.json as written by ``nexus run``.
    info: dict
    worlds: int
    #: summary.parquet as columns indexed by world (row w is world w); None when the run wrote none.
    summary: dict[str, np.ndarray] | None
    #: Every world's path; None when the run recorded summaries only.
    tracks: Tracks | None
    #: One line when the run did not end by itself, or left something out: what is shown.
    notes: list[str]
    #: Each world's NED origin, where its base settled at start-up, world ENU [m], shape (worlds, 3).
    origins: np.ndarray | None = None

    @property
    def ned_origin_enu(self) -> np.ndarray:
        """World 0's NED origin (run.json's ``ned_origin_enu_m``), world ENU [m]."""
        return np.asarray(self.info.get("ned_origin_enu_m", (0.0, 0.0, 0.0)), dtype=np.float64)

    @property
    def tick_s(self) -> float | None:
        return float(self.info["tick_ns"]) * 1e-9 if "tick_ns" in self.info else None

    def exit_reasons(self) -> np.ndarray:
        """Each world's ``exit_reason`` (``?`` when the summary does not say), shape (worlds,)."""
        if self.summary is None or "exit_reason" not in self.summary:
            return np.full(self.worlds, "?", dtype=object)
        return self.summary["exit_reason"]

    def failed(self) -> np.ndarray:
        """The worlds whose vehicle failed, in world order."""
        return np.flatnonzero(self.exit_reasons() == "failed")

    def failure_points(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(worlds, time [s], ENU position [m]) where each failed world was last seen flying.

        From the record: its last row at or before the failed tick (its last row when the tick is unknown).
        Without a record: the summary's final position, at the failed tick's time (NaN when unknown).
        """
        failed = self.failed()
        times, points = np.full(len(failed), np.nan), np.full((len(failed), 3), np.nan)
        tick_s = self.tick_s
        failed_tick = self.summary.get("failed_tick") if self.summary else None
        for k, w in enumerate(failed):
            until = np.inf
            if failed_tick is not None and tick_s is not None and failed_tick[w] >= 0:
                until = (float(failed_tick[w]) + 0.5) * tick_s
                times[k] = float(failed_tick[w]) * tick_s
            if self.tracks is not None:
                rows = self.tracks.rows(w)
                if rows.stop > rows.start:
                    last = rows.start + max(0, int(np.searchsorted(self.tracks.time[rows], until, side="right")) - 1)
                    times[k], points[k] = self.tracks.time[last], self.tracks.position[last]
            elif self.summary and all(f"final_{a}" in self.summary for a in "xyz"):
                points[k] = [self.summary[f"final_{a}"][w] for a in "xyz"]
        return failed, times, points

    def vary_columns(self) -> list[str]:
        """The summary's ``vary.<param>`` columns, in file order."""
        return [name for name in (self.summary or {}) if name.startswith("vary.")]

    def world_values(self, world: int) -> dict:
        """The Monte Carlo values world ``world`` drew: the summary's ``vary.*`` columns, else run.json's."""
        if self.vary_columns():
            return {name[len("vary."):]: _plain(self.summary[name][world]) for name in self.vary_columns()}
        values = self.info.get("world_values") or []
        return dict(values[world]) if world < len(values) and isinstance(values[world], dict) else {}


def load_worlds(folder: Path, setpoints: bool = True) -> WorldsRun:
    """Read run.json, summary.parquet and every world's path from RUN; :class:`RunFolderError` on anything unusable."""
    run = RunFolder(folder).require(record=False)
    folder, info = run.path, run.info
    worlds = world_count(info)
    notes: list[str] = []
    summary = read_summary(run, worlds, first_world(info)) if run.has_summary() else None
    if summary is None:
        notes.append(f"{folder} has no {SUMMARY} (the run did not finish?): no distributions, failed worlds not "
                     "marked")
    tracks = None
    if run.has_record():
        tracks = read_tracks(run, worlds, setpoints)
        ticks = len(tracks.ticks())
        note = partial_note(info, ticks)
        if note:
            notes.append(note)
    else:  # require(record=False) saw the summary
        notes.append(f"the run kept a summary only (record_mode {info.get('record_mode', 'summary')!r}): "
                     "no paths, final positions only")
    first = first_world(info)
    if first:
        notes.append(f"this run flew worlds {first}..{first + worlds - 1} of a sweep; they are numbered "
                     f"0..{worlds - 1} here (world i here is world {first} + i of the sweep)")
    return WorldsRun(folder, info, worlds, summary, tracks, notes, world_origins(info, worlds, tracks))


def world_origins(info: dict, worlds: int, tracks: Tracks | None) -> np.ndarray:
    """Each world's NED origin, world ENU [m], (worlds, 3).

    Start-up fixes each world's origin where its own base settled, and run.json keeps world 0's
    (``ned_origin_enu_m``); the record's first row of each world is taken at rest a tick later, so world w's
    origin is world 0's moved by the difference of their first rows (worlds may start apart). run.json's
    ``ned_origins_enu_m``, when a run writes one per world, is taken as it is.
    """
    listed = info.get("ned_origins_enu_m")
    if isinstance(listed, list) and len(listed) == worlds:
        return np.asarray(listed, dtype=np.float64).reshape(worlds, 3)
    origin = np.asarray(info.get("ned_origin_enu_m", (0.0, 0.0, 0.0)), dtype=np.float64)
    origins = np.tile(origin, (worlds, 1))
    if tracks is None or tracks.start[1] == tracks.start[0]:  # no rows of world 0 to measure from
        return origins
    has_rows = np.diff(tracks.start) > 0
    first = tracks.position[np.minimum(tracks.start[:-1], len(tracks.time) - 1)].astype(np.float64)
    origins[has_rows] = origin + (first[has_rows] - first[0])
    return origins


def read_summary(run: RunFolder, worlds: int, first: int = 0) -> dict[str, np.ndarray]:
    """summary.parquet as columns with row w for world w (worlds it lacks: NaN, -1, or ``?``).

    The summary numbers a sweep's worlds from ``first`` (run.json's ``first_world``); the record, and these
    columns, from 0.
    """
    table = run.summary()
    path = run.summary_path
    if "world" in table.column_names:
        index = table.column("world").to_numpy().astype(np.int64)
        if first and len(index) and index.min() >= first:
            index = index - first
    else:
        index = np.arange(table.num_rows)
    if len(index) and (index.min() < 0 or index.max() >= worlds):
        raise RunFolderError(f"{path} has rows for world {int(index.max()) + first}, but run.json says the run "
                             f"flew {worlds} world{'s' if worlds != 1 else ''}; the summary is from another run")
    columns: dict[str, np.ndarray] = {}
    for name in table.column_names:
        values = table.column(name).to_numpy(zero_copy_only=False)
        if values.dtype.kind in "fiub":
            missing = -1 if values.dtype.kind in "iub" and name != "world" else np.nan
            out = np.full(worlds, missing, dtype=np.float64 if missing is np.nan else np.int64)
        else:
            out = np.full(worlds, "?", dtype=object)
        out[index] = values
        if name == "exit_reason":
            out = np.array(["?" if v is None else str(v) for v in out], dtype=object)
        columns[name] = out
    columns["world"] = np.arange(worlds)
    return columns


def read_tracks(run: RunFolder, worlds: int, setpoints: bool = True) -> Tracks:
    """time, world, base pose and (when recorded) the setpoint position of every row, part by part."""
    record = run.record_path
    recorded = run.record_names()
    absent = [name for name in REQUIRED_COLUMNS if name not in recorded]
    if absent:
        raise run.lacks(absent)
    names = [name for name in ("time", "world", *POSE, *(SETPOINT if setpoints else ())) if name in recorded]
    chunks: dict[str, list[np.ndarray]] = {}
    for table in run.record_parts(columns=names):
        for name in names:
            chunks.setdefault(name, []).append(table.column(name).to_numpy())
    rows = sum(len(c) for c in chunks.get("time", []))
    if rows == 0:
        raise run.no_rows()
    column = {name: np.concatenate(parts_of) for name, parts_of in chunks.items()}
    world = column["world"].astype(np.int64) if "world" in column else np.zeros(rows, dtype=np.int64)
    if world.min() < 0 or world.max() >= worlds:
        raise RunFolderError(f"{record} has rows of world {int(world.max())}, but run.json says the run flew "
                             f"{worlds} world{'s' if worlds != 1 else ''}; the record is from another run")
    order = np.argsort(world, kind="stable")  # the record is in tick order: each world's rows stay so
    start = np.zeros(worlds + 1, dtype=np.int64)
    np.cumsum(np.bincount(world, minlength=worlds), out=start[1:])

    def stack(names_: tuple[str, ...]) -> np.ndarray:
        return np.stack([column[name][order] for name in names_], axis=1).astype(np.float32)

    return Tracks(time=column["time"][order].astype(np.float64), start=start, position=stack(POSE[:3]),
                  quaternion=stack(POSE[3:]),
                  setpoint=stack(SETPOINT) if all(name in column for name in SETPOINT) else None)


def world_run(folder: Path, world: int, info: dict | None = None, origin: np.ndarray | None = None) -> RunData:
    """World ``world``'s whole record as one run: every column, its rows only (read part by part).

    ``origin``: the world's own NED origin, world ENU [m] (see :func:`world_origins`); the run's
    ``ned_origin_enu_m`` then says it, so its estimate and setpoint line up with its truth.
    """

    run = RunFolder(folder)
    folder = run.path
    info = run.info if info is None else info
    tables = run.record_parts(world=world)
    if not tables:
        raise run.no_rows()
    table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    if table.num_rows == 0:
        raise run.no_rows(f"of world {world}")
    columns = {name: table.column(name).to_numpy() for name in table.column_names if name != "world"}
    if origin is not None:
        info = {**info, "ned_origin_enu_m": [float(x) for x in origin]}
    return RunData(folder, info, columns, note=None)


def grid(worlds: int) -> tuple[int, int]:
    """(columns, rows) of the smallest near-square grid with a cell per world."""
    cols = max(1, math.ceil(math.sqrt(worlds)))
    return cols, max(1, math.ceil(worlds / cols))


def _plain(value):
    """A NumPy scalar as a plain Python value (for tables and JSON)."""
    return value.item() if hasattr(value, "item") else value
