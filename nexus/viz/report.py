"""``nexus plot RUN``: figures of a flight as PNG files and one self-contained ``report.html``.

The HTML embeds every figure as a base64 PNG, so the one file can be mailed or
attached to an issue; the PNGs sit beside it in ``plots/`` for slides and docs.
"""

from __future__ import annotations

import json
from pathlib import Path

from nexus.runtime.run_folder import world_count
from nexus.viz import estimate_figures, plane_figures
from nexus.viz.fleet import check_vehicle, is_fleet
from nexus.viz.fleet_report import write_fleet_report
from nexus.viz.report_page import (Report, controller_block, figures_html, notes_html, page, save_figures, sensor_table,
                                   summary_rows)
from nexus.viz.report_page import draw as _draw  # one flight's figures, called below by this module's names
from nexus.viz.report_page import frame_figures as _frame_figures
from nexus.viz.run_data import RunData, load_run
from nexus.viz.series import FlightSeries, flight_series
from nexus.viz.truth import position_ned
from nexus.viz.ulog import load_ulog
from nexus.viz.vehicle_file import read_vehicle_file
from nexus.viz.worlds import check_world, is_many_worlds
from nexus.viz.worlds_report import write_worlds_report


def write_report(folder: Path, out: Path | None = None, ulog: Path | None = None, world: int | None = None,
                 vehicle: int | None = None) -> Report:
    """Check RUN (and the ULog), draw the figures into ``out/plots/`` and write ``out/report.html``.

    A run of several vehicles a world gets the fleet report (:mod:`nexus.viz.fleet_report`): world ``world``'s
    vehicles, ``vehicle`` in detail (default 0 each). A run of several worlds gets the worlds report
    (:mod:`nexus.viz.worlds_report`), ``world`` highlighted (default 0); a one-world run accepts only ``world``
    0, and a run of one vehicle a world only ``vehicle`` 0.
    """

    if is_fleet(folder):
        return write_fleet_report(folder, out=out, world=world, vehicle=vehicle, ulog=ulog)
    if vehicle is not None:
        check_vehicle(Path(folder), vehicle, 1)
    if is_many_worlds(folder):
        return write_worlds_report(folder, out=out, world=world, ulog=ulog)
    run = load_run(folder)
    if world is not None:
        check_world(run.folder, world, world_count(run.info))
    vehicle_info = run.info.get("vehicle") or {}
    vehicle = read_vehicle_file(run.vehicle_path(), vehicle_info.get("sha256"))
    px4 = None
    if ulog is not None:  # checked before the slower work: a wrong ULog fails fast
        px4 = load_ulog(ulog, run.time, position_ned(run.vector("body/base.pose", 3), run.ned_origin_enu))
    series = flight_series(run, vehicle)
    out = Path(out) if out is not None else run.folder
    drawn = _draw(series, px4)
    drawn.update(estimate_figures.draw(run, series))  # none for a run without the EKF
    plane = plane_figures.draw(run, series, vehicle)  # none for a run without a plane's or a VTOL's mission
    if plane and not run.has("vtol_phase"):  # a VTOL's rotors keep their figure
        drawn.pop("motors", None)  # a plane's controls are its surfaces and throttle, drawn by phase instead
    drawn.update(plane)
    frame_drawn, frame_notes = _frame_figures(run, 0)
    drawn.update(frame_drawn)
    plots, paths, images = save_figures(out, drawn)
    stats = [channel.stats() for channels in series.channels.values() for channel in channels]
    notes = ([run.note] if run.note else []) + list(series.notes) + frame_notes
    if series.rotor_speeds is not None:
        notes.append(f"Rotor speeds are {series.rotor_speed_source}.")
    if px4 is not None:
        notes.append(f"PX4 estimate from {px4.path}: {len(px4.time)} samples inside the run, median position "
                     f"distance to truth {px4.median_position_error_m:.2f} m.")
    page = out / "report.html"
    page.write_text(_html(run, series, drawn, images, stats, notes))
    (plots / "sensor_stats.json").write_text(json.dumps(stats, indent=2) + "\n")
    return Report(page, paths, stats, notes)


def _html(run: RunData, series: FlightSeries, drawn, images, stats, notes) -> str:
    info = run.info
    title = f"Nexus run {run.folder.name}"
    return page(title, f"""<h2 id="summary">Summary</h2><table class="kv">{summary_rows(info)}</table>
{notes_html(notes, info.get("warnings") or [])}
<h2 id="sensors">Sensors against truth</h2>
{sensor_table(stats)}
{controller_block(run)}
<h2 id="figures">Figures</h2>
{figures_html(drawn, images)}""")
