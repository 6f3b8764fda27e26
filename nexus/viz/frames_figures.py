"""``nexus plot`` of a run with ray-traced sensors: a contact sheet per camera, a figure per lidar.

* ``frames-<sensor>`` (a camera or thermal camera): :data:`SHEET_FRAMES`
  frames evenly spaced over the run (first and last included), each titled
  with the sim time it shows, in the colour mapping of the MP4 preview
  (:mod:`nexus.render.preview`): a camera's color (else depth, grey), a
  thermal camera's temperature (inferno from the run's lowest to its highest
  temperature, with a colour bar in K).
* ``lidar-<sensor>``: the sweep in the middle of the run, from above, coloured
  by range: on the left in the sensor frame (x forward, y left, the lidar at
  the origin), every return; on the right placed in the world (east, north)
  from the body's recorded pose at each column's time, over the flown path,
  within the distance of the nearest 60% of the returns (at least 5 m).

A run without frames draws none of these.
"""

from __future__ import annotations

import numpy as np

from nexus.render.preview import inferno, to_rgb
from nexus.viz.frames import SensorStream, find_streams, range_colours, sweep_in_world
from nexus.viz.run_data import RunData

#: Frames on a contact sheet, and its columns.
SHEET_FRAMES, SHEET_COLUMNS = 12, 4
#: The world panel of a lidar figure spans the nearest ZOOM_PERCENTILE % of the returns (at least ZOOM_MIN_M).
ZOOM_PERCENTILE, ZOOM_MIN_M = 60.0, 5.0


def frame_figures(run: RunData, world: int = 0) -> tuple[dict[str, tuple[str, object]], list[str]]:
    """The frame figures of ``run`` (name -> (title, figure)), and notes for the report; ({}, []) without frames."""
    notes: list[str] = []
    streams = find_streams(run.folder, run.info, notes)
    drawn: dict[str, tuple[str, object]] = {}
    for stream in streams:
        key = _figure_name(stream, streams)
        if not stream.prim.known:
            notes.append(f"{stream.name}: not in the vehicle file as it is now; its mount is taken as zero")
        try:
            if stream.count(world) == 0:
                notes.append(f"{stream.name}: no frames of world {world}")
                continue
            if stream.kind == "lidar":
                drawn[f"lidar-{key}"] = (f"Lidar {stream.short}: one sweep from above",
                                         lidar_sweep(stream, run, world))
            else:
                drawn[f"frames-{key}"] = (f"{'Thermal camera' if stream.kind == 'thermal' else 'Camera'} "
                                          f"{stream.short}: frames over the run", contact_sheet(stream, world))
        except Exception as error:  # a damaged frame part costs its figure, not the report
            notes.append(f"{stream.folder}: its frames could not be read ({error}); no figure of them")
            continue
        preview = stream.folder.with_suffix(".mp4")
        if stream.kind != "lidar" and preview.is_file():
            notes.append(f"{stream.name}: MP4 preview {preview.parent.name}/{preview.name} (world 0)")
    return drawn, notes


def _figure_name(stream: SensorStream, streams: list[SensorStream]) -> str:
    """The sensor's last path element, or its whole path with '.' when another sensor's ends the same."""
    if sum(s.short == stream.short for s in streams) > 1:
        return stream.name.strip("/").replace("/", ".")
    return stream.short


def _new_figure(width: float, height: float):
    import matplotlib  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    return Figure(figsize=(width, height), dpi=90)


def sheet_indices(count: int, frames: int = SHEET_FRAMES) -> np.ndarray:
    """``frames`` frame indices evenly spaced over ``count`` frames, first and last included (each once)."""
    return np.unique(np.linspace(0, count - 1, min(frames, count)).round().astype(int))


def contact_sheet(stream: SensorStream, world: int = 0):
    """Up to SHEET_FRAMES frames of a camera or thermal camera, evenly spaced, each titled with its sim time."""
    frames = stream.frames(world)
    channel = stream.channels[0]
    scale = stream.scale(channel, world)
    picks = sheet_indices(len(frames["time"]))
    cols = min(SHEET_COLUMNS, len(picks))
    rows = -(-len(picks) // cols)
    width, height = stream.size
    bar = channel in ("depth", "temperature")
    cell = 10.0 / cols
    figure = _new_figure(10.0 + (0.9 if bar else 0.0), rows * (cell * height / width + 0.35) + 0.6)
    top = 1.0 - 0.5 / figure.get_figheight()
    figure.subplots_adjust(left=0.01, right=0.90 if bar else 0.99, top=top, bottom=0.01, wspace=0.04,
                           hspace=0.35 / (cell * height / width) + 0.02)
    axes = figure.subplots(rows, cols, squeeze=False)
    for k, ax in enumerate(axes.ravel()):
        ax.set_axis_off()
        if k >= len(picks):
            continue
        i = picks[k]
        ax.imshow(to_rgb(frames[channel][i], scale), interpolation="nearest")
        ax.set_title(f"{frames['time'][i]:.2f} s", fontsize=9)
    kind = "thermal camera" if stream.kind == "thermal" else "camera"
    figure.suptitle(f"{stream.name} ({kind}, {channel}, {width}x{height} px, {stream.rate(world):.3g} Hz): "
                    f"{len(picks)} of {len(frames['time'])} frames" + (f", world {world}" if world else ""),
                    fontsize=10, y=1.0 - 0.15 / figure.get_figheight())
    if bar:
        _colour_bar(figure, scale, channel)
    return figure


def _colour_bar(figure, scale, channel: str) -> None:
    from matplotlib.cm import ScalarMappable  # noqa: PLC0415  (reason: matplotlib loads only to draw)
    from matplotlib.colors import ListedColormap, Normalize  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    steps = np.linspace(0.0, 1.0, 256)
    if channel == "depth":
        colours = np.repeat((1.0 - steps)[:, None], 3, axis=1)
        label = f"depth [m] (0 = nothing hit, black; beyond {scale.high:g} m black)"
    else:
        colours = inferno(steps) / 255.0
        label = "temperature [K] (the run's lowest to highest)"
    mappable = ScalarMappable(Normalize(scale.low, scale.high), ListedColormap(colours))
    ax = figure.add_axes((0.92, 0.08, 0.018, 0.80))
    figure.colorbar(mappable, cax=ax).set_label(label, fontsize=8)


def lidar_sweep(stream: SensorStream, run: RunData, world: int = 0, index: int | None = None):
    """Sweep ``index`` (default: the one in the middle of the run) from above, in the sensor frame and the world."""
    frames = stream.frames(world)
    index = len(frames["time"]) // 2 if index is None else index
    valid = frames["valid"][index]
    local = frames["points"][index][valid]
    ranges = frames["range"][index][valid]
    scale = stream.scale("range", world)
    pose_time, poses = run.time.astype(np.float64), run.vector("body/base.pose", 7)
    placed, _ = sweep_in_world(stream, index, pose_time, poses, world)
    colours = range_colours(ranges, scale.high) / 255.0
    figure = _new_figure(11.0, 5.4)
    figure.subplots_adjust(left=0.07, right=0.90, top=0.86, bottom=0.1, wspace=0.22)
    left, right = figure.subplots(1, 2)
    left.scatter(local[:, 0], local[:, 1], c=colours, s=4, lw=0)
    left.plot([0.0], [0.0], marker=(3, 0, -90), color="tab:blue", ms=10, ls="none", label="lidar, facing +x")
    left.set_xlabel("x forward [m]")
    left.set_ylabel("y left [m]")
    left.set_title("sensor frame (FLU at the mount)", fontsize=9)
    left.legend(loc="upper right", fontsize=7)
    start, end = frames["time"][index], frames["end"][index]
    rows = (run.time >= start - 1e-9) & (run.time <= end + 1e-9)
    right.plot(poses[:, 0], poses[:, 1], color="0.6", lw=1.0, label="flown path")
    right.scatter(placed[:, 0], placed[:, 1], c=colours, s=4, lw=0)
    here = poses[rows] if rows.any() else poses[[np.argmin(np.abs(run.time - start))]]
    right.plot(here[:, 0], here[:, 1], color="tab:blue", lw=2.5, label="during the sweep")
    right.plot(here[:1, 0], here[:1, 1], "o", color="tab:blue", ms=5)
    # Near the vehicle: the far ground rings of the low channels would shrink everything else to a dot.
    centre = here[0, :2]
    distance = np.hypot(*(placed[:, :2] - centre).T) if len(placed) else np.zeros(1)
    half = max(ZOOM_MIN_M, float(np.ceil(np.percentile(distance, ZOOM_PERCENTILE) / 5.0) * 5.0))
    right.set_xlim(centre[0] - half, centre[0] + half)
    right.set_ylim(centre[1] - half, centre[1] + half)
    right.set_xlabel("east [m]")
    right.set_ylabel("north [m]")
    right.set_title(f"world (ENU) within {half:g} m of the vehicle ({int(np.sum(distance > half))} returns "
                    "beyond), from the recorded pose at each column", fontsize=8)
    right.legend(loc="upper right", fontsize=7)
    left.set_aspect("equal", adjustable="datalim")
    right.set_aspect("equal")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    from matplotlib.cm import ScalarMappable  # noqa: PLC0415  (reason: matplotlib loads only to draw)
    from matplotlib.colors import ListedColormap, Normalize  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    mappable = ScalarMappable(Normalize(0.0, scale.high), ListedColormap(range_colours(np.linspace(0, 1, 256), 1.0) / 255.0))
    figure.colorbar(mappable, cax=figure.add_axes((0.92, 0.1, 0.015, 0.76))).set_label("range [m]", fontsize=8)
    figure.suptitle(f"{stream.name}: sweep {index + 1} of {len(frames['time'])}, {start:.2f} to {end:.2f} s, "
                    f"{int(valid.sum())} of {len(valid)} returns valid" + (f", world {world}" if world else ""),
                    fontsize=10)
    return figure
