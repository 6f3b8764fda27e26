"""The determinism gate: the default flight, shortened, is bit-exact on the CPU, across processes.

Run to run (this process against a child process running ``nexus run``),
captured against eager, and against its open-loop replay run as
``nexus replay`` in another child process. A seed that leaked the process (its
id, an address, the wall clock) passes any comparison made inside one process,
so the second flight and the replay each run in their own.

The child's record is also hashed, column by column over its first 300 rows, and
compared with ``tests/golden/short_seed7.json``: the bits of a seeded flight
must not change between commits either (a renamed noise stream would silently
stop older records from replaying). When they change on purpose, run

    python tools/golden_digest.py --write

and say in the commit message why the bits changed.

A different seed must change the sensor columns (and only the noise does).
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.runtime.config import RunConfig
from nexus.runtime.replay import compare, load_run
from nexus.runtime.run import run_flight

ROOT = Path(__file__).resolve().parents[1]
#: The shortened default mission ends itself in under 10 s of sim time.
CAP_S = 10.0
#: The golden flight's seed (tools/golden_digest.py flies ``--mission short --seed 7``).
SEED = 7


def load_tool():
    """``tools/golden_digest.py`` (a script, not a package), imported by path."""
    spec = importlib.util.spec_from_file_location("golden_digest", ROOT / "tools" / "golden_digest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


golden = load_tool()


def columns(out):
    table = pq.read_table(out / "record.parquet")
    return {name: table.column(name).to_numpy() for name in table.column_names}


def fly(out, **changes):
    """A flight in this process."""
    summary = run_flight(RunConfig(mission="short", device="cpu", duration=CAP_S, **changes), out, progress=False)
    assert summary.exit_reason == "done", summary.exit_reason
    return columns(out)


def cli(*args):
    """``nexus <args>`` in a child process: its exit status and output."""
    done = subprocess.run([sys.executable, "-m", "nexus.cli", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="module")
def flights(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate")
    golden.fly(root / "child")  # `nexus run --mission short --seed 7 ...` in a child process
    return {
        "first": (root / "first", fly(root / "first", seed=SEED)),
        "child": (root / "child", columns(root / "child")),
        "eager": (root / "eager", fly(root / "eager", seed=SEED, eager=True)),
        "other_seed": (root / "other", fly(root / "other", seed=SEED + 1)),
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


def test_a_run_in_another_process_is_byte_identical(flights):
    assert_identical(flights["first"][1], flights["child"][1])


def test_the_record_matches_the_golden_digest(flights):
    """Per-column SHA-256 of the first 300 rows against tests/golden/short_seed7.json.

    If this fails on purpose, run ``python tools/golden_digest.py --write`` and say in the
    commit message why the bits changed.
    """
    stored = golden.load_golden()
    assert stored["flight"][3:] == golden.FLIGHT_ARGS, "the golden flight's arguments changed: rewrite the digest"
    lines = golden.differences(stored, golden.digest(flights["child"][0] / "record.parquet"))
    assert not lines, golden.report(lines)


def test_eager_and_captured_are_byte_identical(flights):
    assert_identical(flights["first"][1], flights["eager"][1])


def test_replay_in_another_process_is_bit_identical(flights, tmp_path):
    out, original = flights["first"]
    status, output = cli("replay", out, "--keep", tmp_path / "replay")
    assert status == 0 and "replay identical" in output, output
    # The child compared these columns (and the setpoint, a controller input, it did not).
    result = compare(original, load_run(tmp_path / "replay")[1])
    assert result.identical, result.first_difference
    assert "imu.accel[0]" in result.compared and "estimate.position[2]" in result.compared


def test_another_seed_changes_the_sensor_columns(flights):
    first, other = flights["first"][1], flights["other_seed"][1]
    for name in ("imu.accel[0]", "imu.gyro[2]", "mag.field[1]", "baro.pressure", "gps.latitude"):
        assert not np.array_equal(first[name], other[name]), name
    # The clock is not noise.
    assert np.array_equal(first["time"][:100], other["time"][:100])
