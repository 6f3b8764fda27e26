"""PX4's MAVLink API stream over loopback UDP, read without losing a datagram to a full buffer.

PX4's onboard MAVLink instance sends telemetry to UDP 14540 (+ instance) and
takes commands back on the port it sends from. Over a flight it sends a few
hundred datagrams per second of sim time, thousands per second of wall time at
10x real time; a commander that reads only now and then loses them to a full
receive buffer, acknowledgements among them. This endpoint asks for a large
receive buffer, is drained on every tick, and counts what the kernel dropped
(Linux's ``SO_RXQ_OVFL``).
"""

from __future__ import annotations

import select
import socket
import struct

from pymavlink.dialects.v20 import common as mavlink

from nexus.core.errors import NexusError

#: Receive buffer asked for [bytes]; the kernel may cap it (net.core.rmem_max) and says what it gave.
RECEIVE_BUFFER = 8 * 1024 * 1024
#: Linux's socket option that stamps every datagram with the socket's running drop count.
SO_RXQ_OVFL = getattr(socket, "SO_RXQ_OVFL", 40)
_DROP_ANCILLARY = socket.CMSG_SPACE(4)


class ApiLinkError(NexusError):
    """The API stream's address is malformed or cannot be bound."""

    reason = "px4-mission-link"


def parse_url(url: str) -> tuple[str, int]:
    """``udpin:HOST:PORT`` (pymavlink's spelling) -> (host, port)."""
    kind, _, rest = url.partition(":")
    host, _, port = rest.rpartition(":")
    if kind != "udpin" or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ApiLinkError(f"PX4 mission URL {url!r} is not udpin:HOST:PORT; use e.g. udpin:127.0.0.1:14540 "
                           "(PX4 instance i sends its API stream to 14540 + i)")
    return host, int(port)


class ApiLink:
    """A UDP socket bound where PX4 sends its API stream; commands go back to PX4's sending port."""

    def __init__(self, url: str, system_id: int = 245, component_id: int = 190):
        self.url = url
        host, port = parse_url(url)
        self.mav = mavlink.MAVLink(None, srcSystem=system_id, srcComponent=component_id)
        self.parser = mavlink.MAVLink(None)
        self.parser.robust_parsing = True
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
        try:
            sock.setsockopt(socket.SOL_SOCKET, SO_RXQ_OVFL, 1)
            self.counts_drops = True
        except OSError:
            self.counts_drops = False
        try:
            sock.bind((host, port))
        except OSError as error:
            sock.close()
            raise ApiLinkError(f"cannot listen for PX4's API stream on udp {host}:{port}: {error.strerror}; another "
                               "mission or ground station holds it: stop it or pass another --px4-mission-url") from None
        sock.setblocking(False)
        self.sock = sock
        self.port = sock.getsockname()[1]
        #: Bytes of receive buffer the kernel granted (Linux reports twice what it books).
        self.buffer_bytes = sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        self.peer: tuple | None = None
        self.target_system = 0
        #: Datagrams read, and datagrams the kernel dropped on a full buffer.
        self.datagrams = 0
        self.kernel_drops = 0

    def close(self) -> None:
        self.sock.close()

    # -- receiving -------------------------------------------------------------------------

    def drain(self) -> list:
        """Every message that has arrived, without waiting."""
        messages = []
        while True:
            try:
                data, ancillary, _, sender = self.sock.recvmsg(65536, _DROP_ANCILLARY)
            except (BlockingIOError, InterruptedError):
                return messages
            self.datagrams += 1
            self.peer = sender
            for level, kind, value in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_RXQ_OVFL and len(value) >= 4:
                    self.kernel_drops = struct.unpack("=I", value[:4])[0]
            for message in self.parser.parse_buffer(data) or []:
                if message.get_type() == "BAD_DATA":
                    continue
                if not self.target_system and message.get_type() == "HEARTBEAT" and message.get_srcComponent() == 1:
                    self.target_system = message.get_srcSystem()
                messages.append(message)

    def wait(self, seconds: float) -> None:
        """Block up to ``seconds`` [s, wall] for a datagram."""
        select.select([self.sock], [], [], max(seconds, 0.0))

    # -- sending ---------------------------------------------------------------------------

    def send(self, message) -> None:
        if self.peer is None:
            raise ApiLinkError(f"nothing has come from PX4 on {self.url} yet, so there is no address to send to")
        self.sock.sendto(message.pack(self.mav), self.peer)
        self.mav.seq = (self.mav.seq + 1) % 256  # as MAVLink.send does: PX4 counts the gaps as losses

    def stats(self) -> dict:
        return {"datagrams": self.datagrams, "kernel_drops": self.kernel_drops if self.counts_drops else None,
                "receive_buffer_bytes": self.buffer_bytes}

