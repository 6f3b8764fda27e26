"""The checks on a hand-made record: each measure, its first failing tick and its excess worked out by hand."""

import math

import numpy as np
import pyarrow as pa
import pytest

from nexus.scenario.checks import evaluate_run
from nexus.scenario.spec import Check

TICK_S = 0.004
ROWS = 10


def record():
    """Ten ticks of a vehicle 1 m up at the setpoint (1 m up: NED down -1), level, still, step 0 flown."""
    time = np.arange(1, ROWS + 1) * TICK_S
    up = np.ones(ROWS)
    up[0] = 0.0  # it starts on the ground: heights are measured from here
    columns = {"time": time, "body/base.pose[0]": np.zeros(ROWS), "body/base.pose[1]": np.zeros(ROWS),
               "body/base.pose[2]": up, "body/base.pose[3]": np.zeros(ROWS), "body/base.pose[4]": np.zeros(ROWS),
               "body/base.pose[5]": np.zeros(ROWS), "body/base.pose[6]": np.ones(ROWS),
               **{f"body/base.velocity[{i}]": np.zeros(ROWS) for i in range(3)},
               "setpoint.position[0]": np.zeros(ROWS), "setpoint.position[1]": np.zeros(ROWS),
               "setpoint.position[2]": np.full(ROWS, -1.0),
               "mission_step": np.zeros(ROWS, dtype=np.int32), "mission_timeouts": np.zeros(ROWS, dtype=np.int32)}
    return columns


def judge(columns, *checks, exit_reason="done"):
    info = {"tick_ns": 4_000_000, "ned_origin_enu_m": [0.0, 0.0, 0.0], "exit_reason": exit_reason,
            "sim_time_s": ROWS * TICK_S}
    return evaluate_run(checks, pa.table(columns), info)


def test_altitude_error_fails_first_at_the_row_that_broke_it_by_its_worst_excess():
    columns = record()
    columns["body/base.pose[2]"][5] = 1.3  # row 5 (t = 0.024 s, tick 6): 0.3 m above the 1 m goal
    columns["body/base.pose[2]"][6] = 1.25  # row 6: 0.25 m
    (result,) = judge(columns, Check("alt", "altitude_error", 0.2, "max", (0.008, 0.04)))
    assert not result.passed
    assert result.first_time == pytest.approx(0.024)
    assert result.first_tick == 6
    assert result.worst == pytest.approx(0.3)
    assert result.excess == pytest.approx(0.1)
    assert result.message() == ("altitude_error <= 0.2 m over [0.008, 0.04] s: first broken at 0.024 s (tick 6), "
                                "worst 0.3 (0.1 over)")


def test_a_window_leaves_out_what_lies_outside_it():
    columns = record()
    columns["body/base.pose[2]"][8] = 2.0  # 1 m off at t = 0.036 s, after the window's end
    (result,) = judge(columns, Check("alt", "altitude_error", 0.2, "max", (0.008, 0.03)))
    assert result.passed
    assert result.worst == pytest.approx(0.0)


def test_a_30_degree_roll_is_a_30_degree_tilt():
    columns = record()
    half = math.radians(15.0)  # roll 30 deg about x: q = (sin 15, 0, 0, cos 15); body up . world up = cos 30
    columns["body/base.pose[3]"][3], columns["body/base.pose[6]"][3] = math.sin(half), math.cos(half)
    (result,) = judge(columns, Check("tilt", "tilt", 20.0, "max", (0.0, 0.04)))
    assert result.first_tick == 4
    assert result.worst == pytest.approx(30.0)
    assert result.excess == pytest.approx(10.0)


def test_speed_position_error_and_landing():
    columns = record()
    columns["body/base.velocity[0]"][2], columns["body/base.velocity[1]"][2] = 3.0, 4.0  # 5 m/s at row 2
    columns["body/base.pose[0]"][-1], columns["body/base.pose[1]"][-1] = 0.3, 0.4  # east 0.3, north 0.4: 0.5 m off
    speed, position, landing, near = judge(
        columns, Check("speed", "speed", 4.0, "max", (0.0, 0.04)),
        Check("pos", "position_error", 0.4, "max", (0.008, 0.04)),  # from row 1: row 0 rests on the ground
        Check("landing", "landing", 0.45, "max", (0.0, 0.04)),
        Check("near", "landing", 0.01, "max", (0.0, 0.04), point=(0.4, 0.3)))
    assert (speed.worst, speed.first_tick, speed.excess) == (pytest.approx(5.0), 3, pytest.approx(1.0))
    assert (position.worst, position.first_tick) == (pytest.approx(0.5), 10)
    assert (landing.passed, landing.worst, landing.first_tick) == (False, pytest.approx(0.5), 10)
    assert near.passed and near.worst == pytest.approx(0.0)


def test_height_is_a_lower_bound_from_the_start():
    columns = record()
    columns["body/base.pose[2]"][4] = 0.02  # 2 cm above the start at row 4 (tick 5)
    (height,) = judge(columns, Check("height", "height", 0.05, "min", (0.008, 0.04)))
    assert (height.worst, height.first_tick, height.excess) == (pytest.approx(0.02), 5, pytest.approx(0.03))
    assert "0.03 under" in height.message()


def test_reach_is_the_time_a_step_ended_within_tolerance_and_never_by_its_time_limit():
    columns = record()
    columns["mission_step"][3:] = 1  # step 0 ended at row 3: t = 0.016 s
    columns["mission_step"][5:] = 2  # step 1 ended at row 5 ...
    columns["mission_timeouts"][5:] = 1  # ... by its time limit
    first, second = judge(columns, Check("r0", "reach", 0.02, "max", (0.0, 0.04), step=0),
                          Check("r1", "reach", 0.03, "max", (0.0, 0.04), step=1))
    assert first.passed and first.worst == pytest.approx(0.016)
    assert not second.passed and second.worst == math.inf
    assert second.first_time == pytest.approx(0.032)  # the first row at or after the bound
    assert "never reached" in second.message()


def test_ended_fails_when_the_duration_ended_the_run():
    (done,) = judge(record(), Check("ended", "ended", 0.0, "max", (0.0, 0.04)))
    (late,) = judge(record(), Check("ended", "ended", 0.0, "max", (0.0, 0.04)), exit_reason="duration")
    assert done.passed and not late.passed
    assert late.first_tick == 10


def test_px4_mission_counts_refused_commands_and_a_missing_landing():
    mission = {"commands": [{"name": "arm", "result": 1}, {"name": "takeoff", "result": 0}], "landed_disarmed": False}
    check = Check("px4", "px4_mission", 0.0, "max", (0.0, 0.04))
    info = {"tick_ns": 4_000_000, "exit_reason": "done", "controller_stats": {"mission": mission}}
    (refused,) = evaluate_run([check], pa.table(record()), info)
    assert refused.worst == 2.0 and not refused.passed  # one refusal (result 1: temporarily rejected) + no landing
    mission.update(commands=[{"name": "arm", "result": 0}], landed_disarmed=True)
    (clean,) = evaluate_run([check], pa.table(record()), info)
    assert clean.passed and clean.worst == 0.0
    (unknown,) = evaluate_run([check], pa.table(record()), {"tick_ns": 4_000_000})
    assert not unknown.passed  # a run that says nothing of PX4's mission cannot pass it


def test_landing_is_measured_from_the_start_unless_a_point_is_given():
    columns = record()
    columns["body/base.pose[0]"][:] = 1.0  # started and stayed 1 m east of the NED origin
    columns["body/base.pose[1]"][-1] = 0.2  # ended 0.2 m north of where it started
    from_start, from_origin = judge(columns, Check("a", "landing", 0.5, "max", (0.0, 0.04)),
                                    Check("b", "landing", 0.5, "max", (0.0, 0.04), point=(0.0, 0.0)))
    assert from_start.worst == pytest.approx(0.2)
    assert from_origin.worst == pytest.approx(math.hypot(0.2, 1.0))


def test_battery_is_a_lower_bound_on_the_state_of_charge():
    columns = record()
    columns["battery.state_of_charge"] = np.linspace(0.9, 0.45, ROWS)  # 0.05 a tick: under 0.6 from row 7
    (charge,) = judge(columns, Check("battery", "battery", 0.6, "min", (0.0, 0.04)))
    assert (charge.first_tick, charge.worst, charge.excess) == (8, pytest.approx(0.45), pytest.approx(0.15))
    (missing,) = judge(record(), Check("battery", "battery", 0.6, "min", (0.0, 0.04)))
    assert not missing.passed


def test_contact_fails_at_the_first_touch_after_lift_off_and_leaves_out_the_rest_and_the_landing():
    columns = record()
    columns["contact"] = np.array([4, 4, 0, 0, 0, 2, 0, 0, 4, 4], dtype=np.int32)  # rests, lifts off, touches, lands
    columns["mission_step"][7:] = 2  # the land step (index 2) began at row 7 (t = 0.032 s)
    whole = Check("contact", "contact", 0.0, "max", (0.0, 0.04))
    before_landing = Check("until_land", "contact", 0.0, "max", (0.0, 0.04), step=2)
    (touch,) = judge(columns, whole)
    assert (touch.passed, touch.first_tick, touch.first_time, touch.worst) == (False, 6, pytest.approx(0.024), 4.0)
    columns["contact"][5] = 0  # no touch in flight: only the landing (rows 8, 9) touches
    clean, landed = judge(columns, before_landing, whole)
    assert clean.passed and clean.worst == 0.0
    assert not landed.passed and landed.first_tick == 9  # with the whole run as its window, the landing counts
    assert "start of step 2" in before_landing.describe()
    columns["contact"][:] = 4  # never lifted off: the rest is no excuse
    (grounded,) = judge(columns, before_landing)
    assert not grounded.passed and grounded.first_tick == 1
    del columns["contact"]  # a record without the contact count cannot pass
    (unknown,) = judge(columns, before_landing)
    assert not unknown.passed


def test_px4_failsafe_reads_the_ulog_and_mission_json_of_a_run_folder(tmp_path):
    """A crafted run folder: PX4's ULog logged a failsafe at 2.5 s, the mission thread read an arming refusal at
    3 s and an ordinary text at 1 s; the check fails at 2.5 s (tick 625) with two different texts."""
    import json
    import struct

    from pyulog import ULog

    from nexus.scenario.px4_messages import px4_messages

    text = "Failsafe activated: Autoland"
    header = type("Header", (), {"msg_size": 9 + len(text)})()
    log = ULog(None)
    log.logged_messages.append(ULog.MessageLogging(struct.pack("<BQ", ord("3"), 2_500_000) + text.encode(), header))
    (tmp_path / "px4" / "log").mkdir(parents=True)
    log.write_ulog(str(tmp_path / "px4" / "log" / "flight.ulg"))
    (tmp_path / "px4" / "px4.json").write_text(json.dumps({"ulog": "px4/log/flight.ulg"}))
    (tmp_path / "mission.json").write_text(json.dumps(
        {"statustexts": [[1.0, "Takeoff detected"], [3.0, "Arming denied: Resolve system health failures first"]]}))
    messages = px4_messages(tmp_path, {})
    assert [t for t, _ in messages] == [1.0, 2.5, 3.0]
    info = {"tick_ns": 4_000_000, "px4_messages": messages}
    whole, early = evaluate_run([Check("fs", "px4_failsafe", 0.0, "max", (0.0, 4.0)),
                                 Check("early", "px4_failsafe", 0.0, "max", (0.0, 2.4))], pa.table(record()), info)
    assert (whole.passed, whole.first_time, whole.first_tick, whole.worst) == (False, 2.5, 625, 2.0)
    assert early.passed
    assert px4_messages(tmp_path / "empty", {}) is None  # a run that kept none of PX4's messages ...
    (unknown,) = evaluate_run([Check("fs", "px4_failsafe", 0.0, "max", (0.0, 4.0))], pa.table(record()),
                              {"tick_ns": 4_000_000, "px4_messages": None})
    assert not unknown.passed  # ... cannot pass


def test_reach_of_a_px4_step_is_when_the_vehicle_came_within_tolerance_of_each_point_in_turn():
    columns = record()
    # North [m] per row: the vehicle climbs to 1 m at row 1 (t = 0.008 s), then flies north.
    columns["body/base.pose[1]"] = np.array([0.0, 0.0, 0.0, 0.5, 1.0, 1.6, 2.0, 2.0, 2.0, 2.0])
    takeoff, goto = (0.0, 0.0, 1.0, 0.3), (2.0, 0.0, 1.0, 0.5)
    first, second, late, back = judge(
        columns, Check("r0", "reach", 1.0, "max", (0.0, 0.04), 0, goals=(takeoff,)),
        Check("r1", "reach", 1.0, "max", (0.0, 0.04), 1, goals=(takeoff, goto)),
        Check("r1_late", "reach", 0.02, "max", (0.0, 0.04), 1, goals=(takeoff, goto)),
        # Back at the start after the goto: never (the vehicle stays 2 m north), though row 1 was there.
        Check("back", "reach", 1.0, "max", (0.0, 0.04), 2, goals=(takeoff, goto, (0.0, 0.0, 1.0, 0.3))))
    assert first.passed and first.worst == pytest.approx(0.008)
    assert second.passed and second.worst == pytest.approx(0.024)  # row 5: 0.4 m from the point, within 0.5 m
    assert not late.passed and late.excess == pytest.approx(0.004)
    assert (late.first_time, late.first_tick) == (pytest.approx(0.02), 5)
    assert not back.passed and back.worst == math.inf and "never reached" in back.message()
