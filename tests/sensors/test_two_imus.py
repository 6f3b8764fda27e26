"""Two IMUs on one vehicle: a reader takes one through a connection, or both as a list; a run records both."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
import warp as wp
from click.testing import CliRunner

from nexus.runtime.assembly import assemble
from nexus.cli import main
from nexus.core import BuildError, Component, Loop, Read, Stage, Write
from nexus.sensors.samples import ImuSample
from nexus.runtime.startup import start
from tests.sensors.conftest import TWO_IMUS

NOISY, QUIET = "/vehicle/body/base/Imu", "/vehicle/body/base/ImuQuiet"


class ConnectedReader(Component):
    """Copies the one IMU its connection names into ``seen_imu``."""

    def stages(self):
        return [Stage("seen", "estimate", self._run, reads=(Read("imu", ImuSample, (1,)),),
                      writes=(Write("seen_imu", ImuSample, (1,)),))]

    def _run(self, io):
        wp.copy(io["seen_imu"], io["imu"])


class ListReader(Component):
    """Copies every IMU, in declaration order, into ``first_imu`` and ``second_imu``."""

    def stages(self):
        return [Stage("seen_all", "estimate", self._run, reads=(Read("imu", list[ImuSample], (1,)),),
                      writes=(Write("first_imu", ImuSample, (1,)), Write("second_imu", ImuSample, (1,))))]

    def _run(self, io):
        first, second = io["imu"]
        wp.copy(io["first_imu"], first)
        wp.copy(io["second_imu"], second)


class PlainReader(Component):
    """Reads ``imu`` by name alone, which two IMUs write: the build must refuse it."""

    def stages(self):
        return [Stage("plain", "estimate", lambda io: None, reads=(Read("imu", ImuSample, (1,)),))]


@pytest.fixture(scope="module")
def two_imus():
    vehicle = assemble(TWO_IMUS, "empty", controller="hold")
    readers = [ConnectedReader("/test/connected", connections={"imu": QUIET}), ListReader("/test/list")]
    loop = Loop([*vehicle.components, *readers], device="cpu", mode="captured", seed=4).build()
    vehicle.plant.reset()
    start(loop, vehicle.plant, settle_seconds=0.02)
    loop.run(3)
    return loop


def data(loop, signal, writer=None) -> bytes:
    return loop.output(signal, writer).numpy().tobytes()


def test_connection_takes_the_named_imu(two_imus):
    assert data(two_imus, "seen_imu") == data(two_imus, "imu", QUIET)
    assert data(two_imus, "seen_imu") != data(two_imus, "imu", NOISY)


def test_list_takes_both_imus_in_declaration_order(two_imus):
    # The file declares Imu before ImuQuiet.
    assert data(two_imus, "first_imu") == data(two_imus, "imu", NOISY)
    assert data(two_imus, "second_imu") == data(two_imus, "imu", QUIET)


def test_plain_read_of_two_imus_fails_the_build_naming_both():
    vehicle = assemble(TWO_IMUS, "empty", controller="hold")
    with pytest.raises(BuildError, match="which 2 stages write") as error:
        Loop([*vehicle.components, PlainReader("/test/plain")], device="cpu").build()
    assert NOISY in str(error.value) and QUIET in str(error.value) and "nexus:inputs:imu" in str(error.value)


# -- both IMUs in a run's record, through the command line (the shared two_imu_run: 1 s, 250 ticks) ----


def test_a_run_records_each_imu_under_its_prim_name(two_imu_run):
    table = pq.read_table(two_imu_run / "record.parquet")
    columns = table.column_names
    fields = ["time", "accel[0]", "accel[1]", "accel[2]", "gyro[0]", "gyro[1]", "gyro[2]"]
    assert all(f"imu/Imu.{f}" in columns and f"imu/ImuQuiet.{f}" in columns for f in fields), columns
    assert not any(name.startswith("imu.") for name in columns)  # no column claims to be "the" IMU
    info = json.loads((two_imu_run / "run.json").read_text())
    assert "imu/Imu" in info["record_columns"] and "imu/ImuQuiet" in info["record_columns"]
    assert table.num_rows == 250
    # Resting on its gear before the rotors lift it, the noiseless IMU reads the specific force of
    # the ground's support: -g on the FRD z axis, g = 9.80665 m/s² (the scene); the noisy one
    # differs from it by its noise and bias.
    quiet = table.column("imu/ImuQuiet.accel[2]").to_numpy()
    noisy = table.column("imu/Imu.accel[2]").to_numpy()
    assert quiet[0] == pytest.approx(-9.80665, abs=0.05)
    assert not np.array_equal(quiet, noisy)


def test_the_replay_of_a_two_imu_run_is_identical_and_compares_both(two_imu_run, tmp_path):
    kept = tmp_path / "replayed"
    result = CliRunner().invoke(main, ["replay", str(two_imu_run), "--keep", str(kept)])
    assert result.exit_code == 0, result.output
    assert "replay identical: 250 ticks" in result.output
    # Every column both records hold was compared bit for bit: both IMUs' are among them.
    replayed = pq.read_table(kept / "record.parquet").column_names
    assert "imu/Imu.accel[2]" in replayed and "imu/ImuQuiet.gyro[0]" in replayed
    skipped = [line for line in result.output.splitlines() if "not compared" in line]
    assert not any("imu" in line for line in skipped), skipped
