"""A rangefinder reaches PX4 as DISTANCE_SENSOR, through its spec alone, over a real TCP link."""

from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.run import run_flight
from tests.sensors.test_rangefinder import vehicle_file

@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    folder = tmp_path_factory.mktemp("distance")
    # On the ground the base sits about 0.1 m up: a 1 cm minimum keeps the resting readings valid.
    vehicle = vehicle_file(folder, minDistance=0.01, maxDistance=8.0, rate=50.0)
    options = RunConfig(vehicle=str(vehicle), controller="px4",
                        controller_options={"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0})
    flight = build_flight(options, "cpu")
    px4 = flight.vehicle.controller
    # Like PX4: silent for 10 sensor messages, then a climb command every tick.
    peer = ScriptedPx4(px4.link.port, lambda n: None if n <= 10 else [0.7] * 4 + [0.0] * 12)
    with peer.running():
        summary = run_flight(replace(flight.options, device="cpu", duration=1.0), folder / "run", progress=False,
                             flight=flight)
    return folder / "run", summary, px4, peer


def test_px4_receives_one_distance_sensor_per_rangefinder_sample(flown):
    out, _summary, px4, peer = flown
    sent = [m for _, m in peer.received if m.get_type() == "DISTANCE_SENSOR"]
    # 1 s at 50 Hz: the start-up sample (0 s) and one every 20 ms up to 1.000 s: 51, one message each.
    assert len(sent) == 51
    assert px4.stats()["sensor_messages_sent"] == {"DISTANCE_SENSOR": 51}
    first = sent[0]
    assert (first.min_distance, first.max_distance) == (1, 800)  # [cm]
    assert first.orientation == 25  # MAV_SENSOR_ROTATION_PITCH_270: facing down
    assert first.type == 0  # MAV_DISTANCE_SENSOR_LASER
    assert first.covariance == 4  # (2 cm)^2
    assert first.signal_quality == 100


def test_each_message_carries_the_recorded_distance_in_centimetres(flown):
    out, _summary, _px4, peer = flown
    sent = [m for _, m in peer.received if m.get_type() == "DISTANCE_SENSOR"]
    table = pq.read_table(out / "record.parquet")
    times = table.column("range.time").to_numpy()
    ticks = table.column("time").to_numpy()
    distances = table.column("range.distance").to_numpy()
    first_rows = np.flatnonzero(np.diff(times, prepend=-1.0) != 0)  # the row of each new sample
    assert len(first_rows) == len(sent)
    for message, row in zip(sent, first_rows):
        # Stamped with the exchange's tick: the first tick that carries the sample.
        assert message.time_boot_ms == round(ticks[row] * 1000)
        assert message.current_distance == round(100 * float(distances[row]))
    # The climb at 0.7 lifts the vehicle: the last reading is well above the first.
    assert sent[-1].current_distance > sent[0].current_distance + 5
