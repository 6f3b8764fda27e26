"""A run of several vehicles a world (``nexus run --vehicles K``), read back for ``nexus plot``.

Such a run records one row per recorded tick per vehicle, with ``world`` and ``vehicle`` columns; run.json
says ``vehicles`` (K, only when above 1) and ``ned_origins_enu_m``, one NED origin per slot (slot ``s`` is
vehicle ``s % K`` of world ``s // K``: where that vehicle's base settled). :func:`load_fleet` reads one world's
vehicles (time, base position, setpoint) and how close they came (:mod:`nexus.scenario.fleet_checks`, as the
``min_separation`` check measures it); :func:`vehicle_run` reads one vehicle's whole record as a
:class:`~nexus.viz.run_data.RunData` from its own NED origin, so the one-vehicle figures draw it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nexus.runtime.run_folder import RunFolder, world_count
from nexus.scenario.fleet_checks import VEHICLE, Separation, separations
from nexus.viz.errors import RunFolderError
from nexus.viz.run_data import REQUIRED_COLUMNS, RunData

POSITION = tuple(f"body/base.pose[{i}]" for i in range(3))
SETPOINT = tuple(f"setpoint.position[{i}]" for i in range(3))


def vehicle_count(info: dict) -> int:
    """Vehicles in each world of a run, from its run.json (1 where absent or unreadable)."""
    try:
        return max(1, int(info.get("vehicles") or 1))
    except (TypeError, ValueError):
        return 1


def is_fleet(folder: Path) -> bool:
    """Whether RUN flew several vehicles a world and recorded their paths: the fleet report shows it."""
    run = RunFolder(folder)
    info = run.peek_info()
    return info is not None and vehicle_count(info) > 1 and run.has_record()


def check_vehicle(folder: Path, vehicle: int, vehicles: int) -> int:
    """``vehicle`` when it is one of each world's vehicles; else :class:`RunFolderError` naming the valid range."""
    if not 0 <= vehicle < vehicles:
        valid = "0 (it flew one vehicle a world)" if vehicles == 1 else f"0..{vehicles - 1} (it flew {vehicles} " \
                                                                       "vehicles a world)"
        raise RunFolderError(f"--vehicle {vehicle} is not a vehicle of {folder}: give a vehicle in {valid}")
    return vehicle


def slot_origins(folder: Path, info: dict, worlds: int, vehicles: int) -> np.ndarray:
    """Each slot's NED origin, world ENU [m], shape (worlds, vehicles, 3): run.json's ``ned_origins_enu_m``."""
    listed = info.get("ned_origins_enu_m")
    if not isinstance(listed, list) or len(listed) != worlds * vehicles:
        raise RunFolderError(f"{folder}/run.json lists no NED origin for each of its {worlds * vehicles} vehicles "
                             "(ned_origins_enu_m); it is cut short or from another run: fly the run again")
    return np.asarray(listed, dtype=np.float64).reshape(worlds, vehicles, 3)


@dataclass
class FleetWorld:
    """One world of a fleet run: each vehicle's path, where each started, and how close they came."""

    folder: Path
    #: run.json as written by ``nexus run``.
    info: dict
    world: int
    #: Worlds the run flew.
    worlds: int
    #: Per vehicle (index = vehicle): sim time [s], shape (rows,).
    time: list[np.ndarray]
    #: Per vehicle: base position, world ENU [m], shape (rows, 3).
    position: list[np.ndarray]
    #: Per vehicle: setpoint position, NED from that vehicle's own NED origin [m], (rows, 3); None: not recorded.
    setpoint: list[np.ndarray] | None
    #: Each vehicle's NED origin, world ENU [m], shape (vehicles, 3).
    origins: np.ndarray
    #: The closest two vehicles at each recorded time.
    separation: Separation

    @property
    def vehicles(self) -> int:
        return len(self.time)


def load_fleet(folder: Path, world: int = 0) -> FleetWorld:
    """World ``world``'s vehicles from RUN (the record read part by part, only the columns drawn)."""
    run = RunFolder(folder).require()
    info = run.info
    vehicles, worlds = vehicle_count(info), world_count(info)
    recorded = run.record_names()
    absent = [name for name in REQUIRED_COLUMNS if name not in recorded]
    if absent:
        raise run.lacks(absent)
    names = ["time", "world", VEHICLE, *POSITION, *(s for s in SETPOINT if s in recorded)]
    tables = run.record_parts(columns=[n for n in names if n in recorded], world=world)
    table = pa.concat_tables(tables) if tables else None
    if table is None or table.num_rows == 0:
        raise run.no_rows(f"of world {world}")
    if VEHICLE not in table.column_names:
        raise RunFolderError(f"{run.record_path} has no vehicle column, but run.json says the run flew {vehicles} "
                             "vehicles a world; the record is from another run")
    times, positions, setpoints = [], [], []
    for vehicle in range(vehicles):
        mine = table.filter(pc.equal(table.column(VEHICLE), pa.scalar(vehicle, table.column(VEHICLE).type)))
        times.append(mine.column("time").to_numpy().astype(np.float64))
        positions.append(np.stack([mine.column(n).to_numpy() for n in POSITION], axis=1).astype(np.float64))
        if all(n in mine.column_names for n in SETPOINT):
            setpoints.append(np.stack([mine.column(n).to_numpy() for n in SETPOINT], axis=1).astype(np.float64))
    origins = slot_origins(run.path, info, worlds, vehicles)[world]
    (apart,) = separations(table)
    return FleetWorld(run.path, info, world, worlds, times, positions, setpoints or None, origins, apart)


def vehicle_run(folder: Path, world: int, vehicle: int, info: dict | None = None) -> RunData:
    """Vehicle ``vehicle`` of world ``world``: its whole record as one run, from its own NED origin."""
    run = RunFolder(folder)
    info = run.info if info is None else info
    tables = run.record_parts(world=world)
    table = pa.concat_tables(tables) if len(tables) > 1 else tables[0] if tables else None
    if table is not None and VEHICLE in table.column_names:
        table = table.filter(pc.equal(table.column(VEHICLE), pa.scalar(vehicle, table.column(VEHICLE).type)))
    if table is None or table.num_rows == 0:
        raise run.no_rows(f"of vehicle {vehicle} of world {world}")
    columns = {name: table.column(name).to_numpy() for name in table.column_names if name not in ("world", VEHICLE)}
    origin = slot_origins(run.path, info, world_count(info), vehicle_count(info))[world, vehicle]
    return RunData(run.path, {**info, "ned_origin_enu_m": [float(x) for x in origin]}, columns, note=None)
