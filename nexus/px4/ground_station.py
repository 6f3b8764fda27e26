"""A ground station (QGroundControl, a joystick) flying PX4 through Nexus: its inputs land on ticks, recorded.

PX4 SITL talks to a ground station from its ground-station MAVLink instance on
UDP 18570 + K (instance K). Until a datagram from this machine reaches that
port it sends to 127.0.0.1:14550, where QGroundControl listens; the first
local sender becomes its partner and everything goes there from then on (PX4's
``mavlink_receiver``, read from its source). The relay takes that place, so
the ground station's traffic passes through Nexus::

    QGroundControl (udp 14550)  <->  relay  <->  PX4's ground-station link (udp 18570 + K)

It claims PX4's port by sending it ``TIMESYNC`` requests (from a thread, every
:data:`CLAIM_EVERY_S`, from the build until PX4 first answers), so PX4 answers
Nexus before a ground station already running can.

* **PX4 to the ground station**: everything, forwarded unchanged on every tick
  (heartbeats, telemetry, parameters, ``STATUSTEXT``), to the ground station's
  address (``--px4-gcs``, 127.0.0.1:14550 by default) and, once it has sent
  something, to the address it sends from. QGroundControl connects to whatever
  sends to its port, so nothing is set up on its side.
* **The ground station to PX4**: everything too, unchanged, but only between
  ticks. What came since the last tick goes to PX4 before the tick's
  ``HIL_SENSOR``, followed by a ``TIMESYNC`` request, and the clock holds until
  PX4 answers it. PX4's receiver handles one socket's datagrams in order and
  answers ``TIMESYNC`` at once, stamped with its clock, so the answer says PX4
  has taken them at the time of the tick before (``MANUAL_CONTROL`` is stamped
  with that time, ``manual_control_setpoint``): their first effect is on this
  tick's answer, whatever wall-clock moment they came at. Paced or not, a stick
  moved between two ticks takes effect on the second.

Each input is recorded with that tick: the record's ``manual_control`` holds the
last ``MANUAL_CONTROL`` taken (x, y, z, r, buttons as sent: PX4 reads
x, y, r in [-1000, 1000] and z, the throttle, in [0, 1000]), held until the next,
``gcs_messages`` counts the ground station's datagrams delivered on the tick,
and run.json's ``controller_stats.ground_station.commands`` lists every command
(``COMMAND_LONG``, ``COMMAND_INT``, ``SET_MODE``) with its tick. The open-loop
replay flies the recorded controls, so a hand-flown flight replays from its
record bit for bit, as every PX4 run does.
"""

from __future__ import annotations

import logging
import select
import socket
import threading
import time

from pymavlink.dialects.v20 import common as mavlink

from nexus.core.errors import BuildError
from nexus.px4.errors import CommandUnacknowledgedError

log = logging.getLogger("nexus")

#: Where QGroundControl listens by default, and PX4 instance 0's own end of its ground-station link.
DEFAULT_GCS = "127.0.0.1:14550"
PX4_GCS_PORT = 18570
#: Wall time [s] between the claim's TIMESYNC requests to PX4's ground-station port, and how long [s] it goes on.
CLAIM_EVERY_S = 0.005
CLAIM_FOR_S = 600.0
#: Sim time [s] after PX4's first answer by which PX4's ground-station link should have answered the claim.
CLAIM_WARN_S = 5.0
#: TIMESYNC ``ts1`` values of the claim and of each tick's barrier (their count added): far from a ground
#: station's own (nanoseconds of its clock) and from the mission commander's small numbers.
CLAIM_TS1 = 7 << 40
BARRIER_TS1 = 3 << 40
#: The relay's own MAVLink system and component (what PX4 answers its TIMESYNC requests to).
SYSTEM_ID, COMPONENT_ID = 245, 191
#: Commands run.json keeps (the first; a ground station sends a few dozen in a flight).
KEPT_COMMANDS = 1000
#: What counts as a command from the ground station (kept with its tick in run.json).
COMMANDS = ("COMMAND_LONG", "COMMAND_INT", "SET_MODE")


def parse_address(text: str, option: str = "--px4-gcs") -> tuple[str, int]:
    """``HOST:PORT`` -> (host, port); a one-line :class:`BuildError` naming ``option`` otherwise."""
    host, _, port = str(text).rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) <= 65535:
        raise BuildError(f"{option} {text}: give the ground station's HOST:PORT, e.g. {DEFAULT_GCS} "
                         "(QGroundControl's own port), or off to let it talk to PX4 directly")
    return host, int(port)


class GroundStationRelay:
    """Forwards between a ground station at ``gcs`` (``HOST:PORT``) and PX4's ground-station link on
    ``px4_host:px4_port``; the exchange calls :meth:`step` before each tick's ``HIL_SENSOR``."""

    def __init__(self, gcs: str = DEFAULT_GCS, px4_port: int = PX4_GCS_PORT, hold_timeout_s: float = 5.0,
                 px4_host: str = "127.0.0.1"):
        self.gcs_address = parse_address(gcs)
        self.px4_address = (px4_host, int(px4_port))
        self.hold_timeout_s = hold_timeout_s
        self.mav = mavlink.MAVLink(None, srcSystem=SYSTEM_ID, srcComponent=COMPONENT_ID)
        self.px4_parser, self.gcs_parser = mavlink.MAVLink(None), mavlink.MAVLink(None)  # one per stream
        self.px4_parser.robust_parsing = self.gcs_parser.robust_parsing = True
        self.px4_side = self._socket("127.0.0.1" if px4_host in ("127.0.0.1", "localhost") else "")
        gcs_host = self.gcs_address[0]
        self.gcs_side = self._socket("127.0.0.1" if gcs_host in ("127.0.0.1", "localhost") else "")
        #: Where the ground station sends from, once it has (QGroundControl: its port 14550).
        self.gcs_peer: tuple | None = None
        #: PX4's ground-station link has answered: it talks to the relay now.
        self.claimed = False
        self.claimed_tick: int | None = None
        self.warned = False
        #: The last MANUAL_CONTROL taken (x, y, z, r, buttons), and the commands [tick, time [s], type, id, params].
        self.sticks = [0, 0, 0, 0, 0]
        self.commands: list[list] = []
        self.commands_left_out = 0
        #: Counts: datagrams from PX4, forwarded to the ground station, from the ground station, delivered to PX4;
        #: MANUAL_CONTROLs; ticks that delivered something; clock holds and their wall time [s]; answers stamped
        #: with another time than the tick before.
        self.from_px4 = self.to_gcs = self.from_gcs = self.to_px4 = 0
        self.manual_controls = 0
        self.input_ticks = 0
        self.holds = 0
        self.hold_wall_s = 0.0
        self.clock_mismatches = 0
        self._pending: list[tuple[bytes, list]] = []  # the ground station's datagrams not yet delivered
        self._barrier = None
        self._confirmed: int | None = None  # PX4's time [µs] in the answer to the barrier
        self._stop = threading.Event()
        self._claimer = threading.Thread(target=self._claim, name="nexus-gcs-claim", daemon=True)
        self._claimer.start()

    @staticmethod
    def _socket(host: str) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            sock.bind((host, 0))
        except OSError as error:
            sock.close()
            raise BuildError(f"cannot open a UDP socket for the ground-station relay: {error.strerror}") from None
        sock.setblocking(False)
        return sock

    def close(self) -> None:
        self._stop.set()
        self._claimer.join(timeout=1.0)
        self.px4_side.close()
        self.gcs_side.close()

    # -- the claim -----------------------------------------------------------------------------

    def _claim(self) -> None:
        """TIMESYNC requests to PX4's ground-station port until PX4 answers one (:meth:`_from_px4` sees it)."""
        mav = mavlink.MAVLink(None, srcSystem=SYSTEM_ID, srcComponent=COMPONENT_ID)
        frame = mav.timesync_encode(0, CLAIM_TS1).pack(mav)
        ends = time.monotonic() + CLAIM_FOR_S
        while not self.claimed and not self._stop.wait(CLAIM_EVERY_S) and time.monotonic() < ends:
            try:
                self.px4_side.sendto(frame, self.px4_address)
            except OSError:  # PX4's port is not open yet (its ground-station link starts during its boot)
                pass

    # -- every tick ----------------------------------------------------------------------------

    def step(self, tick: int, time_usec: int, previous_usec: int, lockstep: bool) -> int:
        """Before ``tick``'s HIL_SENSOR (sim time ``time_usec`` [µs]; PX4's clock at ``previous_usec``): forward
        PX4's traffic, deliver the ground station's and hold until PX4 has it (in lockstep). The datagrams
        delivered on this tick."""
        self._from_px4(tick)
        self._from_gcs()
        if not self.claimed and lockstep and not self.warned and time_usec * 1e-6 >= CLAIM_WARN_S:
            self.warned = True
            log.warning("PX4's ground-station link (udp %s:%d) has not answered Nexus by %.1f s of sim time: it talks "
                        "to someone else (a ground station started before PX4?) or is on another port "
                        "(--px4-instance); the ground station's inputs then reach PX4 directly, unrecorded",
                        *self.px4_address, time_usec * 1e-6)
        if not self._pending or not self.claimed or not lockstep:
            return 0
        delivered, self._pending = self._pending, []
        for data, _ in delivered:
            self.px4_side.sendto(data, self.px4_address)
        self.to_px4 += len(delivered)
        self._barrier = BARRIER_TS1 + self.input_ticks
        self._confirmed = None
        self._send_px4(self.mav.timesync_encode(0, self._barrier))
        self._hold(tick, len(delivered))
        if self._confirmed != previous_usec:
            self.clock_mismatches += 1
            log.warning("PX4 took the ground station's input of tick %d at its time %s us, not at the tick before "
                        "(%d us)", tick, self._confirmed, previous_usec)
        self.input_ticks += 1
        for _, messages in delivered:
            for message in messages:
                self._note(message, tick, previous_usec)
        return len(delivered)

    def _send_px4(self, message) -> None:
        self.px4_side.sendto(message.pack(self.mav), self.px4_address)
        self.mav.seq = (self.mav.seq + 1) % 256  # as MAVLink.send does

    def _hold(self, tick: int, count: int) -> None:
        """Hold the clock until PX4 answers the barrier (forwarding its traffic meanwhile)."""
        self.holds += 1
        began = time.monotonic()
        deadline = began + self.hold_timeout_s
        try:
            while self._confirmed is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise CommandUnacknowledgedError(
                        f"PX4 did not confirm the ground station's {count} message(s) on tick {tick}: no TIMESYNC "
                        f"answer on its ground-station link (udp {self.px4_address[0]}:{self.px4_address[1]}) "
                        f"within {self.hold_timeout_s:g} s with the clock held; is PX4 still running?")
                select.select([self.px4_side], [], [], remaining)
                self._from_px4(tick)
        finally:
            self.hold_wall_s += time.monotonic() - began

    def _from_px4(self, tick: int) -> None:
        """Read what PX4 sent; forward it to the ground station, keep the answers to the relay's own requests."""
        while True:
            try:
                data, sender = self.px4_side.recvfrom(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # an ICMP error from a port not open yet
                continue
            if sender[1] != self.px4_address[1]:
                continue
            self.from_px4 += 1
            if not self.claimed:
                self.claimed, self.claimed_tick = True, tick
                log.info("PX4's ground-station link (udp %s:%d) talks to Nexus: a ground station on %s:%d flies "
                         "it through Nexus, each input on a tick", *self.px4_address, *self.gcs_address)
            own = False
            for message in self.px4_parser.parse_buffer(data) or []:
                if message.get_type() == "TIMESYNC" and message.tc1 != 0 and message.ts1 in (CLAIM_TS1, self._barrier):
                    own = True
                    if message.ts1 == self._barrier:
                        self._confirmed = message.tc1 // 1000
            if own:
                continue
            self._send_gcs(data)

    def _send_gcs(self, data: bytes) -> None:
        try:
            self.gcs_side.sendto(data, self.gcs_peer or self.gcs_address)
            self.to_gcs += 1
        except OSError:  # no ground station there (yet): PX4's traffic is dropped, as it would be
            pass

    def _from_gcs(self) -> None:
        while True:
            try:
                data, sender = self.gcs_side.recvfrom(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # an ICMP error from a ground station not listening (yet)
                continue
            self.gcs_peer = sender
            self.from_gcs += 1
            messages = [m for m in self.gcs_parser.parse_buffer(data) or [] if m.get_type() != "BAD_DATA"]
            self._pending.append((data, messages))

    def _note(self, message, tick: int, previous_usec: int) -> None:
        """Record one input delivered on ``tick`` (PX4 took it at ``previous_usec``)."""
        kind = message.get_type()
        if kind == "MANUAL_CONTROL":
            self.manual_controls += 1
            self.sticks = [message.x, message.y, message.z, message.r, message.buttons]
        elif kind in COMMANDS:
            if len(self.commands) >= KEPT_COMMANDS:
                self.commands_left_out += 1
                return
            if kind == "SET_MODE":
                what = [message.base_mode, message.custom_mode]
            else:
                what = [message.command, *(getattr(message, f"param{i}") for i in range(1, 5)),
                        *((message.x, message.y, message.z) if kind == "COMMAND_INT" else
                          (message.param5, message.param6, message.param7))]
            self.commands.append([tick, previous_usec * 1e-6, kind, *what])
            log.info("ground station: %s %s on tick %d", kind, what[0], tick)

    def stats(self) -> dict:
        return {"gcs": f"{self.gcs_address[0]}:{self.gcs_address[1]}", "px4_port": self.px4_address[1],
                "claimed_tick": self.claimed_tick, "from_px4": self.from_px4, "to_gcs": self.to_gcs,
                "from_gcs": self.from_gcs, "to_px4": self.to_px4, "input_ticks": self.input_ticks,
                "manual_controls": self.manual_controls, "holds": self.holds,
                "hold_wall_s": round(self.hold_wall_s, 3), "clock_mismatches": self.clock_mismatches,
                "commands": self.commands, "commands_left_out": self.commands_left_out}


def relayed(gcs: str | None, realtime: float | None, given: bool) -> str | None:
    """The ground station a PX4 run relays: ``gcs`` as given (``off`` or ``none``: none); when not given, a paced
    run (``realtime``) relays QGroundControl's port on this machine, :data:`DEFAULT_GCS`, and an unpaced one none.
    A malformed address is a one-line :class:`BuildError`."""
    if gcs is not None and gcs.strip().lower() in ("off", "none"):
        return None
    if gcs is None and realtime is not None and not given:
        gcs = DEFAULT_GCS
    if gcs is not None:
        parse_address(gcs)
    return gcs
