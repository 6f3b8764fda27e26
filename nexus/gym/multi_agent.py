"""A batched multi-agent environment: N worlds of K vehicles each, every vehicle an agent, stepped together.

:class:`SwarmVectorEnv` is a Gymnasium 1.x ``VectorEnv`` whose sub-environment is one world of K agents:
observations ``(worlds, agents, obs_dim)``, actions ``(worlds, agents, act_dim)``, rewards, terminations and
truncations ``(worlds, agents)``. One :meth:`~SwarmVectorEnv.step` writes the action rows, replays the graph for
``decimation`` ticks, and reads what the agent's kernels wrote (:mod:`nexus.gym.swarm_agent`).

Autoreset is per world, SAME_STEP: a world ends when any of its agents terminates (it crashed, flew out of
bounds, or came within the task's collision distance of another vehicle; ``terminated`` is set for that agent,
``truncated`` for the others) or when its time runs out (every agent truncated). Its vehicles share one
physical world, so a wreck cannot leave it and a lone respawn would drop a vehicle into the others' airspace:
the whole world restarts in the step it ended. The observation returned for it is the new episode's first;
``info["final_obs"]`` (mask ``info["_final_obs"]``, per world) holds each agent's last one.

On the CPU the arrays returned are NumPy views of the device arrays (the next step overwrites them).
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import warp as wp
from gymnasium.vector import AutoresetMode, VectorEnv

from nexus.core.errors import BuildError
from nexus.gym.agent import ACTION_MODES
from nexus.gym.env import (DEFAULT_POLICY_HZ, DEFAULT_TICK_HZ, ESTIMATOR_CHOICES, check_noise, check_seed,
                           check_worlds, decimation_of, fly_policy_step, keywords_of, learning_flight, refuse_unknown,
                           said)
from nexus.gym.swarm_agent import NEIGHBOUR_SOURCES, SwarmAgent
from nexus.gym.swarm_tasks import SwarmTask, swarm_task_named
from nexus.plant.fleet import DEFAULT_SPACING
from nexus.runtime.config import RunConfig


class SwarmVectorEnv(VectorEnv):
    """``num_envs`` worlds of ``vehicles`` copies of ``vehicle`` flying the multi-agent ``task`` (module doc).

    ``vehicles``, ``spacing`` [m] and ``vehicle_contact`` are ``nexus run``'s ``--vehicles``, ``--spacing`` and
    ``--vehicle-contact`` (docs/fleets.md). ``neighbours``: ``estimate`` (each neighbour's feature from its own
    estimate, as a broadcast would carry it) or ``truth``. ``action``, ``policy_hz``, ``tick_hz``, ``noise``
    (the own features' noise), ``vehicle``, ``scene``, ``device``, ``flight_seed``, ``estimator`` and
    ``first_world`` are :class:`~nexus.gym.env.NexusVectorEnv`'s.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, task: str | SwarmTask = "swap", vehicles: int = 4,
                 spacing: float = DEFAULT_SPACING, vehicle_contact: bool = True, neighbours: str = "estimate",
                 action: str = "ctbr", policy_hz: float = DEFAULT_POLICY_HZ, tick_hz: float = DEFAULT_TICK_HZ,
                 noise: float = 1.0, vehicle: str = "astro_max_base", scene: str = "empty", device: str = "cpu",
                 flight_seed: int = 0, estimator: str = "vehicle", first_world: int = 0, **unknown):
        if unknown:
            refuse_unknown(unknown, keywords_of(SwarmVectorEnv), type(self).__name__)
        self.task = swarm_task_named(task)
        if action not in ACTION_MODES:
            raise BuildError(f"{said('action=', action)}: unknown action; choose one of {', '.join(ACTION_MODES)}")
        if neighbours not in NEIGHBOUR_SOURCES:
            raise BuildError(f"{said('neighbours=', neighbours)}: choose one of {', '.join(NEIGHBOUR_SOURCES)} "
                             "(estimate: what each vehicle broadcasts)")
        if estimator not in ESTIMATOR_CHOICES:
            raise BuildError(f"{said('estimator=', estimator)}: unknown estimator; choose one of "
                             f"{', '.join(ESTIMATOR_CHOICES)}")
        if isinstance(vehicles, bool) or not isinstance(vehicles, (int, np.integer)) or vehicles < 2:
            raise BuildError(f"{said('vehicles=', vehicles)}: a multi-agent world holds at least two vehicles; "
                             "give a whole number, 2 or more (one vehicle: nexus/Hover-v0)")
        if (isinstance(spacing, bool) or not isinstance(spacing, (int, float)) or not math.isfinite(spacing)
                or spacing <= 0):
            raise BuildError(f"{said('spacing=', spacing)}: give the distance between neighbouring vehicles in "
                             "metres, above 0 (a spacing that makes them overlap is refused at the build)")
        self.num_envs = check_worlds(num_envs)
        self.vehicles = int(vehicles)
        self.first_world = check_seed(first_world, "first_world=")
        self.decimation = decimation_of(tick_hz, policy_hz)
        self.policy_hz, self.tick_hz, self.action_mode = float(policy_hz), float(tick_hz), action
        self.agent = SwarmAgent(self.task, vehicles=self.vehicles, action_mode=action, decimation=self.decimation,
                                noise=check_noise(noise), neighbours=neighbours)
        self.options = RunConfig(vehicle=vehicle, scene=scene, controller="pid", worlds=self.num_envs,
                                 seed=check_seed(flight_seed, "flight_seed="), tick_hz=float(tick_hz),
                                 record_mode="summary", device=device, ticks_per_replay=self.decimation,
                                 estimator=estimator, first_world=self.first_world, vehicles=self.vehicles,
                                 spacing=float(spacing), vehicle_contact=bool(vehicle_contact))
        self.flight = learning_flight(self.options, self.agent, device, self.decimation)
        self.loop = self.flight.loop
        self.device = self.flight.device
        self._start = self.loop.snapshot()
        agent = self.agent
        self.agents = self.vehicles
        self.action_width, self.observation_width = agent.action_width, agent.observation_width
        bound = float(np.finfo(np.float32).max)
        self.single_observation_space = gym.spaces.Box(-bound, bound, (self.vehicles, self.observation_width),
                                                       np.float32)
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (self.vehicles, self.action_width), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.episode_steps = agent.episode_steps
        self._views = None
        if wp.get_device(self.device).is_cpu:
            self._views = tuple(self._shaped(getattr(agent, name).numpy()) for name in
                                ("actions", "obs", "reward", "terminated", "truncated", "final_obs"))
        self._reset_once = False

    def _shaped(self, rows: np.ndarray) -> np.ndarray:
        """Slot rows as (worlds, agents, ...): a view (slot s is agent s % K of world s // K)."""
        return rows.reshape(self.num_envs, self.vehicles, *rows.shape[1:])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Every world starts afresh. With ``seed``: the whole graph goes back to its start and each vehicle's seed
        branch is drawn from (``seed``, world, vehicle): same seed, same episodes; without: each world's next."""
        if seed is not None or not self._reset_once:
            self.loop.restore(self._start)
            self.agent.seed(0 if seed is None else int(seed), self.first_world)
            self._reset_once = True
        else:
            self.agent.episode.assign(self.agent.episode.numpy() + 1)
        self.agent.reset_worlds(np.ones(self.num_envs, dtype=np.int32))
        wp.synchronize_device(self.device)
        return self._read()[0], {}

    def step(self, actions):
        obs, reward, terminated, truncated, final = fly_policy_step(self, actions)
        done = (terminated | truncated).any(axis=1)
        info: dict[str, Any] = {}
        if done.any():
            info = {"final_obs": np.where(done[:, None, None], final, 0.0).astype(np.float32), "_final_obs": done}
        return obs, reward, terminated, truncated, info

    def close(self, **kwargs):
        if getattr(self, "loop", None) is not None:
            self.loop.close()
            self.loop = None

    def _write(self, actions) -> None:
        shape = (self.num_envs, self.vehicles, self.action_width)
        if self._views is not None:
            rows = np.asarray(actions, dtype=np.float32)
            if rows.shape != shape:
                raise ValueError(f"actions of shape {rows.shape}; this environment takes {shape} ({self.num_envs} "
                                 f"worlds x {self.vehicles} agents x {self.action_width})")
            self._views[0][...] = rows
            return
        self.agent.actions.assign(np.asarray(actions, dtype=np.float32).reshape(-1, self.action_width))

    def _read(self):
        if self._views is not None:
            return self._views[1:]
        return tuple(self._shaped(getattr(self.agent, name).numpy()) for name in
                     ("obs", "reward", "terminated", "truncated", "final_obs"))

    def torch_views(self) -> dict:
        """The action, observation, reward and flag buffers as torch tensors sharing the device memory (DLPack),
        shaped (worlds, agents, ...)."""
        return {name: wp.to_torch(getattr(self.agent, name)).reshape(self.num_envs, self.vehicles, -1).squeeze(-1)
                for name in ("actions", "obs", "reward", "terminated", "truncated", "final_obs")}
