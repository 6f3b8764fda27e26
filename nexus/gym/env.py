"""Gymnasium environments over the worlds of one Nexus graph.

:class:`NexusVectorEnv` is a Gymnasium 1.x ``VectorEnv``: N worlds of one
vehicle in one captured graph, stepped together. One :meth:`~NexusVectorEnv.step`
writes the action rows, replays the graph for ``decimation`` ticks (the
policy's period), and reads the observation, reward and flag rows the
agent's kernels wrote (:mod:`nexus.gym.agent`). Its autoreset mode is
``SAME_STEP``: a world that terminates or is truncated is put back at a fresh
start inside the same step, the observation returned for it is the new
episode's first, and ``info["final_obs"]`` (with the mask ``info["_final_obs"]``)
holds the last one of the episode that ended.

On the CPU the observation, reward and flag arrays returned are NumPy views
of the device arrays: the next step overwrites them (copy what you keep). On
CUDA :meth:`NexusVectorEnv.torch_views` gives the same buffers as torch
tensors through DLPack (``wp.to_torch``), without a host copy.

:class:`NexusEnv` is one world as a plain ``gymnasium.Env`` (its own copies).
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import warp as wp
from gymnasium.vector import AutoresetMode, VectorEnv

from nexus.core.errors import BuildError
from nexus.gym.agent import ACTION_MODES, OBSERVE_MODES, LearningAgent
from nexus.gym.episode_draws import EpisodeDraws, refuse_start_keys
from nexus.gym.tasks import Task, task_named

#: The policy's rate and the tick it is decimated from, as a companion computer flies [Hz].
DEFAULT_POLICY_HZ = 50.0
DEFAULT_TICK_HZ = 250.0


def decimation_of(tick_hz: float, policy_hz: float) -> int:
    """Ticks per policy step; a policy rate that is not a whole number of ticks is a one-line error."""
    if not policy_hz or policy_hz <= 0 or not math.isfinite(policy_hz):
        raise BuildError(f"--policy-hz {policy_hz}: give a positive rate that divides the tick rate {tick_hz:g} Hz")
    ratio = float(tick_hz) / float(policy_hz)
    whole = round(ratio)
    if whole < 1 or abs(ratio - whole) > 1e-9 * max(1.0, ratio):
        raise BuildError(f"--policy-hz {policy_hz:g}: the tick rate {tick_hz:g} Hz / {policy_hz:g} Hz is {ratio:g} "
                         f"ticks, not a whole number; give a rate that divides {tick_hz:g} Hz (e.g. 50 or 125)")
    return int(whole)


def check_worlds(worlds) -> int:
    if isinstance(worlds, bool) or not isinstance(worlds, (int, np.integer)) or worlds < 1:
        raise BuildError(f"--worlds {worlds}: training flies at least one world; give a whole number, 1 or more")
    return int(worlds)


class NexusVectorEnv(VectorEnv):
    """``num_envs`` worlds of ``vehicle`` flying ``task`` in one graph (see the module doc).

    ``action``: ``ctbr`` (collective thrust about hover and body rates, each in [-1, 1]) or ``motors``
    (each rotor's ESC command, [-1, 1] mapped to [0, 1]). Actions outside [-1, 1] are clipped, not refused.
    ``noise`` scales the observation noise (0: none). ``vary``: a variation file; each world draws the
    parameters of :data:`~nexus.gym.episode_draws.PER_EPISODE` afresh at every episode from its seed branch
    (:mod:`nexus.gym.episode_draws`), the others once, at build. ``flight_seed`` seeds the flight's own
    streams (sensors, turbulence). ``render_mode="human"`` serves world 0 in the live browser view of
    ``nexus run --view`` at ``render_host:render_port`` (0: any free port).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["human"]}

    def __init__(self, num_envs: int = 1, task: str | Task = "hover", action: str = "ctbr",
                 policy_hz: float = DEFAULT_POLICY_HZ, tick_hz: float = DEFAULT_TICK_HZ, noise: float = 1.0,
                 vary: str | None = None, vehicle: str = "astro_max_base", scene: str = "empty", device: str = "cpu",
                 flight_seed: int = 0, render_mode: str | None = None, render_host: str = "127.0.0.1",
                 render_port: int = 8080, observe: str = "estimate"):
        from nexus.runtime.flight import RunConfig, build_flight  # noqa: PLC0415
        from nexus.runtime.startup import start  # noqa: PLC0415

        self.task = task if isinstance(task, Task) else task_named(task)
        if action not in ACTION_MODES:
            raise BuildError(f"unknown action '{action}'; choose one of {', '.join(ACTION_MODES)}")
        if observe not in OBSERVE_MODES:
            raise BuildError(f"unknown observe '{observe}'; choose one of {', '.join(OBSERVE_MODES)}")
        if render_mode not in (None, "human"):
            raise BuildError(f"render_mode {render_mode!r}: this environment renders 'human' (world 0 in the live "
                             "browser view of `nexus run --view`) or nothing (None)")
        if render_mode == "human":  # a busy port fails here, before anything is built
            from nexus.viz.viewer import check_port  # noqa: PLC0415

            render_port = check_port(render_host, render_port, "render_port=", "render_host=")
        self.num_envs = check_worlds(num_envs)
        if vary:
            refuse_start_keys(vary)
        self.decimation = decimation_of(tick_hz, policy_hz)
        self.policy_hz, self.tick_hz, self.action_mode = float(policy_hz), float(tick_hz), action
        self.render_mode = render_mode
        self.agent = LearningAgent(self.task, action_mode=action, decimation=self.decimation, noise=noise,
                                    observe=observe)
        self.options = RunConfig(vehicle=vehicle, scene=scene, controller="pid", worlds=self.num_envs,
                                 seed=int(flight_seed), tick_hz=float(tick_hz), vary=vary, record_mode="summary",
                                 device=device, ticks_per_replay=self.decimation)
        self.flight = build_flight(self.options, device=None if device != "cpu" else "cpu",
                                   replace_controller=self.agent)
        self.loop = self.flight.loop
        self.device = self.flight.device
        start(self.loop, self.flight.vehicle.plant)
        if self.loop.ticks_per_replay != self.decimation:
            raise BuildError(f"a component of this flight replays at most {self.loop.ticks_per_replay} ticks, fewer "
                             f"than the {self.decimation} ticks of a policy step; give a higher --policy-hz")
        self._start = self.loop.snapshot()
        self.draws = EpisodeDraws(self.flight, vary) if vary else None
        agent = self.agent
        self.action_width = agent.action_width
        self.observation_width = agent.observation_width
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (self.observation_width,), np.float32)
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, (self.action_width,), np.float32)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.episode_steps = agent.episode_steps
        on_cpu = wp.get_device(self.device).is_cpu
        self._views = None
        if on_cpu:
            self._views = (agent.actions.numpy(), agent.obs.numpy(), agent.reward.numpy(), agent.terminated.numpy(),
                           agent.truncated.numpy(), agent.final_obs.numpy())
        self._seed: int | None = None
        self._reset_once = False
        self.live = None
        if render_mode == "human":
            from nexus.viz.live import LiveView  # noqa: PLC0415

            self.live = LiveView(self.flight, render_host, render_port)

    # -- Gymnasium ------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Every world starts afresh. With ``seed``: the whole graph goes back to its start and each world's seed
        branch is drawn from ``seed`` (same seed, same episodes, bit for bit); without: each world's next episode."""
        if seed is not None or not self._reset_once:
            self._seed = 0 if seed is None else int(seed)
            self.loop.restore(self._start)
            self.agent.seed(self._seed)
            self._reset_once = True
            episode = np.zeros(self.num_envs, dtype=np.int32)
        else:
            episode = self.agent.episode.numpy() + 1
            self.agent.episode.assign(episode)
        if self.draws is not None:
            self.draws.apply(self._seed, np.arange(self.num_envs), episode)
        self.agent.reset_worlds(np.ones(self.num_envs, dtype=np.int32), self.loop.done_flag)
        if self.agent.observe == "sensors":
            self.agent.write_sensor_features(*(self.loop.output(name) for name in ("imu", "baro", "gps")), True)
        wp.synchronize_device(self.device)
        if self.live is not None:
            self._new_path()
        return self._read()[0], {}

    def step(self, actions):
        if not self._reset_once:
            raise gym.error.ResetNeeded("call reset() before step()")
        self._write(actions)
        self.loop.advance(self.decimation)
        self.loop._finish_requested = False  # a world's end is the agent's to handle, not the flight's
        obs, reward, terminated, truncated, final = self._read()
        done = terminated | truncated
        info: dict[str, Any] = {}
        if done.any():
            if self.draws is not None:  # the worlds that reset fly their new episode on fresh draws
                worlds = np.flatnonzero(done)
                self.draws.apply(self._seed, worlds, self.agent.episode.numpy()[worlds])
            info = {"final_obs": np.where(done[:, None], final, 0.0).astype(np.float32), "_final_obs": done.copy()}
        if self.live is not None:
            if done[0]:
                self._new_path()
            else:
                self.live.update(self.loop.sim_time)  # within the view's wall-time budget
        return obs, reward, terminated, truncated, info

    def _new_path(self) -> None:
        """World 0 started an episode: its path starts afresh and the next step draws. The published pose is the
        last tick's until then (the reset moved the body after it), so nothing is drawn now."""
        self.live.flown.clear()
        self.live.next_at = 0.0

    def render(self):
        """``human``: draw world 0 now in the live view (:attr:`render_url`); steps draw it within the view's
        wall-time budget anyway. Returns None, as Gymnasium's human mode does."""
        if self.live is not None:
            self.live.update(self.loop.sim_time, force=True)
        return None

    @property
    def render_url(self) -> str | None:
        """Where the live view serves (``render_mode="human"``), else None."""
        return None if self.live is None else self.live.url

    def close(self, **kwargs):
        if getattr(self, "live", None) is not None:
            self.live.close()
            self.live = None
        if getattr(self, "loop", None) is not None:
            self.loop.close()
            self.loop = None

    # -- buffers ---------------------------------------------------------------------------

    def _write(self, actions) -> None:
        if self._views is not None:
            rows = np.asarray(actions, dtype=np.float32)
            if rows.shape != self._views[0].shape:
                raise ValueError(f"actions of shape {rows.shape}; this environment takes {self._views[0].shape} "
                                 f"({self.num_envs} worlds x {self.action_width})")
            self._views[0][...] = rows
            return
        import torch  # noqa: PLC0415

        if isinstance(actions, torch.Tensor):
            wp.copy(self.agent.actions, wp.from_torch(actions.detach().to(torch.float32).contiguous()))
        else:
            self.agent.actions.assign(np.asarray(actions, dtype=np.float32))

    def _read(self):
        if self._views is not None:
            _, obs, reward, terminated, truncated, final = self._views
            return obs, reward, terminated, truncated, final
        return (self.agent.obs.numpy(), self.agent.reward.numpy(), self.agent.terminated.numpy(),
                self.agent.truncated.numpy(), self.agent.final_obs.numpy())

    def torch_views(self) -> dict:
        """The action, observation, reward and flag buffers as torch tensors sharing the device memory (DLPack)."""
        a = self.agent
        return {name: wp.to_torch(getattr(a, name)) for name in
                ("actions", "obs", "reward", "terminated", "truncated", "final_obs")}


class NexusEnv(gym.Env):
    """One world of :class:`NexusVectorEnv` as a ``gymnasium.Env``: after a terminal step call :meth:`reset`.

    Its observations are copies; the terminal step returns that episode's last observation.
    """

    metadata = {"render_modes": ["human"]}

    def __init__(self, **kwargs):
        kwargs.pop("num_envs", None)
        self.vector = NexusVectorEnv(num_envs=1, **kwargs)
        self.observation_space = self.vector.single_observation_space
        self.action_space = self.vector.single_action_space
        self.render_mode = self.vector.render_mode

    def render(self):
        return self.vector.render()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        obs, info = self.vector.reset(seed=seed, options=options)
        return obs[0].copy(), {}

    def step(self, action):
        obs, reward, terminated, truncated, info = self.vector.step(np.asarray(action, dtype=np.float32)[None, :])
        done = bool(terminated[0] or truncated[0])
        row = info["final_obs"][0] if done else obs[0]
        return row.copy(), float(reward[0]), bool(terminated[0]), bool(truncated[0]), {}

    def close(self):
        self.vector.close()
