"""The determinism gate: the default flight, shortened, is bit-exact on the CPU.

Run to run, captured against eager, and against its own open-loop replay.
A different seed must change the sensor columns (and only the noise does).
"""

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.flight import FlightOptions
from nexus.replay import replay
from nexus.run import run_flight

#: The shortened default mission ends itself in under 10 s of sim time.
CAP_S = 10.0


def fly(out, **changes):
    options = FlightOptions(mission="short", **changes)
    summary = run_flight(options, "cpu", out, duration=CAP_S, progress=False)
    assert summary.exit_reason == "done", summary.exit_reason
    table = pq.read_table(out / "record.parquet")
    return {name: table.column(name).to_numpy() for name in table.column_names}


@pytest.fixture(scope="module")
def flights(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate")
    return {
        "first": (root / "first", fly(root / "first", seed=11)),
        "second": (root / "second", fly(root / "second", seed=11)),
        "eager": (root / "eager", fly(root / "eager", seed=11, eager=True)),
        "other_seed": (root / "other", fly(root / "other", seed=12)),
    }


def assert_identical(a, b):
    assert list(a) == list(b)
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), f"column {name} differs"


def test_the_flight_is_a_real_flight(flights):
    """The flight's quality, read from its record (NED: up is negative z)."""
    _, c = flights["first"]
    altitude = -c["estimate.position[2]"]
    # Took off to the short mission's 2 m (within 0.2 m) and came back down.
    assert abs(altitude.max() - 2.0) < 0.2
    assert abs(altitude[-1]) < 0.1
    assert len(c["time"]) < CAP_S * 250
    # Yaw tracked its setpoint within 5° while the heading goal moved (the sweep).
    q = np.stack([c[f"estimate.attitude[{i}]"] for i in range(4)], axis=1).astype(np.float64)
    x, y, z, w = q.T
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    goal = c["setpoint.yaw"].astype(np.float64)
    sweep = np.abs(goal - goal[0]) > 1e-6
    assert sweep.sum() > 100
    error = np.degrees((yaw[sweep] - goal[sweep] + np.pi) % (2 * np.pi) - np.pi)
    assert np.abs(error).max() < 5.0
    # Position held within 0.2 m horizontally during the sweep.
    horizontal = np.hypot(c["estimate.position[0]"][sweep] - c["setpoint.position[0]"][sweep],
                          c["estimate.position[1]"][sweep] - c["setpoint.position[1]"][sweep])
    assert horizontal.max() < 0.2
    # Landed and disarmed: the guidance cleared `armed` and the motors were cut.
    assert c["armed"][-1] == 0 and all(c[f"controls[{i}]"][-1] == 0.0 for i in range(4))


def test_two_cpu_runs_are_byte_identical(flights):
    assert_identical(flights["first"][1], flights["second"][1])


def test_eager_and_captured_are_byte_identical(flights):
    assert_identical(flights["first"][1], flights["eager"][1])


def test_replay_of_the_flight_is_bit_identical(flights):
    result = replay(flights["first"][0])
    assert result.identical, result.first_difference
    assert "imu.accel[0]" in result.compared and "estimate.position[2]" in result.compared


def test_another_seed_changes_the_sensor_columns(flights):
    first, other = flights["first"][1], flights["other_seed"][1]
    for name in ("imu.accel[0]", "imu.gyro[2]", "mag.field[1]", "baro.pressure", "gps.latitude"):
        assert not np.array_equal(first[name], other[name]), name
    # The clock is not noise.
    assert np.array_equal(first["time"][:100], other["time"][:100])
