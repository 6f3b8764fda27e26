"""The built-in PX4 mission: take off, sweep yaw, land, each command due at a fixed time of PX4's clock.

Every command is due at a fixed time [µs] of PX4's clock, which lockstep makes
the sim clock: a fixed delay after the previous command went, the first at
``arm_at_s``. What PX4 reports over MAVLink only *gates* a command: the arm
needs a home position (a good EKF), the first yaw the takeoff altitude, the
end of the mission PX4 disarmed. A gate is nearly always open long before its
command is due; one still shut makes the command wait for it, and the command
then goes on the first tick after PX4's message arrived, a tick that is not
reproducible (the commander warns and counts it). Times are never taken from
PX4's messages: PX4 sends them from a thread outside its lockstep, at moments
that differ run to run (its stream rates are scaled by a factor it measures),
so a command timed from a message's arrival or stamp would differ too.

Defaults (the mission of the earlier, wall-clock commander, made fixed):

* arm at 6 s (PX4 reported home at 2.2 to 2.7 s in our flights and refuses to
  arm until its heading estimate has settled);
* takeoff 1 s later (PX4 disarms a vehicle that does not take off within
  COM_DISARM_PRFLT, 10 s), to ``altitude``;
* the yaws of the sweep (``DO_REPOSITION`` over home, yaw in radians, as PX4
  reads it): the first ``climb_s`` + ``hold_s`` after the takeoff (PX4 climbed
  2.5 m in about 7.5 s), each next ``yaw_hold_s`` later;
* land ``yaw_hold_s`` after the last yaw; the mission is over ``land_s`` after
  the landing (PX4 landed and disarmed about 8.5 s after NAV_LAND).

:class:`MissionPlan` only decides; :mod:`nexus.px4.commander` sends its
commands from inside the lockstep loop (and holds the clock until PX4 has
them), and :class:`Px4Mission` flies the same plan as an ordinary MAVLink
client beside a running sim (``nexus px4 mission``), without that guarantee.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from nexus.core.errors import NexusError
from nexus.px4.api_link import ApiLink
from nexus.px4.errors import ConnectTimeoutError

DEFAULT_URL = "udpin:127.0.0.1:14540"

MAV_CMD_NAV_TAKEOFF = 22
MAV_CMD_NAV_LAND = 21
MAV_CMD_COMPONENT_ARM_DISARM = 400
MAV_CMD_DO_REPOSITION = 192
MAV_DO_REPOSITION_FLAGS_CHANGE_MODE = 1
MAV_MODE_FLAG_SAFETY_ARMED = 128
#: PX4 takes COMMAND_INT positions only in this frame (altitude above mean sea level).
MAV_FRAME_GLOBAL_INT = 5
#: MAVLink command names, for messages.
COMMAND_NAMES = {MAV_CMD_NAV_TAKEOFF: "MAV_CMD_NAV_TAKEOFF", MAV_CMD_NAV_LAND: "MAV_CMD_NAV_LAND",
                 MAV_CMD_COMPONENT_ARM_DISARM: "MAV_CMD_COMPONENT_ARM_DISARM",
                 MAV_CMD_DO_REPOSITION: "MAV_CMD_DO_REPOSITION", 300: "MAV_CMD_MISSION_START"}
#: PX4's autopilot component.
AUTOPILOT_COMPONENT = 1


class MissionError(NexusError):
    """PX4 did not do what the mission asked within the mission's bounds."""

    reason = "px4-mission-failed"


@dataclass
class Command:
    """One mission command: what it is, when it is due [µs, PX4 time], and what became of it."""

    label: str
    command: int
    due_usec: int
    params: tuple
    #: COMMAND_INT (a position) rather than COMMAND_LONG.
    as_int: bool = False
    sent_tick: int | None = None
    sent_usec: int | None = None
    #: The final COMMAND_ACK result (0 accepted), and the PX4 stamp [µs] it came at.
    result: int | None = None
    ack_usec: int | None = None
    #: A yaw command's heading [deg], and how many STATUSTEXTs PX4 had sent when it went out.
    yaw_deg: float | None = None
    texts_before: int = 0

    @property
    def name(self) -> str:
        return f"{COMMAND_NAMES.get(self.command, self.command)} ({self.label})"

    def message(self, mav, target_system: int):
        if self.as_int:
            return mav.command_int_encode(target_system, AUTOPILOT_COMPONENT, MAV_FRAME_GLOBAL_INT, self.command, 0, 0,
                                          *self.params)
        values = [float(p) for p in self.params] + [0.0] * (7 - len(self.params))
        return mav.command_long_encode(target_system, AUTOPILOT_COMPONENT, self.command, 0, *values)


@dataclass
class MissionReport:
    """What happened, in PX4's clock [s]; the wall time only where marked."""

    time_to_home_s: float | None = None
    time_to_arm_s: float | None = None
    commanded_altitude_m: float = 0.0
    reached_altitude_m: float | None = None
    max_altitude_m: float | None = None
    #: Per commanded yaw [deg]: the yaw held at the end of its hold [deg] and the error [deg].
    yaw: list[dict] = field(default_factory=list)
    landed_disarmed: bool = False
    mission_time_s: float | None = None
    #: A plane: PX4 time [s] from its disarm after the landing to the stop on its wheels, where the run ends (None:
    #: not a plane, or no landing).
    rolled_to_stop_s: float | None = None
    wall_time_s: float | None = None
    #: Each command: label, due and sent PX4 time [s], the sim tick it went on (in the loop), ack result.
    commands: list[dict] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"home (good EKF) at {self.time_to_home_s:.2f} s PX4 time" if self.time_to_home_s is not None else "no home",
            f"armed at {self.time_to_arm_s:.2f} s PX4 time" if self.time_to_arm_s is not None else "never armed",
            f"altitude: commanded {self.commanded_altitude_m:.2f} m, held {self.reached_altitude_m:.2f} m, "
            f"max {self.max_altitude_m:.2f} m" if self.reached_altitude_m is not None else "altitude never reached",
        ]
        for entry in self.yaw:
            out.append(f"yaw: commanded {entry['commanded_deg']:+.0f} deg, held {entry['held_deg']:+.1f} deg "
                       f"(error {entry['error_deg']:+.1f} deg)")
        for entry in self.commands:
            tick = f" on tick {entry['tick']}" if entry.get("tick") is not None else ""
            out.append(f"command {entry['name']}: sent at {entry['sent_s']:.3f} s{tick}, ack {entry['result']}")
        out.append("landed and disarmed" if self.landed_disarmed else "did not land and disarm")
        if self.rolled_to_stop_s is not None:
            out.append(f"rolled to a stop {self.rolled_to_stop_s:.2f} s after the disarm")
        if self.mission_time_s is not None:
            wall = f", {self.wall_time_s:.1f} s wall" if self.wall_time_s is not None else ""
            out.append(f"mission took {self.mission_time_s:.1f} s PX4 time{wall}")
        return out


def wrap_degrees(angle: float) -> float:
    return (angle + 180.0) % 360.0 - 180.0


def quaternion_yaw_deg(q) -> float:
    """Yaw [deg] of a MAVLink (w, x, y, z) quaternion."""
    w, x, y, z = (float(v) for v in q)
    return math.degrees(math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)))


def usec(seconds: float) -> int:
    return int(round(seconds * 1e6))


class MissionPlan:
    """Decides which command is due when; sends nothing itself."""

    def __init__(self, *, altitude: float = 2.5, hold_s: float = 4.0, yaw_sweep_deg: tuple[float, ...] = (90.0, -90.0, 0.0),
                 yaw_hold_s: float = 8.0, arm_at_s: float = 6.0, takeoff_delay_s: float = 1.0, climb_s: float = 8.0,
                 land_s: float = 12.0, gate_limit_s: float = 60.0):
        self.altitude, self.hold_s, self.yaw_sweep_deg, self.yaw_hold_s = altitude, hold_s, tuple(yaw_sweep_deg), yaw_hold_s
        self.arm_at_s, self.takeoff_delay_s, self.climb_s, self.land_s = arm_at_s, takeoff_delay_s, climb_s, land_s
        #: PX4 time [s] a shut gate may keep a command waiting past its due time before the mission fails.
        self.gate_limit_s = gate_limit_s
        self.report = MissionReport(commanded_altitude_m=altitude)
        #: PX4's clock as its stream shows it: the newest stamp seen [µs].
        self.stream_usec = 0
        self.armed = False
        self.home = None
        self.position = None
        self.attitude = None
        self.highest = 0.0
        self.reached = False
        self.landed = False
        self.commands: list[Command] = []
        #: (stamp [µs], text) of PX4's STATUSTEXTs.
        self.statustexts: list[tuple[int, str]] = []
        self.start_heading_deg = 0.0
        self.over_usec: int | None = None
        #: The lockstep answers' armed flag (in the loop): whether one said armed, and whether any was seen.
        self.lockstep = False
        self.lockstep_armed = False
        self.pending: Command | None = Command("arm", MAV_CMD_COMPONENT_ARM_DISARM, usec(arm_at_s), (1.0,))

    # -- what PX4 reports -----------------------------------------------------------------------

    def note(self, message) -> None:
        kind = message.get_type()
        stamp = getattr(message, "time_boot_ms", None)
        if stamp is not None and stamp > 0:
            self.stream_usec = max(self.stream_usec, int(stamp) * 1000)
        if kind == "HEARTBEAT" and message.get_srcComponent() == AUTOPILOT_COMPONENT:
            armed = bool(message.base_mode & MAV_MODE_FLAG_SAFETY_ARMED)
            landing = any(c.label == "land" for c in self.commands)
            if self.armed and not armed and not self.lockstep and landing and not self.landed:
                self._landed(self.stream_usec)  # outside the loop (nexus px4 mission): the heartbeat says it
            self.armed = armed
        elif kind == "GLOBAL_POSITION_INT":
            self.position = message
            altitude = message.relative_alt * 1e-3
            if self._climbing():
                self.highest = max(self.highest, altitude)
                if not self.reached and altitude > self.altitude - 0.3:
                    self.reached = True
                    self.report.reached_altitude_m = altitude
        elif kind == "ATTITUDE":
            self.attitude = message
        elif kind == "HOME_POSITION" and self.home is None:
            self.home = message
            self.report.time_to_home_s = max(int(getattr(message, "time_usec", 0) or 0), self.stream_usec) * 1e-6
            q = list(getattr(message, "q", [0.0] * 4))
            self.start_heading_deg = quaternion_yaw_deg(q) if any(q) else math.nan
        elif kind == "COMMAND_ACK":
            for command in reversed(self.commands):
                if command.command == message.command and command.result is None and message.result != 5:
                    command.result, command.ack_usec = int(message.result), self.stream_usec
                    break
        elif kind == "STATUSTEXT":
            self.statustexts.append((self.stream_usec, message.text))

    def note_armed(self, armed: bool, now_usec: int) -> None:
        """The armed flag of PX4's lockstep answer at PX4 time ``now_usec`` (in the loop): its disarm lands the
        mission on the same tick in every reproducible run, where a HEARTBEAT's arrival would not."""
        self.lockstep = True
        if armed:
            self.lockstep_armed = True
            return
        if self.lockstep_armed and self._airborne_phase() and not self.landed:
            self._landed(now_usec)
            if self.pending is None or self.pending.label != "end":
                # PX4 came down on its own (a failsafe) before the mission's landing: nothing more to send.
                self.pending = None
                self.over_usec = now_usec
        self.lockstep_armed = False

    def _landed(self, now_usec: int) -> None:
        self.landed = True
        self.report.landed_disarmed = True
        self.report.mission_time_s = (now_usec - usec(self.report.time_to_arm_s or 0.0)) * 1e-6
        self.report.max_altitude_m = self.highest

    def _airborne_phase(self) -> bool:
        """Whether a disarm now ends the mission: the takeoff went (PX4 landed from the air)."""
        return any(c.label == "takeoff" for c in self.commands)

    def _climbing(self) -> bool:
        """Whether the highest altitude counts now: from the takeoff to the landing command."""
        return any(c.label == "takeoff" for c in self.commands) and not any(c.label == "land" for c in self.commands)

    # -- what is due --------------------------------------------------------------------------

    def _gate(self, command: Command) -> str | None:
        """What ``command`` still waits for (None: nothing)."""
        if command.label == "arm" and self.home is None:
            return "a home position (HOME_POSITION: a good EKF)"
        if command.label == self._first_yaw_label() and not self.reached:
            return f"the takeoff altitude ({self.altitude - 0.3:.1f} m in GLOBAL_POSITION_INT)"
        if command.label == "end" and not self.landed:
            return "PX4 disarmed after the landing (HEARTBEAT)"
        return None

    def _first_yaw_label(self) -> str:
        return f"yaw {self.yaw_sweep_deg[0]:+.0f} deg" if self.yaw_sweep_deg else "land"

    def due(self, now_usec: int) -> Command | None:
        """The command due at PX4 time ``now_usec`` (once), or None; raises when a gate stays shut too long."""
        command = self.pending
        if command is None or now_usec < command.due_usec:
            return None
        waiting_for = self._gate(command)
        if waiting_for is not None:
            if now_usec - command.due_usec > usec(self.gate_limit_s):
                raise MissionError(f"the mission's {command.label} was due at {command.due_usec * 1e-6:.1f} s, but "
                                   f"PX4 sent no sign of {waiting_for} within {self.gate_limit_s:.0f} s after it")
            return None
        self.pending = None
        if command.label == "end":
            self.over_usec = now_usec
            return None
        command.sent_usec = now_usec
        command.texts_before = len(self.statustexts)
        self.commands.append(command)
        self._after(command)
        return command

    def _after(self, command: Command) -> None:
        """The next command, due a fixed time after ``command`` went (its due time, unless a gate held it)."""
        due = command.sent_usec
        home_amsl = self.home.altitude * 1e-3
        yaws = [c for c in self.commands if c.label.startswith("yaw")]
        if command.label == "arm":
            self.report.time_to_arm_s = command.sent_usec * 1e-6
            self.pending = Command("takeoff", MAV_CMD_NAV_TAKEOFF, due + usec(self.takeoff_delay_s),
                                   (0.0, 0.0, 0.0, math.nan, math.nan, math.nan, home_amsl + self.altitude))
        elif command.label == "takeoff":
            self._next_yaw(0, due + usec(self.climb_s + self.hold_s))
        elif command.label.startswith("yaw"):
            self._note_held_yaw()
            if len(yaws) < len(self.yaw_sweep_deg):
                self._next_yaw(len(yaws), due + usec(self.yaw_hold_s))
            else:
                self.pending = Command("land", MAV_CMD_NAV_LAND, due + usec(self.yaw_hold_s), ())
        elif command.label == "land":
            self._note_held_yaw()
            self.report.max_altitude_m = self.highest
            self.pending = Command("end", 0, due + usec(self.land_s), ())

    def _next_yaw(self, index: int, due_usec: int) -> None:
        if index >= len(self.yaw_sweep_deg):
            self.pending = Command("land", MAV_CMD_NAV_LAND, due_usec, ())
            return
        heading = self.start_heading_deg
        if math.isnan(heading):  # a HOME_POSITION without its orientation: the heading PX4 estimated last
            heading = math.degrees(self.attitude.yaw) if self.attitude is not None else 0.0
            self.start_heading_deg = heading
        yaw = wrap_degrees(heading + self.yaw_sweep_deg[index])
        home = self.home
        self.pending = Command(
            f"yaw {self.yaw_sweep_deg[index]:+.0f} deg", MAV_CMD_DO_REPOSITION, due_usec,
            (-1.0, float(MAV_DO_REPOSITION_FLAGS_CHANGE_MODE), 0.0, math.radians(yaw), home.latitude, home.longitude,
             home.altitude * 1e-3 + self.altitude), as_int=True, yaw_deg=yaw,
        )

    def _note_held_yaw(self) -> None:
        """The yaw PX4 held at the end of the previous yaw's hold (for the report only)."""
        previous = [c for c in self.commands[:-1] if c.label.startswith("yaw")]
        if len(previous) <= len(self.report.yaw) or not previous:
            return
        commanded = previous[-1].yaw_deg
        held = math.degrees(self.attitude.yaw) if self.attitude is not None else math.nan
        self.report.yaw.append({"commanded_deg": commanded, "held_deg": held, "error_deg": wrap_degrees(held - commanded)})

    def finished(self, now_usec: int) -> bool:
        return self.over_usec is not None and now_usec >= self.over_usec

    def statustexts_after(self, command: Command) -> list[str]:
        """What PX4 said (STATUSTEXT) since ``command`` went out."""
        return [text for _, text in self.statustexts[command.texts_before:]]

    def summarise(self) -> MissionReport:
        """The report, with each command's times (and, in the loop, its tick)."""
        self.report.commands = [
            {"name": c.name, "due_s": c.due_usec * 1e-6, "sent_s": c.sent_usec * 1e-6, "tick": c.sent_tick,
             "result": c.result}
            for c in self.commands
        ]
        return self.report


class Px4Mission:
    """The plan flown as an ordinary MAVLink client on PX4's API stream (``nexus px4 mission``).

    It sends each command when PX4's stream shows the command's time has come;
    it cannot hold the sim's clock, so commands land on whatever tick PX4 is at
    when they arrive (``--px4-mission`` on ``nexus run`` gives the guarantee).
    """

    def __init__(self, url: str = DEFAULT_URL, *, timeout_s: float = 600.0, say: Callable[[str], None] = print,
                 connect_timeout_s: float | None = None, **plan):
        self.url, self.timeout_s, self.say = url, timeout_s, say
        #: Give up when PX4 sent nothing this long [s, wall] (None: wait as long as the mission may take).
        self.connect_timeout_s = connect_timeout_s
        self.plan = MissionPlan(**plan)
        self.report = self.plan.report

    def run(self) -> MissionReport:
        started = time.monotonic()
        link = ApiLink(self.url)
        self.say(f"mission: listening for PX4 on {self.url}")
        heard = False
        try:
            while not self.plan.finished(self.plan.stream_usec):
                if not heard and self.connect_timeout_s is not None and \
                        time.monotonic() - started > self.connect_timeout_s:
                    raise ConnectTimeoutError(
                        f"PX4 sent nothing to {self.url} within {self.connect_timeout_s:g} s; raise --connect-timeout, or "
                        "start PX4 SITL (PX4_SIM_MODEL=none_iris ./bin/px4) and the sim it flies (nexus run "
                        "--controller px4)")
                if time.monotonic() - started > self.timeout_s:
                    raise MissionError(f"the mission took longer than {self.timeout_s:.0f} s wall")
                link.wait(0.05)
                for message in link.drain():
                    heard = True
                    self.plan.note(message)
                    if message.get_type() == "STATUSTEXT":
                        self.say(f"PX4: {message.text}")
                for command in self.plan.commands:
                    if command.result not in (None, 0):
                        raise MissionError(f"PX4 refused {command.name}: result {command.result}")
                command = self.plan.due(self.plan.stream_usec)
                if command is not None:
                    link.send(command.message(link.mav, link.target_system or 1))
                    self.say(f"mission: {command.label} at {command.sent_usec * 1e-6:.2f} s PX4 time")
        finally:
            self.report.wall_time_s = time.monotonic() - started
            link.close()
        return self.plan.summarise()
