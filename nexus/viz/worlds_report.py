"""``nexus plot RUN`` on a run of many worlds: the worlds together, then one world (``--world I``) in detail.

The page opens with the run's summary and how the worlds ended, then draws
every world's path over each other (the highlighted world in black, failed
worlds as red crosses), the distribution of each per-world figure of
``summary.parquet`` and the drawn Monte Carlo values against the worst
altitude error; then the highlighted world's own figures, the same ones a
one-world run's report has. A run that kept only its summary
(``record_mode: summary``) gets the distributions and the final positions.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np

from nexus.viz import report_page as one
from nexus.viz import worlds_figures as figures
from nexus.viz.series import flight_series
from nexus.viz.truth import position_ned
from nexus.viz.ulog import load_ulog
from nexus.viz.vehicle_file import read_vehicle_file
from nexus.viz.worlds import WorldsRun, check_world, load_worlds, reasons_present, world_run

#: Most failed worlds listed one by one in the page (all are counted and drawn).
MAX_LISTED = 100
#: Summary columns shown per world in the tables, in this order (the ``vary.*`` ones follow).
WORLD_COLUMNS = ("world", "seed", "exit_reason", "done_time", "failed_tick", "max_altitude_error", "max_yaw_error",
                 "landing_error", "final_x", "final_y", "final_z")


def write_worlds_report(folder: Path, out: Path | None = None, world: int | None = None,
                        ulog: Path | None = None) -> one.Report:
    """Check RUN and ``world``, draw the figures into ``out/plots/`` and write ``out/report.html``."""
    run = load_worlds(folder)
    world = check_world(run.folder, 0 if world is None else world, run.worlds)
    notes = list(run.notes)
    drawn: dict[str, tuple[str, object]] = {}
    if run.tracks is not None:
        drawn["worlds_paths"] = ("Every world's path", figures.paths(run, world))
    else:
        drawn["worlds_final"] = ("Where each world ended", figures.final_positions(run, world))
    drawn["worlds_summary"] = ("Each world's summary figures", figures.distributions(run, world))
    drawn["worlds_values"] = ("Drawn values against the worst altitude error", figures.drawn_values(run, world))
    overview = {name: item for name, item in drawn.items() if item[1] is not None}
    detail: dict[str, tuple[str, object]] = {}
    stats: list[dict] = []
    mine = None
    if run.tracks is not None and run.tracks.rows(world).stop > run.tracks.rows(world).start:
        mine = world_run(run.folder, world, run.info, run.origins[world])
        vehicle = read_vehicle_file(mine.vehicle_path(), (run.info.get("vehicle") or {}).get("sha256"))
        px4 = None
        if ulog is not None:
            px4 = load_ulog(ulog, mine.time, position_ned(mine.vector("body/base.pose", 3), mine.ned_origin_enu))
        series = flight_series(mine, vehicle)
        detail = one.draw(series, px4)
        frame_drawn, frame_notes = one.frame_figures(mine, world)
        detail.update(frame_drawn)
        notes += frame_notes
        stats = [channel.stats() for channels in series.channels.values() for channel in channels]
        notes += list(series.notes)
        if series.rotor_speeds is not None:
            notes.append(f"World {world}'s rotor speeds are {series.rotor_speed_source}.")
        if run.world_values(world):
            notes.append(f"World {world}'s noise bands and rotor speeds come from the vehicle file as written; "
                         "the values it drew (below) may change them.")
        if px4 is not None:
            notes.append(f"PX4 estimate from {px4.path}: {len(px4.time)} samples inside the run, median position "
                         f"distance to world {world}'s truth {px4.median_position_error_m:.2f} m.")
    elif run.tracks is not None:
        notes.append(f"the record holds no row of world {world}: no figures of it")
    out = Path(out) if out is not None else run.folder
    plots, paths, images = one.save_figures(out, {**overview, **detail})
    page = out / "report.html"
    page.write_text(_html(run, world, mine, overview, detail, images, stats, notes))
    (plots / "sensor_stats.json").write_text(json.dumps(stats, indent=2) + "\n")
    return one.Report(page, paths, stats, notes)


def _value(value) -> str:
    if isinstance(value, (float, np.floating)):
        return "—" if not np.isfinite(value) else f"{float(value):.6g}"
    if isinstance(value, (np.integer,)):
        value = int(value)
    return html.escape("—" if value is None else str(value))


def _columns(run: WorldsRun) -> list[str]:
    summary = run.summary or {}
    return [name for name in WORLD_COLUMNS if name in summary] + run.vary_columns()


def _world_rows(run: WorldsRun, worlds) -> str:
    columns = _columns(run)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_value(run.summary[c][w])}</td>" for c in columns) + "</tr>"
                   for w in worlds)
    return f"<table><tr>{head}</tr>{body}</table>"


def _worlds_block(run: WorldsRun, world: int) -> str:
    reasons = run.exit_reasons()
    counts = "".join(f"<tr><th>{html.escape(r)}</th><td>{int(np.sum(reasons == r))}</td></tr>"
                     for r in reasons_present(reasons))
    parts = [f"<h2 id='worlds'>Worlds</h2><table class='kv'><tr><th>worlds</th><td>{run.worlds}</td></tr>{counts}"
             "</table>"]
    if run.summary is not None:
        failed = run.failed()
        if len(failed):
            listed = failed[:MAX_LISTED]
            more = f" (the first {len(listed)})" if len(listed) < len(failed) else ""
            parts.append(f"<h3 id='failed'>Failed worlds: {len(failed)}{more}</h3>{_world_rows(run, listed)}")
        parts.append(f"<h3 id='highlighted'>World {world}</h3>{_world_rows(run, [world])}")
    values = run.world_values(world)
    if values and not run.vary_columns():
        rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{_value(v)}</td></tr>" for k, v in values.items())
        parts.append(f"<h3 id='highlighted-values'>World {world}'s drawn values</h3><table class='kv'>{rows}</table>")
    return "\n".join(parts)


def _html(run: WorldsRun, world: int, mine, overview, detail, images, stats, notes) -> str:
    info = run.info
    extra = "".join(f"<tr><th>{label}</th><td>{_value(info.get(key, default))}</td></tr>"
                    for label, key, default in (("worlds", "worlds", 1), ("record every [ticks]", "record_every", 1),
                                                ("record mode", "record_mode", "full")))
    world_part = ""
    if mine is not None:
        world_part = f"""<h2 id="world">World {world} in detail</h2>
<h3 id="sensors">World {world}'s sensors against truth</h3>
{one.sensor_table(stats)}
{one.controller_block(mine)}
{one.figures_html(detail, images, caption=f"world {world}: ")}"""
    return one.page(f"Nexus run {run.folder.name} ({run.worlds} worlds)", f"""<h2 id="summary">Summary</h2>
<table class="kv">{one.summary_rows(info)}{extra}</table>
{one.notes_html(notes, info.get("warnings") or [])}
{_worlds_block(run, world)}
<h2 id="figures">Figures of all worlds</h2>
{one.figures_html(overview, images)}
{world_part}""")
