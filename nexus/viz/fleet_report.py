"""``nexus plot RUN`` on a fleet run (``nexus run --vehicles K``): a world's vehicles together, then one in detail.

The page opens with the run's summary and a table of the world's vehicles (how each ended, its errors, from
``summary.parquet``), then the figure of every vehicle's path (:mod:`nexus.viz.fleet_figures`: one line per
vehicle, and the distance between the closest two), then the chosen vehicle's own figures (``--vehicle K``,
default 0), the same ones a one-vehicle run's report has, drawn from its own NED origin. ``--world I`` chooses
the world of a run of several.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np
import pyarrow.compute as pc

from nexus.runtime.run_folder import RunFolder, world_count
from nexus.viz import estimate_figures, fleet_figures
from nexus.viz import report_page as one
from nexus.viz.fleet import check_vehicle, load_fleet, vehicle_count, vehicle_run
from nexus.viz.series import flight_series
from nexus.viz.truth import position_ned
from nexus.viz.ulog import load_ulog
from nexus.viz.vehicle_file import read_vehicle_file
from nexus.viz.worlds import check_world

#: summary.parquet's columns shown per vehicle, in this order.
VEHICLE_COLUMNS = ("vehicle", "exit_reason", "done_time", "max_altitude_error", "max_yaw_error", "landing_error")


def write_fleet_report(folder: Path, out: Path | None = None, world: int | None = None, vehicle: int | None = None,
                       ulog: Path | None = None) -> one.Report:
    """Check RUN, ``world`` and ``vehicle``, draw the figures into ``out/plots/`` and write ``out/report.html``."""
    run = RunFolder(folder).require()
    info = run.info
    world = check_world(run.path, 0 if world is None else world, world_count(info))
    vehicle = check_vehicle(run.path, 0 if vehicle is None else vehicle, vehicle_count(info))
    fleet = load_fleet(run.path, world)
    drawn = {"fleet_paths": ("Every vehicle's path", fleet_figures.paths(fleet, vehicle))}
    mine = vehicle_run(run.path, world, vehicle, info)
    vehicle_file = read_vehicle_file(mine.vehicle_path(), (info.get("vehicle") or {}).get("sha256"))
    px4 = None
    if ulog is not None:
        px4 = load_ulog(ulog, mine.time, position_ned(mine.vector("body/base.pose", 3), mine.ned_origin_enu))
    series = flight_series(mine, vehicle_file)
    detail = one.draw(series, px4)
    detail.update(estimate_figures.draw(mine, series))  # none for a run without the EKF
    stats = [channel.stats() for channels in series.channels.values() for channel in channels]
    notes = list(series.notes)
    if series.rotor_speeds is not None:
        notes.append(f"Vehicle {vehicle}'s rotor speeds are {series.rotor_speed_source}.")
    out = Path(out) if out is not None else run.path
    plots, paths, images = one.save_figures(out, {**drawn, **detail})
    page = out / "report.html"
    table = _vehicles_table(run, world)
    page.write_text(one.page(
        f"Nexus run {run.path.name} ({fleet.vehicles} vehicles a world)",
        f"""<h2 id="summary">Summary</h2><table class="kv">{one.summary_rows(info)}</table>
{one.notes_html(notes, info.get("warnings") or [])}
<h2 id="vehicles">The vehicles of world {world}</h2>{table}
{one.figures_html(drawn, images)}
<h2 id="vehicle">Vehicle {vehicle} in detail</h2>
<h3 id="sensors">Vehicle {vehicle}'s sensors against truth</h3>
{one.sensor_table(stats)}
{one.controller_block(mine)}
{one.figures_html(detail, images, caption=f"vehicle {vehicle}: ")}"""))
    (plots / "sensor_stats.json").write_text(json.dumps(stats, indent=2) + "\n")
    return one.Report(page, paths, stats, notes)


def _vehicles_table(run: RunFolder, world: int) -> str:
    """summary.parquet's rows of ``world``'s vehicles as HTML ("" for a run without a summary)."""
    if not run.has_summary():
        return ""
    summary = run.summary()
    if "vehicle" not in summary.column_names:
        return ""
    if "world" in summary.column_names:
        summary = summary.filter(pc.equal(summary.column("world"), world))
    columns = [c for c in VEHICLE_COLUMNS if c in summary.column_names]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    values = {c: summary.column(c).to_pylist() for c in columns}
    body = "".join("<tr>" + "".join(f"<td>{_cell(values[c][r])}</td>" for c in columns) + "</tr>"
                   for r in range(summary.num_rows))
    return f"<table><tr>{head}</tr>{body}</table>"


def _cell(value) -> str:
    if isinstance(value, float):
        return "—" if not np.isfinite(value) else f"{value:.6g}"
    return html.escape("—" if value is None else str(value))
