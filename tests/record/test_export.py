"""``nexus export``: a run's record as MCAP (read back with the ``mcap`` library's reader) and as CSV.

Two flights, shared by every test here: ``two_worlds`` (the default vehicle, the short mission, 2 worlds, 1 s:
250 ticks at 250 Hz, so 250 rows per world) and the session's ``two_imu_run`` (one world, 1 s, a vehicle whose
two IMUs record as ``imu/Imu`` and ``imu/ImuQuiet``).
"""

from __future__ import annotations

import base64
import json
import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from mcap.reader import make_reader

from nexus.cli import main
from tests.worlds.flights import fly

#: Every signal of the default vehicle's record flown by the PID on the truth estimator: a channel per signal and world.
SIGNALS = ["body/base", "imu", "mag", "baro", "gps", "estimate", "setpoint", "armed", "mission_phase", "controls"]
#: ... and the base's pose as Foxglove frame transforms: 10 channels per world.
CHANNELS = [*SIGNALS, "tf"]
#: 1 s at 250 Hz.
ROWS = 250


@pytest.fixture(scope="module")
def two_worlds(tmp_path_factory):
    # The export's layout, not the estimator's: fly on the true state, whose record holds exactly SIGNALS (the EKF
    # adds its ekf_* signals).
    return fly(tmp_path_factory.mktemp("export") / "two", "--mission", "short", "--duration", "1.0", "--worlds", "2",
               "--estimator", "truth")


def export(*args) -> CliRunner:
    return CliRunner().invoke(main, ["export", "--quiet", *map(str, args)])


def read_mcap(path):
    """Schemas by channel topic, messages (topic, log time, decoded JSON) in the file's order, and metadata."""
    with open(path, "rb") as stream:
        reader = make_reader(stream)
        summary = reader.get_summary()
        channels = {c.topic: (c, summary.schemas[c.schema_id]) for c in summary.channels.values()}
        messages = [(channel.topic, message.log_time, json.loads(message.data))
                    for _, channel, message in reader.iter_messages(log_time_order=False)]
        metadata = {m.name: m.metadata for m in reader.iter_metadata()}
    return channels, messages, metadata, summary


@pytest.fixture(scope="module")
def two_worlds_mcap_file(two_worlds, tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "two.mcap"
    result = export(two_worlds.out, "--out", out)
    assert result.exit_code == 0, result.output
    return out, result.output


@pytest.fixture(scope="module")
def two_worlds_mcap(two_worlds_mcap_file):
    out, output = two_worlds_mcap_file
    return read_mcap(out), output


def test_every_signal_of_every_world_is_a_typed_channel_with_one_message_per_record_row(two_worlds, two_worlds_mcap):
    (channels, messages, metadata, summary), output = two_worlds_mcap
    expected = {f"/world{w}/{s}" for w in (0, 1) for s in CHANNELS}
    assert set(channels) == expected  # 22 channels
    for topic, (channel, schema) in channels.items():
        assert channel.message_encoding == "json" and schema.encoding == "jsonschema"
        name = "nexus." + topic.split("/", 2)[2].replace("/", ".")
        assert schema.name == ("foxglove.FrameTransforms" if topic.endswith("/tf") else name)
        assert channel.metadata["world"] == topic[6]
    counted = pd.Series([topic for topic, _, _ in messages]).value_counts().to_dict()
    for world in (0, 1):
        rows = len(two_worlds.world(world))
        assert rows == ROWS
        assert all(counted[f"/world{world}/{s}"] == ROWS for s in CHANNELS)
    assert len(messages) == summary.statistics.message_count == 2 * len(CHANNELS) * ROWS  # 5,500
    assert metadata["nexus.export"]["complete"] == "true" and metadata["nexus.run"]["worlds"] == "2"
    assert "22 channels of 2 worlds, 5,500 messages, 1.00 s of sim time" in output


def test_messages_hold_the_records_values_bit_for_bit_at_the_ticks_sim_time(two_worlds, two_worlds_mcap):
    (_, messages, _, _), _ = two_worlds_mcap
    for world in (0, 1):
        rows = two_worlds.world(world)
        imu = [(t, m) for topic, t, m in messages if topic == f"/world{world}/imu"]
        # Tick 1 ends 4 ms in (250 Hz); the log time is the tick's sim time in whole nanoseconds.
        assert imu[0][0] == 4_000_000 and imu[-1][0] == 1_000_000_000
        assert [t for t, _ in imu] == list(np.rint(rows["time"].to_numpy() * 1e9).astype(np.int64))
        accel = np.array([m["accel"] for _, m in imu], dtype=np.float32)
        for axis in range(3):
            assert np.array_equal(accel[:, axis], rows[f"imu.accel[{axis}]"].to_numpy())
        gps = [m for topic, _, m in messages if topic == f"/world{world}/gps"]
        assert np.array_equal(np.array([m["latitude"] for m in gps]), rows["gps.latitude"].to_numpy())  # float64
        assert [m["fix_type"] for m in gps] == rows["gps.fix_type"].tolist()
        body = [m for topic, _, m in messages if topic == f"/world{world}/body/base"]
        assert np.array_equal(np.array([m["pose"][2] for m in body], dtype=np.float32),
                              rows["body/base.pose[2]"].to_numpy())
        tf = [m["transforms"] for topic, _, m in messages if topic == f"/world{world}/tf"]
        assert all(len(t) == 1 and t[0]["child_frame_id"] == f"world{world}/base" for t in tf)
        assert tf[0][0]["parent_frame_id"] == "world" and tf[0][0]["timestamp"] == {"sec": 0, "nsec": 4_000_000}
        assert np.array_equal(np.array([t[0]["rotation"]["w"] for t in tf], dtype=np.float32),
                              rows["body/base.pose[6]"].to_numpy())
        assert np.array_equal(np.array([t[0]["translation"]["z"] for t in tf], dtype=np.float32),
                              rows["body/base.pose[2]"].to_numpy())
        controls = [m for topic, _, m in messages if topic == f"/world{world}/controls"]
        assert all(len(m["value"]) == 16 for m in controls)
        assert np.array_equal(np.array([m["value"][3] for m in controls], dtype=np.float32),
                              rows["controls[3]"].to_numpy())


def test_publish_time_is_the_log_time_both_in_nanoseconds(two_worlds_mcap_file):
    # A record row is published when its tick ends: publish time = log time = the tick's sim time in whole
    # nanoseconds. Tick 1 ends at 4 ms = 4,000,000 ns (250 Hz), tick 250 at 1 s = 1,000,000,000 ns.
    path, _ = two_worlds_mcap_file
    with open(path, "rb") as stream:
        times = [(channel.topic, message.log_time, message.publish_time)
                 for _, channel, message in make_reader(stream).iter_messages(log_time_order=False)]
    assert len(times) == 5_500  # 22 channels, 250 rows each
    imu = [(logged, published) for topic, logged, published in times if topic == "/world0/imu"]
    assert imu[0] == (4_000_000, 4_000_000) and imu[-1] == (1_000_000_000, 1_000_000_000)
    differ = [(topic, logged, published) for topic, logged, published in times if published != logged]
    assert not differ, f"{len(differ)} messages published at another time than logged, e.g. {differ[:3]}"


def test_messages_are_in_time_order_in_the_file(two_worlds_mcap):
    (_, messages, _, _), _ = two_worlds_mcap
    times = [t for _, t, _ in messages]
    assert times == sorted(times)


def test_each_schema_names_every_field_with_its_unit(two_worlds_mcap):
    (channels, _, _, _), _ = two_worlds_mcap
    imu = json.loads(channels["/world0/imu"][1].data)["properties"]
    assert set(imu) == {"time", "accel", "gyro"}
    assert "[m/s^2]" in imu["accel"]["description"] and "[rad/s]" in imu["gyro"]["description"]
    assert imu["accel"]["type"] == "array" and imu["accel"]["maxItems"] == 3
    baro = json.loads(channels["/world1/baro"][1].data)["properties"]
    assert "[Pa]" in baro["pressure"]["description"] and "[K]" in baro["temperature"]["description"]
    gps = json.loads(channels["/world0/gps"][1].data)["properties"]
    assert gps["fix_type"]["type"] == "integer" and gps["latitude"]["type"] == "number"
    for topic, (_, schema) in channels.items():
        if topic.endswith("/tf"):
            continue
        for name, field in json.loads(schema.data)["properties"].items():
            assert "not known" not in field["description"], (topic, name)


def test_one_chosen_world_exports_alone(two_worlds, tmp_path):
    out = tmp_path / "world1.mcap"
    result = export(two_worlds.out, "--world", 1, "--out", out)
    assert result.exit_code == 0, result.output
    channels, messages, metadata, _ = read_mcap(out)
    assert set(channels) == {f"/world1/{s}" for s in CHANNELS}
    assert len(messages) == len(CHANNELS) * ROWS and metadata["nexus.export"]["worlds"] == "1"
    baro = np.array([m["pressure"] for topic, _, m in messages if topic == "/world1/baro"], dtype=np.float32)
    assert np.array_equal(baro, two_worlds.world(1)["baro.pressure"].to_numpy())


def test_two_writers_of_one_signal_are_two_channels(two_imu_run, tmp_path):
    out = tmp_path / "imus.mcap"
    result = export(two_imu_run, "--out", out)
    assert result.exit_code == 0, result.output
    channels, messages, _, _ = read_mcap(out)
    assert {"/world0/imu/Imu", "/world0/imu/ImuQuiet"} <= set(channels)
    assert channels["/world0/imu/ImuQuiet"][1].name == "nexus.imu.ImuQuiet"
    quiet = [m for topic, _, m in messages if topic == "/world0/imu/ImuQuiet"]
    assert len(quiet) == ROWS
    record = pd.read_parquet(two_imu_run / "record.parquet")
    assert np.array_equal(np.array([m["gyro"][0] for m in quiet], dtype=np.float32),
                          record["imu/ImuQuiet.gyro[0]"].to_numpy())


def test_csv_has_one_row_per_record_row_and_units_in_its_header(two_worlds, tmp_path):
    out = tmp_path / "two.csv"
    result = export(two_worlds.out, "--out", out)  # the format from the suffix
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out)
    assert len(table) == 2 * ROWS
    assert list(table.columns[:3]) == ["time [s]", "world [-]", "body/base.pose[0] [m]"]
    assert {"imu.accel[2] [m/s^2]", "gps.latitude [deg]", "armed [-]", "controls[15] [-]"} <= set(table.columns)
    assert len(table.columns) == len(two_worlds.record.columns)
    for name in ("imu.accel[2]", "baro.pressure", "controls[0]"):
        column = next(c for c in table.columns if c.startswith(name + " ["))
        assert np.array_equal(table[column].to_numpy(np.float32), two_worlds.record[name].to_numpy())
    assert np.array_equal(table["gps.longitude [deg]"].to_numpy(), two_worlds.record["gps.longitude"].to_numpy())
    one = tmp_path / "one.csv"
    assert export(two_worlds.out, "--world", 1, "--format", "csv", "--out", one).exit_code == 0
    one = pd.read_csv(one)
    assert len(one) == ROWS and set(one["world [-]"]) == {1}


def test_bad_input_is_one_line_and_writes_nothing(two_worlds, tmp_path):
    out = tmp_path / "x.mcap"
    result = export(two_worlds.out, "--world", 2, "--out", out)
    assert result.exit_code == 2 and "--world 2: the run has 2 worlds (0 to 1)" in result.output
    result = export(tmp_path / "nothing", "--out", out)
    assert result.exit_code == 2 and "is not a folder (it does not exist)" in result.output
    result = export(two_worlds.out, "--out", tmp_path / "x.bag")
    assert result.exit_code == 2 and "cannot tell the format from the suffix '.bag'" in result.output
    result = export(two_worlds.out, "--format", "xlsx", "--out", out)
    assert result.exit_code == 2 and "'xlsx' is not one of 'mcap', 'csv'" in result.output
    summary_only = tmp_path / "summary_only"  # what `nexus run --record summary` leaves: no record
    summary_only.mkdir()
    (summary_only / "run.json").write_text(json.dumps({"record_mode": "summary", "worlds": 2}))
    shutil.copy(two_worlds.out / "summary.parquet", summary_only / "summary.parquet")
    result = export(summary_only, "--out", out)
    assert result.exit_code == 2 and "kept its summary alone (record_mode 'summary'), no record" in result.output
    shutil.rmtree(summary_only)
    assert list(tmp_path.iterdir()) == []
    out.write_bytes(b"earlier")
    result = export(two_worlds.out, "--out", out)
    assert result.exit_code == 2 and "exists; give --overwrite to replace it" in result.output
    assert out.read_bytes() == b"earlier"
    assert export(two_worlds.out, "--out", out, "--overwrite").exit_code == 0
    assert read_mcap(out)[3].statistics.message_count == 2 * len(CHANNELS) * ROWS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.mcap"]  # no temporary file left


def test_an_interrupted_export_exits_130_and_keeps_a_whole_file_cut_short(two_worlds, tmp_path, monkeypatch):
    from nexus.commands import export as command

    calls = []

    def stop_at_the_second_report(self, sim_s, end_s):
        calls.append(sim_s)
        self.sim_s = sim_s
        if len(calls) == 2:  # reports come every 0.5 s of sim time: the second at 0.504 s
            raise KeyboardInterrupt

    monkeypatch.setattr(command.ExportProgress, "update", stop_at_the_second_report)
    out = tmp_path / "cut.mcap"
    result = export(two_worlds.out, "--out", out)
    assert result.exit_code == 130, result.output
    assert "keeps what was exported, up to 0.50 s of sim time" in result.output
    channels, messages, metadata, summary = read_mcap(out)
    assert metadata["nexus.export"]["complete"] == "false"
    assert len(channels) == 2 * len(CHANNELS)
    # The message that reported 0.504 s is written (tick 126 of world 0, its first signal); nothing after it.
    assert messages[-1][1] == 504_000_000 and summary.statistics.message_count == len(messages)
    assert len(messages) == 125 * 2 * len(CHANNELS) + 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.mcap"]


def test_camera_frames_export_as_raw_images_between_the_records_rows(two_imu_run, tmp_path):
    from nexus.render.frames import FrameWriter, sensor_file

    run = tmp_path / "run"
    shutil.copytree(two_imu_run, run)
    camera = "/vehicle/body/base/Camera"
    info = json.loads((run / "run.json").read_text())
    info["render"] = {"sensors": [camera]}
    (run / "run.json").write_text(json.dumps(info))
    writer = FrameWriter(run / "frames" / sensor_file(camera), worlds=1)
    # 25 Hz frames on 250 Hz ticks: ticks 0, 10, ..., 250 (0 to 1 s), 26 frames of 6x8 pixels.
    for k in range(26):
        color = np.full((1, 6, 8, 4), k, dtype=np.uint8)
        color[0, 0, 0] = (255, 0, 0, 255)
        depth = np.full((1, 6, 8), 1.5 + k, dtype=np.float32)
        labels = np.zeros((1, 6, 8), dtype=np.uint32)
        writer.add(10 * k, 10 * k / 250, {"color": color, "depth": depth, "segmentation": labels})
    writer.close()
    out = tmp_path / "frames.mcap"
    result = export(run, "--out", out)
    assert result.exit_code == 0, result.output
    assert "array 'segmentation' (6, 8) uint32 has no Foxglove raw image encoding; left out" in result.output
    channels, messages, _, _ = read_mcap(out)
    for array, encoding in (("color", "rgba8"), ("depth", "32FC1")):
        topic = f"/world0/vehicle/body/base/Camera/{array}"
        assert channels[topic][1].name == "foxglove.RawImage"
        images = [(t, m) for name, t, m in messages if name == topic]
        assert len(images) == 26
        t, image = images[3]  # tick 30: 0.12 s
        assert t == 120_000_000 and image["timestamp"] == {"sec": 0, "nsec": 120_000_000}
        assert (image["width"], image["height"], image["encoding"]) == (8, 6, encoding)
        pixels = base64.b64decode(image["data"])
        if array == "color":
            assert image["step"] == 32 and pixels[:8] == bytes([255, 0, 0, 255, 3, 3, 3, 3])
        else:
            assert image["step"] == 32 and np.array_equal(np.frombuffer(pixels, np.float32), np.full(48, 4.5))
    assert "/world0/vehicle/body/base/Camera/segmentation" not in channels
    times = [t for _, t, _ in messages]
    assert times == sorted(times)  # frames sit among the record's rows of their time
    assert export(run, "--out", tmp_path / "none.mcap", "--no-frames").exit_code == 0
    assert not any("Camera" in topic for topic in read_mcap(tmp_path / "none.mcap")[0])
