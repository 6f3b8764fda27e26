"""PPO on the multi-agent swap with one policy shared by every vehicle: the (worlds x agents) batch flattened into
the learner's environments.

:class:`FlatSwarmEnv` wraps :class:`~nexus.gym.multi_agent.SwarmVectorEnv` as a Gymnasium vector environment of
``worlds x vehicles`` rows (row ``w x K + k`` is vehicle k of world w, the fleet's slot order), each row one
vehicle's observation (its own features, then its neighbours') and action. skrl's PPO then learns one policy
and one value over all of them: parameter sharing, every vehicle an equal sample of the same decentralised
policy. A world ends for all its agents at once (its crashed vehicle terminated, the others truncated, so PPO
bootstraps their value), which is what the flat rows carry.

The ONNX export declares the neighbours in ``nexus:observation``: the own features, then
``neighbour_position_heading:3,neighbour_velocity_heading:3`` once for each of the other K - 1 vehicles, and
``nexus:vehicles`` (K), which ``nexus run --controller policy --vehicles K`` checks and builds the same rows from.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from nexus.control.velocity_action import VELOCITY_LIMITS, VelocityScaling
from nexus.gym.export import export_onnx
from nexus.gym.multi_agent import SwarmVectorEnv
from nexus.gym.swarm_tasks import NEIGHBOUR_FEATURES, swarm_task_named

#: The reward weights ``nexus train`` changes from the environment's (docs/fleets.md): on the environment's own
#: weights a shared policy learns to rush the goal, the two middle vehicles meeting head on within a second (the
#: progress they make, 10 per metre, pays for the crash's 10); a collision costs 30 here and closeness three times
#: as much, so passing each other pays.
TRAINING_REWARD = {"crash_penalty": 30.0, "w_proximity": 3.0}
#: With velocity actions the closeness above stalls the swap (docs/fleets.md): a policy flying 1.5 m/s makes
#: 10 x 0.03 = 0.3 of progress a step, and two neighbours 1.2 m away cost 2 x 3 x (1 - 1.2/1.6)² = 0.375, so the
#: vehicles learnt to stop about 2 m short of their goals, 1.2 to 1.5 m from each other (6.4 M steps). Here
#: closeness costs from 1.4 m, at a third of the weight; a collision still costs 30.
VELOCITY_TRAINING_REWARD = {"crash_penalty": 30.0, "w_proximity": 1.0, "safe_distance": 1.4}
#: The task's reward terms and distances [m] the export records in ``nexus:reward``.
REWARD_FIELDS = ("w_progress", "w_goal", "w_proximity", "safe_distance", "w_rates", "w_action", "crash_penalty",
                 "collision_distance")


def swarm_layout(task, vehicles: int) -> str:
    """``nexus:observation`` for ``task`` with ``vehicles`` a world: own features, then each neighbour's."""
    own = [f"{name}:{width}" for name, width in task.observation]
    neighbour = [f"{name}:{width}" for name, width in NEIGHBOUR_FEATURES]
    return ",".join(own + neighbour * (vehicles - 1))


class FlatSwarmEnv(VectorEnv):
    """A :class:`SwarmVectorEnv` whose (worlds, agents) rows are ``worlds x agents`` environments of one agent."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, swarm: SwarmVectorEnv):
        self.swarm = swarm
        self.worlds, self.vehicles = swarm.num_envs, swarm.vehicles
        self.num_envs = self.worlds * self.vehicles
        self.observation_width, self.action_width = swarm.observation_width, swarm.action_width
        self.action_mode, self.policy_hz, self.tick_hz = swarm.action_mode, swarm.policy_hz, swarm.tick_hz
        self.hover_fraction = swarm.agent.hover_fraction
        bound = float(np.finfo(np.float32).max)
        self.single_observation_space = gym.spaces.Box(-bound, bound, (self.observation_width,), np.float32)
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (self.action_width,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.task = _ExportedTask(swarm.task.name, swarm_layout(swarm.task, self.vehicles))

    def reset(self, *, seed=None, options=None):
        obs, info = self.swarm.reset(seed=seed, options=options)
        return obs.reshape(self.num_envs, -1), info

    def step(self, actions):
        rows = np.asarray(actions, dtype=np.float32).reshape(self.worlds, self.vehicles, self.action_width)
        obs, reward, terminated, truncated, info = self.swarm.step(rows)
        flat = {}
        if info:
            flat = {"final_obs": info["final_obs"].reshape(self.num_envs, -1),
                    "_final_obs": np.repeat(info["_final_obs"], self.vehicles)}
        return (obs.reshape(self.num_envs, -1), reward.reshape(-1), terminated.reshape(-1), truncated.reshape(-1),
                flat)

    def export(self, agent, path: Path) -> Path:
        """policy.onnx, its metadata naming the neighbours, the vehicles a world and the reward it was trained with."""
        task = self.swarm.task
        reward = ",".join(f"{name}={getattr(task, name):g}" for name in REWARD_FIELDS)
        extra = {"nexus:vehicles": str(self.vehicles), "nexus:reward": reward}
        if task.goal_gain > 0.0:
            extra.update(VelocityScaling(VELOCITY_LIMITS, task.goal_gain, task.goal_fade,
                                         task.goal_fade_power).metadata())
        return export_onnx(agent, self, path, None, extra=extra)

    def close(self, **kwargs):
        self.swarm.close()


class _ExportedTask:
    """What the exporter reads of a task: its name and its observation layout."""

    def __init__(self, name: str, layout: str):
        self.name, self.layout = name, layout


def configured_task(config):
    """A :class:`~nexus.gym.training.TrainConfig`'s multi-agent task: its go-to-goal law and its episode, on the
    task's own reward (the training's environment and its scoring of the bar both fly this)."""
    return replace(swarm_task_named(config.task), goal_gain=float(config.goal_gain), goal_fade=float(config.goal_fade),
                   goal_fade_power=float(config.goal_fade_power), episode_s=float(config.episode_s))


def make_swarm_env(config) -> FlatSwarmEnv:
    """The flattened swap environment for a :class:`~nexus.gym.training.TrainConfig`."""
    reward = VELOCITY_TRAINING_REWARD if config.action == "velocity" else TRAINING_REWARD
    task = replace(configured_task(config), **reward)
    return FlatSwarmEnv(SwarmVectorEnv(num_envs=config.worlds, task=task, vehicles=config.vehicles,
                                       spacing=float(config.spacing), vehicle_contact=bool(config.vehicle_contact),
                                       action=config.action, policy_hz=config.policy_hz, tick_hz=config.tick_hz,
                                       noise=config.noise, vehicle=config.vehicle, flight_seed=config.seed))
