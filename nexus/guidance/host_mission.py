"""Mission guidance as a host stage: the same mission, flown from Python between graph replays.

The device guidance (:class:`nexus.guidance.mission.MissionGuidance`) is the
default; this one stays for planners that need the host (and as the reference
the device kernel is checked against). A ring with it plans as
``graph(...) host(mission) graph(pid) graph(record)``: it reads the estimate
and writes the setpoint through copies, one tick at a time.

Its first call (start-up) plans the mission from where the vehicle rests and
arms the motors. Every call after that looks up the plan at the tick's sim
time and writes the ``setpoint`` when it changes. During the landing it reads
the estimate every ``check_period`` seconds; once the vehicle has stayed
within ``landed_height`` of its start height, slower than ``landed_speed``,
for ``landed_time``, it writes ``armed`` = 0 and calls ``io.finish()``.

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
from nexus.guidance.mission import MISSION_INPUTS, MISSION_OUTPUTS, MISSION_PARAMS
from nexus.guidance.mission_base import MissionComponent
from nexus.guidance.profile import MissionPlan, MissionProfile, heading_of
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
        if self.plan is None:
            first = io["estimate"].read()
            start = np.array([first.position[0], first.position[1], first.position[2]], dtype=np.float64)
            self.plan = MissionPlan(self.profile, start, heading_of(first.attitude), start_time=now)
            self._set_armed(io, 1)
        if self.phase == "landed":
            return
        phase, goal, yaw = self.plan.at(now)
        if phase != self.phase:
            self.phase = phase
            self.transitions.append((now, phase))
        self._write_setpoint(io, goal, yaw)
        if phase == "land" and now >= self._next_check:
            self._next_check = now + self.check_period
            if self._has_landed(io["estimate"].read(), now):
                self.phase = "landed"
                self.transitions.append((now, "landed"))
                self._set_armed(io, 0)
                io.finish()

    def _has_landed(self, estimate, now: float) -> bool:
        p = self.profile
        height = abs(float(estimate.position[2]) - self.plan.ground_z)
        speed = float(np.linalg.norm([estimate.velocity[0], estimate.velocity[1], estimate.velocity[2]]))
        if height > p.landed_height or speed > p.landed_speed:
            self._rest_since = None
            return False
        if self._rest_since is None:
            self._rest_since = now
        return now - self._rest_since >= p.landed_time

    def _write_setpoint(self, io, goal: np.ndarray, yaw: float) -> None:
        key = (float(goal[0]), float(goal[1]), float(goal[2]), float(yaw))
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
