"""The simulator side of PX4's MAVLink link: a TCP server speaking MAVLink 2.

PX4 (``simulator_mavlink``) connects as a TCP client, by default to port
4560. The link listens when it is opened (so a busy port fails the build),
accepts PX4 on first use with a timeout, and then sends and receives whole
MAVLink messages. A message that fails to parse is counted and logged, never
fatal; a closed connection is a :class:`LinkError`.
"""

from __future__ import annotations

import logging
import select
import socket
import time
from collections import deque

from pymavlink.dialects.v20 import common as mavlink

from nexus.core.errors import NexusError

log = logging.getLogger("nexus")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 4560


class LinkError(NexusError):
    """The PX4 link failed: no connection in time, no answer in time, or the peer went away."""


class MavlinkLink:
    """One TCP connection to PX4, listened for on ``host:port``."""

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, system_id: int = 1, component_id: int = 51):
        self.host, self.port = host, port
        self.mav = mavlink.MAVLink(None, srcSystem=system_id, srcComponent=component_id)
        self.mav.robust_parsing = True
        self.server: socket.socket | None = None
        self.connection: socket.socket | None = None
        self.peer: tuple | None = None
        self.inbox: deque = deque()
        self.outbox: list[bytes] = []
        self.bad_messages = 0
        self.sent = 0
        self.received = 0

    # -- lifetime ------------------------------------------------------------------------

    def listen(self) -> None:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            server.bind((self.host, self.port))
        except OSError as error:
            server.close()
            raise LinkError(
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
        log.info("waiting for PX4 to connect on tcp %s:%d (up to %.0f s)...", self.host, self.port, timeout)
        self.server.settimeout(timeout)
        try:
            connection, self.peer = self.server.accept()
        except socket.timeout:
            raise LinkError(
                f"PX4 did not connect to tcp {self.host}:{self.port} within {timeout:.0f} s; start PX4 SITL "
                "(PX4_SIM_MODEL=none_iris ./bin/px4) or raise --px4-connect-timeout"
            ) from None
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection.setblocking(False)
        self.connection = connection
        log.info("PX4 connected from %s:%d", *self.peer[:2])

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
        self.outbox.append(message.pack(self.mav))
        self.sent += 1

    def flush(self) -> None:
        if self.outbox:
            data = b"".join(self.outbox)
            self.outbox.clear()
            self._write(data)

    def send(self, message) -> None:
        """Send one message (and any queued before it) now."""
        self.queue(message)
        self.flush()

    def _write(self, data: bytes) -> None:
        """Write all of ``data`` (the socket is non-blocking: wait while its buffer is full)."""
        view = memoryview(data)
        while view:
            try:
                view = view[self.connection.send(view):]
            except (BlockingIOError, InterruptedError):
                select.select([], [self.connection], [], 1.0)
            except OSError as error:
                raise LinkError(f"PX4 link to {self.peer}: send failed ({error.strerror}); PX4 went away") from error

    def _read_available(self, wait: float) -> None:
        """Read what has arrived, waiting up to ``wait`` [s] for the first byte."""
        readable, _, _ = select.select([self.connection], [], [], max(wait, 0.0))
        if not readable:
            return
        try:
            data = self.connection.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            raise LinkError(f"PX4 link to {self.peer} broke: {error.strerror}") from error
        if not data:
            raise LinkError(f"PX4 closed the link ({self.peer[0]}:{self.peer[1]}); the run cannot go on")
        for message in self.mav.parse_buffer(data) or []:
            if message.get_type() == "BAD_DATA":
                self.bad_messages += 1
                log.warning("PX4 link: dropped a malformed message (%s)", getattr(message, "reason", "bad data"))
                continue
            self.received += 1
            self.inbox.append(message)

    def poll(self) -> list:
        """Every message that has arrived, without waiting."""
        self._read_available(0.0)
        messages = list(self.inbox)
        self.inbox.clear()
        return messages

    def wait_for(self, kind: str, timeout: float, accept=None) -> tuple[object, list]:
        """Block until a ``kind`` message that ``accept`` takes arrives; return it and the others before it."""
        deadline = time.monotonic() + timeout
        others = []
        while True:
            while self.inbox:
                message = self.inbox.popleft()
                if message.get_type() == kind and (accept is None or accept(message)):
                    return message, others
                others.append(message)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LinkError(
                    f"PX4 sent no {kind} within {timeout:.1f} s (lockstep stalled); is PX4 still running? "
                    "raise --px4-answer-timeout if it is only slow"
                )
            self._read_available(remaining)
