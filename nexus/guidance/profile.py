"""A mission profile and the timed plan of setpoints it makes.

The profile is the numbers a user sets (on a ``NexusMissionAPI`` prim or in
code); the plan is the sequence of legs they give from the place and heading
the vehicle starts at. Both are plain Python with no simulator in them, so a
plan can be checked on its own: :meth:`MissionPlan.at` gives the phase, the
position goal [m, NED] and the heading goal [rad] at any sim time.

The legs, in order:

``takeoff``  climb straight up to ``altitude`` above the start, over
             ``altitude / climb_speed`` seconds;
``hold``     stay there ``hold_time`` seconds;
``yaw``      turn the heading to +``yaw_sweep``, to −``yaw_sweep`` and back to
             the start heading, each turn at ``yaw_rate`` on average, pausing
             ``yaw_dwell`` seconds after each;
``return``   fly to ``altitude`` above the NED origin at ``return_speed`` on
             average (at least ``return_min_time``);
``land``     descend at ``land_speed``; the goal keeps sinking to
             ``ground_push`` below the start, so the vehicle settles with
             weight on its gear, and the guidance disarms once it has rested
             ``landed_time`` seconds (see :mod:`nexus.guidance.mission`).

Three phases are not legs of the plan; the guidance enters them from what
the estimator says (``estimate_status``, :mod:`nexus.estimation.estimate_status`):

``align``          before the take-off, until the estimate is aligned, has its
                   origin and a valid horizontal position: disarmed, and the
                   whole plan starts that much later;
``position_hold``  the horizontal position became invalid in the air: hold the
                   height and heading for ``position_loss_hold`` seconds, the
                   horizontal goal on the estimate itself;
``position_land``  then descend in place at ``land_speed``, land, disarm and end
                   the run. The mission never resumes.

They come after ``landed`` in :data:`PHASES`, so the older indices keep their meaning; so does ``goto``, the
leg of a fleet's waypoint plan (:mod:`nexus.guidance.waypoint_plan`).

Every leg but the landing moves its goal along a minimum-jerk curve (speed
and acceleration zero at both ends), which the controller can follow closely.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

PHASES = ("takeoff", "hold", "yaw", "return", "land", "landed", "align", "position_hold", "position_land", "goto")


@dataclass(frozen=True)
class MissionProfile:
    """The numbers of a take-off, yaw-sweep and landing mission. Units in brackets."""

    altitude: float = 5.0  # above the start [m]
    climb_speed: float = 1.0  # average over the climb [m/s]
    hold_time: float = 3.0  # [s]
    yaw_sweep: float = 90.0  # each side of the start heading [deg]
    yaw_rate: float = 45.0  # average over each turn [deg/s]
    yaw_dwell: float = 1.0  # pause after each turn [s]
    return_speed: float = 1.0  # average [m/s]
    return_min_time: float = 1.0  # [s]
    land_speed: float = 0.7  # [m/s]
    ground_push: float = 0.3  # how far below the start the landing goal ends [m]
    landed_time: float = 0.5  # rest on the ground before disarming [s]
    landed_height: float = 0.1  # within this of the start height counts as on the ground [m]
    landed_speed: float = 0.1  # below this vertical speed counts as at rest [m/s]
    #: Hold after the horizontal position turns invalid, before descending in place [s]: PX4's failsafe
    #: action delay COM_FAIL_ACT_T (5 s), which holds before its reaction to give the pilot time to act.
    position_loss_hold: float = 5.0

    def check(self, where: str = "mission") -> None:
        """Raise ``ValueError`` naming ``where`` and the bad field."""
        positive = ("altitude", "climb_speed", "yaw_rate", "return_speed", "land_speed", "landed_height", "landed_speed")
        for name in positive:
            if not getattr(self, name) > 0.0:
                raise ValueError(f"{where}: {name} must be positive, got {getattr(self, name)}")
        for name in ("hold_time", "yaw_sweep", "yaw_dwell", "return_min_time", "ground_push", "landed_time",
                     "position_loss_hold"):
            if getattr(self, name) < 0.0:
                raise ValueError(f"{where}: {name} must not be negative, got {getattr(self, name)}")
        if self.yaw_sweep > 180.0:
            raise ValueError(f"{where}: yaw_sweep must be at most 180 deg, got {self.yaw_sweep}")

    @classmethod
    def short(cls) -> MissionProfile:
        """The same mission in under 10 s of sim time, for tests and the determinism gate."""
        return cls(
            altitude=2.0, climb_speed=1.25, hold_time=1.0, yaw_sweep=45.0, yaw_rate=60.0, yaw_dwell=0.3,
            return_min_time=0.2, land_speed=1.0, ground_push=0.3, landed_time=0.3,
        )

    def with_(self, **changes) -> MissionProfile:
        return replace(self, **changes)


def smooth_step(fraction: float) -> float:
    """Minimum-jerk blend from 0 to 1: zero speed and acceleration at both ends."""
    s = min(max(fraction, 0.0), 1.0)
    return s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)


@dataclass(frozen=True)
class Leg:
    phase: str
    start_time: float  # [s]
    duration: float  # [s]; infinite for the landing
    start: np.ndarray  # position goal [m, NED]
    end: np.ndarray
    start_yaw: float  # [rad], unwrapped
    end_yaw: float

    @property
    def end_time(self) -> float:
        return self.start_time + self.duration


def heading_of(attitude) -> float:
    """Heading [rad, NED] of an FRD→NED attitude quaternion (x, y, z, w)."""
    x, y, z, w = (float(attitude[i]) for i in range(4))
    return math.atan2(2.0 * (x * y + z * w), 1.0 - 2.0 * (y * y + z * z))


def wrap(angle: float) -> float:
    """``angle`` [rad] wrapped to [−π, π)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


class MissionPlan:
    """The legs of ``profile`` flown from ``start`` [m, NED] and ``start_yaw`` [rad], beginning at ``start_time`` [s]."""

    def __init__(self, profile: MissionProfile, start, start_yaw: float, start_time: float = 0.0):
        profile.check()
        self.profile = profile
        self.start = np.asarray(start, dtype=np.float64).copy()
        self.start_yaw = float(start_yaw)
        p = profile
        up = np.array([self.start[0], self.start[1], self.start[2] - p.altitude])
        home = np.array([0.0, 0.0, self.start[2] - p.altitude])
        legs: list[Leg] = []
        clock = float(start_time)

        def add(phase, duration, start_point, end_point, yaw_from, yaw_to):
            nonlocal clock
            legs.append(Leg(phase, clock, duration, start_point, end_point, yaw_from, yaw_to))
            clock += duration

        yaw0 = self.start_yaw
        add("takeoff", p.altitude / p.climb_speed, self.start, up, yaw0, yaw0)
        add("hold", p.hold_time, up, up, yaw0, yaw0)
        sweep = math.radians(p.yaw_sweep)
        rate = math.radians(p.yaw_rate)
        heading = yaw0
        for target in (yaw0 + sweep, yaw0 - sweep, yaw0):
            if sweep > 0.0:
                add("yaw", abs(target - heading) / rate, up, up, heading, target)
                add("yaw", p.yaw_dwell, up, up, target, target)
            heading = target
        distance = float(np.linalg.norm(home - up))
        add("return", max(distance / p.return_speed, p.return_min_time), up, home, yaw0, yaw0)
        ground = np.array([0.0, 0.0, self.start[2] + p.ground_push])
        add("land", math.inf, home, ground, yaw0, yaw0)
        self.legs = legs
        #: Sim time the landing starts [s].
        self.land_time = legs[-1].start_time
        #: The height [m, NED z] the vehicle started from: the ground.
        self.ground_z = float(self.start[2])

    def leg_at(self, time: float) -> Leg:
        for leg in self.legs:
            if time < leg.end_time:
                return leg
        return self.legs[-1]

    def at(self, time: float) -> tuple[str, np.ndarray, float]:
        """Phase, position goal [m, NED] and heading goal [rad, wrapped] at sim time ``time`` [s]."""
        leg = self.leg_at(time)
        if leg.phase == "land":
            sunk = leg.start[2] + self.profile.land_speed * max(time - leg.start_time, 0.0)
            goal = np.array([leg.start[0], leg.start[1], min(sunk, leg.end[2])])
            return leg.phase, goal, wrap(leg.end_yaw)
        s = smooth_step((time - leg.start_time) / leg.duration) if leg.duration > 0.0 else 1.0
        goal = leg.start + (leg.end - leg.start) * s
        return leg.phase, goal, wrap(leg.start_yaw + (leg.end_yaw - leg.start_yaw) * s)

    @property
    def nominal_duration(self) -> float:
        """Sim time [s] from the start to the goal reaching the ground, plus the rest before disarming."""
        p = self.profile
        descent = (self.legs[-1].end[2] - self.legs[-1].start[2]) / p.land_speed
        return self.land_time + descent + p.landed_time - self.legs[0].start_time
