"""``nexus replay``: rerun a recorded flight open loop and compare it bit for bit.

The recorded ``controls`` rows drive the same vehicle, scene, seed and tick
on the CPU; every column the replay produces must equal the record's bits.
The setpoint and ``armed`` are the guidance's, which is not in the ring open
loop, so they are listed as not compared.

The run's configuration comes back whole from run.json
(:meth:`nexus.runtime.config.RunConfig.from_dict`); the replay changes only what an
open-loop replay must: the controller, the device (the CPU), the files (the
paths the run flew, whose digests are checked) and the duration (the ticks
recorded).

Before it flies, the replay checks what it was given: run.json must parse,
record.parquet must read whole and hold as many rows as run.json says the run
recorded, the run must have flown at least one tick, and the vehicle and scene
files must still have the SHA-256 digests the run recorded.

A run whose process was killed leaves a run.json that still says ``running``,
counting the ticks of the last drain it saw through; its record may hold one
drain more (killed between the part's rename and run.json's). Such a run
replays the ticks its record holds, at least run.json's count. A run that
ended ``disk-full`` or ``write-failed`` flew ticks its record could not keep;
it replays the ``record_rows`` its record holds.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from nexus.control.replay import ReplayControls
from nexus.core.errors import BuildError
from nexus.render.frames import read_frames
from nexus.runtime.config import ConfigError, RunConfig
from nexus.runtime.run import check_out, file_digest, prepare_out, run_flight, values_from_json
from nexus.runtime.run_file import RUNNING, WRITE_FAILURES, partial_note
from nexus.runtime.run_folder import RunFolder


class ReplayError(BuildError):
    """The record cannot be replayed (missing, broken or changed files, columns or fields).

    Raised before the replay flies anything, so it counts as bad input.
    """

    reason = "replay-error"


@dataclass
class ReplayResult:
    #: Ticks compared (with many worlds: the longest world's; the record holds a row per world and tick).
    ticks: int
    compared: list[str]
    #: Columns of the record the replay did not produce.
    not_compared: list[str]
    #: (tick, column) of the first difference, or None when every bit matched.
    first_difference: tuple[int, str] | None = None
    details: dict = field(default_factory=dict)
    #: Columns the replay produced that the record lacks.
    not_recorded: list[str] = field(default_factory=list)
    #: One line when the run did not end by itself: which ticks were replayed.
    note: str | None = None
    #: Sensor -> frames compared, for each ray-traced sensor whose frames the run kept.
    frames: dict = field(default_factory=dict)
    #: (sensor, tick the frame shows, array) of the first frame that differs, or None.
    frame_difference: tuple[str, int, str] | None = None
    #: Worlds of the run, and the record's rows compared (ticks times worlds, less the ticks of worlds that ended early).
    worlds: int = 1
    rows: int = 0
    #: Vehicles in each world (``worlds`` counts slots: worlds times vehicles).
    vehicles: int = 1

    @property
    def identical(self) -> bool:
        return self.first_difference is None and self.frame_difference is None


def load_run(out: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """run.json and the record's columns, or a :class:`ReplayError` naming the broken file."""
    folder = RunFolder(out, ReplayError).require()
    return folder.info, folder.columns()


def check_run(out: Path, info: dict, columns: dict[str, np.ndarray]) -> int:
    """Check the record against run.json and the files on disk; return its rows (ticks; with many
    worlds the ticks of the longest world)."""
    out = Path(out)
    rows = len(next(iter(columns.values()))) if columns else 0
    ticks, recorded = info.get("ticks"), info.get("record_rows")
    if int(info.get("record_every", 1)) != 1:
        raise ReplayError(f"{out} recorded every {info['record_every']}th tick; an open-loop replay needs every "
                          "tick's controls: replay a run flown with `nexus run --record-every 1`")
    if int(info.get("worlds", 1)) * int(info.get("vehicles", 1)) > 1:
        if not ticks or rows != recorded:
            raise ReplayError(
                f"{out / 'record.parquet'} holds {rows} rows but {out / 'run.json'} says the run recorded {recorded} "
                f"over {ticks} ticks: the record was cut or belongs to another run")
        check_files(out, info, rows)
        return int(ticks)
    if info.get("status") == RUNNING:  # the process died: its record may be one drain ahead of run.json
        if not rows or not isinstance(recorded, int) or rows < recorded:
            raise ReplayError(
                f"{out / 'record.parquet'} holds {rows} rows but {out / 'run.json'} says the killed run had "
                f"recorded {recorded}: the record was cut or belongs to another run"
            )
        return check_files(out, info, rows)
    if not ticks:
        raise ReplayError(f"{out} holds a run of 0 ticks (exit_reason {info.get('exit_reason')!r}): nothing to replay")
    if info.get("exit_reason") in WRITE_FAILURES and rows and rows == recorded:  # flew on past its last whole part
        return check_files(out, info, rows)
    if rows != recorded or rows != ticks:
        raise ReplayError(
            f"{out / 'record.parquet'} holds {rows} rows but {out / 'run.json'} says the run flew {ticks} ticks "
            f"and recorded {recorded} rows: the record was cut or belongs to another run"
        )
    return check_files(out, info, rows)


def check_files(out: Path, info: dict, rows: int) -> int:
    """Check the vehicle and scene files still have the digests run.json gives; return ``rows``."""
    for role in ("vehicle", "scene"):
        entry = info.get(role) or {}
        path, digest = entry.get("path"), entry.get("sha256")
        if not path or not digest:
            raise ReplayError(f"{out / 'run.json'} names no {role} file and digest ({role}.path, {role}.sha256)")
        if not Path(path).is_file():
            raise ReplayError(f"the {role} file {path} that the run flew is gone; restore it to replay {out}")
        now = file_digest(Path(path))
        if now != digest:
            raise ReplayError(
                f"the {role} file {path} changed since the run (sha256 then {digest[:12]}…, now {now[:12]}…); "
                f"restore the file the run flew to replay {out}"
            )
    return rows


def recorded_controls(columns: dict[str, np.ndarray], out: Path, worlds: int = 1, dt_ns: int = 0,
                      ticks: int = 0) -> np.ndarray:
    """The recorded controls: ticks × width, or with many worlds ticks × worlds × width (each world's row
    at its own ticks; a world's ticks after it ended repeat its last row)."""
    names = sorted((n for n in columns if n.startswith("controls[")), key=lambda n: int(n[9:-1]))
    if not names:
        raise ReplayError(f"{out}/record.parquet has no controls columns to replay")
    rows = np.stack([columns[n] for n in names], axis=1).astype(np.float32)
    if worlds == 1:
        return rows
    table = np.zeros((ticks, worlds, len(names)), dtype=np.float32)
    tick = row_ticks(columns, dt_ns)
    world = slot_of(columns)
    table[tick - 1, world] = rows
    for w in range(worlds):  # after its end a world flies on in the replay (nothing stops it): hold its last row
        last = int(tick[world == w].max()) if np.any(world == w) else 0
        if 0 < last < ticks:
            table[last:, w] = table[last - 1, w]
    return table


def slot_of(columns: dict[str, np.ndarray]) -> np.ndarray:
    """Each row's slot: its world, or with several vehicles a world (a ``vehicle`` column) world x K + vehicle."""
    world = columns["world"].astype(np.int64)
    if "vehicle" not in columns:
        return world
    vehicle = columns["vehicle"].astype(np.int64)
    return world * (int(vehicle.max()) + 1) + vehicle


def row_ticks(columns: dict[str, np.ndarray], dt_ns: int) -> np.ndarray:
    """The tick of every row, from its sim time (whole nanoseconds of whole ticks)."""
    return np.rint(columns["time"] * 1e9 / dt_ns).astype(np.int64)


def _same_rows(original: dict[str, np.ndarray], replayed: dict[str, np.ndarray], dt_ns: int) -> dict[str, np.ndarray]:
    """The replay's rows of the (tick, world) pairs the record holds: a world the run ended is not compared
    after its end (open loop, nothing ends it in the replay)."""
    slots = slot_of(original)
    last = np.zeros(int(slots.max()) + 1, dtype=np.int64)
    np.maximum.at(last, slots, row_ticks(original, dt_ns))
    keep = row_ticks(replayed, dt_ns) <= last[slot_of(replayed)]
    return {name: values[keep] for name, values in replayed.items()}


def _bits(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values).view(np.uint8).reshape(len(values), -1)


def compare(original: dict[str, np.ndarray], replayed: dict[str, np.ndarray]) -> ReplayResult:
    compared = [n for n in original if n in replayed]
    not_compared = [n for n in original if n not in replayed]
    rows = len(next(iter(original.values()))) if original else 0
    result = ReplayResult(rows, compared, not_compared, not_recorded=[n for n in replayed if n not in original],
                          rows=rows)
    first: tuple[int, str] | None = None
    for name in compared:
        a, b = original[name], replayed[name]
        if len(a) != len(b) or a.dtype != b.dtype:
            candidate = (min(len(a), len(b)), name)
        else:
            rows = np.flatnonzero(np.any(_bits(a) != _bits(b), axis=1))
            if rows.size == 0:
                continue
            candidate = (int(rows[0]), name)
        if first is None or candidate[0] < first[0]:
            first = candidate
    if first is not None:
        tick_index, name = first
        result.first_difference = (tick_index + 1, name)
        if tick_index < len(original[name]) and tick_index < len(replayed[name]):
            result.details = {"recorded": original[name][tick_index].item(), "replayed": replayed[name][tick_index].item()}
    return result


def compare_frames(original: Path, replayed: Path) -> tuple[dict, tuple | None]:
    """Frames compared per sensor, and the first (sensor, tick, array) whose bytes differ (None: all equal).

    A frame the run kept but the replay did not produce is a difference; frames after the run's last
    (a replay of a killed run flies to its last drained tick) are not compared.
    """
    counts: dict[str, int] = {}
    first = None
    if not original.is_dir():
        return counts, None
    for folder in sorted(p for p in original.iterdir() if p.suffix == ".parquet"):
        kept = read_frames(folder)
        redone_path = replayed / folder.name
        if not redone_path.is_dir():
            first = first or (folder.stem, int(kept["tick"][0]), "every frame: the replay produced none")
            continue
        redone = read_frames(redone_path)
        rows = len(kept["tick"])
        counts[folder.stem] = rows
        for name, values in kept.items():
            other = redone.get(name)
            if other is None or len(other) < rows:  # the first frame the replay lacks
                first = first or (folder.stem, int(kept["tick"][0 if other is None else len(other)]), name)
                continue
            differs = np.flatnonzero([values[i].tobytes() != other[i].tobytes() for i in range(rows)])
            if differs.size and first is None:
                first = (folder.stem, int(kept["tick"][differs[0]]), name)
    return counts, first


def replay(out: Path, *, eager: bool = False, keep: Path | None = None, progress: bool = False) -> ReplayResult:
    """Replay ``out`` on the CPU and compare; the replay's own record goes to ``keep``.

    Without ``keep`` it goes to a scratch folder that is removed when the replay ends.
    """
    if keep:  # replay has no --out or --overwrite: refuse a --keep that holds a run in its own words, first
        check_out(Path(keep), option="--keep", overwrite_option=None)
    out = Path(out)
    info, columns = load_run(out)
    ticks = check_run(out, info, columns)
    try:
        saved = RunConfig.from_dict(info.get("options"), source=str(out / "run.json"))
    except ConfigError as error:
        raise ReplayError(str(error)) from None
    worlds = int(info.get("worlds", 1)) * int(info.get("vehicles", 1))  # slots: a fleet's every vehicle
    controls = recorded_controls(columns, out, worlds, saved.dt_ns, ticks)
    options = replace(
        saved,
        vehicle=info["vehicle"]["path"],
        scene=info["scene"]["path"],
        controller="hold",
        controller_options={},
        decimal_year=info.get("decimal_year", saved.decimal_year),
        device="cpu",
        duration=ticks * saved.dt,
        eager=eager,
        realtime=None,  # a paced run replays as fast as the machine can: pacing changed none of its bits
    )
    target = prepare_out(Path(keep), option="--keep", overwrite_option=None) if keep else Path(
        tempfile.mkdtemp(prefix="nexus-replay-"))
    try:
        given = info.get("vehicle_values") or info.get("world_values")  # a fleet's: each vehicle's own
        variation = values_from_json(given) if given else None
        run_flight(options, target, progress=progress, controller=ReplayControls(controls), variation=variation)
        _, replayed = load_run(target)
        frames, frame_difference = compare_frames(out / "frames", target / "frames")
    finally:
        if not keep:
            shutil.rmtree(target, ignore_errors=True)
    if worlds > 1:
        replayed = _same_rows(columns, replayed, saved.dt_ns)
    result = compare(columns, replayed)
    result.ticks, result.worlds = ticks, worlds  # compare counts rows: a row per world and tick
    result.vehicles = int(info.get("vehicles", 1))
    result.frames, result.frame_difference = frames, frame_difference
    result.note = partial_note(info, ticks)
    if keep:
        result.details["replay_out"] = str(target)
    return result
