"""A run's summary figures, read from its folder: what each row of ``sweep.parquet`` holds.

The same figures as a many-world run's ``summary.parquet`` (see
:mod:`nexus.worlds.summary`), computed here from the record of a one-world
run: the largest altitude error [m] and yaw error [deg] between the true pose
and the setpoint while armed (a landing goal below the ground counts as
ground level), the landing error [m] (horizontal distance from the last
setpoint at the end), the time to done [s] (the sim time of a run its mission
ended; NaN otherwise) and the real-time factor. A run without a setpoint (PX4
flies its own mission) has NaN errors. A run of many worlds (``--worlds N``
with a variation file) reads its ``summary.parquet`` instead: the worst
world's figures, the time to done of the last world (NaN unless every world
ended by its mission) and ``worlds_failed``.

A plane's run (its record has ``plane_phase``) adds :data:`PLANE_FIGURES`,
the worst world's, measured as a scenario's plane checks measure them
(:class:`nexus.worlds.plane_record.PlaneRecord`): the slowest airspeed and
the smallest stall margin while airborne, the largest cross-track error from
the mission's legs, loiter and approach, and the touchdown's sink rate
(run.json's hardest) and distance from the mission's touchdown point. A
standard VTOL's run (``vtol_phase``) adds the same, by its own mission: the
airspeed and stall margin on the wing, the cross-track from its legs on the
wing and in the back transition, the touchdown at its landing.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from nexus.core.errors import BuildError
from nexus.control.fixed_wing.mission import ROLLOUT
from nexus.control.vtol.mission import FIXED_WING
from nexus.runtime.run_folder import RunFolder
from nexus.worlds.plane_record import PlaneRecord

#: The figures, with their units, in the order sweep.parquet and ``nexus plot`` give them.
FIGURES = (("max_altitude_error", "m"), ("max_yaw_error", "deg"), ("landing_error", "m"), ("done_time", "s"),
           ("rtf", "-"))
#: A plane's figures, with their units: a row has them when its run flew a plane's mission.
PLANE_FIGURES = (("min_airspeed", "m/s"), ("min_stall_margin", "-"), ("max_cross_track", "m"),
                 ("touchdown_sink", "m/s"), ("touchdown_point", "m"))


def _heading_ned(qx, qy, qz, qw):
    """Heading [rad, NED: 0 north, clockwise] of ENU/FLU body quaternions."""
    yaw_enu = np.arctan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
    return 0.5 * np.pi - yaw_enu


def run_info(folder: Path) -> dict | None:
    """A point's run.json, or None where it does not read."""
    return RunFolder(folder).peek_info()


def _record(folder: Path):
    """``folder``'s record as one table; None for a missing or damaged one (no figures)."""
    try:
        return RunFolder(folder).record()
    except BuildError:
        return None


def errors_from_record(folder: Path, info: dict, table=None) -> dict:
    """Altitude, yaw and landing errors from ``folder``'s record (``table`` when the caller read it already; NaN
    where the record lacks the columns)."""
    nan = {"max_altitude_error": math.nan, "max_yaw_error": math.nan, "landing_error": math.nan}
    wanted = [f"body/base.pose[{i}]" for i in range(7)] + [f"setpoint.position[{i}]" for i in range(3)]
    wanted += ["setpoint.yaw", "armed"]
    table = _record(folder) if table is None else table
    if table is None:
        return nan
    if table.num_rows == 0 or any(name not in table.column_names for name in wanted):
        return nan
    col = {name: table.column(name).to_numpy().astype(np.float64) for name in wanted}
    origin = np.asarray(info.get("ned_origin_enu_m") or [0.0, 0.0, 0.0], dtype=np.float64)
    x, y, z = (col[f"body/base.pose[{i}]"] - origin[i] for i in range(3))
    down = -z
    armed = col["armed"] != 0
    goal_down = np.minimum(col["setpoint.position[2]"], 0.0)
    altitude = np.abs(down - goal_down)
    turn = _heading_ned(*(col[f"body/base.pose[{i}]"] for i in range(3, 7))) - col["setpoint.yaw"]
    turn = np.abs(np.arctan2(np.sin(turn), np.cos(turn))) * 180.0 / np.pi
    landing = math.hypot(y[-1] - col["setpoint.position[0]"][-1], x[-1] - col["setpoint.position[1]"][-1])
    if info.get("exit_reason") == "battery-empty":  # stopped where its pack ran out, not landed (as the worlds summary)
        landing = math.nan
    return {
        "max_altitude_error": float(altitude[armed].max()) if armed.any() else math.nan,
        "max_yaw_error": float(turn[armed].max()) if armed.any() else math.nan,
        "landing_error": landing,
    }


def figures_from_summary(folder: Path) -> dict | None:
    """A run of many worlds (its ``summary.parquet``): the worst world's figures, and how many worlds failed."""
    path = Path(folder) / "summary.parquet"
    if not path.is_file():
        return None
    try:
        table = pq.read_table(path)
    except Exception:  # noqa: BLE001 (a damaged summary: no figures)
        return None

    def worst(name: str) -> float:
        values = np.asarray(table.column(name).to_numpy(zero_copy_only=False), dtype=np.float64)
        return float(np.nanmax(values)) if np.isfinite(values).any() else math.nan

    reasons = table.column("exit_reason").to_pylist()
    return {"max_altitude_error": worst("max_altitude_error"), "max_yaw_error": worst("max_yaw_error"),
            "landing_error": worst("landing_error"), "worlds_failed": reasons.count("failed"),
            "done_time": worst("done_time") if all(r == "done" for r in reasons) else math.nan}


def plane_figures(folder: Path, info: dict, table=None) -> dict:
    """A plane run's :data:`PLANE_FIGURES`, the worst world's (none for a run whose record has no plane or VTOL
    phase). ``table``: the record, when the caller read it already; else it is read only if its columns say a plane
    or a VTOL flew."""
    phases = ("plane_phase", "vtol_phase")
    if table is None:
        try:
            if not set(phases) & set(RunFolder(folder).record_names()):
                return {}
        except BuildError:
            return {}
        table = _record(folder)
    if table is None or table.num_rows == 0 or not set(phases) & set(table.column_names):
        return {}
    pose = np.stack([table.column(f"body/base.pose[{i}]").to_numpy().astype(np.float64) for i in range(3)], axis=1)
    worlds = table.column("world").to_numpy() if "world" in table.column_names else np.zeros(len(pose), int)
    origins = info.get("ned_origins_enu_m") or [info.get("ned_origin_enu_m") or [0.0, 0.0, 0.0]]
    found: dict[str, list[float]] = {name: [] for name, _ in PLANE_FIGURES}
    for world in np.unique(worlds):
        rows = np.flatnonzero(worlds == world)
        east, north, up = (pose[rows] - np.asarray(origins[min(int(world), len(origins) - 1)])).T
        plane = PlaneRecord(np.stack([north, east, -up], axis=1), table.take(rows), info, int(world))
        airborne = plane.phase == FIXED_WING if plane.vtol else plane.phase < ROLLOUT  # a VTOL's: on its wing
        found["min_airspeed"].append(float(plane.airspeed[airborne].min()) if airborne.any() else math.nan)
        found["min_stall_margin"].append(_worst(plane.series("stall_margin"), np.nanmin))
        found["max_cross_track"].append(_worst(plane.series("cross_track"), np.nanmax))
        found["touchdown_point"].append(plane.touchdown_point())
        found["touchdown_sink"].append(plane.touchdown_sink()[0])
    return {"min_airspeed": _worst(found["min_airspeed"], np.nanmin),
            "min_stall_margin": _worst(found["min_stall_margin"], np.nanmin),
            "max_cross_track": _worst(found["max_cross_track"], np.nanmax),
            "touchdown_sink": _worst(found["touchdown_sink"], np.nanmax),
            "touchdown_point": _worst(found["touchdown_point"], np.nanmax)}


def _worst(values, pick) -> float:
    """``pick`` (nanmin or nanmax) of the finite ``values``; NaN when none is."""
    values = np.asarray(values, dtype=np.float64)
    return float(pick(values)) if np.isfinite(values).any() else math.nan


def run_figures(folder: Path) -> dict:
    """The row figures of the run in ``folder``: status, exit reason, error, ticks, sim and wall time, the errors."""
    info = run_info(folder)
    if info is None:
        return {"status": "missing", "exit_reason": "no-run", "error": f"no readable run.json in {folder}"}
    row = {
        "status": info.get("status"), "exit_reason": info.get("exit_reason"), "error": info.get("error"),
        "ticks": info.get("ticks"), "sim_time_s": info.get("sim_time_s"),
        "flight_wall_s": info.get("wall_time_s"), "rtf": info.get("real_time_factor"),
    }
    row["done_time"] = float(info.get("sim_time_s") or math.nan) if info.get("exit_reason") == "done" else math.nan
    many = figures_from_summary(folder)
    table = None if many is not None else _record(folder)  # a one-world run's record, read once for both
    row.update(many if many is not None else errors_from_record(folder, info, table))
    row.update(plane_figures(folder, info, table))
    return row
