"""The multi-agent tasks: where each vehicle of a world starts and aims, what it is rewarded for, when a world ends.

One table per task (:class:`SwarmTask`), read by the kernels of :mod:`nexus.gym.swarm_agent` as a device
struct. The swap (the only task so far): the K vehicles of a world start hovering in their line (vehicle k
``height`` above where it settled, ``k x spacing`` east of vehicle 0) and vehicle k's goal is the start of
vehicle K-1-k, so the two ends cross the middle together and must pass each other. docs/fleets.md
writes the reward terms and the termination rules out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import warp as wp

from nexus.control.policy.features import NEIGHBOUR_BLOCK
from nexus.core.errors import BuildError
from nexus.gym.tasks import BASE_OBSERVATION, TaskTable

#: Task ids as the kernels know them.
SWAP = 0

#: What each neighbour adds to an agent's observation: its position and velocity relative to the agent's,
#: in the agent's heading frame [m, m/s] (the policy controller builds the same from the features' names).
NEIGHBOUR_FEATURES = NEIGHBOUR_BLOCK
NEIGHBOUR_WIDTH = sum(width for _, width in NEIGHBOUR_FEATURES)


@wp.struct
class SwarmParams:
    """A multi-agent task as the kernels read it (lengths [m], times [s], angles [rad])."""

    kind: int
    #: The height of every start and goal above the vehicle's own NED origin [m] (positive up).
    height: float
    #: Start: uniform offset from the vehicle's start [m] each axis, velocity [m/s], tilt [rad], yaw [rad].
    spawn_position: float
    spawn_velocity: float
    spawn_tilt: float
    spawn_yaw: float
    #: Termination: distance beyond the start-to-goal distance [m], tilt cosine [-], height above ground [m],
    #: the true distance between two vehicles' base origins that counts as a collision [m].
    error_margin: float
    min_up: float
    min_height: float
    collision_distance: float
    #: The proximity penalty grows as two vehicles come closer than this [m].
    safe_distance: float
    #: Reward weights.
    w_progress: float
    w_goal: float
    w_rates: float
    w_action: float
    w_proximity: float
    crash_penalty: float


@dataclass(frozen=True)
class SwarmTask(TaskTable):
    """A multi-agent task's name, its own-feature layout (as the single-agent tasks') and its table."""

    PARAMS: ClassVar[type] = SwarmParams
    #: Episode length [s]: every agent of a world is truncated after it.
    episode_s: float = 8.0
    height: float = 1.5
    spawn_position: float = 0.1
    spawn_velocity: float = 0.1
    spawn_tilt: float = 0.05
    spawn_yaw: float = 0.1
    error_margin: float = 2.5
    min_up: float = 0.3
    min_height: float = 0.15
    collision_distance: float = 1.0
    safe_distance: float = 1.6
    w_progress: float = 10.0
    w_goal: float = 1.0
    w_rates: float = 0.02
    w_action: float = 0.01
    w_proximity: float = 1.0
    crash_penalty: float = 10.0
    #: A velocity action's go-to-goal law gain [1/s] (0: none; :mod:`nexus.control.velocity_action`); the agent's
    #: layout carries it, not the reward table.
    goal_gain: float = 0.0
    #: The radius [m] within which that law's correction fades to 0 at the goal (0: never), and the fade's power [-].
    goal_fade: float = 0.0
    goal_fade_power: float = 1.0

    @property
    def own_width(self) -> int:
        """The agent's own features (the single-agent hover features, against its goal)."""
        return sum(width for _, width in self.observation)

    def observation_width_for(self, vehicles: int) -> int:
        """Own features, then ``NEIGHBOUR_WIDTH`` for each of the other ``vehicles - 1`` of the world."""
        return self.own_width + NEIGHBOUR_WIDTH * (vehicles - 1)


SWARM_TASKS = {"swap": SwarmTask("swap", SWAP, BASE_OBSERVATION)}


def swarm_task_named(name, label: str = "task=") -> SwarmTask:
    """The multi-agent task called ``name``; a one-line error naming the choices otherwise."""
    if isinstance(name, SwarmTask):
        return name
    if not isinstance(name, str) or name not in SWARM_TASKS:
        raise BuildError(f"{label}{name!r}: unknown multi-agent task; choose one of {', '.join(SWARM_TASKS)}")
    return SWARM_TASKS[name]
