"""The learning tasks: where the target is, how a world starts, what it is rewarded for, when it ends.

One table per task (:class:`Task`); the kernels in :mod:`nexus.gym.agent` read it
as a device struct, so the three tasks share one observation, reward and
reset kernel. docs/learning.md writes the reward terms and termination rules out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import warp as wp

from nexus.core.errors import BuildError

#: Task ids as the kernels know them.
HOVER, WAYPOINT, TRACK = 0, 1, 2


@wp.struct
class TaskParams:
    """A task as the kernels read it (lengths [m], times [s], angles [rad])."""

    kind: int
    #: The hover point / the reference's centre above the NED origin [m] (positive up).
    height: float
    #: Start: uniform position offset from the target [m] each axis, velocity [m/s], tilt [rad], yaw [rad].
    spawn_position: float
    spawn_velocity: float
    spawn_tilt: float
    spawn_yaw: float
    #: Waypoint: target offset drawn within ±this [m] on each horizontal axis, ±half of it vertically.
    waypoint_range: float
    #: Track: the figure-eight's half-width [m] and period [s].
    track_radius: float
    track_period: float
    #: Termination: position error [m], tilt (cosine of the largest tilt from level) [-], height above ground [m].
    max_error: float
    min_up: float
    min_height: float
    #: Reward weights.
    w_position: float
    w_precise: float
    w_velocity: float
    w_rates: float
    w_action: float
    crash_penalty: float


@dataclass(frozen=True)
class TaskTable:
    """What every task's table starts with: its name, its id as the kernels know it and its observation layout
    (names from :mod:`nexus.control.policy.features`); :meth:`params` hands the rest of it to the kernels."""

    name: str
    kind: int
    observation: tuple[tuple[str, int], ...]

    #: The device struct the kernels read (a subclass's): :meth:`params` fills it from the same-named fields.
    PARAMS: ClassVar[type]

    def params(self):
        p = self.PARAMS()
        for name in self.PARAMS.vars:
            setattr(p, name, getattr(self, name))
        return p


@dataclass(frozen=True)
class Task(TaskTable):
    """A single-agent task's name, its observation layout and its table."""

    PARAMS: ClassVar[type] = TaskParams
    #: Episode length [s]: the episode is truncated (not terminated) after it.
    episode_s: float = 5.0
    height: float = 1.5
    spawn_position: float = 0.5
    spawn_velocity: float = 0.3
    spawn_tilt: float = 0.2
    spawn_yaw: float = 0.3
    waypoint_range: float = 2.0
    track_radius: float = 1.0
    track_period: float = 8.0
    max_error: float = 2.5
    min_up: float = 0.3
    min_height: float = 0.15
    w_position: float = 1.0
    w_precise: float = 1.0
    w_velocity: float = 0.05
    w_rates: float = 0.02
    w_action: float = 0.01
    crash_penalty: float = 10.0

    @property
    def observation_width(self) -> int:
        return sum(width for _, width in self.observation)

    @property
    def layout(self) -> str:
        """The observation layout as ``nexus:observation`` metadata writes it."""
        return ",".join(f"{name}:{width}" for name, width in self.observation)


BASE_OBSERVATION = (("position_error_heading", 3), ("velocity_heading", 3), ("tilt_heading", 2), ("rates", 3),
                    ("yaw_error", 1))
TASKS = {
    "hover": Task("hover", HOVER, BASE_OBSERVATION),
    "waypoint": Task("waypoint", WAYPOINT, BASE_OBSERVATION, episode_s=8.0, spawn_position=0.1, max_error=5.0),
    "track": Task("track", TRACK, BASE_OBSERVATION + (("setpoint_velocity_heading", 3),), episode_s=10.0,
                  spawn_position=0.1),
}


def task_named(name: str, label: str = "task=") -> Task:
    """The task called ``name``; a one-line error naming the choices otherwise, and the setting as ``label`` names it
    (``task=`` for the environment's keyword, ``--task`` for ``nexus train``)."""

    if not isinstance(name, str) or name not in TASKS:
        quoted = f"{label}{name!r}" if label.endswith("=") else f"{label} {name}"
        raise BuildError(f"{quoted}: unknown task; choose one of {', '.join(TASKS)}")
    return TASKS[name]
