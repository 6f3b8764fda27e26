"""The benchmark's instant PX4 peer: its hand-patched answers must be frames pymavlink accepts."""

import socket
import threading

import pytest
from pymavlink.dialects.v20 import common as mavlink

from nexus.px4.scripted_peer import AnswerTemplate, answer_at_once

ROW = [0.5722] * 4 + [0.0] * 12
#: Stamps [µs]: the first tick, one far in the flight, and ones that exercise every byte of the field.
STAMPS = [4000, 8000, 12_000, 49_800_000, 2**32 + 4000, 2**56 + 255, 0xFFFF_FFFF_FFFF_FF00]


def parse_all(data: bytes) -> list:
    parser = mavlink.MAVLink(None)
    parser.robust_parsing = True
    return parser.parse_buffer(data) or []


def test_each_patched_answer_parses_with_its_time():
    template = AnswerTemplate(mavlink.MAVLink(None, srcSystem=1, srcComponent=1), ROW)
    messages = parse_all(b"".join(template.answer(t) for t in STAMPS))
    assert [m.get_type() for m in messages] == ["HIL_ACTUATOR_CONTROLS"] * len(STAMPS)
    assert [m.time_usec for m in messages] == STAMPS
    for message in messages:
        assert list(message.controls) == pytest.approx(ROW) and message.mode == 129 and message.flags == 1


def test_patched_answers_equal_freshly_packed_ones():
    # The patched frame must be byte for byte what pymavlink packs for the same message.
    mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=1)
    template = AnswerTemplate(mav, ROW)
    for stamp in STAMPS:
        fresh = mavlink.MAVLink(None, srcSystem=1, srcComponent=1)  # sequence number 0, as the template's
        assert template.answer(stamp) == fresh.hil_actuator_controls_encode(stamp, ROW, 129, 1).pack(fresh)


def test_patched_answers_parse_with_the_pure_python_crc_too(monkeypatch):
    # pymavlink picks a C CRC (fastcrc) when installed and a pure-Python one otherwise; the
    # answers must pass the parser's check with either.
    monkeypatch.setattr(mavlink, "x25crc", mavlink._x25crc_slow)
    template = AnswerTemplate(mavlink.MAVLink(None, srcSystem=1, srcComponent=1), ROW)
    messages = parse_all(b"".join(template.answer(t) for t in STAMPS))
    assert [m.time_usec for m in messages] == STAMPS


def test_the_peer_answers_every_sensor_message_over_tcp():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    peer = threading.Thread(target=answer_at_once, args=(server.getsockname()[1], ROW), daemon=True)
    peer.start()
    server.settimeout(10.0)
    conn, _ = server.accept()
    conn.settimeout(5.0)
    mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=51)
    stamps = [4000 * k for k in range(1, 201)]
    zeros = (0.0,) * 12
    # Sent in bursts of 7 (sensor messages, a GPS fix among them): frames split across reads.
    for first in range(0, len(stamps), 7):
        burst = b""
        for t in stamps[first : first + 7]:
            burst += mav.hil_sensor_encode(t, *zeros, 0x1FFF, 0).pack(mav)
            if t % 100_000 == 0:
                burst += mav.hil_gps_encode(t, 3, 473977420, 85455940, 488000, 30, 50, 0, 0, 0, 0, 65535, 10, 0).pack(mav)
        conn.sendall(burst)
    parser = mavlink.MAVLink(None)
    parser.robust_parsing = True
    answers, received = [], b""
    while len(answers) < len(stamps):
        data = conn.recv(65536)
        assert data, "the peer closed the link"
        received += data
        for message in parser.parse_buffer(data) or []:
            assert message.get_type() != "BAD_DATA", message.reason
            if message.get_type() == "HIL_ACTUATOR_CONTROLS":
                answers.append(message.time_usec)
    conn.close()
    server.close()
    assert answers == stamps
