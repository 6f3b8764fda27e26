"""The record: exact bits per column, drains when full, flushed on failure, replayable."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
import warp as wp

from nexus.core import Component, Loop, Stage, Write
from nexus.core.errors import BuildError, RunError
from nexus.sensors.samples import ImuSample
from nexus.runtime.config import RunConfig
from nexus.record.layout import TapLayout
from nexus.record.recorder import Recorder, recorded_taps
from nexus.record.writer import RecordWriter
from nexus.runtime.replay import compare, load_run, replay
from nexus.runtime.run import run_flight
from tests.core.toy_parts import NoiseSensor


def test_layout_names_columns_and_keeps_bits():
    samples = np.zeros(3, dtype=ImuSample.numpy_dtype())
    samples["time"] = [0.004, 0.008, 0.012]
    samples["accel"] = np.arange(9, dtype=np.float32).reshape(3, 3) * np.float32(0.1)
    rows = samples.view(np.uint32).reshape(3, -1)
    layout = TapLayout("imu", ImuSample, (1,), 0)
    columns = layout.columns(rows)
    assert list(columns) == ["imu.time", "imu.accel[0]", "imu.accel[1]", "imu.accel[2]", "imu.gyro[0]", "imu.gyro[1]", "imu.gyro[2]"]
    assert columns["imu.time"].tobytes() == samples["time"].tobytes()
    assert columns["imu.accel[1]"].dtype == np.float32
    assert columns["imu.accel[1]"].tobytes() == samples["accel"][:, 1].copy().tobytes()
    row = TapLayout("controls", wp.float32, (1, 4), 0)
    assert list(row.columns(np.zeros((2, 4), np.uint32))) == [f"controls[{i}]" for i in range(4)]


@wp.struct
class _Mixed:
    stamp: wp.float64
    flag: wp.int32
    where: wp.vec3


@wp.struct
class _Narrow:
    on: wp.bool
    value: wp.float32


def test_word_columns_match_row_columns_bit_for_bit():
    """The drain's fast path (columns as views of a transposed table) names and copies what the row path does."""
    from nexus.record.layout import transposed

    samples = np.zeros((5, 2), dtype=_Mixed.numpy_dtype())
    samples["stamp"] = np.array([[0.1, 1e-300], [2.5, -0.0], [np.pi, 7.0], [1e300, 3.0], [-1.0, 0.004]])
    samples["flag"] = np.arange(10).reshape(5, 2) - 4
    samples["where"] = np.arange(30, dtype=np.float32).reshape(5, 2, 3) / np.float32(7.0)
    pad = np.full((5, 3), 0xDEADBEEF, np.uint32)  # words of another tap before this one
    rows = np.concatenate([pad, samples.view(np.uint32).reshape(5, -1)], axis=1)
    layout = TapLayout("mixed", _Mixed, (1, 2), 3)
    by_rows = layout.columns(rows)
    by_words = layout.word_columns(transposed(rows, block=2))  # blocks smaller than the table: wrap-around checked
    assert list(by_words) == list(by_rows) and len(by_rows) == 10
    assert list(by_rows)[:3] == ["mixed[0].stamp", "mixed[0].flag", "mixed[0].where[0]"]
    for name in by_rows:
        assert by_words[name].dtype == by_rows[name].dtype and by_words[name].tobytes() == by_rows[name].tobytes(), name
    np.testing.assert_array_equal(by_words["mixed[1].stamp"], [1e-300, -0.0, 7.0, 3.0, 0.004])
    # A scalar narrower than a word cannot be a row of words: the row path takes it.
    assert TapLayout("narrow", _Narrow, (1,), 0).word_columns(np.zeros((2, 4), np.uint32)) is None


def test_recorder_drains_when_full_and_at_the_end(tmp_path):
    noise = NoiseSensor()
    recorder = Recorder([("noise", wp.float32, (1, 8))], capacity=7)
    loop = Loop([noise, recorder], device="cpu", seed=3).build()
    writer = RecordWriter(tmp_path / "record.parquet", recorder)
    seen = []
    for _ in range(20):
        loop.tick()
        seen.append(loop.output("noise").numpy()[0].copy())
        writer.after_tick()
    writer.close()
    table = pq.read_table(tmp_path / "record.parquet")
    assert table.num_rows == 20 and writer.rows_written == 20
    # Part 0 holds the columns and no row; then one part per drain: 7 + 7 + 6 rows.
    assert [p.name for p in sorted((tmp_path / "record.parquet").iterdir())] == [
        "part-000000.parquet", "part-000001.parquet", "part-000002.parquet", "part-000003.parquet"]
    assert [pq.read_table(p).num_rows for p in sorted((tmp_path / "record.parquet").iterdir())] == [0, 7, 7, 6]
    np.testing.assert_array_equal(table.column("time").to_numpy(), np.arange(1, 21) * 4_000_000 / 1e9)
    np.testing.assert_array_equal(np.stack([table.column(f"noise[{i}]").to_numpy() for i in range(8)], 1), np.array(seen))


@wp.kernel
def write_value(value: wp.float32, out: wp.array(dtype=wp.float32)):
    out[0] = value


class Level(Component):
    """Writes ``value`` into ``signal`` every tick; ``recorded`` marks the output for the record."""

    def __init__(self, name: str, value: float, signal: str = "level", recorded: bool = True):
        super().__init__(name)
        self.value, self.signal, self.recorded = value, signal, recorded

    def stages(self):
        write = Write(self.signal, wp.float32, (1,), recorded=self.recorded)
        return [Stage(f"write_{self.signal}", "sensor", self._run, writes=(write,))]

    def _run(self, io):
        wp.launch(write_value, 1, inputs=[wp.float32(self.value)], outputs=[io[self.signal]], device=io.device)


def test_the_record_taps_marked_outputs_and_names_each_of_two_writers_by_its_prim(tmp_path):
    parts = [Level("/a/Left", 2.5), Level("/b/Right", -1.0), Level("/a/Solo", 7.0, signal="mark"),
             Level("/a/Quiet", 3.0, signal="hidden", recorded=False)]
    recorder = Recorder.for_components(parts, capacity=8)
    assert recorder.columns == ["time", "level/Left", "level/Right", "mark"]  # "hidden" is not marked
    loop = Loop([*parts, recorder], device="cpu").build()
    writer = RecordWriter(tmp_path / "record.parquet", recorder)
    for _ in range(3):
        loop.tick()
        writer.after_tick()
    writer.close()
    table = pq.read_table(tmp_path / "record.parquet")
    assert table.column_names == ["time", "level/Left", "level/Right", "mark"]
    # Each column holds its own writer's value, whatever the order the ring lists them in.
    assert table.column("level/Left").to_pylist() == [2.5] * 3
    assert table.column("level/Right").to_pylist() == [-1.0] * 3
    assert table.column("mark").to_pylist() == [7.0] * 3


def test_two_writers_whose_prims_end_alike_are_named_by_their_whole_paths():
    taps = recorded_taps([Level("/a/Probe", 1.0), Level("/b/Probe", 2.0)])
    assert [t.label for t in taps] == ["level/a/Probe", "level/b/Probe"]


def test_a_host_output_marked_recorded_is_a_build_error_naming_it():
    class HostLevel(Component):
        def stages(self):
            return [Stage("say", "guide", lambda io: None, host=True, writes=(Write("note", str, recorded=True),))]

    with pytest.raises(BuildError, match=r"'note' written by /a/Talker is marked recorded, but it is a host signal"):
        recorded_taps([HostLevel("/a/Talker")])


class FailAt(Component):
    """A host stage that breaks on a given tick, as a dropped link would."""

    def __init__(self, tick: int):
        super().__init__("/test/fail")
        self.tick, self.count = tick, 0

    def stages(self):
        return [Stage("fail", "guide", self._run, host=True)]

    def _run(self, io):
        self.count += 1
        if self.count == self.tick:
            raise ConnectionError("peer went away")


def test_a_failing_run_still_leaves_record_and_run_json(tmp_path):
    with pytest.raises(RunError, match="peer went away"):
        run_flight(RunConfig(device="cpu", duration=1.0), tmp_path, progress=False, extra_components=[FailAt(30)])
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["exit_reason"] == "error" and "peer went away" in info["error"]
    # Start-up runs the guide stage once, so its 30th call is tick 29: ticks 1..28 completed
    # and were recorded; tick 29 broke before its record stage.
    assert info["ticks"] == 28 and pq.read_table(tmp_path / "record.parquet").num_rows == 28
    assert "peer went away" in (tmp_path / "run.log").read_text()


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    summary = run_flight(RunConfig(seed=5, device="cpu", duration=1.0), out, progress=False)
    return out, summary


def test_run_json_says_what_ran(recorded_run):
    out, summary = recorded_run
    info = json.loads((out / "run.json").read_text())
    assert summary.ticks == 250 and summary.exit_reason == "duration"
    for key in ("versions", "device", "vehicle", "scene", "stage_plan", "tick_hz", "duration_requested_s",
                "exit_reason", "sim_time_s", "wall_time_s"):
        assert key in info, key
    assert info["options"]["seed"] == 5 and info["device"] == "cpu" and info["tick_hz"] == 250.0
    assert info["stage_plan"].startswith("stage plan: graph(clock -> clear -> esc")
    assert info["versions"]["newton"] == "1.8.0"
    assert pq.read_table(out / "record.parquet").num_rows == 250


def test_replay_of_a_run_is_bit_identical(recorded_run):
    out, _ = recorded_run
    result = replay(out)
    assert result.identical, result.first_difference
    assert result.ticks == 250 and "imu.accel[2]" in result.compared and "controls[0]" in result.compared


def test_replay_names_the_first_differing_tick_and_column(recorded_run):
    out, _ = recorded_run
    _, columns = load_run(out)
    tampered = {name: values.copy() for name, values in columns.items()}
    tampered["baro.pressure"][41] = np.nextafter(tampered["baro.pressure"][41], np.float32(0))
    tampered["imu.gyro[0]"][99] += 1.0
    result = compare(columns, tampered)
    assert result.first_difference == (42, "baro.pressure")


def test_pandas_and_polars_read_the_record_folder_as_one_table(recorded_run):
    import pandas as pd
    import polars as pl

    out, _ = recorded_run
    ticks = np.arange(1, 251) * 4_000_000 / 1e9  # 250 ticks of 4 ms, in order
    frame = pd.read_parquet(out / "record.parquet")
    np.testing.assert_array_equal(frame["time"].to_numpy(), ticks)
    for source in (out / "record.parquet", f"{out / 'record.parquet'}/*.parquet"):
        table = pl.read_parquet(source)
        assert table.shape == frame.shape
        np.testing.assert_array_equal(table["time"].to_numpy(), ticks)
        np.testing.assert_array_equal(table["imu.accel[2]"].to_numpy(), frame["imu.accel[2]"].to_numpy())
