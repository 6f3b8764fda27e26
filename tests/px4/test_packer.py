"""Frames packed from the dialect's layout must be pymavlink's own frames, byte for byte, and parse back."""

import math
from collections import Counter

import numpy as np

from pymavlink.dialects.v20 import common as mavlink

from nexus.px4 import messages
from nexus.px4.link import FrameReader
from nexus.px4.packer import FramePacker, pack_message, x25

SENSOR = messages.hil_sensor_args(4000, [0.1, -0.2, -9.81], [0.01, 0.0, -0.03], [2.1e-5, 1.0e-6, 4.3e-5], 95598.0,
                                  488.0, 284.978, 0x1FFF)
GPS = messages.hil_gps_args(100_000, 3, 47.397742, 8.545594, 488.0, 0.3, 0.4, [0.5, -1.25, 0.1], 10)
TRUTH = messages.hil_state_quaternion_args(8000, [math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5)], [0.1, -0.2, 0.3],
                                           (47.397742, 8.545594, 488.0), [1.0, 2.0, -0.5], [0.0, 0.0, -9.81])
ANSWER = (12_000, [0.5722] * 4 + [0.0] * 12, 129, 1)
CASES = [(mavlink.MAVLink_hil_sensor_message, "hil_sensor_encode", SENSOR),
         (mavlink.MAVLink_hil_gps_message, "hil_gps_encode", GPS),
         (mavlink.MAVLink_hil_state_quaternion_message, "hil_state_quaternion_encode", TRUTH),
         (mavlink.MAVLink_hil_actuator_controls_message, "hil_actuator_controls_encode", ANSWER)]


def test_packed_frames_equal_pymavlinks_byte_for_byte():
    ours = mavlink.MAVLink(None, srcSystem=1, srcComponent=51)
    theirs = mavlink.MAVLink(None, srcSystem=1, srcComponent=51)
    for cls, encode, args in CASES * 3:  # sequence numbers 0..11, as pymavlink's send would number them
        frame = FramePacker(cls, ours).pack(*args)
        assert frame == getattr(theirs, encode)(*args).pack(theirs), cls.name
        theirs.seq = (theirs.seq + 1) % 256


def test_packed_frames_parse_back_with_their_values():
    mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=51)
    data = b"".join(FramePacker(cls, mav).pack(*args) for cls, _, args in CASES)
    parsed = FrameReader(mavlink.MAVLink(None)).feed(data)
    assert [m.get_type() for m in parsed] == ["HIL_SENSOR", "HIL_GPS", "HIL_STATE_QUATERNION", "HIL_ACTUATOR_CONTROLS"]
    assert parsed[0].time_usec == 4000 and parsed[0].fields_updated == 0x1FFF
    assert parsed[1].lat == 473977420 and parsed[1].vel == 135
    # The answer is read by the link's own unpacking (not pymavlink's decoder): same values.
    answer = parsed[3]
    assert answer.time_usec == 12_000 and answer.mode == 129 and answer.flags == 1
    assert np.float32(answer.controls[0]) == np.float32(0.5722) and list(answer.controls[4:]) == [0.0] * 12


def test_x25_is_mavlinks_checksum():
    # CRC-16/MCRF4XX's catalogue check value: the checksum of the ASCII digits 1 to 9.
    assert x25(b"123456789") == 0x6F91
    assert x25(b"") == 0xFFFF
    rng = np.random.default_rng(7)
    for length in range(0, 300, 7):
        data = rng.integers(0, 256, length, dtype=np.uint8).tobytes()
        assert x25(data) == mavlink.x25crc(data).crc, length


# -- saturation: a value beyond its field goes out at the field's end, as a sensor's reading does -----------------

def test_an_impact_sized_sample_packs_saturated_not_an_error():
    # The crash of issue 43: 834 m/s² of specific force (down, FRD z) is 834 / 9.80665 · 1000 = 85,044 milli-g,
    # beyond HIL_STATE_QUATERNION's int16 zacc; it goes out at -32,767 (the int16 range, symmetric).
    args = messages.hil_state_quaternion_args(8000, [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0],
                                              (47.397742, 8.545594, 488.0), [0.0, 0.0, 13.0], [0.0, 0.0, -834.0])
    assert args[-1] == -85044
    mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=51)
    saturated = Counter()
    frame = FramePacker(mavlink.MAVLink_hil_state_quaternion_message, mav, saturated).pack(*args)
    truth = FrameReader(mavlink.MAVLink(None)).feed(frame)[0]
    assert (truth.xacc, truth.yacc, truth.zacc) == (0, 0, -32767)
    assert (truth.vz, truth.ind_airspeed, truth.lat) == (1300, 1300, 473977420)  # the rest as given
    assert saturated == {"HIL_STATE_QUATERNION.zacc": 1}
    # The same values within range pack to pymavlink's bytes, as before.
    fits = (*args[:-1], -32767)
    theirs = mavlink.MAVLink(None, srcSystem=1, srcComponent=51)
    theirs.seq = 1
    assert FramePacker(mavlink.MAVLink_hil_state_quaternion_message, mav).pack(*fits) == \
        theirs.hil_state_quaternion_encode(*fits).pack(theirs)


def test_every_integer_field_saturates_at_its_own_range():
    mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=51)
    saturated = Counter()
    # 400 m/s north, 600 east, 700 down: vn 40,000, ve 60,000 and vd -70,000 cm/s are beyond int16 (±32,767 here);
    # the ground speed, hypot(400, 600) = 721.11 m/s, 72,111 cm/s, beyond uint16 (65,535); the course
    # atan2(600, 400) = 56.31 deg, 5,631 cdeg, fits.
    gps = messages.hil_gps_args(100_000, 3, 47.397742, 8.545594, 488.0, 0.3, 0.4, [400.0, 600.0, 700.0], 10)
    assert gps[7:11] == (72111, 40000, 60000, 70000)
    frame = FramePacker(mavlink.MAVLink_hil_gps_message, mav, saturated).pack(*gps)
    parsed = FrameReader(mavlink.MAVLink(None)).feed(frame)[0]
    assert (parsed.vel, parsed.vn, parsed.ve, parsed.vd, parsed.cog) == (65535, 32767, 32767, 32767, 5631)
    assert (parsed.lat, parsed.alt, parsed.eph) == (473977420, 488000, 30)  # the rest as given
    gps = messages.hil_gps_args(100_000, 3, 47.397742, 8.545594, 488.0, 0.3, 0.4, [0.0, 0.0, -700.0], 10)
    assert FrameReader(mavlink.MAVLink(None)).feed(FramePacker(mavlink.MAVLink_hil_gps_message, mav, saturated).pack(
        *gps))[0].vd == -32767
    assert saturated == {"HIL_GPS.vel": 1, "HIL_GPS.vn": 1, "HIL_GPS.ve": 1, "HIL_GPS.vd": 2}


def test_a_pymavlink_message_saturates_too():
    mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=51)
    saturated = Counter()
    # A rangefinder reading 800 m (80,000 cm) against a uint16 field, a covariance of 300 against a uint8.
    message = mav.distance_sensor_encode(1, 10, 70000, 80000, 0, 0, 25, 300, 0.1, 0.1, [0.0] * 4, 100)
    parsed = FrameReader(mavlink.MAVLink(None)).feed(pack_message(message, mav, saturated))[0]
    assert (parsed.min_distance, parsed.max_distance, parsed.current_distance, parsed.covariance) == \
        (10, 65535, 65535, 255)
    assert saturated == {"DISTANCE_SENSOR.max_distance": 1, "DISTANCE_SENSOR.current_distance": 1,
                         "DISTANCE_SENSOR.covariance": 1}
