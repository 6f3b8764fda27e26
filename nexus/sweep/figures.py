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
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from nexus.core.errors import BuildError
from nexus.runtime.run_folder import RunFolder

#: The figures, with their units, in the order sweep.parquet and ``nexus plot`` give them.
FIGURES = (("max_altitude_error", "m"), ("max_yaw_error", "deg"), ("landing_error", "m"), ("done_time", "s"),
           ("rtf", "-"))


def _heading_ned(qx, qy, qz, qw):
    """Heading [rad, NED: 0 north, clockwise] of ENU/FLU body quaternions."""
    yaw_enu = np.arctan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
    return 0.5 * np.pi - yaw_enu


def run_info(folder: Path) -> dict | None:
    """A point's run.json, or None where it does not read."""
    return RunFolder(folder).peek_info()


def errors_from_record(folder: Path, info: dict) -> dict:
    """Altitude, yaw and landing errors from ``folder``'s record (NaN where the record lacks the columns)."""
    nan = {"max_altitude_error": math.nan, "max_yaw_error": math.nan, "landing_error": math.nan}
    wanted = [f"body/base.pose[{i}]" for i in range(7)] + [f"setpoint.position[{i}]" for i in range(3)]
    wanted += ["setpoint.yaw", "armed"]
    try:
        table = RunFolder(folder).record()
    except BuildError:  # a missing or damaged record: no figures
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
    row.update(many if many is not None else errors_from_record(folder, info))
    return row
