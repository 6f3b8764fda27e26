"""A fleet's record read for the checks: each vehicle's own rows, and how close a world's vehicles came.

A run of several vehicles a world (``nexus run --vehicles K``, a scenario's ``[fleet]``) records one row per
recorded tick per vehicle, with ``world`` and ``vehicle`` columns (:mod:`nexus.plant.fleet`). The measures of
one vehicle (its error, its tilt, its landing) read one vehicle's rows, from its own NED origin (run.json's
``ned_origins_enu_m``, one per slot: slot ``s`` is vehicle ``s % K`` of world ``s // K``), as a one-vehicle
record. ``min_separation`` reads every vehicle of a world at once: at each recorded time the distance [m]
between the base origins of every two of them; the smallest, and which two, is its series. A vehicle with no
row at a time (one that recorded no further, or not yet) stands where its nearest earlier row (or its first)
put it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: The record's column naming each row's vehicle in its world (only a run of several vehicles a world has it).
VEHICLE = "vehicle"
#: The base origin's columns, world ENU [m].
POSITION = tuple(f"body/base.pose[{i}]" for i in range(3))


def is_fleet(table: pa.Table) -> bool:
    """Whether the record holds several vehicles a world (a ``vehicle`` column)."""
    return VEHICLE in table.column_names


def _int_column(table: pa.Table, name: str) -> np.ndarray:
    if name not in table.column_names:
        return np.zeros(table.num_rows, dtype=np.int64)
    return table.column(name).to_numpy().astype(np.int64)


@dataclass(frozen=True)
class VehicleRows:
    """One vehicle's rows of a fleet record, with the run.json its checks read (its own NED origin)."""

    world: int
    vehicle: int
    table: pa.Table
    info: dict

    @property
    def label(self) -> str:
        """``vehicle 1 of world 0``."""
        return f"vehicle {self.vehicle} of world {self.world}"


def vehicle_rows(table: pa.Table, info: dict) -> list[VehicleRows]:
    """Every vehicle's rows, world after world and vehicle after vehicle, each with its NED origin as run.json's
    ``ned_origin_enu_m`` (the run's own where run.json lists no origin per slot) and, in a run of several PX4
    instances, its instance's counts as its ``controller_stats`` (its mission's report among them)."""
    worlds, vehicles = _int_column(table, "world"), _int_column(table, VEHICLE)
    per_world = int(info.get("vehicles") or (vehicles.max() + 1 if len(vehicles) else 1))
    origins = info.get("ned_origins_enu_m")
    out = []
    for world, vehicle in sorted(set(zip(worlds.tolist(), vehicles.tolist(), strict=True))):
        mine = table.filter(pa.array((worlds == world) & (vehicles == vehicle)))
        slot = world * per_world + vehicle
        own = dict(info)
        if isinstance(origins, list) and slot < len(origins):
            own["ned_origin_enu_m"] = [float(v) for v in origins[slot]]
        each = (info.get("controller_stats") or {}).get("instances")
        if isinstance(each, list) and world == 0 and vehicle < len(each):  # PX4 instance k flies vehicle k
            own["controller_stats"] = each[vehicle]
        out.append(VehicleRows(world, vehicle, mine.drop_columns([VEHICLE]), own))
    return out


@dataclass(frozen=True)
class Separation:
    """How close the vehicles of one world came, at each recorded time."""

    world: int
    #: Sim time [s], every time any vehicle of the world recorded, sorted, shape (times,).
    time: np.ndarray
    #: The smallest distance between the base origins of two vehicles [m], shape (times,).
    distance: np.ndarray
    #: The two vehicles that were that close (first < second), shape (times,) each.
    first: np.ndarray
    second: np.ndarray


def separations(table: pa.Table) -> list[Separation]:
    """Per world of a fleet record, the closest two vehicles at each recorded time (a world of one vehicle has
    none: NaN distances)."""
    worlds = _int_column(table, "world")
    out = []
    for world in np.unique(worlds).tolist():
        rows = table.filter(pc.equal(table.column("world"), pa.scalar(world, table.column("world").type))) \
            if "world" in table.column_names else table
        out.append(_separation(world, rows))
    return out


def _separation(world: int, rows: pa.Table) -> Separation:
    time = rows.column("time").to_numpy().astype(np.float64)
    vehicle = rows.column(VEHICLE).to_numpy().astype(np.int64)
    position = np.stack([rows.column(name).to_numpy().astype(np.float64) for name in POSITION], axis=1)
    times = np.unique(time)
    ids = np.unique(vehicle)
    held = np.empty((len(ids), len(times), 3))  # each vehicle's position at every time, held from its last row
    for k, v in enumerate(ids):
        mine = np.flatnonzero(vehicle == v)
        order = mine[np.argsort(time[mine], kind="stable")]
        at = np.clip(np.searchsorted(time[order], times, side="right") - 1, 0, len(order) - 1)
        held[k] = position[order[at]]
    distance = np.full(len(times), np.nan)
    first = np.full(len(times), -1, dtype=np.int64)
    second = np.full(len(times), -1, dtype=np.int64)
    for i in range(len(ids) - 1):
        apart = np.linalg.norm(held[i + 1:] - held[i], axis=2)  # (vehicles after i, times)
        nearest = np.argmin(apart, axis=0)
        closer = ~(apart[nearest, np.arange(len(times))] >= distance)  # NaN (none yet) is beaten
        distance = np.where(closer, apart[nearest, np.arange(len(times))], distance)
        first = np.where(closer, ids[i], first)
        second = np.where(closer, ids[i + 1 + nearest], second)
    return Separation(world, times, distance, first, second)
