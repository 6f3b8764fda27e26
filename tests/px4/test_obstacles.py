"""The lidar feeds PX4's collision prevention: 72 sectors of 5° (body FRD, clockwise), eight DISTANCE_SENSORs a sweep."""

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from pymavlink.dialects.v20 import common as mavlink

from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.px4 import obstacles
from nexus.px4.obstacles import NO_DATA, distance_sensor_messages, lidar_directions, message_sectors, scan_sectors
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.render.frames import read_frames
from nexus.render.views import lidar_elevations
from nexus.runtime.run import run_flight
from nexus.sensors.lidar import PointCloud

DATA = Path(__file__).parents[1] / "data"
SENSORS = str(DATA / "astro_max_sensors.usda")
WALL = str(DATA / "wall.usda")
# The test vehicle's lidar: 8 channels over 0.5 rad, 128 columns, 10 Hz, 0.3 to 100 m.
CHANNELS, COLUMNS, VFOV = 8, 128, 0.5
MIN_RANGE, MAX_RANGE = 0.3, 100.0
NOTHING = 10001  # max + 1 [cm]: nothing within 100 m
TICK_US = 4000
MAV = mavlink.MAVLink(None, srcSystem=1, srcComponent=51)


def cloud(hits, *, channels=CHANNELS, columns=COLUMNS, vfov=VFOV, invalid=()):
    """One world's sweep with returns at horizontal distances [m]: ``hits`` maps (channel, column) -> distance;
    ``invalid`` lists (channel, column) that have a range but are not valid. Channel 0 is the top one."""
    directions = lidar_directions(channels, columns, vfov)
    elevation = lidar_elevations(channels, vfov)[::-1]
    ranges = np.zeros(channels * columns, dtype=np.float32)
    valid = np.zeros(channels * columns, dtype=bool)
    for (channel, column), horizontal in [*hits.items(), *((key, 1.0) for key in invalid)]:
        row = channel * columns + column
        ranges[row] = horizontal / math.cos(elevation[channel])
        valid[row] = (channel, column) not in invalid
    points = (ranges[:, None] * directions).astype(np.float32)
    arrays = {"points": points[None], "range": ranges[None], "valid": valid[None], "times": np.zeros((1, len(ranges)))}
    return PointCloud(0.0, 0, arrays), directions


def sectors_of(hits, band=obstacles.DEFAULT_BAND, **layout):
    sweep, directions = cloud(hits, **layout)
    return scan_sectors(sweep["points"][0], sweep["valid"][0], directions, min_range=MIN_RANGE, max_range=MAX_RANGE,
                        band=band)


# Channels 3 and 4 of the eight look 2.05° up and down (elevations -0.25 + k·0.5/7 rad, top first): the only two
# within the default ±5° band. Column c looks 2.8125·c degrees counter-clockwise (FLU): FRD yaw -2.8125·c.
LEVEL_UP, LEVEL_DOWN, TOP = 3, 4, 0


def test_an_obstacle_3_m_dead_ahead_lands_in_sector_0_at_300_cm():
    sectors = sectors_of({(LEVEL_UP, 0): 3.0})
    assert sectors.dtype == np.uint16 and sectors.shape == (72,)
    assert sectors[0] == 300
    assert np.all(np.delete(sectors, 0) == NOTHING)  # every other sector looked and saw nothing within 100 m


def test_left_is_sector_54_and_right_sector_18_clockwise_from_forward_seen_from_above():
    # Column 32 looks 90° counter-clockwise in FLU (+y, left): FRD yaw -90° = 270°, sector 270 / 5 = 54.
    # Column 96 looks at FLU 270° (right): FRD yaw 90°, sector 18; column 64 straight back: sector 36.
    sectors = sectors_of({(LEVEL_DOWN, 32): 2.0, (LEVEL_UP, 96): 1.5, (LEVEL_UP, 64): 4.0})
    assert (sectors[54], sectors[18], sectors[36]) == (200, 150, 400)
    assert np.count_nonzero(sectors != NOTHING) == 3


def test_the_nearest_return_of_a_sector_wins_and_its_horizontal_distance_counts():
    # Both level channels see the sector-0 column; the ray 2.05° down meets something 2.6 m away horizontally.
    sweep, _ = cloud({(LEVEL_UP, 0): 3.0, (LEVEL_DOWN, 0): 2.6})
    assert sweep["range"][0][LEVEL_DOWN * COLUMNS] == pytest.approx(2.6 / math.cos(0.25 / 7), rel=1e-6)  # slant
    assert sectors_of({(LEVEL_UP, 0): 3.0, (LEVEL_DOWN, 0): 2.6})[0] == 260


def test_returns_outside_the_elevation_band_and_invalid_ones_are_ignored():
    # The top channel (+14.3°) sees 1 m behind; a level ray to the right has a range but is not valid.
    hits = {(TOP, 64): 1.0}
    sectors = sectors_of(hits, invalid=[(LEVEL_UP, 96)])
    assert sectors[36] == NOTHING and sectors[18] == NOTHING
    # With a ±15° band the top channel counts.
    assert sectors_of(hits, band=math.radians(15.0))[36] == 100


def test_sector_i_covers_yaw_5i_minus_2_5_up_to_5i_plus_2_5_degrees():
    # Column 8 looks at FLU +22.5° = FRD 337.5°: the lower edge of sector 68 (67.5 rounds up). Column 120 looks at
    # FRD +22.5°: the lower edge of sector 5. Column 121 (FRD 19.6875°) is in sector 4, column 9 (334.6875°) in 67.
    assert np.flatnonzero(sectors_of({(LEVEL_UP, 8): 5.0}) != NOTHING).tolist() == [68]
    assert np.flatnonzero(sectors_of({(LEVEL_UP, 120): 5.0}) != NOTHING).tolist() == [5]
    assert np.flatnonzero(sectors_of({(LEVEL_UP, 121): 5.0}) != NOTHING).tolist() == [4]
    assert np.flatnonzero(sectors_of({(LEVEL_UP, 9): 5.0}) != NOTHING).tolist() == [67]


def test_a_sector_no_ray_looks_into_reads_no_data():
    # 36 columns, one every 10°: the odd 5° sectors fall between them.
    sectors = sectors_of({}, columns=36)
    assert np.all(sectors[0::2] == NOTHING) and np.all(sectors[1::2] == NO_DATA)


def test_distances_stay_inside_the_range_px4_takes_as_an_obstacle():
    # PX4 drops a reading at or below min_distance (30 cm) and takes one at max_distance (10000 cm) as "nothing in
    # range": a return 0.25 m away horizontally is kept as an obstacle at min + 1 cm, one at 99.999 m at max - 1 cm.
    assert sectors_of({(LEVEL_UP, 0): 0.25})[0] == 31
    assert sectors_of({(LEVEL_UP, 0): 99.999})[0] == 9999


def px4_bins(message) -> list[int]:
    """The sectors PX4 fills from one DISTANCE_SENSOR: CollisionPrevention::_addDistanceSensorData with
    ObstacleMath::sensor_orientation_to_yaw_offset (ROTATION_CUSTOM: Eulerf(q).psi()) and C's round (half away
    from zero), in float32 as PX4 computes it."""
    w, x, y, z = (np.float32(q) for q in message.quaternion)
    psi = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    yaw_deg = math.degrees(psi % (2.0 * math.pi))
    half = math.degrees(np.float32(message.horizontal_fov) / 2.0)
    c_round = lambda v: int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)  # noqa: E731
    return [b % 72 for b in range(c_round((yaw_deg - half) / 5.0), c_round((yaw_deg + half) / 5.0) + 1)]


def test_the_eight_messages_fill_each_of_px4s_72_sectors_exactly_once_as_px4_bins_them():
    sent = distance_sensor_messages(MAV, 0, sectors_of({}), min_range=MIN_RANGE, max_range=MAX_RANGE)
    covered = [px4_bins(m) for m in sent]
    for k, bins in enumerate(covered):
        assert bins == [(9 * k + j) % 72 for j in range(-4, 5)], k  # nine sectors centred on sector 9·k (45·k°)
    assert sorted(b for bins in covered for b in bins) == list(range(72))


def test_messages_say_what_px4_reads_an_obstacle_ahead_and_one_to_the_left():
    sectors = sectors_of({(LEVEL_UP, 0): 3.0, (LEVEL_DOWN, 32): 2.0})
    sent = distance_sensor_messages(MAV, 1234, sectors, min_range=MIN_RANGE, max_range=MAX_RANGE, covariance_cm2=4)
    assert [m.id for m in sent] == list(range(1, 9))
    assert [m.current_distance for m in sent] == [300, NOTHING, NOTHING, NOTHING, NOTHING, NOTHING, 200, NOTHING]
    for k, m in enumerate(sent):
        assert (m.time_boot_ms, m.min_distance, m.max_distance, m.type, m.covariance, m.signal_quality) == (
            1234, 30, 10000, 0, 4, 100)
        assert m.orientation == 100  # MAV_SENSOR_ROTATION_CUSTOM: PX4 takes the yaw from the quaternion
        yaw = math.radians(45 * k)  # FRD, clockwise from forward
        expected = np.array([math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)])
        np.testing.assert_allclose(m.quaternion, expected if expected[0] >= 0 else -expected, atol=1e-7)
        assert m.horizontal_fov == pytest.approx(math.radians(40.0))
        assert m.vertical_fov == pytest.approx(math.radians(10.0))
    # Sector 54 (left, 270°) is message 6's centre (9·6): id 7.
    assert sent[6].id == 7 and px4_bins(sent[6])[4] == 54


def test_a_wide_sector_reads_its_nearest_sector_and_no_data_only_when_all_nine_are_unseen():
    sectors = np.full(72, NOTHING, dtype=np.uint16)
    sectors[[5, 13]] = (700, 650)  # both in message 1 (sectors 5..13)
    sectors[14:23] = NO_DATA  # message 2 (sectors 14..22) entirely unseen
    sectors[23] = NO_DATA  # one unseen sector of message 3 (23..31)
    wide = message_sectors(sectors)
    assert wide.tolist() == [NOTHING, 650, NO_DATA, NOTHING, NOTHING, NOTHING, NOTHING, NOTHING]
    sent = distance_sensor_messages(MAV, 0, sectors, min_range=MIN_RANGE, max_range=MAX_RANGE)
    assert [m.id for m in sent] == [1, 2, 4, 5, 6, 7, 8]  # nothing for the unseen one: PX4 keeps "no data"


# -- against the scripted PX4 ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    """The sensor vehicle resting at the origin of the wall scene (near face 3 m ahead), 1 s, with a scripted PX4
    that boots for 10 messages and then answers zero controls; every write on the link kept."""
    out = tmp_path_factory.mktemp("obstacles") / "run"
    options = RunConfig(vehicle=SENSORS, scene=WALL, controller="px4", render="inline",
                        controller_options={"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0})
    flight = build_flight(options, "cpu")
    px4 = flight.vehicle.controller
    writes: list[bytes] = []
    write = px4.link._write
    px4.link._write = lambda data: (writes.append(bytes(data)), write(data))[1]
    peer = ScriptedPx4(px4.link.port, lambda n: None if n <= 10 else [0.0] * 16)
    with peer.running():
        summary = run_flight(replace(flight.options, device="cpu", duration=1.0), out, progress=False, flight=flight)
    parser = mavlink.MAVLink(None)
    parsed = [parser.parse_buffer(data) or [] for data in writes]
    return out, summary, px4, peer, parsed, flight


def sweeps(parsed):
    """The writes that carry DISTANCE_SENSORs: (HIL_SENSORs of the write, DISTANCE_SENSORs of the write)."""
    return [([m for m in w if m.get_type() == "HIL_SENSOR"], [m for m in w if m.get_type() == "DISTANCE_SENSOR"])
            for w in parsed if any(m.get_type() == "DISTANCE_SENSOR" for m in w)]


def test_each_sweep_goes_out_as_eight_messages_in_the_write_of_the_tick_it_is_delivered(flown):
    _out, summary, px4, peer, parsed, _ = flown
    assert summary.ticks == 250
    # 10 Hz on a 250 Hz tick: the sweep of ticks 25·j .. 25·j + 24 is sent to the renderer at its last tick and
    # delivered one sweep (25 ticks) later, at tick 25·j + 49, stamped 4 ms a tick: 196 ms, 296 ms, ... 996 ms.
    # In 1 s that is 9 sweeps, j = 0..8; the one of ticks 225..249 would arrive at tick 274.
    batches = sweeps(parsed)
    assert len(batches) == 9
    for j, (hil_sensor, sent) in enumerate(batches):
        assert [m.time_usec for m in hil_sensor] == [TICK_US * (25 * j + 49)]  # the tick's own HIL_SENSOR
        assert [m.id for m in sent] == list(range(1, 9))
        assert {m.time_boot_ms for m in sent} == {100 * j}  # the sweep's first column: 0.1·j s
    assert len(peer.of_type("DISTANCE_SENSOR")) == 72
    stats = px4.stats()
    assert (stats["obstacle_sweeps"], stats["obstacle_messages"]) == (9, 72)
    assert stats["sensor_messages_sent"] == {}


def test_every_field_of_the_messages(flown):
    _out, _summary, _px4, peer, _parsed, _ = flown
    sent = peer.of_type("DISTANCE_SENSOR")
    for m in sent:
        k = m.id - 1
        assert (m.min_distance, m.max_distance) == (30, 10000)  # the lidar's 0.3 to 100 m [cm]
        assert (m.type, m.orientation, m.signal_quality) == (0, 100, 100)  # laser, ROTATION_CUSTOM
        assert m.covariance == 4  # (2 cm range noise)^2 [cm²]
        assert m.horizontal_fov == pytest.approx(math.radians(40.0))
        assert m.vertical_fov == pytest.approx(math.radians(10.0))
        assert px4_bins(m) == [(9 * k + j) % 72 for j in range(-4, 5)]


def test_the_wall_3_m_ahead_and_the_ground_14_m_around_read_as_worked_out_by_hand(flown):
    out, _summary, _px4, peer, _parsed, _ = flown
    sent = peer.of_type("DISTANCE_SENSOR")
    record = pq.read_table(out / "record.parquet")
    base_z = record.column("body/base.pose[2]").to_numpy()
    assert np.ptp(base_z) < 1e-4 and base_z[0] == pytest.approx(0.30, abs=0.02)  # at rest on the ground
    ground_cm = 100.0 * (float(base_z[0]) + 0.2) / math.tan(0.25 / 7)
    for j in range(9):
        by_id = {m.id: m.current_distance for m in sent[8 * j: 8 * j + 8]}
        # Ahead (id 1, FRD -22.5° .. 22.5°): the wall's face 3 m away along column 0. The range noise (1 sigma
        # 2 cm) on the 32 in-band returns of the sector pulls the minimum a few cm below 300.
        assert 292 <= by_id[1] <= 301, (j, by_id)
        # Front-right (id 2, from FRD 22.5°): column 120 at exactly 22.5° meets the wall 3 / cos 22.5° = 3.247 m.
        assert 317 <= by_id[2] <= 326, (j, by_id)
        # Front-left (id 8, up to FRD 337.5° exclusive): column 9 at 25.3125°, 3 / cos 25.3125° = 3.318 m.
        assert 324 <= by_id[8] <= 333, (j, by_id)
        # Elsewhere the channel 2.05° (0.25/7 rad) down meets the ground: the lidar is 0.2 m above a base resting
        # 0.30 m up, so 0.50 / tan(0.25/7) = 13.99 m away (the minimum of the noisy returns a little nearer).
        for sector_id in range(3, 8):
            assert ground_cm - 10 <= by_id[sector_id] <= ground_cm + 1, (j, sector_id, by_id)


def test_each_message_is_the_reduction_of_the_sweep_its_tick_delivered(flown):
    out, _summary, px4, peer, _parsed, _ = flown
    sent = peer.of_type("DISTANCE_SENSOR")
    frames = read_frames(out / "frames" / "vehicle.body.base.Lidar.parquet")
    np.testing.assert_array_equal(frames["tick"], np.arange(0, 201, 25))
    directions = lidar_directions(CHANNELS, COLUMNS, VFOV)
    np.testing.assert_allclose(px4.lidar.directions.reshape(-1, 3), directions, atol=1e-7)  # the lidar's own rays
    for j in range(9):
        sectors = scan_sectors(frames["points"][j], frames["valid"][j], directions, min_range=MIN_RANGE,
                               max_range=MAX_RANGE)
        assert [m.current_distance for m in sent[8 * j: 8 * j + 8]] == message_sectors(sectors).tolist()


def test_the_lidar_runs_before_the_exchange_and_a_vehicle_without_one_sends_no_obstacle_data(flown):
    *_, flight = flown
    assert "host(lidar) graph(px4_row) host(exchange)" in flight.loop.plan.text()
    plain = build_flight(RunConfig(controller="px4", controller_options={"host": "127.0.0.1", "port": 0}), "cpu")
    try:
        px4 = plain.vehicle.controller
        assert px4.lidar is None and "obstacle_sweeps" not in px4.stats()
    finally:
        plain.loop.close()
