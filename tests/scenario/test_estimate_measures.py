"""The estimator's measures on a hand-made record: estimate error, drift, and the times its status says something."""

import math

import numpy as np
import pyarrow as pa
import pytest

from nexus.scenario.checks import evaluate_run
from nexus.scenario.spec import Check, ScenarioError, load

TICK_S = 0.004
ROWS = 10


def record():
    """Ten ticks of a vehicle at the NED origin, level, its estimate on it, status 479 (valid, nothing faulted)."""
    columns = {"time": np.arange(1, ROWS + 1) * TICK_S,
               **{f"body/base.pose[{i}]": np.zeros(ROWS) for i in range(6)}, "body/base.pose[6]": np.ones(ROWS),
               **{f"body/base.velocity[{i}]": np.zeros(ROWS) for i in range(3)},
               **{f"estimate.position[{i}]": np.zeros(ROWS) for i in range(3)},
               "estimate_status": np.full(ROWS, 479, dtype=np.int32)}
    return columns


def judge(columns, *checks):
    info = {"tick_ns": 4_000_000, "ned_origin_enu_m": [0.0, 0.0, 0.0], "exit_reason": "done",
            "sim_time_s": ROWS * TICK_S}
    return evaluate_run(checks, pa.table(columns), info)


def test_estimate_error_is_the_estimate_less_the_truth_pose():
    columns = record()
    columns["body/base.pose[0]"][4] = 0.3  # ENU east 0.3 m, north 0.4 m at row 4 (t = 0.02 s, tick 5)
    columns["body/base.pose[1]"][4] = 0.4
    columns["estimate.position[2]"][6] = -0.25  # the estimate 0.25 m up (NED down -0.25) at row 6
    horizontal, vertical = judge(columns, Check("h", "estimate_error_horizontal", 0.4, "max", (0.0, 0.04)),
                                 Check("v", "estimate_error_vertical", 0.3, "max", (0.0, 0.04)))
    assert not horizontal.passed and horizontal.worst == pytest.approx(0.5) and horizontal.first_tick == 5
    assert vertical.passed and vertical.worst == pytest.approx(0.25)


def test_drift_is_the_farthest_from_where_the_window_began():
    columns = record()
    columns["body/base.pose[1]"][:] = 1.0  # 1 m north throughout
    columns["body/base.pose[1]"][3:] = 1.0 + np.array([0.1, 0.2, 0.6, 0.5, 0.4, 0.3, 0.3])  # out 0.6 m, back
    columns["body/base.pose[0]"][5] = 0.8  # and 0.8 m east at row 5: hypot(0.6, 0.8) = 1.0 m
    kept, reached, late = judge(columns, Check("kept", "drift", 0.9, "max", (0.008, 0.04)),
                                Check("reached", "drift", 0.95, "min", (0.008, 0.028)),
                                Check("late", "drift", 0.95, "min", (0.008, 0.02)))
    assert not kept.passed and kept.worst == pytest.approx(1.0) and kept.first_tick == 6
    assert reached.passed and reached.worst == pytest.approx(1.0)  # the farthest so far, at the window's end
    assert not late.passed and late.worst == pytest.approx(0.2) and late.excess == pytest.approx(0.75)


def test_horizontal_invalid_is_the_first_time_the_valid_bit_is_clear():
    columns = record()
    columns["estimate_status"][6:] = 479 - 64  # horizontal valid drops at row 6: t = 0.028 s, tick 7
    by, not_before, too_soon = judge(columns, Check("by", "horizontal_invalid", 0.03, "max", (0.0, 0.04)),
                                     Check("nb", "horizontal_invalid", 0.02, "min", (0.0, 0.04)),
                                     Check("soon", "horizontal_invalid", 0.01, "max", (0.0, 0.04)))
    assert by.passed and by.worst == pytest.approx(0.028)
    assert not_before.passed
    assert not too_soon.passed and too_soon.excess == pytest.approx(0.018)


def test_a_run_whose_estimator_writes_no_status_never_says_invalid_or_faulted():
    columns = record()
    del columns["estimate_status"]
    invalid, baro = judge(columns, Check("i", "horizontal_invalid", 0.03, "max", (0.0, 0.04)),
                          Check("b", "baro_fault", 0.03, "max", (0.0, 0.04)))
    assert not invalid.passed and invalid.worst == math.inf and "never said" in invalid.message()
    assert not baro.passed and baro.worst == math.inf


def test_baro_fault_is_the_first_time_its_bit_is_set():
    columns = record()
    columns["estimate_status"][3:] = 479 + 1024  # flagged at row 3: t = 0.016 s
    (result,) = judge(columns, Check("b", "baro_fault", 0.02, "max", (0.0, 0.04)))
    assert result.passed and result.worst == pytest.approx(0.016)


def test_airspeed_fault_is_the_first_time_its_bit_is_set_and_not_the_baro_s():
    columns = record()
    columns["estimate_status"][2:] = 479 + 1024  # the barometer's bit from row 2: not the pitot's
    columns["estimate_status"][5:] = 479 + 1024 + 32768  # the pitot's from row 5: t = 0.024 s
    pitot, too_soon = judge(columns, Check("p", "airspeed_fault", 0.03, "max", (0.0, 0.04)),
                            Check("n", "airspeed_fault", 0.03, "min", (0.0, 0.04)))
    assert pitot.passed and pitot.worst == pytest.approx(0.024)
    assert not too_soon.passed


def test_a_check_takes_max_or_min_of_drift_but_not_both(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('duration = 5.0\n[[check]]\nmeasure = "drift"\nmin = 1.0\nmax = 2.0\n')
    with pytest.raises(ScenarioError) as caught:
        load(path)
    assert str(caught.value) == f"{path}: check[0].max: drift takes max or min, not both; write two checks"
    path.write_text('duration = 5.0\nestimator = "ekf"\n[[check]]\nmeasure = "horizontal_invalid"\nmin = 1.0\n')
    scenario = load(path)
    assert scenario.run["estimator"] == "ekf" and scenario.checks[0].side == "min"
    path.write_text('duration = 5.0\nestimator = "kalman"\n[[check]]\nmeasure = "ended"\n')
    with pytest.raises(ScenarioError) as caught:
        load(path)
    assert str(caught.value) == (f"{path}: estimator: 'kalman'; choose vehicle (the vehicle file's own), truth or "
                                 "ekf")
