"""``nexus plot``'s EKF figures: the estimate against truth inside its 3σ band, the innovations inside their gates.

The numbers are checked on a record made by hand (three rows), where every band is worked out by hand; a real
run without the EKF (the session's short flight, on the truth estimator) gets none of these figures and no error.
"""

import math

import numpy as np
import pytest

from nexus.viz import estimate_figures
from nexus.viz.run_data import RunData
from nexus.viz.series import FlightSeries

ROWS = 3


def record(with_filter: bool = True) -> dict:
    """Three rows: the vehicle level, nose east, at rest at (north 1, east 2, down −3) [m]; the estimate 0.1 m
    north of it, turned 0.1 rad more to the right (yaw), moving 2 m/s north where the truth moves 2 m/s north."""
    columns = {"time": np.array([0.0, 0.004, 0.008])}
    pose = [2.0, 1.0, 3.0, 0.0, 0.0, 0.0, 1.0]  # ENU (east 2, north 1, up 3); FLU level with x east
    for i, value in enumerate(pose):
        columns[f"body/base.pose[{i}]"] = np.full(ROWS, value)
    for i, value in enumerate((0.0, 2.0, 0.0)):  # ENU: 2 m/s north
        columns[f"body/base.velocity[{i}]"] = np.full(ROWS, value)
    if not with_filter:
        return columns
    yaw = math.pi / 2 + 0.1  # NED/FRD: nose east is yaw 90 deg
    for i, value in enumerate((0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))):
        columns[f"estimate.attitude[{i}]"] = np.full(ROWS, value)
    for i, value in enumerate((1.1, 2.0, -3.0)):
        columns[f"estimate.position[{i}]"] = np.full(ROWS, value)
    for i, value in enumerate((2.0, 0.0, 0.0)):
        columns[f"estimate.velocity[{i}]"] = np.full(ROWS, value)
    for i in range(15):
        columns[f"ekf_variance[{i}]"] = np.full(ROWS, 0.04 if i < 3 else 1e-4)
    for i in range(9):
        columns[f"ekf_innovation[{i}]"] = np.zeros(ROWS)
        columns[f"ekf_test_ratio[{i}]"] = np.zeros(ROWS)
        columns[f"ekf_rejected[{i}]"] = np.zeros(ROWS)
    columns["ekf_innovation[0]"] = np.array([0.0, 0.3, -0.2])  # GPS north [m]
    columns["ekf_test_ratio[0]"] = np.array([0.0, 0.01, 0.04])
    columns["ekf_rejected[0]"] = np.array([0.0, 0.0, 1.0])
    columns["estimate_status"] = np.array([479, 479, 479 - 64], dtype=np.int32)  # horizontal valid drops
    return columns


def flight(columns: dict) -> tuple[RunData, FlightSeries]:
    run = RunData(folder=None, info={"ned_origin_enu_m": [0.0, 0.0, 0.0]}, columns=columns)
    series = FlightSeries(time=columns["time"], position=np.tile([1.0, 2.0, -3.0], (ROWS, 1)),
                          attitude=np.tile([0.0, 0.0, math.pi / 2], (ROWS, 1)), rates=np.zeros((ROWS, 3)))
    return run, series


def test_errors_bands_and_gates_are_worked_out_from_the_record():
    est = estimate_figures.estimate_series(*flight(record()))
    assert est.position_error[0] == pytest.approx([0.1, 0.0, 0.0], abs=1e-12)
    # ENU (0, 2, 0) is NED (2, 0, 0): the estimate's 2 m/s north is the truth's, error 0.
    assert est.truth_velocity[0] == pytest.approx([2.0, 0.0, 0.0], abs=1e-12)
    assert est.velocity_error[0] == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)
    # R_est = Rz(pi/2 + 0.1), R_true = Rz(pi/2): R_est R_true^T = Rz(0.1), delta-theta = (0, 0, 0.1) rad.
    assert est.attitude_error[0] == pytest.approx([0.0, 0.0, 0.1], abs=1e-9)
    assert est.sigma[0, :3] == pytest.approx([0.2, 0.2, 0.2], abs=1e-12)  # sqrt(0.04)
    # gate*sqrt(S) = |nu| / sqrt(ratio): 0.3 / 0.1 = 3.0, 0.2 / 0.2 = 1.0; nu = 0 says nothing (NaN).
    gate = est.gate()[:, 0]
    assert math.isnan(gate[0]) and gate[1:] == pytest.approx([3.0, 1.0], abs=1e-12)
    assert np.isnan(est.gate()[:, 1]).all()


def test_the_figures_draw_the_bands_the_record_gives():
    drawn = estimate_figures.draw(*flight(record()))
    assert list(drawn) == ["estimate_position", "estimate_velocity", "estimate_attitude", "estimate_innovations",
                           "estimate_status"]
    position = drawn["estimate_position"][1]
    right_north = position.axes[1]  # rows of (left, right): north's error panel
    bands = [np.abs(c.get_paths()[0].vertices[:, 1]).max() for c in right_north.collections]
    assert sorted(bands) == pytest.approx([0.2, 0.6], abs=1e-9)  # 1 sigma and 3 sigma of sqrt(0.04) m
    [error_line] = right_north.get_lines()
    assert error_line.get_ydata() == pytest.approx([0.1] * ROWS, abs=1e-12)
    attitude = drawn["estimate_attitude"][1]
    [yaw_error] = attitude.axes[5].get_lines()  # down's error panel [deg]
    assert yaw_error.get_ydata() == pytest.approx([math.degrees(0.1)] * ROWS, abs=1e-7)
    innovations = drawn["estimate_innovations"][1]
    visible = [ax for ax in innovations.axes if ax.get_visible()]
    assert len(visible) == 1  # only GPS north was fused
    assert "1 rejected" in visible[0].get_title()
    [gate] = visible[0].collections
    assert np.nanmax(np.abs(gate.get_paths()[0].vertices[:, 1])) == pytest.approx(3.0, abs=1e-12)
    status = drawn["estimate_status"][1].axes[0]
    horizontal = status.get_lines()[6]  # the seventh lane: horizontal valid, high (6.7) then low (6)
    assert list(horizontal.get_ydata()) == pytest.approx([6.7, 6.7, 6.0], abs=1e-12)


def test_a_record_without_the_filter_gets_no_figure():
    assert estimate_figures.draw(*flight(record(with_filter=False))) == {}


def test_a_real_run_on_the_truth_estimator_plots_without_these_figures(short_run, tmp_path):
    from click.testing import CliRunner

    from nexus.commands.plot import plot

    made = CliRunner().invoke(plot, [str(short_run), "--out", str(tmp_path)])
    assert made.exit_code == 0, made.output
    written = sorted(p.stem for p in (tmp_path / "plots").glob("*.png"))
    assert "position" in written and not [name for name in written if name.startswith("estimate_")]
