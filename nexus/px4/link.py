"""The simulator side of PX4's MAVLink link: a TCP server speaking MAVLink 2.

PX4 (``simulator_mavlink``) connects as a TCP client, by default to port
4560. The link listens when it is opened (so a busy port fails the build),
accepts PX4 on first use with a timeout, and then sends and receives whole
MAVLink messages. Bytes that are not a valid frame (noise, a cut frame, a
stray start byte with a bogus length) are counted and skipped, never fatal:
the reader resynchronises on the next frame whose checksum is right, so
garbage cannot swallow the valid answer behind it. A closed connection is a
:class:`LinkError`.
"""

from __future__ import annotations

import logging
import re
import select
import socket
import struct
import time
from collections import Counter, deque

from pymavlink.dialects.v20 import common as mavlink

from nexus.px4.errors import ConnectTimeoutError, LinkClosedError, LinkError, PortBusyError
from nexus.px4.packer import pack_message, x25

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "LinkError", "MavlinkLink", "FrameReader"]

log = logging.getLogger("nexus")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 4560

#: Start bytes of MAVLink 2 (0xFD) and MAVLink 1 (0xFE) frames.
_START = re.compile(b"[\xfd\xfe]")
_V2, _V1 = 0xFD, 0xFE
#: Header lengths (start byte included) and the CRC and MAVLink 2 signature lengths [bytes].
_HEADER = {_V2: 10, _V1: 6}
_CRC = 2
_SIGNATURE = 13
#: PX4's answer, read straight from its frame: its class in the dialect gives the id, payload layout and CRC_EXTRA.
_ANSWER = mavlink.MAVLink_hil_actuator_controls_message
_ANSWER_PAYLOAD = struct.Struct(_ANSWER.unpacker.format)
_ANSWER_CRC_EXTRA = bytes([_ANSWER.crc_extra])
#: Longest single blocking read [s] (the socket's SO_RCVTIMEO): a wait longer than this reads in slices
#: of it, each ending as soon as bytes arrive; shorter waits (the boot's) use select.
RECEIVE_SLICE_S = 0.05
_TIMEVAL = struct.Struct("@ll")
#: A wait for an answer first polls, without sleeping, until this long [s] after the send, while the peer's
#: answers have been coming that soon (:attr:`MavlinkLink.answer_latency_s`): a thread that sleeps is woken
#: tens of microseconds after the bytes arrive on a virtual machine, about as long as such a peer takes.
#: A slower peer (real PX4 takes hundreds of microseconds) gets no polling: it would only take a core from it.
POLL_WINDOW_S = 100e-6
#: Weight of the newest answer in the running mean of the answer latency.
LATENCY_WEIGHT = 0.1
#: Longest single wait in accept [s] while PX4 has not connected.
ACCEPT_SLICE_S = 0.2
_DONTWAIT = socket.MSG_DONTWAIT


class ActuatorAnswer:
    """A ``HIL_ACTUATOR_CONTROLS`` as the exchange uses it, unpacked without pymavlink's message object."""

    __slots__ = ("time_usec", "flags", "controls", "mode")

    def __init__(self, payload: bytes):
        values = _ANSWER_PAYLOAD.unpack(payload)
        self.time_usec, self.flags, self.controls, self.mode = values[0], values[1], values[2:18], values[18]

    @staticmethod
    def get_type() -> str:
        return "HIL_ACTUATOR_CONTROLS"


class FrameReader:
    """Cuts a byte stream into MAVLink messages, resynchronising after garbage.

    A candidate frame starts at a start byte. It is rejected at once when its
    header cannot be right (unknown message id, a length longer than the
    message, unknown incompatibility flags), and after decoding when its CRC
    (x25 with the message's CRC_EXTRA) fails; then only its start byte is
    skipped and the scan goes on from the next byte, so a valid frame that the
    bogus candidate overlapped is still found. A candidate still waiting for
    bytes is dropped as soon as a complete valid frame starts inside it.
    """

    def __init__(self, mav):
        self.mav = mav
        self.buffer = bytearray()
        #: Bytes skipped as garbage, and the stretches they came in.
        self.skipped_bytes = 0
        self.garbage_runs = 0
        self._in_garbage = False

    def feed(self, data: bytes) -> list:
        """Every whole message in the stream so far; a cut frame waits for the rest."""
        if not self.buffer and len(data) > _HEADER[_V2] and data[0] == _V2 and len(data) == _HEADER[_V2] + data[1] + _CRC \
                and data[2] == 0 and data[7] == _ANSWER.id and data[8] == 0 and data[9] == 0:
            # The usual case: the data is exactly one unsigned answer frame.
            status, message, _ = self._answer_at(data, 0, _HEADER[_V2], data[1], len(data))
            if status == "ok":
                self._in_garbage = False
                return [message]
        self.buffer += data
        buf = self.buffer
        messages = []
        pos = 0
        while pos < len(buf):
            match = _START.search(buf, pos)
            start = match.start() if match else len(buf)
            self._skip(start - pos)
            if match is None:
                pos = start
                break
            status, message, size = self._frame_at(buf, start)
            if status == "ok":
                messages.append(message)
                self._in_garbage = False
                pos = start + size
            elif status == "bad" or self._valid_frame_after(buf, start):
                self._skip(1)
                pos = start + 1
            else:  # a frame cut by the stream: wait for its rest
                pos = start
                break
        del buf[:pos]
        return messages

    def _skip(self, count: int) -> None:
        if count <= 0:
            return
        self.skipped_bytes += count
        if not self._in_garbage:
            self.garbage_runs += 1
            self._in_garbage = True

    def _frame_at(self, buf: bytearray, start: int):
        """("ok", message, size), ("bad", None, 0) or ("short", None, 0) for the frame at ``start``."""
        magic = buf[start]
        header = _HEADER[magic]
        if len(buf) - start < header:
            return "short", None, 0
        length = buf[start + 1]
        if magic == _V2:
            flags = buf[start + 2]
            if flags & ~mavlink.MAVLINK_IFLAG_SIGNED:
                return "bad", None, 0
            msgid = buf[start + 7] | buf[start + 8] << 8 | buf[start + 9] << 16
            size = header + length + _CRC + (_SIGNATURE if flags & mavlink.MAVLINK_IFLAG_SIGNED else 0)
        else:
            msgid = buf[start + 5]
            size = header + length + _CRC
        kind = mavlink.mavlink_map.get(msgid)
        # Unknown ids cannot be checked (pymavlink decodes them without a CRC), and no
        # message is longer than its full payload (MAVLink 2 only ever cuts trailing zeros).
        if kind is None or length > kind.unpacker.size:
            return "bad", None, 0
        if len(buf) - start < size:
            return "short", None, 0
        if msgid == _ANSWER.id and magic == _V2 and size == header + length + _CRC:
            return self._answer_at(buf, start, header, length, size)
        try:
            message = self.mav.decode(bytearray(buf[start : start + size]))
        except mavlink.MAVError:
            return "bad", None, 0
        return "ok", message, size

    @staticmethod
    def _answer_at(buf: bytearray, start: int, header: int, length: int, size: int):
        """The answer frame at ``start``: its CRC checked (x25 with the dialect's CRC_EXTRA), its payload unpacked."""
        if x25(bytes(buf[start + 1 : start + header + length]) + _ANSWER_CRC_EXTRA) \
                != buf[start + size - 2] | buf[start + size - 1] << 8:
            return "bad", None, 0
        payload = bytes(buf[start + header : start + header + length]).ljust(_ANSWER_PAYLOAD.size, b"\x00")
        return "ok", ActuatorAnswer(payload), size

    def _valid_frame_after(self, buf: bytearray, start: int) -> bool:
        """True when a complete frame with a good CRC starts after ``start`` (so the one at ``start`` is fake)."""
        for match in _START.finditer(buf, start + 1):
            if self._frame_at(buf, match.start())[0] == "ok":
                return True
        return False


class MavlinkLink:
    """One TCP connection to PX4, listened for on ``host:port``."""

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, system_id: int = 1, component_id: int = 51):
        self.host, self.port = host, port
        self.mav = mavlink.MAVLink(None, srcSystem=system_id, srcComponent=component_id)
        self.reader = FrameReader(self.mav)
        self.server: socket.socket | None = None
        self.connection: socket.socket | None = None
        self.peer: tuple | None = None
        self.inbox: deque = deque()
        self.outbox: list[bytes] = []
        self.sent = 0
        #: Fields sent saturated, ``MESSAGE.field``: times (nexus.px4.packer.saturate).
        self.saturated: Counter = Counter()
        self.received = 0
        self.connect_wait_s = 0.0
        #: Wall time [s] spent blocked waiting for PX4's bytes: PX4's share of a tick (and the OS's), not Nexus's.
        self.wait_s = 0.0
        #: When the last write went out (``time.perf_counter``), and a running mean of how long the first
        #: bytes after a write took to come [s] (starting above the polling window: no polling until measured).
        self.sent_at = 0.0
        self.answer_latency_s = 1.0

    @property
    def bad_messages(self) -> int:
        """Stretches of bytes that were not a valid frame (each one a malformed or stray message)."""
        return self.reader.garbage_runs

    # -- lifetime ------------------------------------------------------------------------

    def listen(self) -> None:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            server.bind((self.host, self.port))
        except OSError as error:
            server.close()
            raise PortBusyError(
                f"cannot listen for PX4 on tcp {self.host}:{self.port}: {error.strerror}; another simulator may "
                "hold the port: stop it or choose another with --px4-port"
            ) from error
        server.listen(1)
        self.server = server
        self.port = server.getsockname()[1]

    def accept(self, timeout: float) -> None:
        """Wait up to ``timeout`` [s] for PX4 to connect."""
        if self.connection is not None:
            return
        if self.server is None:
            self.listen()
        log.info("waiting for PX4 to connect on tcp %s:%d (up to %g s)...", self.host, self.port, timeout)
        # In slices: Python acts on a signal, or on an exception another thread raises in this one (Ray's
        # cancel of a sweep's run), only between calls, so one long accept would keep a cancelled run waiting.
        self.server.settimeout(min(timeout, ACCEPT_SLICE_S))
        began = time.monotonic()
        while True:
            try:
                connection, self.peer = self.server.accept()
                break
            except socket.timeout:
                if time.monotonic() - began >= timeout:
                    raise ConnectTimeoutError(
                        f"PX4 did not connect to tcp {self.host}:{self.port} within {timeout:g} s; start PX4 SITL "
                        "(PX4_SIM_MODEL=none_iris ./bin/px4) or raise --px4-connect-timeout"
                    ) from None
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # Blocking, with the kernel's own receive time-out: a wait for PX4's answer is one recv call that
        # sleeps until the bytes come (no failed read and select first); reads that must not wait and
        # every send pass MSG_DONTWAIT.
        connection.setblocking(True)
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _TIMEVAL.pack(0, int(RECEIVE_SLICE_S * 1e6)))
        self.connection = connection
        #: Wall time [s] the run waited for PX4 to connect: part of its wall time, not of its flight.
        self.connect_wait_s = time.monotonic() - began
        log.info("PX4 connected from %s:%d after %.1f s", *self.peer[:2], self.connect_wait_s)

    def close(self) -> None:
        for sock in (self.connection, self.server):
            if sock is not None:
                try:
                    sock.close()
                except OSError:
                    pass
        self.connection = self.server = None

    # -- messages -----------------------------------------------------------------------------

    def queue(self, message) -> None:
        """Hold ``message`` for the next :meth:`flush`: a tick's messages leave in one write."""
        self.outbox.append(pack_message(message, self.mav, self.saturated))
        self.mav.seq = (self.mav.seq + 1) % 256  # as MAVLink.send does: PX4 counts the gaps as losses
        self.sent += 1

    def queue_frame(self, frame: bytes) -> None:
        """Hold a packed frame (:class:`nexus.px4.packer.FramePacker`) for the next :meth:`flush`."""
        self.outbox.append(frame)
        self.sent += 1

    def flush(self) -> None:
        if self.outbox:
            data = b"".join(self.outbox)
            self.outbox.clear()
            self._write(data)
            self.sent_at = time.perf_counter()

    def send(self, message) -> None:
        """Send one message (and any queued before it) now."""
        self.queue(message)
        self.flush()

    def _write(self, data: bytes) -> None:
        """Write all of ``data`` (each send without waiting; select while the socket's buffer is full)."""
        view = memoryview(data)
        while view:
            try:
                view = view[self.connection.send(view, _DONTWAIT):]
            except (BlockingIOError, InterruptedError):
                select.select([], [self.connection], [], 1.0)
            except OSError as error:
                raise LinkClosedError(f"PX4 link to {self.peer}: send failed ({error.strerror}); PX4 went away") from error

    def _read_available(self, wait: float) -> None:
        """Read what has arrived, waiting up to ``wait`` [s] for the first byte.

        A wait of at least :data:`RECEIVE_SLICE_S` (the lockstep's wait for an answer) polls first while
        the peer answers within :data:`POLL_WINDOW_S`, then is one blocking ``recv`` bounded by the
        socket's receive time-out: it returns as soon as bytes arrive, and a slice that passes without
        any just returns (the caller's deadline decides). Shorter waits try a
        read first (PX4 often answered while this process was still in its send), then select.
        """
        try:
            if wait >= RECEIVE_SLICE_S:
                began = time.perf_counter()
                try:
                    data = self._poll_briefly(began) if self.answer_latency_s < POLL_WINDOW_S else None
                    if data is None:
                        data = self.connection.recv(65536)
                finally:
                    now = time.perf_counter()
                    self.wait_s += now - began
                if self.sent_at:
                    self.answer_latency_s += LATENCY_WEIGHT * (now - self.sent_at - self.answer_latency_s)
                    self.sent_at = 0.0
            else:
                data = self._read_short(wait)
                if data is None:
                    return
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            raise LinkClosedError(f"PX4 link to {self.peer} broke: {error.strerror}") from error
        if not data:
            raise LinkClosedError(f"PX4 closed the link ({self.peer[0]}:{self.peer[1]}); the run cannot go on")
        runs = self.reader.garbage_runs
        messages = self.reader.feed(data)
        if self.reader.garbage_runs > runs and runs == 0:
            log.warning("PX4 link: skipped bytes that were not a valid MAVLink frame (a malformed message); "
                        "later ones are counted in the run's controller_stats")
        self.received += len(messages)
        self.inbox.extend(messages)

    def _poll_briefly(self, now: float) -> bytes | None:
        """Bytes that arrive before the polling window after the last write closes, read without sleeping."""
        until = self.sent_at + POLL_WINDOW_S
        recv = self.connection.recv
        while True:
            try:
                return recv(65536, _DONTWAIT)
            except (BlockingIOError, InterruptedError):
                if now >= until:
                    return None
                now = time.perf_counter()

    def _read_short(self, wait: float) -> bytes | None:
        """Bytes that have arrived, or that arrive within ``wait`` [s]; None when none did."""
        try:
            return self.connection.recv(65536, _DONTWAIT)
        except (BlockingIOError, InterruptedError):
            if wait <= 0.0:
                return None
        began = time.perf_counter()
        readable, _, _ = select.select([self.connection], [], [], wait)
        self.wait_s += time.perf_counter() - began
        return self.connection.recv(65536, _DONTWAIT) if readable else None

    def poll(self) -> list:
        """Every message that has arrived, without waiting."""
        self._read_available(0.0)
        messages = list(self.inbox)
        self.inbox.clear()
        return messages

    def poll_pending(self) -> bool:
        """Whether a message has arrived (read without waiting; it stays for :meth:`receive`)."""
        if not self.inbox:
            self._read_available(0.0)
        return bool(self.inbox)

    def receive(self, deadline: float):
        """The next message, waiting until ``deadline`` (``time.monotonic()``) at most; None when none came."""
        while not self.inbox:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._read_available(remaining)
        return self.inbox.popleft()
