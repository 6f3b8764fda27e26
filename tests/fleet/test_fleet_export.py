"""``nexus export`` of a fleet run (``--vehicles 2``): one MCAP channel set per vehicle, each vehicle's own frames.

One flight shared by every test here: two vehicles in one world, 2.0 m apart (vehicle 1 starts 2.0 m east of
vehicle 0), flown 5 s on the true state: 1,250 ticks at 250 Hz, so 1,250 record rows per vehicle.
"""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from click.testing import CliRunner
from mcap.reader import make_reader

from nexus.cli import main
from tests.worlds.flights import fly

#: 5 s at 250 Hz: rows per vehicle.
ROWS = 1250
#: The line's spacing [m]: vehicle 1 starts this far east of vehicle 0.
SPACING = 2.0


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return fly(tmp_path_factory.mktemp("fleet_export") / "two", "--vehicles", "2", "--spacing", "2.0",
               "--duration", "5", "--estimator", "truth")


def export(*args):
    return CliRunner().invoke(main, ["export", "--quiet", *map(str, args)])


@pytest.fixture(scope="module")
def fleet_mcap(fleet, tmp_path_factory):
    out = tmp_path_factory.mktemp("fleet_export") / "two.mcap"
    result = export(fleet.out, "--out", out)
    assert result.exit_code == 0, result.output
    with open(out, "rb") as stream:
        reader = make_reader(stream)
        summary = reader.get_summary()
        channels = {c.topic: c for c in summary.channels.values()}
        messages: dict[str, list] = {}
        for _, channel, message in reader.iter_messages(log_time_order=False):
            messages.setdefault(channel.topic, []).append((message.log_time, json.loads(message.data)))
        metadata = {m.name: m.metadata for m in reader.iter_metadata()}
    return channels, messages, metadata, result.output


def test_each_vehicle_has_a_channel_set_of_its_own_under_world0_vehicleK(fleet_mcap):
    channels, messages, metadata, output = fleet_mcap
    sets = {}
    for topic in channels:
        assert topic.startswith(("/world0/vehicle0/", "/world0/vehicle1/")), topic  # no topic outside a vehicle's
        sets.setdefault(topic.split("/")[2], set()).add(topic.split("/", 3)[3])
    assert set(sets) == {"vehicle0", "vehicle1"} and sets["vehicle0"] == sets["vehicle1"]
    assert {"body/base", "imu", "setpoint", "controls", "tf"} <= sets["vehicle0"]
    assert "vehicle" not in sets["vehicle0"]  # the index column names the channel; it is no signal
    assert channels["/world0/vehicle1/imu"].metadata == {"world": "0", "vehicle": "1", "signal": "imu"}
    # Every message of a vehicle's channel is one of its own record rows: 1,250 each.
    assert all(len(messages[topic]) == ROWS for topic in channels)
    assert metadata["nexus.run"]["vehicles"] == "2" and metadata["nexus.export"]["vehicles"] == "2"
    assert f"{len(channels)} channels (2 vehicles a world, a channel set each)" in output


def test_the_vehicles_first_poses_are_the_spacing_apart_east(fleet_mcap):
    _, messages, _, _ = fleet_mcap
    first = {}
    for k in (0, 1):
        time_ns, tf = messages[f"/world0/vehicle{k}/tf"][0]
        assert time_ns == 4_000_000  # tick 1 ends 4 ms in (250 Hz)
        (transform,) = tf["transforms"]
        assert transform["parent_frame_id"] == "world" and transform["child_frame_id"] == f"world0/vehicle{k}/base"
        first[k] = np.array([transform["translation"][a] for a in "xyz"])
        pose = messages[f"/world0/vehicle{k}/body/base"][0][1]["pose"]
        assert np.array_equal(np.float32(pose[:3]), np.float32(first[k]))  # the tf is the pose, exactly
    # Vehicle 0 stands where the file puts it (the origin), vehicle 1 2.0 m east (+x, ENU), both at rest on their
    # legs at the same height.
    assert abs(first[0][0]) < 1e-6 and abs(first[0][1]) < 1e-6
    assert first[1][0] - first[0][0] == pytest.approx(SPACING, abs=1e-5)
    assert first[1][1] - first[0][1] == pytest.approx(0.0, abs=1e-5)
    assert first[1][2] == pytest.approx(first[0][2], abs=1e-5)


def test_each_vehicles_messages_hold_its_own_record_rows_bit_for_bit(fleet, fleet_mcap):
    _, messages, _, _ = fleet_mcap
    for k in (0, 1):
        rows = fleet.record[fleet.record.vehicle == k]
        assert len(rows) == ROWS
        body = messages[f"/world0/vehicle{k}/body/base"]
        assert [t for t, _ in body] == list(np.rint(rows["time"].to_numpy() * 1e9).astype(np.int64))
        for axis in range(3):
            assert np.array_equal(np.array([m["pose"][axis] for _, m in body], dtype=np.float32),
                                  rows[f"body/base.pose[{axis}]"].to_numpy())
        accel = np.array([m["accel"][2] for _, m in messages[f"/world0/vehicle{k}/imu"]], dtype=np.float32)
        assert np.array_equal(accel, rows["imu.accel[2]"].to_numpy())
    # The two vehicles' paths differ (each flies its own mission from its own place): not one path copied twice.
    east = [np.array([m["pose"][0] for _, m in messages[f"/world0/vehicle{k}/body/base"]]) for k in (0, 1)]
    assert np.min(east[1] - east[0]) > 1.0


def test_a_record_with_more_vehicles_than_run_json_says_is_refused_and_writes_nothing(fleet, tmp_path):
    import shutil

    run = tmp_path / "cut"
    shutil.copytree(fleet.out, run)
    info = json.loads((run / "run.json").read_text())
    del info["vehicles"]  # as if the run had flown one vehicle a world
    (run / "run.json").write_text(json.dumps(info))
    out = tmp_path / "cut.mcap"
    result = export(run, "--out", out)
    assert result.exit_code == 2, result.output
    assert "has rows of vehicle 1 of world 0, but run.json says the run flew 1 vehicle a world" in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert not out.exists() and not list(tmp_path.glob(".cut.mcap*"))


def read_mcap(path):
    """{topic: [(log time [ns], message)]} and {metadata name: record} of an MCAP file."""
    with open(path, "rb") as stream:
        reader = make_reader(stream)
        messages: dict[str, list] = {}
        for _, channel, message in reader.iter_messages(log_time_order=False):
            messages.setdefault(channel.topic, []).append((message.log_time, json.loads(message.data)))
        metadata = {m.name: m.metadata for m in reader.iter_metadata()}
    return messages, metadata


def test_one_vehicle_exports_its_own_channels_and_rows_alone(fleet, fleet_mcap):
    _, everyone, _, _ = fleet_mcap
    result = export(fleet.out, "--vehicle", "1")
    assert result.exit_code == 0, result.output
    out = fleet.out / "record.vehicle1.mcap"  # the default name says the vehicle
    messages, metadata = read_mcap(out)
    # Vehicle 1's channel set, the same topics it has in the whole export, each with its 1,250 rows.
    assert set(messages) == {topic for topic in everyone if topic.startswith("/world0/vehicle1/")}
    assert len(messages) == len(everyone) // 2 and all(len(m) == ROWS for m in messages.values())
    assert all(messages[topic] == everyone[topic] for topic in messages)  # message for message
    assert metadata["nexus.export"]["vehicle"] == "1" and metadata["nexus.export"]["vehicles"] == "2"
    assert f"{len(messages)} channels (vehicle 1 of 2 a world), {len(messages) * ROWS:,} messages" in result.output


def test_one_vehicle_exports_its_own_rows_as_csv(fleet, tmp_path):
    import pandas as pd

    out = tmp_path / "vehicle0.csv"
    result = export(fleet.out, "--vehicle", "0", "--out", out)
    assert result.exit_code == 0, result.output
    assert f"{ROWS:,} rows (vehicle 0 of 2 a world)" in result.output
    table = pd.read_csv(out)
    assert len(table) == ROWS and set(table["vehicle [-]"]) == {0}
    mine = fleet.record[fleet.record.vehicle == 0]
    assert np.array_equal(table["body/base.pose[0] [m]"].to_numpy(np.float32), mine["body/base.pose[0]"].to_numpy())


def test_a_vehicle_the_run_did_not_fly_is_refused_in_one_line_and_writes_nothing(fleet, tmp_path):
    for fmt in ("mcap", "csv"):
        out = tmp_path / f"none.{fmt}"
        result = export(fleet.out, "--vehicle", "2", "--out", out)
        assert result.exit_code == 2, result.output
        assert result.output.strip() == (f"error: --vehicle 2 is not a vehicle of {fleet.out}: give a vehicle in 0..1 "
                                          "(it flew 2 vehicles a world), or leave --vehicle out for every vehicle")
        assert not out.exists() and not list(tmp_path.glob(f".none.{fmt}*"))


def test_a_fleets_camera_frames_go_on_each_vehicles_channels(fleet, tmp_path):
    """A frame file counts slots: vehicle k of world 0 is slot k. Two slots of 6x8 frames, each slot's pixels its
    own value (10 for vehicle 0, 11 for vehicle 1): each lands on its vehicle's topic, and --vehicle 1 keeps its own."""
    import shutil

    from nexus.render.frames import FrameWriter, sensor_file

    run = tmp_path / "run"
    shutil.copytree(fleet.out, run)
    camera = "/vehicle/body/base/Camera"
    info = json.loads((run / "run.json").read_text())
    info["render"] = {"sensors": [camera]}
    (run / "run.json").write_text(json.dumps(info))
    writer = FrameWriter(run / "frames" / sensor_file(camera), worlds=2)
    for k in range(5):  # ticks 0, 10, ..., 40
        color = np.stack([np.full((6, 8, 4), 10 + slot, dtype=np.uint8) for slot in (0, 1)])
        writer.add(10 * k, 10 * k / 250, {"color": color})
    writer.close()

    def images(out):
        with open(out, "rb") as stream:
            reader = make_reader(stream)
            found = {}
            for _, channel, message in reader.iter_messages(log_time_order=False):
                if channel.topic.endswith("Camera/color"):
                    found.setdefault(channel.topic, []).append(json.loads(message.data))
        return found

    assert export(run, "--out", tmp_path / "all.mcap").exit_code == 0
    both = images(tmp_path / "all.mcap")
    assert sorted(both) == ["/world0/vehicle0/vehicle/body/base/Camera/color",
                            "/world0/vehicle1/vehicle/body/base/Camera/color"]
    for vehicle in (0, 1):
        frames = both[f"/world0/vehicle{vehicle}/vehicle/body/base/Camera/color"]
        assert len(frames) == 5 and frames[0]["frame_id"] == f"world0/vehicle{vehicle}/Camera"
        assert set(base64.b64decode(frames[2]["data"])) == {10 + vehicle}
    result = export(run, "--vehicle", "1", "--out", tmp_path / "one.mcap")
    assert result.exit_code == 0 and "not split" not in result.output
    assert list(images(tmp_path / "one.mcap")) == ["/world0/vehicle1/vehicle/body/base/Camera/color"]
