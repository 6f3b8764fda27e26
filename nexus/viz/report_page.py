"""The parts of a report page that every report shares: one flight's figures and the page's HTML.

``nexus plot`` writes three kinds of report: one flight (:mod:`nexus.viz.report`),
many worlds with one of them in detail (:mod:`nexus.viz.worlds_report`) and a
sweep (:mod:`nexus.viz.sweep_report`). Each draws and lays out its page from
the pieces here, so none of them imports another.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field
from pathlib import Path

from nexus.viz import figures
from nexus.viz.frames_figures import frame_figures as sensor_figures
from nexus.viz.run_data import RunData
from nexus.viz.series import FlightSeries

#: Summary rows: (label, run.json key path).
SUMMARY = (
    ("vehicle", ("vehicle", "name")), ("vehicle file", ("vehicle", "path")), ("scene", ("scene", "name")),
    ("controller", ("options", "controller")), ("mission", ("options", "mission")), ("seed", ("options", "seed")),
    ("device", ("device",)), ("mode", ("mode",)), ("tick rate [Hz]", ("tick_hz",)), ("ticks", ("ticks",)),
    ("sim time [s]", ("sim_time_s",)), ("wall time [s]", ("wall_time_s",)),
    ("real-time factor", ("real_time_factor",)), ("exit reason", ("exit_reason",)), ("error", ("error",)),
    ("started (UTC)", ("started_utc",)), ("stage plan", ("stage_plan",)),
)


@dataclass
class Report:
    html: Path
    #: Figure name -> PNG path, in report order.
    figures: dict[str, Path]
    #: One dict per sensor channel (see :meth:`nexus.viz.series.Channel.stats`).
    sensor_stats: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def draw(series: FlightSeries, px4) -> dict[str, tuple[str, object]]:
    """The figures of one flight (and of PX4's estimate, given its ULog): name -> (title, figure), in page order."""
    drawn = {
        "position": ("Position and setpoint", figures.position(series, px4)),
        "attitude": ("Attitude and yaw setpoint", figures.attitude(series, px4)),
        "rates": ("Body rates", figures.rates(series)),
        "motors": ("Controls and rotor speeds", figures.motors(series)),
        "air": ("Wind and airspeed", figures.air(series)),
        "battery": ("Battery voltage, current and charge", figures.battery(series)),
    }
    for prefix, channels in _sensor_order(series.channels):
        title = sensor_title(prefix)
        drawn[prefix.replace("/", "-")] = (title, figures.sensor(channels, title))
    if px4 is not None:
        drawn["px4_estimate"] = ("PX4's estimate against truth", figures.ulog_errors(series, px4))
    return {name: item for name, item in drawn.items() if item[1] is not None}


def frame_figures(run: RunData, world: int) -> tuple[dict[str, tuple[str, object]], list[str]]:
    """The ray-traced sensors' figures (contact sheets, lidar sweeps) and notes; none for a run without frames."""
    if not (run.folder / "frames").is_dir():
        return {}, []
    return sensor_figures(run, world)


#: Per sensor signal, in report order: its name in titles, and what of it is drawn.
SENSOR_TITLES = {"imu": ("IMU", ""), "mag": ("Magnetometer", ""), "baro": ("Barometer", ""),
                 "gps": ("GPS", " position")}


def sensor_title(prefix: str) -> str:
    """``imu`` -> "IMU against truth"; ``imu/ImuQuiet`` (one of several writers) -> "IMU ImuQuiet against truth"."""
    signal, _, writer = prefix.partition("/")
    name, what = SENSOR_TITLES[signal]
    return f"{name}{' ' + writer if writer else ''}{what} against truth"


def _sensor_order(channels: dict) -> list[tuple[str, list]]:
    """The channel groups by signal in SENSOR_TITLES order, each signal's writers in record order."""
    return [(prefix, group) for signal in SENSOR_TITLES for prefix, group in channels.items()
            if prefix.partition("/")[0] == signal]


def _lookup(info: dict, keys: tuple[str, ...]):
    value = info
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return html.escape("—" if value is None else str(value))


def _share(value) -> str:
    return "—" if value is None else f"{value:.0%}"


def save_figures(out: Path, drawn: dict[str, tuple[str, object]]) -> tuple[Path, dict[str, Path], dict[str, bytes]]:
    """Each figure of ``drawn`` as ``out/plots/NAME.png``: the plots folder, the PNGs' paths and their bytes (the
    page embeds them), in ``drawn``'s order."""
    plots = out / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    images: dict[str, bytes] = {}
    for name, (_, figure) in drawn.items():
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        images[name] = buffer.getvalue()
        paths[name] = plots / f"{name}.png"
        paths[name].write_bytes(images[name])
    return plots, paths, images


def summary_rows(info: dict) -> str:
    """The run's summary table rows (SUMMARY) as HTML."""
    return "".join(f"<tr><th>{html.escape(label)}</th><td>{_cell(_lookup(info, keys))}</td></tr>"
                   for label, keys in SUMMARY)


def sensor_table(stats) -> str:
    """The table of sensor residuals against truth, with its explanation, as HTML."""
    sensor_rows = "".join(
        "<tr>" + "".join(f"<td>{_cell(s[key])}</td>" for key in
                         ("sensor", "channel", "unit", "samples", "residual_mean", "residual_std", "sigma"))
        + f"<td>{_share(s['within_1sigma'])}</td>"
        + f"<td>{_cell(s['note'] or '')}</td></tr>"
        for s in stats
    )
    return f"""<p>Residual = sample − truth on the ticks the sensor sampled; σ from the vehicle file's sensor prims (GPS: its eph/epv).
White noise alone puts about 68% of residuals within ±1σ.</p>
<table><tr><th>sensor</th><th>channel</th><th>unit</th><th>samples</th><th>residual mean</th><th>residual std</th>
<th>σ</th><th>within ±1σ</th><th>note</th></tr>{sensor_rows}</table>"""


def controller_block(run: RunData) -> str:
    """The PX4 link's counters (run.json's ``controller_stats``) as HTML, or "" when the run has none."""
    info = run.info
    if not isinstance(info.get("controller_stats"), dict):
        return ""
    stat_rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{_cell(v)}</td></tr>"
                        for k, v in sorted(info["controller_stats"].items()))
    return f"<h2 id='controller-stats'>Controller link statistics ({_cell(run.controller)})</h2>" \
           f"<table class='kv'>{stat_rows}</table>"


def figures_html(drawn, images, caption: str = "") -> str:
    """Each drawn figure as an embedded PNG with its caption."""
    return "".join(
        f"<figure id='fig-{name}'><img class='figure' alt='{html.escape(title)}' "
        f"src='data:image/png;base64,{base64.b64encode(images[name]).decode()}'>"
        f"<figcaption>{html.escape(caption + title)} (plots/{name}.png)</figcaption></figure>"
        for name, (title, _) in drawn.items()
    )


def notes_html(notes, warnings) -> str:
    notes_block = "".join(f"<li>{html.escape(n)}</li>" for n in [*notes, *(f"run warning: {w}" for w in warnings)])
    return f"<ul id='notes'>{notes_block}</ul>" if notes_block else ""


def page(title: str, body: str) -> str:
    """A whole report page: ``body`` under ``title``, with the report's style."""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em auto; max-width: 1050px; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }}
table.kv th {{ background: #f4f4f4; width: 12em; }}
figure {{ margin: 1em 0; }} img.figure {{ max-width: 100%; }}
figcaption {{ color: #666; font-size: 0.85em; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
{body}
</body></html>
"""
