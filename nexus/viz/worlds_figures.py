"""The figures of a run of many worlds: every path over each other, the summary's distributions, the drawn values.

Drawn with matplotlib's Agg backend, as :mod:`nexus.viz.figures`. Every world
is one thin, semi-transparent trace in one ``LineCollection`` per panel
(1,024 ``Line2D`` would cost seconds); each trace is thinned evenly so that a
figure holds at most :data:`MAX_POINTS` points whatever the number of worlds.
The highlighted world is drawn on top in black with its setpoint in orange;
each failed world gets a red cross where it was last seen flying.
"""

from __future__ import annotations

import numpy as np

from nexus.viz.figures import SETPOINT, TRUTH, _figure
from nexus.viz.truth import position_ned
from nexus.viz.worlds import FIGURES, WorldsRun, reasons_present

#: Most points all the traces of one figure hold together (each world's trace is thinned evenly to its share).
MAX_POINTS = 200_000
#: Colours per exit reason (histogram stacks, final positions); the failed cross is FAILED.
REASON_COLOURS = {"done": "tab:blue", "duration": "tab:olive", "battery-empty": "tab:purple", "failed": "tab:red",
                  "?": "0.5"}
WORLDS_COLOUR, FAILED, EMPTY = "tab:blue", "tab:red", "tab:purple"
#: Panels of the paths figure besides the top view: (label, NED axis, sign): north, east, and up (= −down).
TIME_PANELS = (("north [m]", 0, 1.0), ("east [m]", 1, 1.0), ("up [m]", 2, -1.0))


def _colour(reason: str) -> str:
    return REASON_COLOURS.get(reason, REASON_COLOURS["?"])


def thinned(rows: slice, points: int) -> np.ndarray:
    """At most ``points`` row indices spread evenly over ``rows``, first and last included."""
    count = rows.stop - rows.start
    if count <= points:
        return np.arange(rows.start, rows.stop)
    return rows.start + np.linspace(0, count - 1, max(points, 2)).round().astype(np.int64)


def trace_alpha(worlds: int) -> float:
    """Opacity of one world's trace: overlapping traces add up to a dark band without hiding their spread."""
    return float(np.clip(4.0 / np.sqrt(worlds), 0.04, 0.6))


def outcome_title(run: WorldsRun, world: int) -> str:
    """``1024 worlds: 1012 done, 12 failed (red ×); world 0 highlighted``."""
    reasons = run.exit_reasons()
    counts = [f"{int(np.sum(reasons == r))} {'ran out of time' if r == 'duration' else r}"
              for r in reasons_present(reasons)]
    failed = int(np.sum(reasons == "failed"))
    return (f"{run.worlds} worlds: {', '.join(counts)}{' (red ×)' if failed else ''}; world {world} highlighted")


def paths(run: WorldsRun, world: int):
    """Left: every world's path seen from above (east, north). Right: north, east and up against time."""
    tracks = run.tracks
    figure = _paths_figure()
    top, panels = figure.axes[0], figure.axes[1:]
    from matplotlib.collections import LineCollection  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    # Each world from its own NED origin (worlds may start apart), as its setpoint is.
    ned = position_ned(tracks.position, np.repeat(run.origins, np.diff(tracks.start), axis=0))
    share = max(2, MAX_POINTS // (len(TIME_PANELS) + 1) // max(run.worlds, 1))
    picked = [thinned(tracks.rows(w), share) for w in range(run.worlds)]
    alpha, width = trace_alpha(run.worlds), (0.6 if run.worlds > 64 else 0.9)
    style = {"colors": WORLDS_COLOUR, "linewidths": width, "alpha": alpha, "label": "every world"}
    top.add_collection(LineCollection([ned[rows][:, [1, 0]] for rows in picked], **style))
    for ax, (_, axis, sign) in zip(panels, TIME_PANELS, strict=True):
        ax.add_collection(LineCollection([np.column_stack([tracks.time[rows], sign * ned[rows, axis]])
                                          for rows in picked], **style))
    mine = tracks.rows(world)
    top.plot(ned[mine, 1], ned[mine, 0], color=TRUTH, lw=1.6, label=f"world {world}")
    setpoint = tracks.setpoint[mine] if tracks.setpoint is not None else None
    if setpoint is not None:
        top.plot(setpoint[:, 1], setpoint[:, 0], color=SETPOINT, lw=1.0, ls="--", label=f"world {world} setpoint")
    for ax, (label, axis, sign) in zip(panels, TIME_PANELS, strict=True):
        ax.plot(tracks.time[mine], sign * ned[mine, axis], color=TRUTH, lw=1.6)
        if setpoint is not None:
            ax.plot(tracks.time[mine], sign * setpoint[:, axis], color=SETPOINT, lw=1.0, ls="--")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.autoscale_view()
    failed, times, points = run.failure_points()
    if len(failed):
        at = position_ned(points, run.origins[failed])
        top.plot(at[:, 1], at[:, 0], "x", color=FAILED, ms=7, mew=1.6, label=f"failed ({len(failed)})")
        for ax, (_, axis, sign) in zip(panels, TIME_PANELS, strict=True):
            ax.plot(times, sign * at[:, axis], "x", color=FAILED, ms=7, mew=1.6)
    emptied = np.flatnonzero(run.exit_reasons() == "battery-empty")
    if len(emptied):  # where each pack ran out: the world's last recorded row
        last = np.array([tracks.rows(w).stop - 1 for w in emptied if tracks.rows(w).stop > tracks.rows(w).start],
                        dtype=np.int64)
        top.plot(ned[last, 1], ned[last, 0], "v", color=EMPTY, ms=6, ls="none",
                 label=f"battery empty ({len(emptied)})")
        for ax, (_, axis, sign) in zip(panels, TIME_PANELS, strict=True):
            ax.plot(tracks.time[last], sign * ned[last, axis], "v", color=EMPTY, ms=6, ls="none")
    top.autoscale_view()
    top.set_aspect("equal", adjustable="datalim")
    top.set_xlabel("east [m]")
    top.set_ylabel("north [m]")
    top.grid(alpha=0.3)
    top.legend(loc="best", fontsize=8)
    top.set_title("Paths from above (each world from its NED origin)", fontsize=9)
    panels[-1].set_xlabel("time [s]")
    figure.suptitle(outcome_title(run, world), fontsize=10)
    return figure


def _paths_figure():
    import matplotlib  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    figure = Figure(figsize=(11.0, 6.6), dpi=90)
    figure.subplots_adjust(left=0.07, right=0.98, top=0.92, bottom=0.08, wspace=0.22, hspace=0.25)
    spec = figure.add_gridspec(len(TIME_PANELS), 2, width_ratios=(1.0, 1.25))
    figure.add_subplot(spec[:, 0])
    first = figure.add_subplot(spec[0, 1])
    for row in range(1, len(TIME_PANELS)):
        figure.add_subplot(spec[row, 1], sharex=first)
    return figure


def _panels(rows: int, cols: int, height: float, sharey: bool = False):
    """A figure of ``rows`` × ``cols`` panels, each with its own x axis."""
    import matplotlib  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    total = height * rows + 0.8
    figure = Figure(figsize=(11.0, total), dpi=90)
    figure.subplots_adjust(left=0.07, right=0.98, top=1.0 - 0.5 / total, bottom=0.5 / total, hspace=0.6,
                           wspace=0.22)
    return figure, figure.subplots(rows, cols, squeeze=False, sharey=sharey)


def final_positions(run: WorldsRun, world: int):
    """Without a record (summary only): where each world ended, seen from above, by exit reason."""
    summary = run.summary
    if summary is None or not all(f"final_{a}" in summary for a in "xyz"):
        return None
    figure, axes = _figure(1, height=5.5, width=7.0)
    ax = axes[0, 0]
    ned = position_ned(np.column_stack([summary[f"final_{a}"] for a in "xyz"]), run.ned_origin_enu)
    reasons = run.exit_reasons()
    for reason in reasons_present(reasons):
        chosen = reasons == reason
        if np.any(chosen):
            marker = "x" if reason == "failed" else "o"
            ax.plot(ned[chosen, 1], ned[chosen, 0], marker, ls="none", ms=4, color=_colour(reason),
                    alpha=0.8, label=f"{reason} ({int(np.sum(chosen))})")
    ax.plot(ned[world, 1], ned[world, 0], "o", ms=8, mfc="none", color=TRUTH, label=f"world {world}")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    ax.set_title(f"Final positions from world 0's NED origin; {outcome_title(run, world)}", fontsize=9)
    return figure


def distributions(run: WorldsRun, world: int):
    """One histogram per summary figure (done time, max altitude and yaw errors, landing error), stacked by exit
    reason, with the highlighted world's value as a black line."""
    summary = run.summary
    present = [(name, label, unit) for name, label, unit in FIGURES if summary is not None and name in summary]
    if not present:
        return None
    cols = 2 if len(present) > 1 else 1
    rows = (len(present) + cols - 1) // cols
    figure, axes = _panels(rows, cols, height=2.6)
    reasons = run.exit_reasons()
    for k, (name, label, unit) in enumerate(present):
        ax = axes.ravel()[k]
        values = np.asarray(summary[name], dtype=np.float64)
        finite = np.isfinite(values)
        stacks = [(r, values[finite & (reasons == r)]) for r in reasons_present(reasons)]
        stacks = [(r, v) for r, v in stacks if len(v)]
        if stacks:
            every = np.concatenate([v for _, v in stacks])
            bins = np.histogram_bin_edges(every, bins=min(40, max(5, int(np.sqrt(len(every))))))
            ax.hist([v for _, v in stacks], bins=bins, stacked=True, color=[_colour(r) for r, _ in stacks],
                    label=[r for r, _ in stacks])
            worst = int(np.flatnonzero(finite)[np.argmax(values[finite])])
            title = (f"{label} [{unit}]: {int(finite.sum())} of {run.worlds} worlds, median "
                     f"{np.median(every):.3g}, max {values[worst]:.3g} (world {worst})")
        else:
            title = f"{label} [{unit}]: no world has a value"
        if np.isfinite(values[world]):
            ax.axvline(values[world], color=TRUTH, lw=1.4, label=f"world {world}")
        ax.set_title(title, fontsize=8)
        ax.set_xlabel(f"{label} [{unit}]", fontsize=8)
        ax.set_ylabel("worlds", fontsize=8)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:  # a figure no world has a value of has nothing to name
            ax.legend(loc="best", fontsize=7)
    for ax in axes.ravel()[len(present):]:
        ax.set_visible(False)
    return figure


#: Most drawn parameters the values figure shows (one panel each).
MAX_VARY_PANELS = 12


def drawn_values(run: WorldsRun, world: int):
    """Each numeric drawn parameter (``vary.*``) against the worst altitude error, failed worlds as red crosses."""
    summary = run.summary
    if summary is None or "max_altitude_error" not in summary:
        return None
    numeric = [name for name in run.vary_columns() if np.asarray(summary[name]).dtype.kind in "fiu"
               and np.isfinite(np.asarray(summary[name], dtype=np.float64)).any()][:MAX_VARY_PANELS]
    if not numeric:
        return None
    cols = min(3, len(numeric))
    rows = (len(numeric) + cols - 1) // cols
    figure, axes = _panels(rows, cols, height=2.4, sharey=True)
    error = np.asarray(summary["max_altitude_error"], dtype=np.float64)
    failed = run.exit_reasons() == "failed"
    for k, name in enumerate(numeric):
        ax = axes.ravel()[k]
        x = np.asarray(summary[name], dtype=np.float64)
        ax.plot(x[~failed], error[~failed], "o", ms=2.5, color=WORLDS_COLOUR, alpha=0.6)
        if np.any(failed):
            ax.plot(x[failed], error[failed], "x", ms=5, color=FAILED)
        ax.plot([x[world]], [error[world]], "o", ms=7, mfc="none", color=TRUTH)
        ax.set_xlabel(name[len("vary."):], fontsize=8)
        ax.grid(alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("max altitude error [m]", fontsize=8)
    for ax in axes.ravel()[len(numeric):]:
        ax.set_visible(False)
    figure.suptitle(f"Drawn values against the worst altitude error (failed: red ×, world {world}: circle)",
                    fontsize=10)
    return figure
