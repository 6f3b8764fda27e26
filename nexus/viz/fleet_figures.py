"""The figure of one world of a fleet run: every vehicle's path, one line each, and how close they came.

Drawn with matplotlib's Agg backend, as :mod:`nexus.viz.figures`. Every position is from vehicle 0's NED
origin, so the line the vehicles start in shows (vehicle ``k`` ``k x spacing`` east of vehicle 0) and two
lines that meet are two vehicles in one place. Each vehicle is a line labelled ``vehicle k``, in colour order;
the vehicle the report draws in detail is thicker, with its setpoint dashed in its colour. The last panel is the distance
between the closest two vehicles at each recorded time [m] (what the ``min_separation`` check bounds).
"""

from __future__ import annotations

import numpy as np

from nexus.viz.fleet import FleetWorld
from nexus.viz.truth import ENU_TO_NED

#: Panels beside the top view: (label, NED axis, sign): north, east, and up (= -down).
TIME_PANELS = (("north [m]", 0, 1.0), ("east [m]", 1, 1.0), ("up [m]", 2, -1.0))
#: Most vehicles named one by one in the legend (more are still drawn).
MAX_LEGEND = 12


def _colour(vehicle: int) -> str:
    return f"C{vehicle % 10}"


def paths(fleet: FleetWorld, vehicle: int):
    """Left: every vehicle's path from above (east, north). Right: north, east and up against time, then the
    closest two vehicles' distance."""
    figure = _figure()
    top, *panels, gap = figure.axes
    leader = fleet.origins[0]
    for k in range(fleet.vehicles):
        ned = (fleet.position[k] - leader) @ ENU_TO_NED.T
        width = 1.8 if k == vehicle else 1.0
        top.plot(ned[:, 1], ned[:, 0], color=_colour(k), lw=width, label=f"vehicle {k}")
        top.plot(ned[:1, 1], ned[:1, 0], "o", color=_colour(k), ms=4)
        for ax, (_, axis, sign) in zip(panels, TIME_PANELS, strict=True):
            ax.plot(fleet.time[k], sign * ned[:, axis], color=_colour(k), lw=width, label=f"vehicle {k}")
    if fleet.setpoint is not None and len(fleet.setpoint[vehicle]):
        own = (fleet.origins[vehicle] - leader) @ ENU_TO_NED.T  # its setpoint is from its own NED origin
        goal = fleet.setpoint[vehicle] + own
        top.plot(goal[:, 1], goal[:, 0], color=_colour(vehicle), lw=1.0, ls="--", label=f"vehicle {vehicle} setpoint")
        for ax, (_, axis, sign) in zip(panels, TIME_PANELS, strict=True):
            ax.plot(fleet.time[vehicle], sign * goal[:, axis], color=_colour(vehicle), lw=1.0, ls="--")
    for ax, (label, _, _) in zip(panels, TIME_PANELS, strict=True):
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    apart = fleet.separation
    gap.plot(apart.time, apart.distance, color="black", lw=1.2, label="closest two vehicles")
    title = "no two vehicles"
    if np.isfinite(apart.distance).any():
        row = int(np.nanargmin(apart.distance))
        gap.plot(apart.time[row:row + 1], apart.distance[row:row + 1], "v", color="tab:red", ms=6)
        title = (f"closest: vehicles {apart.first[row]} and {apart.second[row]}, {apart.distance[row]:.3g} m apart "
                 f"at {apart.time[row]:.2f} s")
    gap.set_ylabel("apart [m]")
    gap.set_xlabel("time [s]")
    gap.grid(alpha=0.3)
    top.set_aspect("equal", adjustable="datalim")
    top.set_xlabel("east [m]")
    top.set_ylabel("north [m]")
    top.grid(alpha=0.3)
    if fleet.vehicles <= MAX_LEGEND:
        top.legend(loc="best", fontsize=8)
    top.set_title("Paths from above (from vehicle 0's NED origin; dots: starts)", fontsize=9)
    world = f"world {fleet.world}: " if fleet.worlds > 1 else ""
    figure.suptitle(f"{world}{fleet.vehicles} vehicles; {title}; vehicle {vehicle} in detail", fontsize=10)
    return figure


def _figure():
    import matplotlib  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    rows = len(TIME_PANELS) + 1
    figure = Figure(figsize=(11.0, 7.6), dpi=90)
    figure.subplots_adjust(left=0.07, right=0.98, top=0.93, bottom=0.07, wspace=0.22, hspace=0.3)
    spec = figure.add_gridspec(rows, 2, width_ratios=(1.0, 1.25))
    figure.add_subplot(spec[:, 0])
    first = figure.add_subplot(spec[0, 1])
    for row in range(1, rows):
        figure.add_subplot(spec[row, 1], sharex=first)
    return figure
