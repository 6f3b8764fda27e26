"""A plane's figures: its energy and controls by mission phase, and its track seen from above.

A run whose record holds the plane mission's ``plane_phase`` (nexus/control/fixed_wing/mission.py) gets two
figures in place of the multirotor's "controls and rotor speeds" (a plane has no rotors; its ``controls`` row holds
servo commands and a throttle): :func:`flight` (airspeed, height, the three surfaces' deflections [deg] and the
throttle, each against time with the phases shaded) and :func:`track` (north against east, one colour a phase, the
release, the touchdown and the stop marked). A standard VTOL's run (``vtol_phase``: nexus/control/vtol/mission.py)
gets the same two, by its own phases, beside the rotors' figure, with the rotors' share of the blend
(``vtol_blend``) drawn over the pusher's throttle and its landing marked as the touchdown. Any other run gets none
(:func:`draw` returns an empty dict).

The airspeed is the truth's speed through the air (|v − wind| where the record has the wind, else the speed over
the ground: still air); the height is above the NED origin, the plane's resting place on its wheels. The throttle
is the ``controls`` slot of the vehicle file's propeller (``NexusAdvanceRatioPropellerAPI``'s ``nexus:channel``, as
:func:`nexus.viz.vehicle_file.read_vehicle_file` reads it with the file's sensors).
"""

from __future__ import annotations

import numpy as np

from nexus.viz.figures import DEGREES, TRUTH, _figure
from nexus.viz.run_data import RunData
from nexus.viz.series import FlightSeries
from nexus.viz.vehicle_file import VehicleFile

#: The mission's phases in ``plane_phase`` order (nexus/control/fixed_wing/mission.py's PHASE_NAMES).
PHASES = ("launch", "route", "loiter", "descent", "approach", "final", "flare", "roll-out")
#: A standard VTOL's phases in ``vtol_phase`` order (nexus/control/vtol/mission.py's PHASE_NAMES).
VTOL_PHASES = ("take-off", "front transition", "fixed wing", "back transition", "return", "land", "landed")
#: One colour a phase, in order.
PHASE_COLOURS = ("tab:red", "tab:blue", "tab:purple", "tab:brown", "tab:olive", "tab:orange", "tab:pink", "0.35")
#: The record's surface columns, in the order drawn.
SURFACES = ("aileron", "elevator", "rudder")


def phases_of(run: RunData) -> tuple[str, tuple[str, ...]] | None:
    """The record's phase column and its phases' names: a plane's, a VTOL's, or None."""
    if run.has("plane_phase"):
        return "plane_phase", PHASES
    if run.has("vtol_phase"):
        return "vtol_phase", VTOL_PHASES
    return None


def draw(run: RunData, series: FlightSeries, vehicle: VehicleFile) -> dict[str, tuple[str, object]]:
    """name -> (title, figure) for a plane's or a VTOL's run; empty for any other."""
    if phases_of(run) is None:
        return {}
    return {"plane": ("Airspeed, height, surfaces and throttle by phase",
                      flight(run, series, vehicle.throttle_channel)),
            "track": ("Track from above by phase", track(run, series))}


def phase_spans(time: np.ndarray, phase: np.ndarray) -> list[tuple[int, float, float]]:
    """(phase, first time, last time) [s] of each run of equal phases, in order (the record's -1: none)."""
    spans = []
    edges = np.flatnonzero(np.diff(phase)) + 1
    for start, stop in zip(np.r_[0, edges], np.r_[edges, len(phase)]):
        if phase[start] >= 0:
            spans.append((int(phase[start]), float(time[start]), float(time[stop - 1])))
    return spans


def airspeed(run: RunData, series: FlightSeries) -> np.ndarray:
    """The truth's speed through the air [m/s]: |v − wind| with a wind in the record, else |v|."""
    if series.airspeed is not None:
        return series.airspeed
    return np.linalg.norm(run.vector("body/base.velocity", 3), axis=1)


def _shade(ax, spans) -> None:
    for phase, start, stop in spans:
        ax.axvspan(start, stop, color=PHASE_COLOURS[phase % len(PHASE_COLOURS)], alpha=0.08, lw=0)


def flight(run: RunData, series: FlightSeries, channel: int | None):
    phase_column, names = phases_of(run)
    spans = phase_spans(series.time, run.columns[phase_column])
    figure, axes = _figure(4, height=2.0)
    axes[0, 0].plot(series.time, airspeed(run, series), color=TRUTH, lw=1.2)
    axes[0, 0].set_ylabel("airspeed [m/s]")
    axes[1, 0].plot(series.time, -series.position[:, 2], color=TRUTH, lw=1.2)
    axes[1, 0].set_ylabel("height [m]")
    for name in SURFACES:
        column = f"surface/{name}"
        if run.has(column):
            axes[2, 0].plot(series.time, run.scalar(column) * DEGREES, lw=1.0, label=name)
    axes[2, 0].set_ylabel("deflection [deg]")
    axes[2, 0].legend(loc="best", fontsize=8, ncol=3)
    if channel is not None and run.has(f"controls[{channel}]"):
        axes[3, 0].plot(series.time, run.scalar(f"controls[{channel}]"), color=TRUTH, lw=1.0, label="throttle")
    if run.has("vtol_blend"):
        axes[3, 0].plot(series.time, run.scalar("vtol_blend"), color="tab:green", lw=1.0, ls="--",
                        label="rotors' share")
        axes[3, 0].legend(loc="best", fontsize=8, ncol=2)
    axes[3, 0].set_ylabel("throttle [0..1]")
    for ax in axes[:, 0]:
        _shade(ax, spans)
        ax.grid(alpha=0.3)
    top = axes[0, 0]
    for phase, start, stop in spans:
        top.text(0.5 * (start + stop), 1.0, names[phase] if phase < len(names) else str(phase), fontsize=7,
                 ha="center", va="bottom", transform=top.get_xaxis_transform())
    kind = "VTOL" if phase_column == "vtol_phase" else "Plane"
    top.set_title(f"{kind}: airspeed, height, surfaces and throttle (phases shaded)", pad=12)
    axes[-1, 0].set_xlabel("time [s]")
    return figure


def track(run: RunData, series: FlightSeries):
    column, names = phases_of(run)
    phase = run.columns[column]
    north, east = series.position[:, 0], series.position[:, 1]
    figure, axes = _figure(1, height=6.0, width=7.0)
    ax = axes[0, 0]
    for number, start, stop in phase_spans(series.time, phase):
        rows = (series.time >= start) & (series.time <= stop)
        name = names[number] if number < len(names) else str(number)
        ax.plot(east[rows], north[rows], color=PHASE_COLOURS[number % len(PHASE_COLOURS)], lw=1.4, label=name)
    ax.plot(east[0], north[0], "o", color=TRUTH, label="release" if column == "plane_phase" else "take-off")
    down = np.flatnonzero(phase == len(names) - 1)
    if down.size:
        ax.plot(east[down[0]], north[down[0]], "v", color="tab:red", label="touchdown")
    ax.plot(east[-1], north[-1], "s", color=TRUTH, label="end")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("east [m]")
    ax.set_ylabel("north [m]")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8, ncol=2)
    ax.set_title("Track from above (truth, from the NED origin)")
    return figure


__all__ = ["PHASES", "VTOL_PHASES", "airspeed", "draw", "flight", "phase_spans", "phases_of", "track"]
