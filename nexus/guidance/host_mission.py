"""Mission guidance as a host stage: the same mission, flown from Python between graph replays.

The device guidance (:class:`nexus.guidance.mission.MissionGuidance`) is the
default; this one stays for planners that need the host (and as the reference
the device kernel is checked against). A ring with it plans as
``graph(...) host(mission) graph(pid) graph(record)``: it reads the estimate
and writes the setpoint through copies, one tick at a time.

Its first call (start-up) plans the mission from where the vehicle rests and
arms the motors once the estimate is ready (aligned, origin set, horizontal
position valid; until then
phase ``align``, disarmed, and the plan runs that much later). Every call
after that looks up the plan at the tick's sim time and writes the
``setpoint`` (shifted by the estimator's resets) when it changes. During the
landing it reads the estimate every ``check_period`` seconds; once the
vehicle has stayed within ``landed_height`` of its start height (or the
descent's goal has sunk to it), vertically slower than ``landed_speed``, for
``landed_time``, it writes ``armed`` = 0 and calls ``io.finish()``. A loss of
the horizontal position in the air holds, then lands in place, as the device
kernel does (:mod:`nexus.guidance.kernels`).

Being a host stage, it keeps what changes during the run (the plan, the
phase, the landed detection, what it last wrote) in Python on the component,
not as engine state: a ring with a host stage is never snapshotted, so
nothing needs to copy it. Its spec declares the same parameters and ports as
:data:`~nexus.guidance.mission.MISSION_SPEC` but no schema (a
``NexusMissionAPI`` prim builds the device guidance) and no state.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core.spec import Spec
from nexus.estimation.estimate_status import HORIZONTAL_VALID, RESET_SIGNAL, STATUS_SIGNAL
from nexus.guidance.kernels import START_STATUS
from nexus.guidance.mission import MISSION_INPUTS, MISSION_OUTPUTS, MISSION_PARAMS
from nexus.guidance.mission_base import MissionComponent
from nexus.guidance.profile import PHASES, MissionPlan, MissionProfile, heading_of, wrap
from nexus.guidance.setpoint import Setpoint

HOST_MISSION_SPEC = Spec(
    name="HostMission",
    noun="mission",
    doc="The mission guidance as a host stage (Python state, no schema of its own).",
    params=MISSION_PARAMS,
    inputs=MISSION_INPUTS,
    outputs=MISSION_OUTPUTS,
    stage="mission",
    kind="guide",
    host=True,
)


class HostMissionGuidance(MissionComponent):
    """Writes ``setpoint`` and ``armed`` from a mission profile; ends the run once landed."""

    spec = HOST_MISSION_SPEC

    def __init__(self, name: str = "/scene/mission", profile: MissionProfile | None = None, check_period: float = 0.04):
        super().__init__(name, profile, check_period)
        self.phase = "start"
        #: (sim time [s], phase) at each change of phase, the first at the start.
        self.transitions: list[tuple[float, str]] = []
        self._written = None
        self._armed = None
        self._rest_since = None
        self._next_check = 0.0

    # -- the stage ---------------------------------------------------------------------

    def run(self, io) -> None:
        now = float(io["time"].read())
        estimate = io["estimate"].read()
        status = int(io[STATUS_SIGNAL].read())
        moved = io[RESET_SIGNAL].read()
        if self.plan is None:
            start = np.array([estimate.position[0], estimate.position[1], estimate.position[2]], dtype=np.float64)
            self.plan = MissionPlan(self.profile, start, heading_of(estimate.attitude), start_time=now)
            self._first_call = now
            self._delay = self._yaw_shift = self._z_shift = 0.0
            self._aligned = False
            self._lost = None
        if self.phase == "landed":
            return
        if not self._aligned:
            if status & START_STATUS == START_STATUS:
                self._aligned = True
                if self.phase == "align":  # waited: the plan runs later, from the heading and height now
                    first = self.plan.legs[0]
                    self._delay = now - self._first_call
                    self._yaw_shift = wrap(heading_of(estimate.attitude) - first.start_yaw)
                    self._z_shift = float(estimate.position[2]) - float(first.start[2])
            else:
                self._enter("align", now, io)
                first = self.plan.legs[0]
                self._set_armed(io, 0)
                self._write_setpoint(io, first.start.copy(), wrap(first.start_yaw), moved)
                return
        self._set_armed(io, 1)
        ground_z = self.plan.ground_z + self._z_shift
        reached = False
        if self._lost is None:
            t = now - self._delay
            phase, goal, yaw = self.plan.at(t)
            if self._yaw_shift != 0.0:
                yaw = wrap(yaw + self._yaw_shift)
            if self._z_shift != 0.0:
                goal = goal.copy()
                goal[2] += self._z_shift
            if phase == "land":
                leg = self.plan.legs[-1]
                reached = leg.start[2] + self.profile.land_speed * max(t - leg.start_time, 0.0) >= self.plan.ground_z
            if not status & HORIZONTAL_VALID:
                # Lost in the air: hold the height and heading the plan asks now, never to resume the plan.
                self._lost = (float(goal[2]), yaw, now)
                self._enter("position_land" if phase == "land" else "position_hold", now, io)
                self._rest_since = None
            else:
                self._enter(phase, now, io)
        if self._lost is not None:
            hold_z, yaw, since = self._lost
            if self.phase == "position_hold" and now - since >= self.profile.position_loss_hold:
                self._lost = (hold_z, yaw, now)
                since = now
                self._enter("position_land", now, io)
            z = hold_z
            if self.phase == "position_land":
                sunk = hold_z + self.profile.land_speed * (now - since)
                z = min(sunk, float(self.plan.legs[-1].end[2]) + self._z_shift)
                reached = sunk >= ground_z
            goal = np.array([float(estimate.position[0]), float(estimate.position[1]), z])
            moved = (0.0, 0.0, moved[2])  # the estimate already holds every reset
        self._write_setpoint(io, goal, yaw, moved)
        if self.phase in ("land", "position_land") and now >= self._next_check:
            self._next_check = now + self.check_period
            if self._has_landed(estimate, now, ground_z + float(moved[2]), reached):
                self._enter("landed", now, io)
                self._set_armed(io, 0)
                io.finish()

    def _enter(self, phase: str, now: float, io) -> None:
        if phase != self.phase:
            self.phase = phase
            self.transitions.append((now, phase))
            io["mission_phase"].write(PHASES.index(phase))

    def _has_landed(self, estimate, now: float, ground_z: float, reached: bool) -> bool:
        p = self.profile
        height = abs(float(estimate.position[2]) - ground_z)
        if (height > p.landed_height and not reached) or abs(float(estimate.velocity[2])) > p.landed_speed:
            self._rest_since = None
            return False
        if self._rest_since is None:
            self._rest_since = now
        return now - self._rest_since >= p.landed_time

    def _write_setpoint(self, io, goal: np.ndarray, yaw: float, moved=(0.0, 0.0, 0.0)) -> None:
        # Shifted by the resets in float64 and rounded once, as the device kernel does.
        key = tuple(float(goal[i]) + float(moved[i]) if float(moved[i]) != 0.0 else float(goal[i]) for i in range(3))
        key = (*key, float(yaw))
        if key == self._written:
            return
        setpoint = Setpoint()
        setpoint.position = wp.vec3(key[0], key[1], key[2])
        setpoint.yaw = key[3]
        io["setpoint"].write(setpoint)
        self._written = key

    def _set_armed(self, io, value: int) -> None:
        if value != self._armed:
            io["armed"].write(value)
            self._armed = value
