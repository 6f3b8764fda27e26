"""A scripted stand-in for PX4 SITL: connects over TCP like PX4 and plays its side of lockstep.

The tests and the ``px4`` benchmark suite use it where real PX4 is not at hand.

It records every message it receives with its arrival, and answers each
HIL_SENSOR with HIL_ACTUATOR_CONTROLS from a script: a function of the
exchange count that returns a controls row, or ``None`` to stay silent
(as PX4 does while it boots), or the string ``"hold"`` to withhold the
answer until :meth:`release` is called. ``stamp`` turns (count, the sensor
message's time_usec) into the answer's time_usec (PX4 echoes the time), and
``noise`` gives bytes to send just before each answer (a noisy link).
``api`` (a :class:`nexus.px4.scripted_api.ScriptedApi`) plays PX4's MAVLink
API stream on the peer's clock: it hears of each sensor message before the
answer goes out. ``gcs`` (a :class:`nexus.px4.scripted_gcs.ScriptedGcsLink`)
plays PX4's ground-station link the same way, and hears of each ground truth.
``mav_type`` is the MAV_TYPE its HEARTBEAT says (2, a quadrotor, as ``none_iris``; 1 for a fixed wing).
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager

from pymavlink.dialects.v20 import common as mavlink

from nexus.px4.packer import x25


class ScriptedPx4(threading.Thread):
    def __init__(self, port: int, script: Callable[[int], object], *, connect_after: float = 0.0,
                 disconnect_after: int | None = None, garbage_at: int | None = None,
                 stamp: Callable[[int, int], int] | None = None, noise: Callable[[int], bytes] | None = None,
                 api=None, gcs=None, mav_type: int = 2):
        super().__init__(daemon=True)
        self.mav_type = int(mav_type)
        self.port, self.script = port, script
        self.connect_after = connect_after
        self.disconnect_after = disconnect_after
        self.garbage_at = garbage_at
        self.stamp, self.noise = stamp, noise
        self.api = api
        #: PX4's ground-station link (a :class:`nexus.px4.scripted_gcs.ScriptedGcsLink`), on the peer's clock too.
        self.gcs = gcs
        self.mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=1)
        self.received: list[tuple[float, object]] = []
        self.sensors = 0
        self.errors: list[str] = []
        self.released = threading.Event()
        self.holding = threading.Event()
        self.stop = threading.Event()
        self.sock: socket.socket | None = None

    def release(self) -> None:
        self.released.set()

    @contextmanager
    def running(self):
        """Start the peer, and stop it and wait for its thread on the way out, whatever happened inside."""
        self.start()
        try:
            yield self
        finally:
            self.stop.set()
            self.join(timeout=5)

    def _answer(self, time_usec: int, row) -> None:
        # PX4's mode: custom (1), plus armed (128) as its commander has it (the API's toy when there is one).
        armed = self.api.armed if self.api is not None else self.gcs is None or self.gcs.armed
        message = self.mav.hil_actuator_controls_encode(time_usec, [float(x) for x in row], 129 if armed else 1, 1)
        self.sock.sendall(message.pack(self.mav))

    def run(self) -> None:
        time.sleep(self.connect_after)
        deadline = time.monotonic() + 30.0
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=1.0)
                break
            except OSError:
                if time.monotonic() > deadline or self.stop.is_set():
                    self.errors.append("could not connect")
                    return
                time.sleep(0.01)
        self.sock.settimeout(0.2)
        # What PX4 sends on connecting: a request for ground truth every 5 ms, and a heartbeat.
        self.sock.sendall(self.mav.command_long_encode(0, 0, 511, 0, 115, 5000, 0, 0, 0, 0, 0).pack(self.mav))
        self.sock.sendall(self.mav.heartbeat_encode(self.mav_type, 12, 0, 0, 3).pack(self.mav))
        try:
            self._serve()
        finally:
            self.sock.close()
            if self.api is not None:
                self.api.close()
            if self.gcs is not None:
                self.gcs.close()

    def _serve(self) -> None:
        parser = mavlink.MAVLink(None)
        while not self.stop.is_set():
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            if not data:
                return
            for message in parser.parse_buffer(data) or []:
                self.received.append((time.monotonic(), message))
                if self.gcs is not None and message.get_type() == "HIL_STATE_QUATERNION":
                    self.gcs.on_truth(message)
                if message.get_type() != "HIL_SENSOR":
                    continue
                self.sensors += 1
                if self.api is not None:
                    self.api.on_sensor(message.time_usec)
                if self.gcs is not None:
                    self.gcs.on_sensor(message.time_usec)
                if self.garbage_at == self.sensors:
                    self.sock.sendall(b"\xfd\x09\x00\x00\x00\x01\x01\x93\x00\x00garbage!!\x00\x00")
                    self.sock.sendall(self.mav.heartbeat_encode(2, 12, 0, 0, 3).pack(self.mav))
                if self.disconnect_after is not None and self.sensors >= self.disconnect_after:
                    self.sock.shutdown(socket.SHUT_RDWR)
                    return
                row = self.script(self.sensors)
                if isinstance(row, str) and row == "hold":
                    self.holding.set()
                    self.released.wait(10.0)
                    row = [0.0] * 16
                if row is None:
                    continue
                if self.noise is not None:
                    self.sock.sendall(self.noise(self.sensors))
                stamp = message.time_usec if self.stamp is None else self.stamp(self.sensors, message.time_usec)
                self._answer(stamp, row)

    def of_type(self, kind: str) -> list:
        return [m for _, m in self.received if m.get_type() == kind]


HIL_SENSOR_ID = 107
HIL_ACTUATOR_CONTROLS_ID = 93
MAVLINK2_MAGIC = 0xFD
MAVLINK2_HEADER = 10
#: A message's ``time_usec``, the first field of both payloads here.
_TIME = struct.Struct("<Q")


class AnswerTemplate:
    """One HIL_ACTUATOR_CONTROLS frame packed once; per answer only its time and checksum change.

    The checksum is computed as the dialect's own packer does: MAVLink's x25
    (:func:`nexus.px4.packer.x25`) over the frame after its start byte (header
    and payload), then the message's CRC_EXTRA, taken from the dialect
    (``mavlink_map[93]``) rather than copied, so they cannot drift apart.
    """

    def __init__(self, mav, row):
        self.frame = bytearray(mav.hil_actuator_controls_encode(1, [float(x) for x in row], 129, 1).pack(mav))
        self.length = self.frame[1]
        self.crc_extra = bytes([mavlink.mavlink_map[HIL_ACTUATOR_CONTROLS_ID].crc_extra])
        if self.frame[0] != MAVLINK2_MAGIC or self.frame[2] != 0:
            raise ValueError("the answer template must be an unsigned MAVLink 2 frame")

    def answer(self, time_usec: int) -> bytes:
        _TIME.pack_into(self.frame, MAVLINK2_HEADER, time_usec)  # time_usec is the payload's first field
        end = MAVLINK2_HEADER + self.length
        struct.pack_into("<H", self.frame, end, x25(bytes(self.frame[1:end]) + self.crc_extra))
        return bytes(self.frame)


def answer_at_once(port: int, row) -> None:
    """Answer every HIL_SENSOR on ``port`` with ``row``, as fast as this process can.

    Frames are found by their MAVLink 2 header and the answer echoes the sensor
    message's ``time_usec`` (its payload's first 8 bytes) without decoding the
    rest: the benchmark's stand-in for a PX4 that takes no time.
    """
    mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=1)
    sock = socket.create_connection(("127.0.0.1", port), timeout=30.0)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(None)
    # As PX4 does on connecting: ground truth every 5 ms, please, and a heartbeat.
    sock.sendall(mav.command_long_encode(0, 0, 511, 0, 115, 5000, 0, 0, 0, 0, 0).pack(mav))
    sock.sendall(mav.heartbeat_encode(2, 12, 0, 0, 3).pack(mav))
    template = AnswerTemplate(mav, row)
    buffer = b""
    while True:
        try:
            data = sock.recv(65536)
        except OSError:  # the simulator went away: the run (or the benchmark) is over
            return
        if not data:
            return
        buffer = buffer + data if buffer else data
        replies = []
        at, end = 0, len(buffer)
        while end - at >= MAVLINK2_HEADER + 2:
            if buffer[at] != MAVLINK2_MAGIC:
                at += 1
                continue
            size = MAVLINK2_HEADER + buffer[at + 1] + 2 + (13 if buffer[at + 2] & 0x01 else 0)
            if end - at < size:
                break
            if buffer[at + 7] == HIL_SENSOR_ID and buffer[at + 8] == 0 and buffer[at + 9] == 0:
                replies.append(template.answer(_TIME.unpack_from(buffer, at + MAVLINK2_HEADER)[0]))
            at += size
        buffer = buffer[at:]
        if replies:
            sock.sendall(replies[0] if len(replies) == 1 else b"".join(replies))


def main(argv=None) -> None:
    """Run a peer in its own process that answers every sensor message at once with one row."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, required=True, help="TCP port the simulator listens on")
    parser.add_argument("--row", type=float, nargs="+", default=[0.0], help="controls to answer with")
    args = parser.parse_args(argv)
    answer_at_once(args.port, [*args.row, *[0.0] * (16 - len(args.row))])


if __name__ == "__main__":
    main()
