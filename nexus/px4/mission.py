"""A mission commander for PX4 SITL: take off, sweep yaw, land, over MAVLink UDP.

It talks to PX4 the way a ground station or an onboard computer would, on
PX4's loopback API port (PX4 sends to UDP 14540), independent of the
simulator link. It waits for PX4's heartbeat and a home position (a good
EKF), commands a takeoff, arms, holds, turns to each yaw of the sweep with
``MAV_CMD_DO_REPOSITION``, lands and waits for PX4 to disarm. Figures are
taken in PX4's own clock (``time_boot_ms``), which lockstep ties to sim time.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from nexus.core.errors import NexusError

DEFAULT_URL = "udpin:127.0.0.1:14540"

MAV_CMD_NAV_TAKEOFF = 22
MAV_CMD_NAV_LAND = 21
MAV_CMD_COMPONENT_ARM_DISARM = 400
MAV_CMD_DO_REPOSITION = 192
MAV_CMD_REQUEST_MESSAGE = 512
MAVLINK_MSG_ID_HOME_POSITION = 242
MAV_DO_REPOSITION_FLAGS_CHANGE_MODE = 1
MAV_MODE_FLAG_SAFETY_ARMED = 128
#: PX4 takes COMMAND_INT positions only in this frame (altitude above mean sea level).
MAV_FRAME_GLOBAL_INT = 5


class MissionError(NexusError):
    """PX4 did not do what the mission asked in time."""


@dataclass
class MissionReport:
    """What happened, in PX4's clock [s] unless marked wall."""

    time_to_home_s: float | None = None
    time_to_arm_s: float | None = None
    commanded_altitude_m: float = 0.0
    reached_altitude_m: float | None = None
    max_altitude_m: float | None = None
    #: Per commanded yaw [deg]: the yaw held at the end of its hold [deg] and the error [deg].
    yaw: list[dict] = field(default_factory=list)
    landed_disarmed: bool = False
    mission_time_s: float | None = None
    wall_time_s: float | None = None

    def lines(self) -> list[str]:
        out = [
            f"home (good EKF) after {self.time_to_home_s:.1f} s PX4 time" if self.time_to_home_s is not None else "no home",
            f"armed at {self.time_to_arm_s:.1f} s PX4 time" if self.time_to_arm_s is not None else "never armed",
            f"altitude: commanded {self.commanded_altitude_m:.2f} m, held {self.reached_altitude_m:.2f} m, "
            f"max {self.max_altitude_m:.2f} m" if self.reached_altitude_m is not None else "altitude never reached",
        ]
        for entry in self.yaw:
            out.append(f"yaw: commanded {entry['commanded_deg']:+.0f} deg, held {entry['held_deg']:+.1f} deg "
                       f"(error {entry['error_deg']:+.1f} deg)")
        out.append("landed and disarmed" if self.landed_disarmed else "did not land and disarm")
        if self.mission_time_s is not None:
            out.append(f"mission took {self.mission_time_s:.1f} s PX4 time, {self.wall_time_s:.1f} s wall")
        return out


def wrap_degrees(angle: float) -> float:
    return (angle + 180.0) % 360.0 - 180.0


class Px4Mission:
    """Fly takeoff, yaw sweep and landing on a PX4 reachable at ``url``.

    PX4 reads ``DO_REPOSITION``'s yaw (param 4) in radians, unlike the MAVLink spec's degrees.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        altitude: float = 2.5,
        hold_s: float = 4.0,
        #: Headings [deg] relative to the heading at takeoff, flown in turn.
        yaw_sweep_deg: tuple[float, ...] = (90.0, -90.0, 0.0),
        yaw_hold_s: float = 8.0,
        timeout_s: float = 300.0,
        say: Callable[[str], None] = print,
        stop: threading.Event | None = None,
    ):
        self.url, self.altitude, self.hold_s = url, altitude, hold_s
        self.yaw_sweep_deg, self.yaw_hold_s, self.timeout_s = yaw_sweep_deg, yaw_hold_s, timeout_s
        self.say = say
        self.stop = stop or threading.Event()
        self.report = MissionReport(commanded_altitude_m=altitude)
        self.px4_time_s = 0.0
        self.armed = False
        self.position = None  # last GLOBAL_POSITION_INT
        self.attitude = None  # last ATTITUDE
        self.home = None
        #: Command -> result of its last COMMAND_ACK (0 accepted).
        self.acks: dict[int, int] = {}

    # -- link ----------------------------------------------------------------------------

    def _pump(self, wait: float = 0.05) -> None:
        """Read every message that has arrived (waiting up to ``wait`` [s] for one)."""
        message = self.link.recv_match(blocking=True, timeout=wait)
        while message is not None:
            self._note(message)
            message = self.link.recv_match(blocking=False)
        if self.stop.is_set():
            raise MissionError("the mission was stopped")
        if time.monotonic() > self.deadline:
            raise MissionError(f"the mission took longer than {self.timeout_s:.0f} s wall")

    def _note(self, message) -> None:
        kind = message.get_type()
        if hasattr(message, "time_boot_ms"):
            self.px4_time_s = max(self.px4_time_s, message.time_boot_ms * 1e-3)
        if kind == "HEARTBEAT" and message.get_srcComponent() == 1:
            self.armed = bool(message.base_mode & MAV_MODE_FLAG_SAFETY_ARMED)
        elif kind == "GLOBAL_POSITION_INT":
            self.position = message
        elif kind == "ATTITUDE":
            self.attitude = message
        elif kind == "HOME_POSITION":
            self.home = message
        elif kind == "COMMAND_ACK":
            self.acks[message.command] = message.result
        elif kind == "STATUSTEXT":
            self.say(f"PX4: {message.text}")

    def _command(self, command: int, *params: float) -> None:
        values = list(params) + [0.0] * (7 - len(params))
        self.link.mav.command_long_send(self.link.target_system, self.link.target_component, command, 0, *values)

    def _until(self, what: str, ready: Callable[[], bool], px4_seconds: float) -> None:
        """Pump messages until ``ready()``, or fail after ``px4_seconds`` of PX4 time."""
        start = self.px4_time_s
        while not ready():
            self._pump()
            if self.px4_time_s - start > px4_seconds:
                raise MissionError(f"PX4 did not {what} within {px4_seconds:.0f} s of its time")

    def _hold(self, px4_seconds: float) -> None:
        start = self.px4_time_s
        while self.px4_time_s - start < px4_seconds:
            self._pump()

    @property
    def relative_altitude(self) -> float:
        return self.position.relative_alt * 1e-3 if self.position is not None else 0.0

    @property
    def yaw_deg(self) -> float:
        return math.degrees(self.attitude.yaw) if self.attitude is not None else math.nan

    # -- the mission --------------------------------------------------------------------

    def run(self) -> MissionReport:
        from pymavlink import mavutil

        started = time.monotonic()
        self.deadline = started + self.timeout_s
        self.say(f"mission: listening for PX4 on {self.url}")
        self.link = mavutil.mavlink_connection(self.url, source_system=245, source_component=190)
        try:
            self._fly()
        finally:
            self.report.wall_time_s = time.monotonic() - started
            self.link.close()
        return self.report

    def _fly(self) -> None:
        while self.link.target_system == 0 or self.px4_time_s == 0.0:
            self._pump(0.2)
        self.say(f"mission: PX4 heartbeat (system {self.link.target_system}) at {self.px4_time_s:.1f} s")
        last_request = -10.0
        while self.home is None:
            if self.px4_time_s - last_request > 2.0:
                self._command(MAV_CMD_REQUEST_MESSAGE, MAVLINK_MSG_ID_HOME_POSITION)
                last_request = self.px4_time_s
            self._pump()
        self.report.time_to_home_s = self.px4_time_s
        self.say(f"mission: home set (EKF has a global position) at {self.px4_time_s:.1f} s")
        home_amsl = self.home.altitude * 1e-3
        for attempt in range(15):
            self._command(MAV_CMD_COMPONENT_ARM_DISARM, 1)
            try:
                self._until("arm", lambda: self.armed, 2.0)
                break
            except MissionError:
                self.say(f"mission: not armed yet (attempt {attempt + 1}), retrying")
        else:
            raise MissionError("PX4 refused to arm; see its console for the preflight check that failed")
        self.report.time_to_arm_s = self.px4_time_s
        mission_start = self.px4_time_s
        # Take off right away: PX4 disarms an armed vehicle that does not take off (COM_DISARM_PRFLT).
        for attempt in range(5):
            self.acks.pop(MAV_CMD_NAV_TAKEOFF, None)
            self._command(MAV_CMD_NAV_TAKEOFF, 0, 0, 0, math.nan, math.nan, math.nan, home_amsl + self.altitude)
            self._until("answer the takeoff command", lambda: MAV_CMD_NAV_TAKEOFF in self.acks, 2.0)
            if self.acks[MAV_CMD_NAV_TAKEOFF] == 0:
                break
            self.say(f"mission: takeoff refused (result {self.acks[MAV_CMD_NAV_TAKEOFF]}), retrying")
            self._hold(0.5)
        self.say(f"mission: armed at {self.report.time_to_arm_s:.1f} s; taking off to {self.altitude:.1f} m")
        self._until("reach the takeoff altitude", lambda: self.relative_altitude > self.altitude - 0.3, 60.0)
        self._hold(self.hold_s)
        self.report.reached_altitude_m = self.relative_altitude
        self.say(f"mission: holding at {self.relative_altitude:.2f} m")
        highest = self.relative_altitude
        start_heading = self.yaw_deg
        self.say(f"mission: sweeping yaw by {', '.join(f'{y:+.0f}' for y in self.yaw_sweep_deg)} deg "
                 f"from the heading at takeoff, {start_heading:+.1f} deg")
        for offset in self.yaw_sweep_deg:
            yaw = wrap_degrees(start_heading + offset)
            p = self.position
            self.link.mav.command_int_send(
                self.link.target_system, self.link.target_component, MAV_FRAME_GLOBAL_INT, MAV_CMD_DO_REPOSITION, 0, 0,
                -1.0, MAV_DO_REPOSITION_FLAGS_CHANGE_MODE, 0.0, math.radians(yaw), p.lat, p.lon,
                home_amsl + self.altitude,
            )
            start = self.px4_time_s
            while self.px4_time_s - start < self.yaw_hold_s:
                self._pump()
                highest = max(highest, self.relative_altitude)
            held = self.yaw_deg
            self.report.yaw.append({"offset_deg": offset, "commanded_deg": yaw, "held_deg": held,
                                    "error_deg": wrap_degrees(held - yaw)})
            self.say(f"mission: yaw {yaw:+.0f} deg commanded, {held:+.1f} deg held")
        self.report.max_altitude_m = highest
        self._command(MAV_CMD_NAV_LAND)
        self.say("mission: landing")
        self._until("land and disarm", lambda: not self.armed, 90.0)
        self.report.landed_disarmed = True
        self.report.mission_time_s = self.px4_time_s - mission_start
        self.say(f"mission: landed and disarmed at {self.px4_time_s:.1f} s")
