"""A one-world sweep point's landing error: the distance from where it stopped to the landing setpoint, except for
a point whose pack ran out (``battery-empty``), which stopped where it was and never landed (NaN, as the worlds
summary reports it)."""

import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nexus.sweep.figures import errors_from_record


def write_record(folder):
    """Three armed rows; the vehicle ends at (x 3, y 4) [m] ENU beside a landing setpoint at NED (0, 0)."""
    columns = {f"body/base.pose[{i}]": [0.0, 1.0, 3.0] if i == 0 else [0.0, 2.0, 4.0] if i == 1 else
               [1.0, 1.0, 1.0] if i in (2, 6) else [0.0, 0.0, 0.0] for i in range(7)}
    columns |= {f"setpoint.position[{i}]": [0.0, 0.0, 0.0] for i in range(3)}
    columns |= {"setpoint.yaw": [0.0, 0.0, 0.0], "armed": [1.0, 1.0, 1.0]}
    pq.write_table(pa.table(columns), folder / "record.parquet")


@pytest.mark.parametrize("reason, expected", [("done", 5.0), ("battery-empty", None)])
def test_a_point_that_ran_out_of_battery_has_no_landing_error(tmp_path, reason, expected):
    write_record(tmp_path)
    figures = errors_from_record(tmp_path, {"exit_reason": reason})
    if expected is None:
        assert math.isnan(figures["landing_error"])
    else:
        assert figures["landing_error"] == pytest.approx(expected)  # hypot(north 4, east 3)
    assert figures["max_altitude_error"] == pytest.approx(1.0)  # 1 m up against a 0 m goal
