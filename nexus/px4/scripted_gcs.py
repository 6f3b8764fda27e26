"""The scripted PX4's ground-station link: PX4's MAVLink instance on UDP 18570 + K, as far as the tests need.

What it does as PX4 does (read from PX4's ``mavlink_receiver``, ``mavlink_timesync``
and ``ManualControl``): it sends to ``default_partner`` (127.0.0.1:14550) until a
datagram from this machine arrives, then to that datagram's sender for good; its
receiver thread takes each message when it arrives, in wall time, stamped with
the scripted peer's clock (the ``time_usec`` of the last ``HIL_SENSOR``, as PX4
stamps ``manual_control_setpoint`` with its lockstep clock); it answers a
``TIMESYNC`` request at once with that clock [ns] after the datagrams before it;
``MANUAL_CONTROL`` is taken when its ``target`` is 0 or this system. On its clock
(:meth:`on_sensor`, from the peer before each answer) it sends a heartbeat every
second and ``GLOBAL_POSITION_INT`` at ``telemetry_hz`` with the ground truth the
simulator last sent (``HIL_STATE_QUATERNION``), so a ground station sees the
vehicle move, and acknowledges commands.

The toy autopilot: ``COMMAND_LONG`` 400 arms or disarms; armed, :meth:`row`
gives each of the four motors the throttle stick, z / 1000 (a "manual" mode
with no controller at all); disarmed, zeros. Everything it took is kept:
``taken`` (clock [µs], sender's system id, message type), ``sticks`` (clock [µs],
x, y, z, r, buttons).
"""

from __future__ import annotations

import socket
import threading

from pymavlink.dialects.v20 import common as mavlink

#: PX4's default partner for its ground-station link: where QGroundControl listens.
DEFAULT_PARTNER = ("127.0.0.1", 14550)
ARM_DISARM = 400


class ScriptedGcsLink:
    def __init__(self, port: int = 0, *, default_partner: tuple[str, int] = DEFAULT_PARTNER, system_id: int = 1,
                 telemetry_hz: float = 10.0):
        self.default_partner = default_partner
        self.system_id = system_id
        self.telemetry_us = int(round(1e6 / telemetry_hz))
        self.mav = mavlink.MAVLink(None, srcSystem=system_id, srcComponent=1)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", port))
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        #: Where it sends: None until a local datagram came (then PX4 keeps that sender as its partner).
        self.partner: tuple | None = None
        self.clock_us = 0
        self.armed = False
        self.throttle = 0
        self.taken: list[tuple[int, int, str]] = []
        self.sticks: list[tuple[int, int, int, int, int, int]] = []
        self._acks: list[tuple[int, int]] = []
        self._truth = None
        self._last = {"heartbeat": None, "telemetry": None}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._receive, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()

    def _send(self, message) -> None:
        try:
            self.sock.sendto(message.pack(self.mav), self.partner or self.default_partner)
        except OSError:
            pass
        self.mav.seq = (self.mav.seq + 1) % 256

    # -- PX4's receiver thread -----------------------------------------------------------------

    def _receive(self) -> None:
        parser = mavlink.MAVLink(None)
        self.sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                data, sender = self.sock.recvfrom(65536)
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            with self.lock:
                if self.partner is None:
                    if sender[0] != "127.0.0.1":
                        continue  # PX4 waits 3 s for a local partner; the tests have only local ones
                    self.partner = sender
                for message in parser.parse_buffer(data) or []:
                    self._take(message)

    def _take(self, message) -> None:
        kind = message.get_type()
        if kind == "BAD_DATA":
            return
        self.taken.append((self.clock_us, message.get_srcSystem(), kind))
        if kind == "TIMESYNC" and message.tc1 == 0:
            self._send(self.mav.timesync_encode(self.clock_us * 1000, message.ts1))
        elif kind == "MANUAL_CONTROL" and message.target in (0, self.system_id):
            self.sticks.append((self.clock_us, message.x, message.y, message.z, message.r, message.buttons))
            self.throttle = message.z if 0 <= message.z <= 1000 else self.throttle
        elif kind == "COMMAND_LONG" and message.target_system in (0, self.system_id):
            if message.command == ARM_DISARM:
                self.armed = message.param1 == 1.0
            self._acks.append((message.command, 0 if message.command == ARM_DISARM else 3))  # 3: unsupported

    # -- PX4's threads on its clock ------------------------------------------------------------

    def on_truth(self, message) -> None:
        """The simulator's ground truth (``HIL_STATE_QUATERNION``), for the telemetry."""
        with self.lock:
            self._truth = message

    def on_sensor(self, time_usec: int) -> None:
        """PX4's clock moved to ``time_usec``: send what is due on it."""
        with self.lock:
            self.clock_us = time_usec
            if self._due("heartbeat", 1_000_000):
                self._send(self.mav.heartbeat_encode(2, 12, 128 if self.armed else 0, 0, 3))
            if self._due("telemetry", self.telemetry_us):
                truth = self._truth
                lat, lon, alt = (truth.lat, truth.lon, truth.alt) if truth is not None else (0, 0, 0)
                self._send(self.mav.global_position_int_encode(time_usec // 1000, lat, lon, alt, 0, 0, 0, 0, 0))
            for command, result in self._acks:
                self._send(self.mav.command_ack_encode(command, result))
            self._acks.clear()

    def _due(self, what: str, every_us: int) -> bool:
        last = self._last[what]
        if last is not None and self.clock_us - last < every_us:
            return False
        self._last[what] = self.clock_us
        return True

    def row(self) -> list[float]:
        """The toy's answer: armed, each of the four motors at the throttle stick (z / 1000); else zeros."""
        with self.lock:
            level = self.throttle / 1000.0 if self.armed else 0.0
        return [level] * 4 + [0.0] * 12
