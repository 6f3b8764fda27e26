"""The scripted PX4's API stream: a toy autopilot on loopback UDP, for the mission's tests.

It plays what PX4's onboard MAVLink instance does, on the scripted peer's
clock (the ``time_usec`` of the last ``HIL_SENSOR``), driven by
:meth:`ScriptedApi.on_sensor` from the peer before each answer: a heartbeat
every second, ``HOME_POSITION`` (stamped when home was set) every
``home_every_s``, ``GLOBAL_POSITION_INT`` and ``ATTITUDE`` at
``telemetry_hz``. Commands are read by a thread of their own, as PX4's
receiver thread does: a ``TIMESYNC`` request is answered at once, and each
command is noted with the clock it arrived at (``commands``) and
acknowledged ``ack_after`` sensor messages later, as PX4's commander does.
The toy vehicle arms, climbs at 1 m/s to the takeoff altitude, turns at once,
descends at 1 m/s after NAV_LAND and disarms on the ground.

Offboard, as PX4 does it as far as the offboard tests need: each
``SET_ATTITUDE_TARGET`` to its system is noted with the clock it arrived at
(``setpoints``, and its bytes in ``setpoint_bytes``; one to another system is
dropped and counted, ``foreign_setpoints``); ``MAV_CMD_DO_SET_MODE`` to custom main mode 6 (offboard) is
refused (``MAV_RESULT_TEMPORARILY_REJECTED``, with PX4's words) unless
setpoints have come for more than ``offboard_lead_s`` of its clock, and
otherwise puts the heartbeat's custom mode in offboard. Its rate controller
is a toy: :meth:`offboard_row`, armed in offboard, gives every motor the last
setpoint's thrust (the rates are only noted), which a
:class:`~nexus.px4.scripted_peer.ScriptedPx4` script sends back as its answer.

Faults for the tests: ``refuse`` ({command: (MAV_RESULT, text)}), ``never_ack``
(commands confirmed but never acknowledged), ``late_s`` (wall delay of every
answer to a command, TIMESYNC included), ``flood`` (datagrams sent in one burst
just before every acknowledgement), ``say`` ({PX4 time [s]: text}: a STATUSTEXT sent at the first sensor
message at or after that time, after that message's telemetry).

A mission upload (``MISSION_COUNT``, then ``MISSION_ITEM_INT`` for each
``MISSION_REQUEST_INT``, then ``MISSION_ACK``) is answered at once, as PX4's
receiver does, and kept (``mission_items``); ``MAV_CMD_MISSION_START`` makes
the toy climb to the first item's altitude (it flies no more of the mission).
With ``mission_s`` set, a mission whose last item is ``NAV_LAND`` is flown in
that long [s of its clock] from the start: the toy is then on the ground and
disarms, as PX4 does after a landing (a plane's mission, whose flight it does
not model).

Data-link loss, as PX4 (main of 2026-03, read from its source and measured
against a real binary) detects it. Its MAVLink receiver thread counts a ground
station present while its last ``HEARTBEAT`` (MAV_TYPE_GCS) is at most
``GCS_TIMEOUT_US`` (2.5 s) old. It looks (``CheckHeartbeats``) when a
heartbeat comes and, by itself, at the end of a pass of its loop whose clock
is past 2.5 s and at least ``CHECK_EVERY_US`` (1.25 s) after its last look;
its passes come when a datagram arrives or its ``poll()`` times out after
``receiver_poll_s`` of wall time (PX4: 10 ms), so with nothing arriving a
look falls on whatever clock the wall-clock timeout finds. Each look marks
the link status changed; PX4's MAVLink main thread, on its clock, publishes
it on its next pass (the toy: the next sensor message) or when the last one
is 1 s old. The commander declares the link lost when the last status that
saw the ground station is more than ``dl_loss_s`` old (``COM_DL_LOSS_T``), and
says ``DATA_LINK_LOST_TEXT``. With an action (``dl_action = "land"``, ``NAV_DLL_ACT =
3``) it then says ``HOLD_TEXT`` 12 ms later, holds ``fail_act_s``
(``COM_FAIL_ACT_T``), says ``FAILSAFE_TEXT`` and lands (the toy: down at 1 m/s,
disarmed on the ground). A heartbeat after the loss: ``REGAINED_TEXT``.

PX4 sends its STATUSTEXTs to a MAVLink link only while its receiver's last
look saw a ground station there, and on its return those at most 5 s old; a
real PX4 with no ground station sends none. The toy does the same once a ground station's
heartbeat has come (before that it sends every text, for the tests that use
``say`` without one). Everything it says is also kept in ``log`` (PX4 time
[µs], level, text), which :meth:`write_log` writes as a ULog, as PX4 logs its
messages (:mod:`nexus.px4.scripted_log`).
"""

from __future__ import annotations

import math
import socket
import threading
import time

from pymavlink.dialects.v20 import common as mavlink

from nexus.px4.scripted_log import write_ulog

HOME = (473977420, 85455940, 488000)  # degE7, degE7, mm: PX4's default home
#: What PX4's commander says (its words) when the link is lost, when the failsafe's hold starts, when the action
#: follows, and when a ground station's heartbeat comes back.
DATA_LINK_LOST_TEXT = "Connection to ground station lost"
HOLD_TEXT = "Failsafe activated: entering Hold for {:g} seconds"
FAILSAFE_TEXT = "Failsafe activated"
REGAINED_TEXT = "GCS connection regained"
#: PX4's receiver counts a ground station present this long after its last heartbeat [µs]; its failsafe says it
#: holds this long after the loss [µs]; STATUSTEXTs older than this are not sent when a ground station returns [µs].
GCS_TIMEOUT_US = 2_500_000
#: PX4's receiver looks at its heartbeats by itself this long after its last look [µs]; its poll() timeout [s].
CHECK_EVERY_US = GCS_TIMEOUT_US // 2
RECEIVER_POLL_S = 0.01
HOLD_TEXT_AFTER_US = 12_000
STALE_TEXT_US = 5_000_000
MAV_TYPE_GCS = 6


class ScriptedApi:
    def __init__(self, api_port: int, *, home_at_s: float = 0.2, home_every_s: float = 0.5, telemetry_hz: float = 25.0,
                 ack_after: int = 3, refuse: dict | None = None, never_ack: tuple = (), late_s: float = 0.0,
                 flood: int = 0, heading_deg: float = 90.0, offboard_lead_s: float = 1.0, say: dict | None = None,
                 dl_loss_s: float = 10.0, dl_action: str | None = None, fail_act_s: float = 5.0,
                 receiver_poll_s: float = RECEIVER_POLL_S, system_id: int = 1, mission_s: float | None = None):
        self.target = ("127.0.0.1", api_port)
        self.home_at_us, self.home_every_us = int(home_at_s * 1e6), int(home_every_s * 1e6)
        self.telemetry_us = int(round(1e6 / telemetry_hz))
        self.ack_after, self.refuse, self.never_ack = ack_after, dict(refuse or {}), set(never_ack)
        self.late_s, self.flood, self.heading = late_s, flood, math.radians(heading_deg)
        #: PX4's MAV_SYS_ID (instance K: K + 1); like PX4, commands addressed to another system are dropped.
        self.system_id = int(system_id)
        self.foreign_commands = 0
        self.mav = mavlink.MAVLink(None, srcSystem=self.system_id, srcComponent=1)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.lock = threading.Lock()
        self.clock_us = 0
        self.sensors = 0
        #: (command id, the clock it arrived at [µs], the sensor count then).
        self.commands: list[tuple[int, int, int]] = []
        self.acks_sent: list[tuple[int, int]] = []
        self._acks: list[tuple[int, int, int]] = []  # (due sensor count, command, result)
        self._texts: list[str] = []
        self._say = sorted((int(round(t * 1e6)), text) for t, text in (say or {}).items())
        self.armed = False
        self.altitude = 0.0
        self.target_altitude = 0.0
        self.yaw = self.heading
        self.landing = False
        #: (clock [µs], sensor count, type_mask, (roll, pitch, yaw rate), thrust) of each SET_ATTITUDE_TARGET.
        self.setpoints: list[tuple[int, int, int, tuple, float]] = []
        #: Each such message as it came on the wire, and how many were addressed to another system (dropped).
        self.setpoint_bytes: list[bytes] = []
        self.foreign_setpoints = 0
        #: The custom main mode (6: offboard), and (param1, param2, clock [µs]) of each DO_SET_MODE.
        self.main_mode = 0
        self.mode_requests: list[tuple[float, float, int]] = []
        self.offboard_lead_us = int(offboard_lead_s * 1e6)
        self.last = {"heartbeat": None, "home": None, "telemetry": None}
        #: The clock [µs] each ground station's heartbeat arrived at; the loss timeout [µs]; the clock of each loss.
        self.gcs_heartbeats: list[int] = []
        self.dl_loss_us = int(round(dl_loss_s * 1e6))
        self.link_lost_at: list[int] = []
        #: NAV_DLL_ACT's action (None, or "land"), COM_FAIL_ACT_T [µs]; the clock of the last link status that saw
        #: the ground station; (clock, text) the failsafe says next.
        self.dl_action, self.fail_act_us = dl_action, int(round(fail_act_s * 1e6))
        self.gcs_seen_us: int | None = None
        #: PX4's receiver: its poll timeout [s], its last look [µs], what that look saw, and whether a status is due;
        #: the main thread's last status [µs]; the clock of each look ((clock, ground station seen)).
        self.receiver_poll_s = receiver_poll_s
        self._last_check_us = 0
        self.gcs_status = False
        self._status_changed = False
        self._status_us: int | None = None
        self.checks: list[tuple[int, bool]] = []
        self._failsafe_due: list[tuple[int, str]] = []
        #: Everything said: (clock [µs], level, text); and STATUSTEXTs waiting for a ground station, (clock, text).
        self.log: list[tuple[int, str, str]] = []
        self._held: list[tuple[int, str]] = []
        #: An uploaded mission: its size, (seq, command, frame, param1..4, x, y, z) per item, the clock it came at.
        self.mission_count = 0
        #: A landing mission's length [µs of its clock] (None: the toy only climbs), and the clock it started at.
        self.mission_us = None if mission_s is None else int(round(mission_s * 1e6))
        self.mission_start_us: int | None = None
        self.mission_items: list[tuple] = []
        self.mission_upload_clock: int | None = None
        self._link_lost = False
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._receive, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()

    def _send(self, message) -> None:
        self.sock.sendto(message.pack(self.mav), self.target)
        self.mav.seq = (self.mav.seq + 1) % 256  # as MAVLink.send does

    # -- PX4's receiver thread ---------------------------------------------------------------

    def _receive(self) -> None:
        parser = mavlink.MAVLink(None)
        self.sock.settimeout(self.receiver_poll_s)
        while not self.stop.is_set():
            try:
                data = self.sock.recv(65536)
            except (TimeoutError, socket.timeout):
                data = b""
            except OSError:
                return
            self._take(parser, data)
            with self.lock:  # the end of a pass: PX4's own look at its heartbeats, if one is due
                self._check_heartbeats(self.clock_us, force=False)

    def _check_heartbeats(self, clock_us: int, force: bool) -> None:
        """PX4's receiver's look at its heartbeats (CheckHeartbeats): none until its clock is past 2.5 s; on a
        heartbeat (``force``), else only 1.25 s after its last look."""
        if clock_us <= GCS_TIMEOUT_US:
            return
        if force or clock_us >= self._last_check_us + CHECK_EVERY_US:
            self.gcs_status = bool(self.gcs_heartbeats) and clock_us <= self.gcs_heartbeats[-1] + GCS_TIMEOUT_US
            self._last_check_us = clock_us
            self._status_changed = True
            self.checks.append((clock_us, self.gcs_status))

    def _take(self, parser, data: bytes) -> None:
        """Each message of one datagram, in order, as PX4's receiver handles them."""
        if not data:
            return
        for message in parser.parse_buffer(data) or []:
            if self.late_s:
                time.sleep(self.late_s)
            kind = message.get_type()
            if kind == "TIMESYNC" and message.tc1 == 0:
                with self.lock:
                    self._send(self.mav.timesync_encode(self.clock_us * 1000, message.ts1))
            elif kind in ("MISSION_COUNT", "MISSION_ITEM_INT"):
                with self.lock:
                    self._take_mission(message)
            elif kind == "HEARTBEAT" and message.type == MAV_TYPE_GCS:
                with self.lock:
                    self.gcs_heartbeats.append(self.clock_us)
                    if self._link_lost:
                        self._link_lost = False
                        self._say_now(REGAINED_TEXT, "info")
                    self._check_heartbeats(self.clock_us, force=True)
            elif kind == "SET_ATTITUDE_TARGET" and message.target_system not in (0, self.system_id):
                self.foreign_setpoints += 1  # PX4 takes an attitude target only for its own system (or all)
            elif kind == "SET_ATTITUDE_TARGET":
                with self.lock:
                    self.setpoint_bytes.append(bytes(message.get_msgbuf()))
                    self.setpoints.append((self.clock_us, self.sensors, message.type_mask,
                                           (message.body_roll_rate, message.body_pitch_rate, message.body_yaw_rate),
                                           message.thrust))
            elif kind in ("COMMAND_LONG", "COMMAND_INT") and message.target_system not in (0, self.system_id):
                self.foreign_commands += 1
            elif kind in ("COMMAND_LONG", "COMMAND_INT"):
                with self.lock:
                    self.commands.append((message.command, self.clock_us, self.sensors))
                    result, text = self.refuse.get(message.command, self._mode_result(message))
                    if text:
                        self._say_now(text, "critical")
                    if message.command not in self.never_ack:
                        self._acks.append((self.sensors + self.ack_after, message.command, result))
                    if result == 0:
                        self._act(message)

    def _take_mission(self, message) -> None:
        """PX4's mission upload, as its receiver does it: ask for each item in turn, then acknowledge."""
        sender = (message.get_srcSystem(), message.get_srcComponent())
        if message.get_type() == "MISSION_COUNT":
            self.mission_count, self.mission_items = message.count, []
            self.mission_upload_clock = self.clock_us
        else:
            self.mission_items.append((message.seq, message.command, message.frame, message.param1, message.param2,
                                       message.param3, message.param4, message.x, message.y, message.z))
        if len(self.mission_items) < self.mission_count:
            self._send(self.mav.mission_request_int_encode(*sender, len(self.mission_items)))
        else:
            self._send(self.mav.mission_ack_encode(*sender, 0))

    def _mode_result(self, message) -> tuple[int, str | None]:
        """PX4's answer to a switch to offboard: refused until setpoints have come for the lead time."""
        if message.command != 176 or int(message.param2) != 6:
            return 0, None
        if not self.setpoints or self.clock_us - self.setpoints[0][0] <= self.offboard_lead_us:
            return 1, "Switching to Offboard is currently not available"
        return 0, None

    def offboard_row(self) -> list[float]:
        """The toy's answer in offboard: every motor at the last setpoint's thrust when armed, else zeros."""
        with self.lock:
            on = self.armed and self.main_mode == 6 and self.setpoints
            return [self.setpoints[-1][4] if on else 0.0] * 4 + [0.0] * 12

    def _act(self, message) -> None:
        if message.command == 176:
            self.mode_requests.append((message.param1, message.param2, self.clock_us))
            self.main_mode = int(message.param2)
        elif message.command == 400:
            self.armed = message.param1 == 1.0
        elif message.command == 22:
            self.target_altitude = message.param7 - HOME[2] * 1e-3
        elif message.command == 192:
            self.yaw = message.param4
        elif message.command == 21:
            self.landing = True
        elif message.command == 300 and self.mission_items:  # mission mode: the toy climbs to the takeoff item
            self.main_mode = 4
            self.target_altitude = self.mission_items[0][9]
            self.mission_start_us = self.clock_us

    # -- PX4's threads on its clock ----------------------------------------------------------

    def on_sensor(self, time_usec: int) -> None:
        """PX4's clock moved to ``time_usec``: fly the toy vehicle and send what is due."""
        with self.lock:
            dt = (time_usec - self.clock_us) * 1e-6 if self.clock_us else 0.0
            self.clock_us, self.sensors = time_usec, self.sensors + 1
            if self.mission_us is not None and self.mission_start_us is not None and self.mission_items and \
                    self.mission_items[-1][1] == 21 and time_usec >= self.mission_start_us + self.mission_us:
                self.armed, self.altitude, self.mission_start_us = False, 0.0, None  # landed: PX4 disarms
            if self.armed and not self.landing:
                self.altitude = min(self.target_altitude, self.altitude + dt)
            elif self.landing:
                self.altitude = max(0.0, self.altitude - dt)
                if self.altitude == 0.0:
                    self.armed = self.landing = False
            if self._due("heartbeat", 1_000_000):
                self._send(self.mav.heartbeat_encode(2, 12, (128 if self.armed else 0) | (1 if self.main_mode else 0),
                                                     self.main_mode << 16, 3))
            if time_usec >= self.home_at_us and self._due("home", self.home_every_us):
                q = [math.cos(self.heading / 2), 0.0, 0.0, math.sin(self.heading / 2)]
                self._send(self.mav.home_position_encode(*HOME, 0, 0, 0, q, 0, 0, 0, self.home_at_us))
            if self._due("telemetry", self.telemetry_us):
                ms = time_usec // 1000
                self._send(self.mav.attitude_encode(ms, 0.0, 0.0, self.yaw, 0.0, 0.0, 0.0))
                self._send(self.mav.global_position_int_encode(ms, HOME[0], HOME[1], HOME[2] + int(self.altitude * 1000),
                                                               int(self.altitude * 1000), 0, 0, 0, 0))
            self._watch_link(time_usec)
            while self._say and self._say[0][0] <= time_usec:
                self._say_now(self._say.pop(0)[1], "critical")
            present = self.gcs_present()
            if present or not self.gcs_heartbeats:  # PX4 sends STATUSTEXT only to a link with a ground station
                self._texts = [t for c, t in self._held if time_usec - c <= STALE_TEXT_US] + self._texts
                self._held.clear()
                for text in self._texts:
                    self._send(self.mav.statustext_encode(3, text.encode()))
            else:
                self._held += [(time_usec, text) for text in self._texts]
            self._texts.clear()
            due = [a for a in self._acks if a[0] <= self.sensors]
            self._acks = [a for a in self._acks if a[0] > self.sensors]
            for _, command, result in due:
                for k in range(self.flood):
                    self._send(self.mav.statustext_encode(6, f"flood {k}".encode()))
                self._send(self.mav.command_ack_encode(command, result))
                self.acks_sent.append((command, result))

    def gcs_present(self) -> bool:
        """Whether PX4 counts a ground station present now: its receiver's last look saw one (a heartbeat at most
        2.5 s old then)."""
        return self.gcs_status

    def _watch_link(self, time_usec: int) -> None:
        """PX4's link status (after a look of the receiver, else once a second), its commander's loss of the link,
        and the failsafe after it."""
        if self._status_changed or time_usec - (self._status_us or 0) >= 1_000_000:
            self._status_changed = False  # the MAVLink main thread publishes the link status
            self._status_us = time_usec
            if self.gcs_status:
                self.gcs_seen_us = time_usec
        if self.gcs_seen_us is not None and not self._link_lost and time_usec - self.gcs_seen_us > self.dl_loss_us:
            self._link_lost = True  # PX4: the last status that saw a ground station is older than COM_DL_LOSS_T
            self.link_lost_at.append(time_usec)
            self._say_now(DATA_LINK_LOST_TEXT, "info")
            if self.dl_action is not None and self.armed:
                hold = HOLD_TEXT.format(self.fail_act_us * 1e-6)
                self._failsafe_due = [(time_usec + HOLD_TEXT_AFTER_US, hold),
                                      (time_usec + HOLD_TEXT_AFTER_US + self.fail_act_us, FAILSAFE_TEXT)]
        while self._failsafe_due and self._failsafe_due[0][0] <= time_usec:
            text = self._failsafe_due.pop(0)[1]
            self._say_now(text, "critical")
            if text == FAILSAFE_TEXT and self.dl_action == "land":
                self.landing = True

    def _say_now(self, text: str, level: str) -> None:
        self.log.append((self.clock_us, level, text))
        self._texts.append(text)

    def write_log(self, path) -> None:
        """Write what the toy said as a ULog, as PX4 logs its messages."""

        with self.lock:
            write_ulog(path, list(self.log))

    def _due(self, what: str, every_us: int) -> bool:
        last = self.last[what]
        if last is not None and self.clock_us - last < every_us:
            return False
        self.last[what] = self.clock_us
        return True
