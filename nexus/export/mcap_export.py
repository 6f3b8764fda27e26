"""``nexus export RUN --format mcap``: a run's record (and camera frames) as one MCAP file for Foxglove and PlotJuggler.

Every signal of every world becomes a channel, ``/world<K>/<signal>``
(``/world0/imu``, ``/world0/body/base``, ``/world1/controls``), whose
messages are JSON with a JSON Schema naming each field and its unit
(:mod:`nexus.record.signal_channels`): one message per record row, its log
and publish time the tick's sim time [ns]. ``/world<K>/tf`` holds the
recorded bodies' poses as ``foxglove.FrameTransforms``
(:mod:`nexus.record.transforms`), for Foxglove's 3D panel. A run of several
vehicles a world (``nexus run --vehicles K``) has a channel set per vehicle,
``/world<K>/vehicle<J>/<signal>`` and ``/world<K>/vehicle<J>/tf`` (child
frames ``world<K>/vehicle<J>/<label>``), from its record's ``vehicle`` column;
a run of one vehicle a world keeps the topics above. ``vehicle`` exports one
vehicle of each world: its rows alone, on the topics it has in the whole export. A run with camera frames adds
``foxglove.RawImage`` channels (:mod:`nexus.export.frame_messages`). Messages
are written in time order, the record a part file at a time, into
zstd-compressed chunks with the MCAP index, so a reader seeks by time.

The file also carries two metadata records: ``nexus.run`` (the run folder,
vehicle, scene, seed, worlds, vehicles a world when several, tick rate) and
``nexus.export`` (the worlds exported, the vehicle when one, and ``complete``:
``false`` in a file an interrupt cut short).
"""

from __future__ import annotations

import heapq
import json
from contextlib import nullcontext
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nexus import __version__
from nexus.export.export_file import ExportError, ExportFile
from nexus.export.frame_messages import RAW_IMAGE, frame_streams, raw_image_schema
from nexus.record.signal_channels import signal_channels
from nexus.record.transforms import transform_channel
from nexus.runtime.run_folder import RunFolder

#: Bytes of a chunk before it is compressed and written (the mcap library's default).
CHUNK_BYTES = 1024 * 1024


@dataclass
class Exported:
    """What an export wrote."""

    path: Path
    #: Topic -> messages written on it.
    counts: dict[str, int]
    worlds: list[int]
    #: Sim time [s] of the last record row written.
    last_time: float
    #: False when an interrupt stopped the export (the file holds what was written before).
    complete: bool = True
    notes: list[str] = field(default_factory=list)
    #: Vehicles a world, each with a channel set of its own (1: a run of one vehicle a world).
    vehicles: int = 1
    #: The one vehicle of each world exported (None: every vehicle).
    vehicle: int | None = None

    @property
    def messages(self) -> int:
        return sum(self.counts.values())


def chosen_worlds(run_worlds: int, world: int | None) -> list[int]:
    """The worlds an export writes: ``[world]``, or every world of the run; a world the run lacks is refused."""
    if world is None:
        return list(range(run_worlds))
    if not 0 <= world < run_worlds:
        last = f"0 to {run_worlds - 1}" if run_worlds > 1 else "only 0"
        raise ExportError(f"--world {world}: the run has {run_worlds} world{'s' if run_worlds > 1 else ''} "
                          f"({last}); give one of those, or leave --world out for every world")
    return [world]


def run_vehicles(folder) -> int:
    """Vehicles a world the run flew: run.json's ``vehicles`` (1 where absent, as a run of one writes it)."""
    try:
        return max(1, int(folder.info.get("vehicles") or 1))
    except (TypeError, ValueError):
        return 1


def chosen_vehicle(folder, vehicle: int | None) -> int | None:
    """``vehicle`` when each world of the run has it, else an :class:`ExportError` naming the run and its vehicles
    (as ``nexus plot --vehicle`` words it)."""
    if vehicle is None:
        return None
    vehicles = run_vehicles(folder)
    if not 0 <= vehicle < vehicles:
        valid = "0 (it flew one vehicle a world)" if vehicles == 1 else (f"0..{vehicles - 1} (it flew {vehicles} "
                                                                         "vehicles a world)")
        raise ExportError(f"--vehicle {vehicle} is not a vehicle of {folder.path}: give a vehicle in {valid}, or "
                          "leave --vehicle out for every vehicle")
    return vehicle


def vehicle_rows(folder, tables: list, vehicle: int | None) -> list:
    """Only ``vehicle``'s rows of the record's parts (all of them for None, or a record without a ``vehicle``
    column: one vehicle a world); a vehicle with no rows is refused."""
    if vehicle is None or not tables or "vehicle" not in tables[0].column_names:
        return tables
    mine = []
    for table in tables:
        column = table.column("vehicle")
        mine.append(table.filter(pc.equal(column, pa.scalar(vehicle, column.type))))
    if not any(table.num_rows for table in mine):
        raise folder.no_rows(f"of vehicle {vehicle}")
    return mine


def record_vehicles(folder, names) -> list[int | None]:
    """The vehicle indices whose channel sets an export writes in each world: ``[None]`` for a record without a
    ``vehicle`` column (one vehicle a world, topics ``/world<K>/...``), else ``0 .. K-1`` (run.json's ``vehicles``).
    """
    if "vehicle" not in names:
        return [None]
    try:
        vehicles = int(folder.info.get("vehicles") or 1)
    except (TypeError, ValueError):
        vehicles = 0
    if vehicles < 1:
        raise ExportError(f"{folder.info_path}: 'vehicles' is {folder.info.get('vehicles')!r}, not a number of "
                          "vehicles a world; the record has a vehicle column, so the run flew several: fly it again")
    return list(range(vehicles))


def run_folder(run):
    """The run folder ``run``, refused unless it holds a record (a summary-only run is told how to get one)."""
    folder = RunFolder(run)
    if folder.path.is_dir() and folder.has_summary() and not folder.has_record():
        mode = (folder.peek_info() or {}).get("record_mode", "summary")
        raise ExportError(f"{folder.path} kept its summary alone (record_mode {mode!r}), no record: there is nothing "
                          "to export; fly it again with `nexus run --record full`")
    return folder.require(record=True)


def record_tables(folder, worlds: list[int], all_worlds: int) -> list:
    """The record's parts (only ``worlds``' rows when that is not all of them); a record of no rows is refused."""
    tables = folder.record_parts(world=worlds[0] if len(worlds) < all_worlds else None)
    if not tables:
        raise ExportError(f"{folder.record_path} holds no columns: the run failed before it recorded anything; "
                          "there is nothing to export")
    if not any(table.num_rows for table in tables):
        raise folder.no_rows(f"of world {worlds[0]}" if len(worlds) < all_worlds else "")
    return tables


def export_mcap(run, out: Path, *, world: int | None = None, vehicle: int | None = None, frames: bool = True,
                overwrite: bool = False, on_progress: Callable[[float, float], None] | None = None,
                hold=None) -> Exported:
    """Write run folder ``run``'s record (``world``'s alone, or every world's; ``vehicle``'s alone, or every
    vehicle's) and frames to ``out`` (an MCAP file).

    ``on_progress(sim_s, end_s)`` is called as the export goes; ``hold`` (a context manager factory, e.g.
    :meth:`nexus.runtime.stopping.StopSignals.held_back`) keeps a stop from cutting the file's closing records.
    Raises :class:`ExportError` (or :class:`~nexus.runtime.run_folder.RunFolderError`) before writing anything
    for a folder that is no run, a world or vehicle it lacks or an output that exists; KeyboardInterrupt after
    closing the file with what it holds. A fleet's camera frames go on each vehicle's channels
    (``/world<I>/vehicle<J>/<sensor>/<array>``), so ``vehicle`` keeps its own.
    """
    from mcap.writer import CompressionType, Writer  # noqa: PLC0415  (reason: mcap loads only to write an MCAP file)

    folder = run_folder(run)
    worlds = chosen_worlds(folder.worlds, world)
    vehicle = chosen_vehicle(folder, vehicle)
    target = ExportFile(out, overwrite)
    tables = record_tables(folder, worlds, folder.worlds)
    types = {name: tables[0].schema.field(name).type for name in tables[0].column_names}
    if "time" not in types:
        raise folder.lacks(["time"])
    vehicles = record_vehicles(folder, types)
    everyone = len(vehicles)
    if vehicle is not None and vehicles != [None]:
        tables, vehicles = vehicle_rows(folder, tables, vehicle), [vehicle]
    channels = signal_channels(types)
    transforms = transform_channel(list(types))
    if transforms is not None:
        channels.append(transforms)
    notes: list[str] = []
    streams = frame_streams(folder.path, folder.info, notes) if frames else []
    # A frame file counts slots: vehicle v of world w is slot w·K + v (one vehicle a world: the world itself).
    per_world = everyone if vehicles != [None] else 1
    places = {w * per_world + (v or 0): (w, v) for w in worlds for v in vehicles}
    end_s = max((float(t.column("time").to_numpy()[-1]) for t in tables if t.num_rows), default=0.0)
    result = Exported(Path(out), {}, worlds, 0.0, notes=notes, vehicles=everyone, vehicle=vehicle)

    with target as stream:
        writer = Writer(stream, chunk_size=CHUNK_BYTES, compression=CompressionType.ZSTD)
        writer.start(profile="", library=f"nexus {__version__}")
        writer.add_metadata("nexus.run", _run_metadata(folder))
        ids: dict[tuple, int] = {}
        for channel in channels:
            schema = writer.register_schema(channel.schema_name, "jsonschema", json.dumps(channel.schema).encode())
            for w in worlds:
                for v in vehicles:  # [None]: one vehicle a world, its channels as they always were
                    place = {"world": str(w), **({} if v is None else {"vehicle": str(v)})}
                    ids[((w, v), channel.signal)] = writer.register_channel(
                        channel.topic(w, v), "json", schema, {**place, "signal": channel.signal})
        if streams:
            image = writer.register_schema(RAW_IMAGE, "jsonschema", json.dumps(raw_image_schema()).encode())
            for frame_stream in streams:
                for w, v in places.values():
                    for array in frame_stream.arrays:
                        ids[((w, v), frame_stream.prim, array.name)] = writer.register_channel(
                            frame_stream.topic(w, array.name, v), "json", image,
                            {"world": str(w), **({} if v is None else {"vehicle": str(v)}),
                             "sensor": frame_stream.prim, "array": array.name})
        counts = {key: 0 for key in ids}
        try:
            record = _record_messages(tables, channels, worlds)
            merged = heapq.merge(record, *(_frame_messages(s, places) for s in streams), key=lambda item: item[0])
            last_report = -1.0
            for (time_ns, _), key, data in merged:
                if key not in ids:
                    raise _stray_row(folder, key, vehicles)
                writer.add_message(ids[key], time_ns, data, time_ns, counts[key])
                counts[key] += 1
                result.last_time = time_ns * 1e-9
                if on_progress is not None and result.last_time - last_report >= 0.5:
                    last_report = result.last_time
                    on_progress(result.last_time, end_s)
        except KeyboardInterrupt:
            result.complete = False
            if on_progress is not None:
                on_progress(result.last_time, end_s)  # where it stopped, for the caller's message
            raise
        finally:
            result.counts = {_topic(key, channels, streams): count for key, count in counts.items()}
            with hold() if hold is not None else nullcontext():
                writer.add_metadata("nexus.export", {
                    "worlds": ",".join(map(str, worlds)),
                    **({"vehicles": str(everyone)} if vehicles != [None] else {}),
                    **({"vehicle": str(vehicle)} if vehicle is not None else {}),
                    "complete": "true" if result.complete else "false", "last_time_s": repr(result.last_time)})
                writer.finish()
    if on_progress is not None:
        on_progress(result.last_time, end_s)
    return result


def _frame_messages(stream, places: dict):
    """((log time [ns], 1), ((world, vehicle), sensor, array), JSON bytes) of a frame stream, for the slots of
    ``places`` (slot -> (world, vehicle)): after the record's rows of the same time."""
    names = {slot: f"world{w}" + ("" if v is None else f"/vehicle{v}") for slot, (w, v) in places.items()}
    for time_ns, slot, name, data in stream.messages(list(places), names):
        yield (time_ns, 1), (places[slot], stream.prim, name), data


def _record_messages(tables, channels, worlds):
    """((log time [ns], 0), ((world, vehicle), signal), JSON bytes) for every channel of every row, in row order
    (vehicle None in a record without a ``vehicle`` column)."""
    for table in tables:
        if not table.num_rows:
            continue
        times = np.rint(table.column("time").to_numpy() * 1e9).astype(np.int64).tolist()
        world_of = (table.column("world").to_numpy().tolist() if "world" in table.column_names
                    else [worlds[0]] * table.num_rows)
        vehicle_of = (table.column("vehicle").to_numpy().tolist() if "vehicle" in table.column_names
                      else [None] * table.num_rows)
        texts = [(channel.signal, channel.messages(table)) for channel in channels]
        for row, time_ns in enumerate(times):
            place = (world_of[row], vehicle_of[row])
            for signal, messages in texts:
                yield (time_ns, 0), (place, signal), messages[row].encode()


def _stray_row(folder, key: tuple, vehicles: list) -> ExportError:
    """The error for a record row of a vehicle run.json does not count (a record from another run)."""
    (world, vehicle), _ = key
    return ExportError(f"{folder.record_path} has rows of vehicle {vehicle} of world {world}, but run.json says "
                       f"the run flew {len(vehicles)} vehicle{'s' if len(vehicles) != 1 else ''} a world; the "
                       "record is from another run")


def _topic(key: tuple, channels, streams) -> str:
    if len(key) == 2:
        (world, vehicle), signal = key
        return next(c for c in channels if c.signal == signal).topic(world, vehicle)
    (world, vehicle), prim, array = key
    return next(s for s in streams if s.prim == prim).topic(world, array, vehicle)


def _run_metadata(folder) -> dict[str, str]:
    """The ``nexus.run`` metadata record: what flew, from run.json (MCAP metadata values are text)."""
    info = folder.info
    options = info.get("options") or {}
    vehicle = (info.get("vehicle") or {}).get("name") or options.get("vehicle")
    scene = (info.get("scene") or {}).get("name") or options.get("scene")
    found = {"run": str(folder.path.resolve()), "vehicle": vehicle, "scene": scene,
             "controller": options.get("controller"), "seed": options.get("seed"), "worlds": folder.worlds, "first_world": folder.first_world,
             "vehicles": info.get("vehicles"),
             "tick_hz": info.get("tick_hz"), "status": info.get("status"), "exit_reason": info.get("exit_reason")}
    return {key: str(value) for key, value in found.items() if value is not None}

