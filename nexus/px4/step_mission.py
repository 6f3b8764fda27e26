"""A PX4 scenario's steps as a PX4 mission: uploaded, armed and started at fixed times of PX4's clock.

A scenario's ``[[step]]``s (take off, go to, hold, land) become the items of a
MAVLink mission (``MISSION_ITEM_INT``, positions from PX4's home): the upload
is due at ``upload_at_s`` (gated on a home position, as the built-in mission's
arm is), the arm ``arm_delay_s`` after it, the start (``MAV_CMD_MISSION_START``,
which puts PX4 in its mission mode) ``start_delay_s`` after the arm. The
commander (:mod:`nexus.px4.commander`) sends the whole upload with the clock
held, so PX4 holds the mission at the tick before the upload's, in every run;
the arm and the start go as the built-in mission's commands do. PX4 then flies
the items on its own; the mission is over on the tick whose lockstep answer
says PX4 disarmed after the start (:meth:`MissionPlan.note_armed`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from nexus.px4.mission import (
    MAV_CMD_COMPONENT_ARM_DISARM,
    MAV_CMD_NAV_LAND,
    MAV_CMD_NAV_TAKEOFF,
    Command,
    MissionPlan,
    usec,
)

MAV_CMD_NAV_WAYPOINT = 16
MAV_CMD_NAV_LOITER_TIME = 19
MAV_CMD_MISSION_START = 300
#: Items' frame: latitude, longitude [degE7] and altitude above home [m].
MAV_FRAME_GLOBAL_RELATIVE_ALT_INT = 6
#: The sphere a north/east offset [m] is turned into latitude and longitude on (WGS-84's equatorial radius) [m].
EARTH_RADIUS_M = 6378137.0
#: Steps a PX4 mission flies (turn and wait have no mission item here).
PX4_STEPS = ("takeoff", "goto", "hold", "land")


def offset_degE7(latitude_e7: int, longitude_e7: int, north_m: float, east_m: float) -> tuple[int, int]:
    """The point ``north_m``, ``east_m`` [m] from (latitude, longitude) [degE7], on a local flat earth."""
    latitude = math.radians(latitude_e7 * 1e-7)
    d_lat = math.degrees(north_m / EARTH_RADIUS_M)
    d_lon = math.degrees(east_m / (EARTH_RADIUS_M * math.cos(latitude)))
    return int(round(latitude_e7 + d_lat * 1e7)), int(round(longitude_e7 + d_lon * 1e7))


@dataclass
class Upload(Command):
    """The mission upload: its items, (command, frame, param1..4, x [degE7], y [degE7], z [m]) each."""

    items: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"MISSION_COUNT ({self.label}, {len(self.items)} items)"


def mission_items(steps: list[dict], home_lat_e7: int, home_lon_e7: int) -> list[tuple]:
    """The mission items of ``steps`` (each a scenario step: do, to [north, east, height] [m], time [s])."""
    items, north, east, height = [], 0.0, 0.0, 0.0

    def here() -> tuple[int, int]:
        return offset_degE7(home_lat_e7, home_lon_e7, north, east)

    for step in steps:
        do = step["do"]
        if do == "takeoff":
            height = float(step["to"][2])
            items.append((MAV_CMD_NAV_TAKEOFF, MAV_FRAME_GLOBAL_RELATIVE_ALT_INT, 0.0, 0.0, 0.0, math.nan, *here(),
                          height))
        elif do == "goto":
            north, east, height = (float(v) for v in step["to"])
            items.append((MAV_CMD_NAV_WAYPOINT, MAV_FRAME_GLOBAL_RELATIVE_ALT_INT, 0.0,
                          float(step.get("tolerance", 0.0)), 0.0, math.nan, *here(), height))
        elif do == "hold":
            items.append((MAV_CMD_NAV_LOITER_TIME, MAV_FRAME_GLOBAL_RELATIVE_ALT_INT, float(step["time"]), 0.0, 0.0,
                          math.nan, *here(), height))
        elif do == "land":
            items.append((MAV_CMD_NAV_LAND, MAV_FRAME_GLOBAL_RELATIVE_ALT_INT, 0.0, 0.0, 0.0, math.nan, *here(), 0.0))
        else:
            raise ValueError(f"step {do!r} has no PX4 mission item; use one of {', '.join(PX4_STEPS)}")
    return items


class StepsPlan(MissionPlan):
    """Upload the steps' mission, arm, start it; over when PX4 disarmed after the start."""

    def __init__(self, steps: list[dict], *, upload_at_s: float = 6.0, arm_delay_s: float = 1.0,
                 start_delay_s: float = 1.0, gate_limit_s: float = 60.0):
        takeoff = next((s for s in steps if s["do"] == "takeoff"), None)
        super().__init__(altitude=float(takeoff["to"][2]) if takeoff else 0.0, yaw_sweep_deg=(), arm_at_s=upload_at_s,
                         gate_limit_s=gate_limit_s)
        self.steps, self.arm_delay_s, self.start_delay_s = list(steps), arm_delay_s, start_delay_s
        self.pending = Upload("upload", 0, usec(upload_at_s), ())
        self.started = False

    def note(self, message) -> None:
        super().note(message)
        if message.get_type() == "MISSION_ACK":
            for command in self.commands:
                if isinstance(command, Upload) and command.result is None:
                    command.result, command.ack_usec = int(message.type), self.stream_usec

    def _gate(self, command: Command) -> str | None:
        if command.label == "upload" and self.home is None:
            return "a home position (HOME_POSITION: a good EKF), where the mission's positions start"
        return None

    def _airborne_phase(self) -> bool:
        """A disarm ends the mission once it started (PX4 landed, at the mission's end or in a failsafe)."""
        return self.started

    def _climbing(self) -> bool:
        return self.started

    def due(self, now_usec: int) -> Command | None:
        command = self.pending
        if isinstance(command, Upload) and not command.items and self.home is not None:
            command.items = mission_items(self.steps, self.home.latitude, self.home.longitude)
        return super().due(now_usec)

    def _after(self, command: Command) -> None:
        sent = command.sent_usec
        if command.label == "upload":
            self.pending = Command("arm", MAV_CMD_COMPONENT_ARM_DISARM, sent + usec(self.arm_delay_s), (1.0,))
        elif command.label == "arm":
            self.report.time_to_arm_s = sent * 1e-6
            self.pending = Command("start", MAV_CMD_MISSION_START, sent + usec(self.start_delay_s), (0.0, 0.0))
        elif command.label == "start":
            self.started = True
            self.pending = None  # nothing more to send: the lockstep answer's disarm ends the mission (note_armed)
