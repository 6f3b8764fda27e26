"""Frames packed from the dialect's layout must be pymavlink's own frames, byte for byte, and parse back."""

import math

import numpy as np

from pymavlink.dialects.v20 import common as mavlink

from nexus.px4 import messages
from nexus.px4.link import FrameReader
from nexus.px4.packer import FramePacker, x25

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
