"""The report's figures, drawn with matplotlib's Agg backend (no display needed).

Each function takes the :class:`~nexus.viz.series.FlightSeries` and returns
one figure, or None when the run recorded nothing for it. Colours are fixed
per role across figures: truth black, estimate blue, setpoint orange,
sensor samples grey, PX4's own estimate (``--ulog``) green.
"""

from __future__ import annotations

import numpy as np

from nexus.viz.series import Channel, FlightSeries

TRUTH, ESTIMATE, SETPOINT, SAMPLES, PX4 = "black", "tab:blue", "tab:orange", "0.55", "tab:green"
DEGREES = 180.0 / np.pi


def _figure(rows: int, cols: int = 1, height: float = 2.1, width: float = 9.0):
    import matplotlib  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # noqa: PLC0415  (reason: matplotlib loads only to draw; no pyplot: no global state, no GUI)

    total = height * rows + 0.7
    figure = Figure(figsize=(width, total), dpi=90)  # fixed margins: constrained layout costs seconds per figure
    figure.subplots_adjust(left=0.12 if cols == 1 else 0.09, right=0.98, top=1.0 - 0.35 / total,
                           bottom=0.45 / total, hspace=0.25, wspace=0.18)
    axes = figure.subplots(rows, cols, sharex=True, squeeze=False)
    return figure, axes


def position(series: FlightSeries, px4=None):
    figure, axes = _figure(3)
    for i, axis in enumerate(("north", "east", "down")):
        ax = axes[i, 0]
        ax.plot(series.time, series.position[:, i], color=TRUTH, lw=1.6, label="truth")
        if series.estimate_position is not None:
            ax.plot(series.time, series.estimate_position[:, i], color=ESTIMATE, lw=1.0, ls="--", label="estimate")
        if series.setpoint_position is not None:
            ax.plot(series.time, series.setpoint_position[:, i], color=SETPOINT, lw=1.2, label="setpoint")
        if px4 is not None:
            ax.plot(px4.time, px4.position[:, i], color=PX4, lw=1.0, label="PX4 estimate (ULog)")
        ax.set_ylabel(f"{axis} [m]")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc="best", fontsize=8)
    axes[0, 0].set_title("Position from the NED origin")
    axes[-1, 0].set_xlabel("time [s]")
    return figure


def attitude(series: FlightSeries, px4=None):
    figure, axes = _figure(3)
    for i, name in enumerate(("roll", "pitch", "yaw")):
        ax = axes[i, 0]
        ax.plot(series.time, _unwrap(series.attitude[:, i]) * DEGREES, color=TRUTH, lw=1.6, label="truth")
        if series.estimate_attitude is not None:
            ax.plot(series.time, _unwrap(series.estimate_attitude[:, i]) * DEGREES, color=ESTIMATE, lw=1.0, ls="--",
                    label="estimate")
        if name == "yaw" and series.setpoint_yaw is not None:
            ax.plot(series.time, _unwrap(series.setpoint_yaw) * DEGREES, color=SETPOINT, lw=1.2, label="yaw setpoint")
        if px4 is not None:
            ax.plot(px4.time, _unwrap(px4.attitude[:, i]) * DEGREES, color=PX4, lw=1.0, label="PX4 estimate (ULog)")
        ax.set_ylabel(f"{name} [deg]")
        ax.grid(alpha=0.3)
    axes[2, 0].legend(loc="best", fontsize=8)
    axes[0, 0].set_title("Attitude (NED/FRD, Z-Y-X Euler angles)")
    axes[-1, 0].set_xlabel("time [s]")
    return figure


def rates(series: FlightSeries):
    figure, axes = _figure(3)
    for i, name in enumerate(("roll rate p", "pitch rate q", "yaw rate r")):
        ax = axes[i, 0]
        ax.plot(series.time, series.rates[:, i] * DEGREES, color=TRUTH, lw=1.6, label="truth")
        if series.estimate_rates is not None:
            ax.plot(series.time, series.estimate_rates[:, i] * DEGREES, color=ESTIMATE, lw=1.0, ls="--",
                    label="estimate")
        ax.set_ylabel(f"{name} [deg/s]")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc="best", fontsize=8)
    axes[0, 0].set_title("Body rates (FRD)")
    axes[-1, 0].set_xlabel("time [s]")
    return figure


def motors(series: FlightSeries):
    if series.controls is None:
        return None
    panels = 2 if series.rotor_speeds is not None else 1
    figure, axes = _figure(panels, height=2.6)
    for k in range(series.controls.shape[1]):
        axes[0, 0].plot(series.time, series.controls[:, k], lw=1.0, label=f"controls[{k}]")
    axes[0, 0].set_ylabel("control [0..1]")
    axes[0, 0].set_title("Motor controls and rotor speeds")
    axes[0, 0].legend(loc="best", fontsize=8, ncol=4)
    axes[0, 0].grid(alpha=0.3)
    if series.rotor_speeds is not None:
        for k in range(series.rotor_speeds.shape[1]):
            axes[1, 0].plot(series.time, series.rotor_speeds[:, k], lw=1.0, label=f"rotor {k + 1}")
        axes[1, 0].set_ylabel("rotor speed [rad/s]")
        axes[1, 0].grid(alpha=0.3)
        axes[1, 0].legend(loc="best", fontsize=8, ncol=4)
    axes[-1, 0].set_xlabel("time [s]")
    return figure


def air(series: FlightSeries):
    """Top: the wind at the base (east, north, up) and its horizontal speed. Bottom: the speed through the air
    |v − wind| against the speed over the ground |v|. None without a wind in the record."""
    if series.wind is None:
        return None
    panels = 2 if series.airspeed is not None else 1
    figure, axes = _figure(panels, height=2.6)
    for i, axis in enumerate(("east", "north", "up")):
        axes[0, 0].plot(series.time, series.wind[:, i], lw=1.0, label=axis)
    axes[0, 0].plot(series.time, np.hypot(series.wind[:, 0], series.wind[:, 1]), color=TRUTH, lw=1.4,
                    label="horizontal speed")
    axes[0, 0].set_ylabel("wind [m/s]")
    axes[0, 0].set_title("Wind at the base (world ENU) and airspeed")
    if series.airspeed is not None:
        axes[1, 0].plot(series.time, series.airspeed, color=ESTIMATE, lw=1.2, label="airspeed |v − wind|")
        axes[1, 0].plot(series.time, series.ground_speed, color=TRUTH, lw=1.0, ls="--", label="ground speed |v|")
        axes[1, 0].set_ylabel("speed [m/s]")
    for ax in axes[:, 0]:
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8, ncol=4)
    axes[-1, 0].set_xlabel("time [s]")
    return figure


def battery(series: FlightSeries):
    """The pack's terminal voltage [V], current [A] and state of charge [-]; None without a battery."""
    if series.battery is None:
        return None
    figure, axes = _figure(3)
    for row, (name, label) in enumerate((("voltage", "voltage [V]"), ("current", "current [A]"),
                                         ("state_of_charge", "state of charge [-]"))):
        axes[row, 0].plot(series.time, series.battery[name], color=TRUTH, lw=1.2)
        axes[row, 0].set_ylabel(label)
        axes[row, 0].grid(alpha=0.3)
    axes[0, 0].set_title("Battery")
    axes[-1, 0].set_xlabel("time [s]")
    return figure


def sensor(channels: list[Channel], title: str):
    """Left: samples against truth with the ±1σ band around truth. Right: residual with ±1σ and ±3σ."""
    if not channels:
        return None
    figure, axes = _figure(len(channels), 2, height=1.9, width=11.0)
    for row, channel in enumerate(channels):
        left, right = axes[row, 0], axes[row, 1]
        left.plot(channel.time, channel.measured, ".", color=SAMPLES, ms=2.0, label="samples")
        left.plot(channel.time, channel.truth, color=TRUTH, lw=1.0, label="truth")
        residual = channel.residual
        right.plot(channel.time, residual, ".", color=SAMPLES, ms=2.0)
        if channel.sigma is not None:
            sigma = np.broadcast_to(np.asarray(channel.sigma, dtype=np.float64), channel.time.shape)
            left.fill_between(channel.time, channel.truth - sigma, channel.truth + sigma, color=ESTIMATE, alpha=0.25,
                              lw=0, label="truth ± 1σ")
            for k, alpha in ((1, 0.25), (3, 0.10)):
                right.fill_between(channel.time, -k * sigma, k * sigma, color=ESTIMATE, alpha=alpha, lw=0,
                                   label=f"±{k}σ")
            stats = channel.stats()
            share = stats["within_1sigma"]
            right.set_title(f"residual σ̂ {stats['residual_std']:.3g} vs σ {stats['sigma']:.3g}"
                            + (f", {share:.0%} within ±1σ" if share is not None else ""), fontsize=8)
        left.set_ylabel(f"{channel.label} [{channel.unit}]", fontsize=8)
        left.grid(alpha=0.3)
        right.grid(alpha=0.3)
    axes[0, 0].set_title(title)
    axes[0, 0].legend(loc="best", fontsize=7)
    axes[-1, 0].set_xlabel("time [s]")
    axes[-1, 1].set_xlabel("time [s]")
    return figure


def ulog_errors(series: FlightSeries, px4):
    """PX4's estimate minus Nexus's truth: position [m] and attitude [deg], at the ULog's timestamps."""
    figure, axes = _figure(2, height=2.6)
    truth_position = np.stack([np.interp(px4.time, series.time, series.position[:, i]) for i in range(3)], axis=1)
    truth_attitude = np.stack([np.interp(px4.time, series.time, np.unwrap(series.attitude[:, i])) for i in range(3)],
                              axis=1)
    for i, axis in enumerate(("north", "east", "down")):
        axes[0, 0].plot(px4.time, px4.position[:, i] - truth_position[:, i], lw=1.0, label=axis)
    for i, name in enumerate(("roll", "pitch", "yaw")):
        error = _wrap(px4.attitude[:, i] - truth_attitude[:, i])
        axes[1, 0].plot(px4.time, error * DEGREES, lw=1.0, label=name)
    axes[0, 0].set_ylabel("position error [m]")
    axes[1, 0].set_ylabel("attitude error [deg]")
    axes[0, 0].set_title("PX4's estimate (ULog) minus Nexus truth")
    for ax in axes[:, 0]:
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    axes[-1, 0].set_xlabel("time [s]")
    return figure


def _unwrap(angle):
    """Angles [rad] without ±π jumps, starting in (−π, π]: a heading through south stays a continuous line."""
    return np.unwrap(_wrap(np.asarray(angle, dtype=np.float64)))


def _wrap(angle):
    """Angles wrapped to (−π, π] [rad]."""
    return (np.asarray(angle) + np.pi) % (2.0 * np.pi) - np.pi
