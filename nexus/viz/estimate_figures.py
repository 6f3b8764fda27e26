"""The EKF's figures: its estimate against the truth with 3σ bands, its innovations with their gates, its status.

A run whose record holds the filter's columns (``ekf_variance``, ``ekf_innovation``, ``ekf_test_ratio`` and the
status, nexus/estimation/ekf.py) gets four more figures; any other run gets none (:func:`draw` returns an empty
dict). Each comparison is drawn twice: on the left the truth and the estimate with the estimate ± 3σ from the
covariance diagonal, on the right the error (estimate − truth) inside ±3σ, where a consistent filter keeps it.

The attitude error is the rotation vector ``δθ`` with ``R_est = exp(δθ)·R_true`` in NED, the filter's own error
state, so its band is the attitude variances as recorded (Euler angles have no variance of their own). The gate
band of an innovation ``ν`` is ``±gate·√S``, worked out from what is recorded: the test ratio is
``ν² / (gate²·S)``, so ``gate·√S = |ν| / √ratio`` (undefined while ``ν`` is 0: drawn as a gap).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nexus.estimation import estimate_status as bits
from nexus.viz.figures import DEGREES, ESTIMATE, SETPOINT, TRUTH, _figure
from nexus.viz.run_data import RunData
from nexus.viz import truth as t
from nexus.viz.series import FlightSeries

#: The filter's fused scalars in the order of its innovation and test-ratio columns, with their units.
SCALARS = (("GPS north", "m"), ("GPS east", "m"), ("GPS down", "m"), ("GPS velocity N", "m/s"),
           ("GPS velocity E", "m/s"), ("GPS velocity D", "m/s"), ("barometer height", "m"), ("heading", "rad"),
           ("range height", "m"))
#: The status bits drawn, bottom to top.
STATUS_BITS = (("tilt aligned", bits.TILT_ALIGNED), ("yaw aligned", bits.YAW_ALIGNED), ("GPS", bits.GPS_AIDING),
               ("baro", bits.BARO_AIDING), ("mag", bits.MAG_AIDING), ("range", bits.RANGE_AIDING),
               ("horizontal valid", bits.HORIZONTAL_VALID), ("vertical valid", bits.VERTICAL_VALID),
               ("origin set", bits.ORIGIN_SET), ("GPS fault", bits.GPS_FAULT), ("baro fault", bits.BARO_FAULT),
               ("mag fault", bits.MAG_FAULT), ("range fault", bits.RANGE_FAULT),
               ("no-aid fusion", bits.NO_AID_FUSION))
#: 3σ: the band a consistent filter keeps its error inside 99.7 % of the time (per axis).
SIGMAS = 3.0


@dataclass
class EstimateSeries:
    """The filter's estimate, its errors against the truth and its own σ, per row (NED, FRD; SI units)."""

    time: np.ndarray
    truth_position: np.ndarray
    estimate_position: np.ndarray
    truth_velocity: np.ndarray
    estimate_velocity: np.ndarray
    truth_attitude: np.ndarray  # roll, pitch, yaw [rad]
    estimate_attitude: np.ndarray
    #: Rotation vector δθ [rad], NED: R_est = exp(δθ)·R_true.
    attitude_error: np.ndarray
    #: √ of the covariance diagonal: position 0-2 [m], velocity 3-5 [m/s], attitude 6-8 [rad], gyro bias 9-11
    #: [rad/s], accelerometer bias 12-14 [m/s²].
    sigma: np.ndarray
    innovation: np.ndarray  # (rows, 9), SCALARS' units
    test_ratio: np.ndarray  # (rows, 9) [-]
    rejected: np.ndarray | None  # (rows, 9) counts, or None when not recorded
    status: np.ndarray | None  # int, or None when not recorded

    @property
    def position_error(self) -> np.ndarray:
        return self.estimate_position - self.truth_position

    @property
    def velocity_error(self) -> np.ndarray:
        return self.estimate_velocity - self.truth_velocity

    def gate(self) -> np.ndarray:
        """``gate·√S`` of each scalar per row, from ``|ν| / √ratio`` (NaN where ν or the ratio is 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            band = np.abs(self.innovation) / np.sqrt(self.test_ratio)
        band[~np.isfinite(band) | (self.innovation == 0.0)] = np.nan
        return band


def has_filter(run: RunData) -> bool:
    """Whether the record holds a filter's columns (the EKF's), with an estimate to compare."""
    return run.has("ekf_variance[0]", "ekf_innovation[0]", "ekf_test_ratio[0]", "estimate.position[0]")


def estimate_series(run: RunData, series: FlightSeries) -> EstimateSeries | None:
    """The filter's series of ``run`` (truth from ``series``), or None for a run without a filter."""
    if not has_filter(run):
        return None
    r_true = t.ned_frd_from_enu_flu(t.rotation_matrices(run.vector("body/base.pose", 7)[:, 3:7]))
    r_est = t.rotation_matrices(run.vector("estimate.attitude", 4))
    velocity = run.vector("body/base.velocity", 3) if run.has("body/base.velocity[0]") else np.full((run.rows, 3),
                                                                                                      np.nan)
    return EstimateSeries(
        time=series.time, truth_position=series.position, estimate_position=run.vector("estimate.position", 3),
        truth_velocity=np.stack([velocity[:, 1], velocity[:, 0], -velocity[:, 2]], axis=1),  # ENU -> NED
        estimate_velocity=run.vector("estimate.velocity", 3), truth_attitude=series.attitude,
        estimate_attitude=t.euler_zyx(r_est), attitude_error=rotation_vector(r_est @ np.transpose(r_true, (0, 2, 1))),
        sigma=np.sqrt(np.maximum(run.vector("ekf_variance", 15), 0.0)),
        innovation=run.vector("ekf_innovation", 9), test_ratio=run.vector("ekf_test_ratio", 9),
        rejected=run.vector("ekf_rejected", 9) if run.has("ekf_rejected[0]") else None,
        status=run.columns[bits.STATUS_SIGNAL].astype(np.int64) if run.has(bits.STATUS_SIGNAL) else None)


def rotation_vector(r: np.ndarray) -> np.ndarray:
    """The rotation vectors [rad] (rows, 3) of rotation matrices (rows, 3, 3): axis times angle, angle in [0, π)."""
    cosine = np.clip((np.trace(r, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(cosine)
    skew = np.stack([r[:, 2, 1] - r[:, 1, 2], r[:, 0, 2] - r[:, 2, 0], r[:, 1, 0] - r[:, 0, 1]], axis=1) / 2.0
    sine = np.sin(angle)
    scale = np.where(sine > 1e-9, angle / np.where(sine > 1e-9, sine, 1.0), 1.0)  # small angles: δθ ≈ vee(skew)
    return skew * scale[:, None]


def draw(run: RunData, series: FlightSeries) -> dict[str, tuple[str, object]]:
    """The filter's figures (name -> (title, figure)) in page order; empty for a run without a filter."""
    est = estimate_series(run, series)
    if est is None:
        return {}
    return {
        "estimate_position": ("EKF position against truth, ±3σ", position(est)),
        "estimate_velocity": ("EKF velocity against truth, ±3σ", velocity(est)),
        "estimate_attitude": ("EKF attitude against truth, ±3σ", attitude(est)),
        "estimate_innovations": ("EKF innovations and their gates", innovations(est)),
        **({"estimate_status": ("EKF status bits", status(est))} if est.status is not None else {}),
    }


def _against_truth(est: EstimateSeries, truth, estimate, error, sigma, labels, unit: str, title: str, scale=1.0):
    """Left: truth and estimate ± 3σ; right: error inside ±3σ (and ±1σ), per axis."""
    figure, axes = _figure(3, 2, height=1.9, width=11.0)
    for i, label in enumerate(labels):
        left, right = axes[i, 0], axes[i, 1]
        band = SIGMAS * sigma[:, i] * scale
        if truth is not None:
            left.plot(est.time, truth[:, i] * scale, color=TRUTH, lw=1.4, label="truth")
            left.plot(est.time, estimate[:, i] * scale, color=ESTIMATE, lw=1.0, ls="--", label="estimate")
            left.fill_between(est.time, estimate[:, i] * scale - band, estimate[:, i] * scale + band, color=ESTIMATE,
                              alpha=0.2, lw=0, label="estimate ± 3σ")
            left.set_ylabel(f"{label} [{unit}]", fontsize=8)
        right.plot(est.time, error[:, i] * scale, color=SETPOINT, lw=1.0, label="estimate − truth")
        right.fill_between(est.time, -band, band, color=ESTIMATE, alpha=0.15, lw=0, label="±3σ")
        right.fill_between(est.time, -band / SIGMAS, band / SIGMAS, color=ESTIMATE, alpha=0.25, lw=0, label="±1σ")
        share = float(np.mean(np.abs(error[:, i] * scale) <= band)) if len(band) else 1.0
        right.set_title(f"{label} error: max {np.nanmax(np.abs(error[:, i] * scale)):.3g} {unit}, "
                        f"{share:.1%} within ±3σ", fontsize=8)
        right.set_ylabel(f"error [{unit}]", fontsize=8)
        for ax in (left, right):
            ax.grid(alpha=0.3)
    axes[0, 0].set_title(title)
    if truth is not None:
        axes[0, 0].legend(loc="best", fontsize=7)
    axes[0, 1].legend(loc="best", fontsize=7)
    axes[-1, 0].set_xlabel("time [s]")
    axes[-1, 1].set_xlabel("time [s]")
    return figure


def position(est: EstimateSeries):
    return _against_truth(est, est.truth_position, est.estimate_position, est.position_error, est.sigma[:, 0:3],
                          ("north", "east", "down"), "m", "EKF position (NED from the origin)")


def velocity(est: EstimateSeries):
    return _against_truth(est, est.truth_velocity, est.estimate_velocity, est.velocity_error, est.sigma[:, 3:6],
                          ("v north", "v east", "v down"), "m/s", "EKF velocity (NED)")


def attitude(est: EstimateSeries):
    """Left: Euler angles, truth and estimate (the band is drawn on the right only: δθ's axes are NED, not Euler's).
    Right: δθ per NED axis inside ±3σ of the filter's attitude variances."""
    figure = _against_truth(est, None, None, est.attitude_error, est.sigma[:, 6:9], ("δθ north", "δθ east",
                            "δθ down"), "deg", "EKF attitude", scale=DEGREES)
    axes = figure.axes
    for i, name in enumerate(("roll", "pitch", "yaw")):
        left = axes[2 * i]
        left.plot(est.time, np.unwrap(est.truth_attitude[:, i]) * DEGREES, color=TRUTH, lw=1.4, label="truth")
        left.plot(est.time, np.unwrap(est.estimate_attitude[:, i]) * DEGREES, color=ESTIMATE, lw=1.0, ls="--",
                  label="estimate")
        left.set_ylabel(f"{name} [deg]", fontsize=8)
    axes[0].set_title("EKF attitude (Z-Y-X Euler; error as δθ in NED)")
    axes[0].legend(loc="best", fontsize=7)
    return figure


def innovations(est: EstimateSeries):
    """Each fused scalar's innovation inside its gate band ±gate·√S (a sample outside it was rejected)."""
    fused = [k for k in range(len(SCALARS)) if np.any(est.innovation[:, k] != 0.0)]
    if not fused:
        return None
    rows = (len(fused) + 1) // 2
    figure, axes = _figure(rows, 2, height=1.8, width=11.0)
    gate = est.gate()
    for slot, k in enumerate(fused):
        ax = axes[slot // 2, slot % 2]
        name, unit = SCALARS[k]
        ax.plot(est.time, est.innovation[:, k], color=ESTIMATE, lw=0.8, label="innovation ν")
        ax.fill_between(est.time, -gate[:, k], gate[:, k], color=SETPOINT, alpha=0.2, lw=0, label="±gate·√S")
        rejected = int(est.rejected[-1, k]) if est.rejected is not None else None
        ax.set_title(f"{name}: max test ratio {np.nanmax(est.test_ratio[:, k]):.3g}"
                     + (f", {rejected} rejected" if rejected is not None else ""), fontsize=8)
        ax.set_ylabel(f"ν [{unit}]", fontsize=8)
        ax.grid(alpha=0.3)
    for slot in range(len(fused), rows * 2):
        axes[slot // 2, slot % 2].set_visible(False)
    axes[0, 0].legend(loc="best", fontsize=7)
    axes[-1, 0].set_xlabel("time [s]")
    axes[-1, 1].set_xlabel("time [s]")
    return figure


def status(est: EstimateSeries):
    """Each status bit on its own lane, as a step: filled while the bit is set, a flat line while it is clear."""
    figure, axes = _figure(1, height=3.6)
    ax = axes[0, 0]
    for lane, (name, bit) in enumerate(STATUS_BITS):
        level = lane + 0.7 * ((est.status & bit) != 0)
        line, = ax.step(est.time, level, where="post", lw=1.0, label=name)
        ax.fill_between(est.time, lane, level, step="post", color=line.get_color(), alpha=0.35, lw=0)
    ax.set_yticks([lane + 0.35 for lane in range(len(STATUS_BITS))], [name for name, _ in STATUS_BITS], fontsize=7)
    ax.set_ylim(-0.3, len(STATUS_BITS))
    ax.set_title("EKF status (a lane is high while its bit is set)")
    ax.set_xlabel("time [s]")
    ax.grid(alpha=0.3)
    return figure
