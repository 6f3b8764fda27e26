"""Record columns regrouped as one JSON message per signal, and each column's unit (no flight: a table made here)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from nexus.record.signal_channels import number_texts, signal_channels
from nexus.record.units import header


def table() -> pa.Table:
    return pa.table({
        "time": pa.array([0.004, 0.008], pa.float64()),
        "world": pa.array([0, 0], pa.int32()),
        "imu.time": pa.array([0.004, 0.004], pa.float64()),
        "imu.accel[0]": pa.array([0.1, np.nan], pa.float32()),
        "imu.accel[1]": pa.array([-1e-5, np.inf], pa.float32()),
        "imu.accel[2]": pa.array([-9.81, 3.4028235e38], pa.float32()),
        "controls[0]": pa.array([0.5, 0.25], pa.float32()),
        "controls[1]": pa.array([0.75, 1.0], pa.float32()),
        "armed": pa.array([1, 0], pa.int32()),
        "pair[0].a": pa.array([1, 2], pa.int32()),
        "pair[1].a": pa.array([3, 4], pa.int32()),
        "odd.x": pa.array([2.5, 2.5], pa.float64()),
    })


def test_each_signal_is_one_message_in_its_structs_shape_with_every_value_exact():
    data = table()
    channels = {c.signal: c for c in signal_channels({f.name: f.type for f in data.schema})}
    assert list(channels) == ["imu", "controls", "armed", "pair", "odd"]  # time and world are no signals
    texts = channels["imu"].messages(data)
    # float32 0.1, -1e-5 and -9.81 as their shortest texts (0.1 is 0.100000001490116... in float32).
    assert texts[0] == '{"time":0.004,"accel":[0.1,-1e-05,-9.81]}'
    imu = [json.loads(text) for text in texts]
    record = np.stack([data[f"imu.accel[{i}]"].to_numpy() for i in range(3)], axis=1)
    assert np.array_equal(np.array(imu[0]["accel"], np.float32), record[0])  # read back: the same bits
    assert imu[1]["accel"][:2] == [None, None]  # NaN and inf: JSON has neither
    assert np.float32(imu[1]["accel"][2]) == np.float32(3.4028235e38)
    assert [json.loads(t) for t in channels["controls"].messages(data)] == [{"value": [0.5, 0.75]},
                                                                           {"value": [0.25, 1.0]}]
    assert [json.loads(t) for t in channels["armed"].messages(data)] == [{"value": 1}, {"value": 0}]
    assert json.loads(channels["pair"].messages(data)[1]) == {"value": [{"a": 2}, {"a": 4}]}
    assert channels["imu"].topic(3) == "/world3/imu" and channels["imu"].schema_name == "nexus.imu"


def test_the_schema_types_each_field_and_names_its_unit():
    data = table()
    channels = {c.signal: c for c in signal_channels({f.name: f.type for f in data.schema})}
    imu = channels["imu"].schema["properties"]
    assert imu["time"] == {"type": "number", "description": "sim time the sample was taken [s]"}
    assert imu["accel"]["type"] == "array" and imu["accel"]["items"] == {"type": "number"}
    assert (imu["accel"]["minItems"], imu["accel"]["maxItems"]) == (3, 3)
    assert imu["accel"]["description"].endswith("[m/s^2]")
    assert channels["armed"].schema["properties"]["value"]["type"] == "integer"
    assert channels["controls"].schema["properties"]["value"]["description"].endswith("[-]")
    assert "not known" in channels["odd"].schema["properties"]["x"]["description"]


def test_numbers_are_the_shortest_text_that_reads_back_to_the_same_bits():
    values = np.array([0.1, 1e-5, 123456.7, -0.0, np.nan], np.float32)
    assert number_texts(values) == ["0.1", "1e-05", "123456.7", "-0.0", "null"]
    # float32 0.1 is 0.100000001490116...: "0.1" read as float64 and rounded to float32 is the same number.
    assert np.float32(float("0.1")) == values[0]
    assert number_texts(np.array([0.1], np.float64)) == ["0.1"]
    assert number_texts(np.array([3, -2], np.int32)) == ["3", "-2"]


def test_a_csv_header_names_each_columns_unit():
    assert header("time") == "time [s]"
    assert header("imu.accel[0]") == "imu.accel[0] [m/s^2]"
    assert header("imu/ImuQuiet.gyro[2]") == "imu/ImuQuiet.gyro[2] [rad/s]"  # a second writer's label
    assert header("body/base.pose[2]") == "body/base.pose[2] [m]"  # ENU position
    assert header("body/base.pose[3]") == "body/base.pose[3] [-]"  # quaternion x
    assert header("joints/rotor0[1]") == "joints/rotor0[1] [rad/s]"  # a joint's speed
    assert header("gps.latitude") == "gps.latitude [deg]" and header("mag.field[1]") == "mag.field[1] [T]"
    assert header("controls[15]") == "controls[15] [-]" and header("wind[0]") == "wind[0] [m/s]"
    assert header("odd.x") == "odd.x"  # a unit the table does not know: no brackets rather than a wrong one
