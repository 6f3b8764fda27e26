"""The link's frame reader against random bytes: every valid answer in the stream is taken."""

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pymavlink.dialects.v20 import common as mavlink

from nexus.px4.link import FrameReader

ROW = [0.5722] * 4 + [0.0] * 12


def answers_at(stamps) -> list[bytes]:
    mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=1)
    return [mav.hil_actuator_controls_encode(t, ROW, 129, 1).pack(mav) for t in stamps]


def read(chunks) -> list:
    reader = FrameReader(mavlink.MAVLink(None))
    messages = []
    for chunk in chunks:
        messages += reader.feed(chunk)
    return messages


def cut(data: bytes, sizes) -> list[bytes]:
    """``data`` in pieces of the given sizes (cycled), as TCP may deliver it."""
    pieces, at, k = [], 0, 0
    while at < len(data):
        size = sizes[k % len(sizes)] if sizes else len(data)
        pieces.append(data[at : at + size])
        at += size
        k += 1
    return pieces


# Garbage: random bytes, with fake frame starts (0xFD, 0xFE) and real frame beginnings
# (a valid frame's first bytes, cut short) likely among them.
START_HEAVY = st.lists(st.sampled_from([0xFD, 0xFE, 0x00, 0x51, 0x5D, 0xFF]) | st.integers(0, 255), max_size=120).map(bytes)
CUT_FRAME = st.builds(lambda n, k: answers_at([k])[0][:n], st.integers(1, 92), st.integers(1, 2**40))
GARBAGE = st.lists(START_HEAVY | st.binary(max_size=300) | CUT_FRAME, max_size=3).map(b"".join)


def genuine_frame_end(stream: bytes, start: int) -> int | None:
    """Where the frame starting at ``start`` ends, if the bytes from there are a genuine MAVLink frame by
    MAVLink's own rules (a known id, a length within its payload, the x25 checksum with its CRC_EXTRA,
    computed by pymavlink), else None."""
    header = {0xFD: 10, 0xFE: 6}.get(stream[start])
    if header is None or len(stream) - start < header:
        return None
    length = stream[start + 1]
    if header == 10:
        flags = stream[start + 2]
        if flags & ~1:
            return None
        msgid = stream[start + 7] | stream[start + 8] << 8 | stream[start + 9] << 16
        size = header + length + 2 + (13 if flags else 0)
    else:
        msgid, size = stream[start + 5], header + length + 2
    kind = mavlink.mavlink_map.get(msgid)
    if kind is None or length > kind.unpacker.size or len(stream) - start < size:
        return None
    crc = mavlink.x25crc(stream[start + 1 : start + header + length] + bytes([kind.crc_extra])).crc
    at = start + header + length
    return start + size if crc == stream[at] | stream[at + 1] << 8 else None


def overlaps_an_answer(garbage: list[bytes], answers: list[bytes]) -> bool:
    """Whether a genuine frame starts in some garbage and runs into the answer after it. Random bytes make
    one now and then (a cut answer completed by the next one's first bytes, a checksum that happens to
    match): then the stream really holds that frame, and the answer it overlaps cannot be told from noise."""
    stream = b"".join(g + a for g, a in zip(garbage, answers))
    at = 0
    for g, a in zip(garbage, answers):
        for start in range(at, at + len(g)):
            end = genuine_frame_end(stream, start)
            if end is not None and end > at + len(g):
                return True
        at += len(g) + len(a)
    return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(garbage=st.lists(GARBAGE, min_size=1, max_size=12), sizes=st.lists(st.integers(1, 200), max_size=5))
def test_every_valid_answer_among_random_bytes_is_taken(garbage, sizes):
    stamps = [4000 * (k + 1) for k in range(len(garbage))]
    answers = answers_at(stamps)
    assume(not overlaps_an_answer(garbage, answers))
    stream = b"".join(g + a for g, a in zip(garbage, answers))
    messages = read(cut(stream, sizes))
    taken = [m.time_usec for m in messages if m.get_type() == "HIL_ACTUATOR_CONTROLS" and m.time_usec in stamps]
    assert taken == stamps


def test_a_clean_stream_skips_nothing():
    reader = FrameReader(mavlink.MAVLink(None))
    data = b"".join(answers_at(range(1, 51)))
    assert [m.time_usec for m in reader.feed(data)] == list(range(1, 51))
    assert reader.skipped_bytes == 0 and reader.garbage_runs == 0 and not reader.buffer


def test_a_frame_cut_across_reads_waits_for_its_rest():
    frame = answers_at([4000])[0]
    reader = FrameReader(mavlink.MAVLink(None))
    assert reader.feed(frame[:40]) == []
    assert [m.time_usec for m in reader.feed(frame[40:])] == [4000]
    assert reader.skipped_bytes == 0


def test_a_fake_start_with_a_plausible_length_costs_only_its_own_bytes():
    # 0xFD, length 81 (HIL_ACTUATOR_CONTROLS's), id 93: the candidate spans the real answer
    # that follows and fails its CRC; the reader skips its 10 header bytes and nothing more.
    fake = bytes([0xFD, 81, 0, 0, 0, 1, 1, 93, 0, 0])
    reader = FrameReader(mavlink.MAVLink(None))
    messages = reader.feed(fake + answers_at([8000])[0])
    assert [m.time_usec for m in messages] == [8000]
    assert reader.skipped_bytes == 10 and reader.garbage_runs == 1


# A false MAVLink 2 start byte (0xFD) and junk right before one real answer. "overlapping": the junk is 3 bytes,
# so the fake 10-byte header runs 6 bytes into the real frame (its id bytes then read 0x010000, no message).
# "long claim": a whole fake header claiming a 200-byte FILE_TRANSFER_PROTOCOL (id 110) payload, more than
# the stream holds, so the candidate waits for bytes until the real frame inside it is found whole.
FALSE_STARTS = {
    "overlapping": bytes([0xFD, 81, 0, 7]),
    "long claim": bytes([0xFD, 200, 0, 0, 3, 1, 1, 110, 0, 0]),
}


@pytest.mark.parametrize("chunk", [None, 1], ids=["one read", "byte by byte"])
@pytest.mark.parametrize("junk", FALSE_STARTS.values(), ids=FALSE_STARTS.keys())
def test_a_false_start_byte_with_junk_right_before_a_frame_yields_exactly_that_frame(junk, chunk):
    mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=1)
    controls = [0.25, -0.5, 0.75, 1.0] + [0.0] * 12
    frame = mav.hil_actuator_controls_encode(123456789, controls, 129, 1).pack(mav)
    assert frame[0] == 0xFD and len(frame) == 10 + 81 + 2  # a real MAVLink 2 frame: header, 81-byte payload, CRC
    stream = junk + frame
    reader = FrameReader(mavlink.MAVLink(None))
    messages = []
    for at in range(0, len(stream), chunk or len(stream)):
        messages += reader.feed(stream[at : at + (chunk or len(stream))])
    assert [m.get_type() for m in messages] == ["HIL_ACTUATOR_CONTROLS"]
    (message,) = messages
    assert (message.time_usec, list(message.controls), message.mode, message.flags) == (123456789, controls, 129, 1)
    assert reader.skipped_bytes == len(junk) and reader.garbage_runs == 1 and not reader.buffer
