"""A mission as a list of steps (a scenario's ``[[step]]``s), flown as a host stage.

Unlike the timed profile of :mod:`nexus.guidance.profile`, a step ends on a condition the vehicle meets
(within a tolerance of its goal, landed, slow enough) or when its time limit runs out, so it needs the
estimate on the host every tick: a ring with it plans as ``graph(...) host(mission) graph(pid ...)``.

Steps (``do``), positions in metres from where the vehicle rests at the start (north, east, height up),
headings in degrees from the start heading:

``takeoff``  climb to ``height`` over the current goal's north and east;
``goto``     fly to ``to`` = [north, east, height];
``hold``     keep the goal ``time`` seconds;
``turn``     turn the heading to ``heading`` at ``rate`` [deg/s];
``land``     descend at ``speed``; once the vehicle has rested ``LANDED_TIME`` within ``LANDED_HEIGHT`` of its
             start height (or the goal has sunk to it), vertically slower than ``LANDED_SPEED``, it disarms and
             ends the run;
``wait``     keep the goal until ``until_time`` [s of sim time] or the speed is below ``until_speed_below``.

A goal moves along a minimum-jerk curve at the step's average ``speed`` (``rate`` for a turn); a
``takeoff``, ``goto`` or ``turn`` ends once that curve has arrived and the vehicle is within ``tolerance`` of
it. Any step with ``time_limit`` [s] ends when that runs out, and counts in ``mission_timeouts``; the
recorded ``mission_step`` (index of the step flown, the step count once all ended) tells the checks when
each step ended.

What the estimator says of its estimate (``estimate_status``, ``estimate_reset``; trusted and no reset when no
estimator writes them) is read as the timed mission reads it: the first step waits, disarmed, until the estimate
is aligned, has its origin and a valid horizontal position (``mission_phase`` ``align``; the start is the estimate then, and ``until_time``
stays a time of the sim clock); a loss of the horizontal position in the air ends the steps for good: the
height and heading are held ``POSITION_LOSS_HOLD`` seconds with the horizontal goal on the estimate, then the
vehicle descends in place at ``POSITION_LOSS_SPEED``, lands, disarms and ends the run (``position_hold``,
``position_land``; ``mission_step`` stays at the step that was flown); and every position goal is shifted by
the estimator's resets.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

from nexus.core import Component
from nexus.core.spec import Output, Spec
from nexus.estimation.estimate_status import HORIZONTAL_VALID, RESET_SIGNAL, STATUS_SIGNAL
from nexus.guidance.kernels import START_STATUS
from nexus.guidance.mission import MISSION_INPUTS, MISSION_OUTPUTS
from nexus.guidance.profile import PHASES, MissionProfile, heading_of, smooth_step
from nexus.guidance.setpoint import Setpoint

#: The landing: how far below the start the goal sinks [m], and what counts as landed (height [m], speed
#: [m/s], for a time [s]), as the timed profile's defaults.
GROUND_PUSH, LANDED_HEIGHT, LANDED_SPEED, LANDED_TIME = 0.3, 0.1, 0.1, 0.5
#: After a loss of the horizontal position: the hold [s] and the descent's speed [m/s], the timed profile's
#: defaults (the hold is PX4's failsafe delay COM_FAIL_ACT_T).
POSITION_LOSS_HOLD = MissionProfile.position_loss_hold
POSITION_LOSS_SPEED = MissionProfile.land_speed

STEP_SPEC = Spec(
    name="StepMission",
    noun="mission",
    doc="A scenario's mission steps flown from the host; each step ends on its condition or its time limit.",
    params=(),
    inputs=MISSION_INPUTS,
    outputs=(*MISSION_OUTPUTS,
             Output("mission_step", wp.int32, recorded=True, doc="Index of the step flown (the step count: all ended)"),
             Output("mission_timeouts", wp.int32, recorded=True, doc="Steps ended by their time limit so far")),
    stage="mission",
    kind="guide",
    host=True,
)


class StepMission(Component):
    """Writes ``setpoint`` and ``armed`` step by step; ends the run once a ``land`` step has landed."""

    spec = STEP_SPEC
    #: Marks a guidance for tools that rebuild a ring without one (an open-loop replay).
    is_guidance = True

    def __init__(self, steps: list[dict], name: str = "/scene/mission"):
        super().__init__(name)
        self.steps = [dict(s) for s in steps]
        self.index = -1
        self.timeouts = 0
        self.start = None
        self.written = None
        #: ``align``, ``position_hold``, ``position_land`` or ``landed`` once entered (None while the steps fly).
        self.phase = None
        #: After a position loss: (height goal held [m, NED z], heading held [rad], the phase's start [s]).
        self.lost = None
        #: The estimator's reset sum this tick [m, NED]: added to every position goal.
        self.moved = np.zeros(3)

    def run(self, io) -> None:
        if self.phase == "landed":  # the run is over
            return
        now = float(io["time"].read())
        estimate = io["estimate"].read()
        status = int(io[STATUS_SIGNAL].read())
        self.moved = np.array([float(io[RESET_SIGNAL].read()[i]) for i in range(3)], dtype=np.float64)
        # Measured in the plan's frame: the estimate less the resets the goals are shifted by.
        position = np.array([estimate.position[i] for i in range(3)], dtype=np.float64) - self.moved
        speed = float(np.linalg.norm([estimate.velocity[i] for i in range(3)]))
        if self.start is None:  # the first estimate, or the first once the estimate is ready
            if status & START_STATUS != START_STATUS:
                if self.phase is None:
                    self.phase = "align"
                    io["armed"].write(0)
                    io["mission_phase"].write(PHASES.index("align"))
                self.goal, self.yaw = position.copy(), heading_of(estimate.attitude)
                self._write(io, now, curve=False)
                return
            self.start, self.start_yaw = position.copy(), heading_of(estimate.attitude)
            self.goal, self.yaw = position.copy(), self.start_yaw
            self.phase = None
            io["armed"].write(1)
            self._enter(0, now, io)
        if self.lost is None and self.index >= 0 and not status & HORIZONTAL_VALID:
            self._lose(now, io)
        if self.lost is not None:
            self._fly_lost(now, estimate, io)
            return
        while self.index < len(self.steps) and self._ended(now, position, speed, io, estimate):
            if self.index < 0:  # landed: the run is over
                return
            self._enter(self.index + 1, now, io)
        if self.index < 0:
            return
        self._write(io, now)

    # -- position loss ---------------------------------------------------------------------

    def _lose(self, now: float, io) -> None:
        """The horizontal position is lost in the air: hold the goal's height and heading now, never to resume."""
        self._goal_at(now)
        self.lost = (float(self.goal[2]), float(self.yaw), now)
        self.phase = "position_hold"
        io["mission_phase"].write(PHASES.index("position_hold"))
        self.rest_since = None

    def _fly_lost(self, now: float, estimate, io) -> None:
        """Hold, then descend in place; the horizontal goal is the estimate, so no position error drives the vehicle."""
        hold_z, yaw, since = self.lost
        if self.phase == "position_hold" and now - since >= POSITION_LOSS_HOLD:
            self.lost = (hold_z, yaw, now)
            since = now
            self.phase = "position_land"
            io["mission_phase"].write(PHASES.index("position_land"))
        z, reached = hold_z, False
        if self.phase == "position_land":
            sunk = hold_z + POSITION_LOSS_SPEED * (now - since)
            z, reached = min(sunk, self.start[2] + GROUND_PUSH), sunk >= self.start[2]
            if self._rested(now, estimate, reached):
                self.phase = "landed"
                io["mission_phase"].write(PHASES.index("landed"))
                io["armed"].write(0)
                self.index = -1
                io.finish()
                return
        self.goal = np.array([float(estimate.position[0]), float(estimate.position[1]), z]) - self.moved
        self.yaw = yaw
        self._write(io, now, curve=False)

    def _rested(self, now: float, estimate, reached: bool) -> bool:
        """Landed: within LANDED_HEIGHT of the start height (or the goal has sunk to it), vertically slower than
        LANDED_SPEED, for LANDED_TIME."""
        height = abs(float(estimate.position[2]) - self.moved[2] - self.start[2])
        resting = (height <= LANDED_HEIGHT or reached) and abs(float(estimate.velocity[2])) <= LANDED_SPEED
        self.rest_since = (self.rest_since if self.rest_since is not None else now) if resting else None
        return self.rest_since is not None and now - self.rest_since >= LANDED_TIME

    # -- steps -------------------------------------------------------------------------

    def _enter(self, index: int, now: float, io) -> None:
        """Begin step ``index``: its goal leg from where the goal is at ``now`` (the end of a leg that arrived)."""
        if index > 0:
            self._goal_at(now)
        self.index, self.entered = index, now
        io["mission_step"].write(index)
        self.leg = (self.goal.copy(), self.goal.copy(), now, 0.0)
        self.turn = (self.yaw, self.yaw, now, 0.0)
        self.rest_since = None
        if index == 0:
            io["mission_phase"].write(-1)
        if index >= len(self.steps):
            return
        step = self.steps[index]
        if step["do"] in ("takeoff", "goto"):
            north, east, height = step["to"]
            target = self.start + np.array([north, east, -height])
            if step.get("keep_xy"):
                target[:2] = self.goal[:2]
            distance = float(np.linalg.norm(target - self.goal))
            self.leg = (self.goal.copy(), target, now, distance / step["speed"])
        elif step["do"] == "turn":
            target = self.start_yaw + math.radians(step["heading"])
            self.turn = (self.yaw, target, now, abs(target - self.yaw) / math.radians(step["rate"]))
        elif step["do"] == "land":
            target = self.goal.copy()
            target[2] = self.start[2] + GROUND_PUSH
            self.leg = (self.goal.copy(), target, now, abs(target[2] - self.goal[2]) / step["speed"])

    def _ended(self, now: float, position: np.ndarray, speed: float, io, estimate) -> bool:
        """Whether the step flown has ended at ``now`` (by its condition or its time limit)."""
        if self.index >= len(self.steps):
            return False
        step = self.steps[index := self.index]
        arrived = now >= self.leg[2] + self.leg[3] and now >= self.turn[2] + self.turn[3]
        do = step["do"]
        done = False
        if do in ("takeoff", "goto"):
            done = arrived and float(np.linalg.norm(position - self.leg[1])) <= step["tolerance"]
        elif do == "turn":
            error = math.remainder(self._heading(io) - self.turn[1], 2.0 * math.pi)
            done = arrived and abs(error) <= math.radians(step["tolerance"])
        elif do == "hold":
            done = now - self.entered >= step["time"]
        elif do == "wait":
            done = ("until_time" in step and now >= step["until_time"]) or (
                "until_speed_below" in step and speed < step["until_speed_below"])
        elif do == "land":
            start, end, began, length = self.leg
            fraction = smooth_step((now - began) / length) if length > 0 else 1.0
            reached = start[2] + (end[2] - start[2]) * fraction >= self.start[2]
            if self._rested(now, estimate, reached):
                self.phase = "landed"
                io["mission_phase"].write(PHASES.index("landed"))
                io["armed"].write(0)
                io["mission_step"].write(index + 1)
                self.index = -1
                io.finish()
                return True
        if done:
            return True
        limit = step.get("time_limit")
        if limit is not None and now - self.entered >= limit:
            self.timeouts += 1
            io["mission_timeouts"].write(self.timeouts)
            return True
        return False

    def _heading(self, io) -> float:
        return heading_of(io["estimate"].read().attitude)

    def _goal_at(self, now: float) -> None:
        """The goal position and heading on the step's curves at ``now``."""
        start, end, began, length = self.leg
        fraction = smooth_step((now - began) / length) if length > 0 else 1.0
        self.goal = start + (end - start) * fraction
        y0, y1, began, length = self.turn
        self.yaw = y0 + (y1 - y0) * (smooth_step((now - began) / length) if length > 0 else 1.0)

    def _write(self, io, now: float, curve: bool = True) -> None:
        """The goal (on the step's curves at ``now`` unless ``curve`` is False), shifted by the resets, as the
        setpoint, written when it changes."""
        if curve:
            self._goal_at(now)
        goal = self.goal + self.moved if self.moved.any() else self.goal
        key = (float(goal[0]), float(goal[1]), float(goal[2]), float(self.yaw))
        if key == self.written:
            return
        setpoint = Setpoint()
        setpoint.position = wp.vec3(key[0], key[1], key[2])
        setpoint.yaw = key[3]
        io["setpoint"].write(setpoint)
        self.written = key
