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

import difflib
import inspect
import math
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import warp as wp
from gymnasium.vector import AutoresetMode, VectorEnv

from nexus.core.errors import BuildError
from nexus.gym.agent import ACTION_MODES, OBSERVE_MODES, LearningAgent
from nexus.gym.episode_draws import EpisodeDraws, refuse_start_keys
from nexus.gym.tasks import Task, task_named
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.runtime.pacing import Pacer, check_factor
from nexus.runtime.startup import start
from nexus.viz.live import BUDGET, PACED_BUDGET, LiveView
from nexus.viz.viewer import check_port

#: The policy's rate and the tick it is decimated from, as a companion computer flies [Hz].
DEFAULT_POLICY_HZ = 50.0
DEFAULT_TICK_HZ = 250.0


def said(label: str, value) -> str:
    """How an error quotes a setting: ``num_envs=0`` for a keyword (``label`` ends in ``=``), ``--worlds 0`` for a
    command-line option (``nexus train`` passes its option names as the labels)."""
    if label.endswith("="):
        return f"{label}{value!r}"
    return f"{label} {value:g}" if isinstance(value, float) else f"{label} {value}"


def decimation_of(tick_hz: float, policy_hz: float, policy_label: str = "policy_hz=",
                  tick_label: str = "tick_hz=") -> int:
    """Ticks per policy step; a policy rate that is not a whole number of ticks is a one-line error."""
    if isinstance(tick_hz, bool) or not isinstance(tick_hz, (int, float)) or not math.isfinite(tick_hz) or tick_hz <= 0:
        raise BuildError(f"{said(tick_label, tick_hz)}: give a positive tick rate [Hz], e.g. 250")
    if (isinstance(policy_hz, bool) or not isinstance(policy_hz, (int, float)) or not math.isfinite(policy_hz)
            or policy_hz <= 0):
        raise BuildError(f"{said(policy_label, policy_hz)}: give a positive rate [Hz] that divides the tick rate "
                         f"{tick_hz:g} Hz (e.g. 50 or 125)")
    ratio = float(tick_hz) / float(policy_hz)
    whole = round(ratio)
    if whole < 1 or abs(ratio - whole) > 1e-9 * max(1.0, ratio):
        raise BuildError(f"{said(policy_label, policy_hz)}: the tick rate {tick_hz:g} Hz / {policy_hz:g} Hz is "
                         f"{ratio:g} ticks, not a whole number; give a rate that divides {tick_hz:g} Hz (e.g. 50 or 125)")
    return int(whole)


def check_worlds(worlds, label: str = "num_envs=") -> int:
    if isinstance(worlds, bool) or not isinstance(worlds, (int, np.integer)) or worlds < 1:
        raise BuildError(f"{said(label, worlds)}: training flies at least one world; give a whole number, 1 or more")
    return int(worlds)


def check_noise(noise, label: str = "noise=") -> float:
    """The observation noise scale: a finite number, 0 (none) or more."""
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not math.isfinite(noise) or noise < 0:
        raise BuildError(f"{said(label, noise)}: the observation noise scale is 0 (no noise) or more; 1 is the "
                         "documented noise (docs/learning.md)")
    return float(noise)


def check_seed(seed, label: str) -> int:
    """A seed: a whole number, 0 or more (NumPy's SeedSequence takes no negative seed)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise BuildError(f"{said(label, seed)}: give a whole number, 0 or more")
    return int(seed)


class UnknownKeyword(BuildError, TypeError):
    """A keyword the environment does not take (a ``TypeError``, as Python's own, that names the valid ones)."""


def refuse_unknown(unknown: dict, valid: list[str], owner: str) -> None:
    """Refuse the first of ``unknown``'s keywords in one line: the nearest valid keyword and all of them."""
    name = next(iter(unknown))
    near = difflib.get_close_matches(name, valid, n=1)
    hint = f"did you mean {near[0]}=? " if near else ""
    raise UnknownKeyword(f"{owner}: unknown keyword {name}={unknown[name]!r}; {hint}the keywords are "
                         f"{', '.join(valid)}")


def keywords_of(cls) -> list[str]:
    """The keywords ``cls(...)`` takes, in order (``self`` and the catch-all left out)."""
    return [name for name, p in inspect.signature(cls.__init__).parameters.items()
            if name != "self" and p.kind is not inspect.Parameter.VAR_KEYWORD]


def check_render_address(host, port) -> None:
    """``render_host`` and ``render_port`` as values (no socket: the view binds its port at the first step)."""
    if not isinstance(host, str) or not host:
        raise BuildError(f"{said('render_host=', host)}: give an address of this machine, such as '127.0.0.1'")
    if isinstance(port, bool) or not isinstance(port, (int, np.integer)) or not 0 <= port <= 65535:
        raise BuildError(f"{said('render_port=', port)}: give a port from 1 to 65535, or 0 to let the system pick "
                         "a free one")


def learning_flight(options: RunConfig, agent, device: str, decimation: int):
    """The flight ``options`` describe with ``agent`` in the controller's place, started. The task ends episodes,
    not the crash check; a component that replays fewer ticks than a policy step's ``decimation`` is refused."""
    flight = build_flight(options, device=None if device != "cpu" else "cpu", replace_controller=agent,
                          detect_crash=False)
    start(flight.loop, flight.vehicle.plant)
    if flight.loop.ticks_per_replay != decimation:
        raise BuildError(f"a component of this flight replays at most {flight.loop.ticks_per_replay} ticks, fewer "
                         f"than the {decimation} ticks of a policy step; give a higher policy_hz")
    return flight


def fly_policy_step(env, actions):
    """Write ``env``'s action rows, fly one policy step (``env.decimation`` ticks) and read the agent's rows back:
    observations, rewards, terminations, truncations and final observations."""
    if not env._reset_once:
        raise gym.error.ResetNeeded("call reset() before step()")
    env._write(actions)
    env.loop.advance(env.decimation)
    env.loop.cancel_finish()  # a world's end is the agent's to handle, not the flight's
    return env._read()


#: What writes the estimate the policy's features read (RunConfig.estimator): the vehicle file's own estimator,
#: the truth (the vehicle's true state, for learning without an estimator's errors) or the error-state EKF.
ESTIMATOR_CHOICES = ("vehicle", "truth", "ekf")


def check_keywords(*, num_envs, task, action, policy_hz, tick_hz, noise, vary, flight_seed, render_mode, render_host,
                   render_port, observe, realtime, estimator, first_world) -> Task:
    """Every keyword's value checked before anything is built (one-line errors naming the keyword); the task."""
    task = task if isinstance(task, Task) else task_named(task, "task=")
    if action not in ACTION_MODES:
        raise BuildError(f"{said('action=', action)}: unknown action; choose one of {', '.join(ACTION_MODES)}")
    if observe not in OBSERVE_MODES:
        raise BuildError(f"{said('observe=', observe)}: unknown observation; choose one of "
                         f"{', '.join(OBSERVE_MODES)}")
    if render_mode not in (None, "human"):
        raise BuildError(f"render_mode {render_mode!r}: this environment renders 'human' (world 0 in the live "
                         "browser view of `nexus run --view`) or nothing (None)")
    if render_mode == "human":  # the values only: the port is bound at the first step, when the view starts
        check_render_address(render_host, render_port)
        if realtime is not None:
            check_factor(realtime, "realtime=")
    check_worlds(num_envs)
    check_noise(noise)
    check_seed(flight_seed, "flight_seed=")
    if estimator not in ESTIMATOR_CHOICES:
        raise BuildError(f"{said('estimator=', estimator)}: unknown estimator; choose one of "
                         f"{', '.join(ESTIMATOR_CHOICES)} (vehicle: the one its file declares)")
    check_seed(first_world, "first_world=")
    if vary:
        if not Path(vary).is_file():
            raise BuildError(f"{said('vary=', vary)}: no such variation file; give the path of a TOML variation "
                             "file (docs/worlds.md)")
        refuse_start_keys(vary)
    decimation_of(tick_hz, policy_hz)
    return task


class NexusVectorEnv(VectorEnv):
    """``num_envs`` worlds of ``vehicle`` flying ``task`` in one graph (see the module doc).

    ``action``: ``ctbr`` (collective thrust about hover and body rates, each in [-1, 1]) or ``motors``
    (each rotor's ESC command, [-1, 1] mapped to [0, 1]). Actions outside [-1, 1] are clipped, not refused.
    ``noise`` scales the observation noise (0: none). ``vary``: a variation file; each world draws the
    parameters of :data:`~nexus.gym.episode_draws.PER_EPISODE` afresh at every episode from its seed branch
    (:mod:`nexus.gym.episode_draws`), the others once, at build. ``flight_seed`` seeds the flight's own
    streams (sensors, turbulence). ``render_mode="human"`` serves world 0 in the live browser view of
    ``nexus run --view`` at ``render_host:render_port`` (0: any free port), from the first step on (building,
    resetting and closing the environment bind no port), each step held to ``realtime`` times real time against the
    wall clock (1 by default; None: as fast as the machine can), as ``nexus run --realtime`` holds a run: the
    pacing changes no observation. An unknown keyword is an :class:`UnknownKeyword` naming
    the valid ones; a bad value a one-line :class:`~nexus.core.errors.BuildError` naming the keyword, raised
    before anything is built.
    """

    #: ``render_fps`` is set per environment: its policy rate [Hz], one drawn step per policy step.
    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["human"]}

    def __init__(self, num_envs: int = 1, task: str | Task = "hover", action: str = "ctbr",
                 policy_hz: float = DEFAULT_POLICY_HZ, tick_hz: float = DEFAULT_TICK_HZ, noise: float = 1.0,
                 vary: str | None = None, vehicle: str = "astro_max_base", scene: str = "empty", device: str = "cpu",
                 flight_seed: int = 0, render_mode: str | None = None, render_host: str = "127.0.0.1",
                 render_port: int = 8080, observe: str = "estimate", realtime: float | None = 1.0,
                 estimator: str = "vehicle", first_world: int = 0, **unknown):
        if unknown:
            refuse_unknown(unknown, keywords_of(NexusVectorEnv), type(self).__name__)
        self.task = check_keywords(num_envs=num_envs, task=task, action=action, policy_hz=policy_hz, tick_hz=tick_hz,
                                   noise=noise, vary=vary, flight_seed=flight_seed, render_mode=render_mode,
                                   render_host=render_host, render_port=render_port, observe=observe,
                                   realtime=realtime, estimator=estimator, first_world=first_world)
        self.num_envs, noise, flight_seed = int(num_envs), float(noise), int(flight_seed)
        self.first_world = int(first_world)
        self.decimation = decimation_of(tick_hz, policy_hz)
        self.policy_hz, self.tick_hz, self.action_mode = float(policy_hz), float(tick_hz), action
        self.render_mode = render_mode
        self.metadata = {**type(self).metadata, "render_fps": self.policy_hz}
        self.agent = LearningAgent(self.task, action_mode=action, decimation=self.decimation, noise=noise,
                                    observe=observe)
        self.options = RunConfig(vehicle=vehicle, scene=scene, controller="pid", worlds=self.num_envs,
                                 seed=int(flight_seed), tick_hz=float(tick_hz), vary=vary, record_mode="summary",
                                 device=device, ticks_per_replay=self.decimation, estimator=estimator,
                                 first_world=self.first_world)
        self.flight = learning_flight(self.options, self.agent, device, self.decimation)
        self.loop = self.flight.loop
        self.device = self.flight.device
        self._start = self.loop.snapshot()
        self.draws = EpisodeDraws(self.flight, vary) if vary else None
        agent = self.agent
        self.action_width = agent.action_width
        self.observation_width = agent.observation_width
        # The estimate's features are finite (a world whose state stops being finite restarts in that step); a
        # raw sensor's sample can hold a blown-up world's value until its next sample.
        bound = np.inf if observe == "sensors" else float(np.finfo(np.float32).max)
        self.single_observation_space = gym.spaces.Box(-bound, bound, (self.observation_width,), np.float32)
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
        self._render_address = (render_host, render_port)
        #: ``human`` mode: each step held to ``realtime`` times real time (:mod:`nexus.runtime.pacing`); else None.
        self.pacer = None
        if render_mode == "human" and realtime is not None:
            self.pacer = Pacer(realtime, self.loop.dt_ns, option="realtime=")

    # -- Gymnasium ------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Every world starts afresh. With ``seed``: the whole graph goes back to its start and each world's seed
        branch is drawn from ``seed`` (same seed, same episodes, bit for bit); without: each world's next episode."""
        if seed is not None or not self._reset_once:
            self._seed = 0 if seed is None else int(seed)
            self.loop.restore(self._start)
            self.agent.seed(self._seed, self.first_world)
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
        obs, reward, terminated, truncated, final = fly_policy_step(self, actions)
        done = terminated | truncated
        info: dict[str, Any] = {}
        if done.any():
            if self.draws is not None:  # the worlds that reset fly their new episode on fresh draws
                worlds = np.flatnonzero(done)
                self.draws.apply(self._seed, worlds, self.agent.episode.numpy()[worlds])
            info = {"final_obs": np.where(done[:, None], final, 0.0).astype(np.float32), "_final_obs": done.copy()}
        if self.render_mode == "human":
            if self.pacer is not None:  # the step's ticks due on the wall clock first, then drawn
                self.pacer.advanced(self.decimation)
            live = self._serve()
            if done[0]:
                self._new_path()
            else:
                live.update(self.loop.sim_time)  # within the view's wall-time budget
        return obs, reward, terminated, truncated, info

    def _serve(self):
        """The live view of ``human`` mode, started at the first step: its port is bound then (a busy one is a
        one-line error naming ``render_port=``), so building, resetting and closing need no port."""
        if self.live is None:
            host, port = self._render_address
            self.live = LiveView(self.flight, host, check_port(host, port, "render_port=", "render_host="),
                                 budget=PACED_BUDGET if self.pacer is not None else BUDGET)  # paced: mostly asleep
        return self.live

    def _new_path(self) -> None:
        """World 0 started an episode: its path starts afresh and the next step draws. The published pose is the
        last tick's until then (the reset moved the body after it), so nothing is drawn now."""
        self.live.flown.clear()
        self.live.next_at = 0.0

    def render(self):
        """``human``: draw world 0 now in the live view (:attr:`render_url`); steps draw it within the view's
        wall-time budget anyway. Before the first step the view has not started and nothing is drawn (nothing has
        flown yet). Returns None, as Gymnasium's human mode does."""
        if self.live is not None:
            self.live.update(self.loop.sim_time, force=True)
        return None

    @property
    def render_url(self) -> str | None:
        """Where the live view serves (``render_mode="human"``, from the first step on), else None."""
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
        import torch  # noqa: PLC0415  (reason: torch is optional and heavy; only a caller handing torch tensors pays for it)

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

    @property
    def hover_fraction(self) -> float:
        """The thrust fraction at hover [-] that CTBR's collective action 0 means (the exported policy states it)."""
        return self.agent.hover_fraction

    def torch_views(self) -> dict:
        """The action, observation, reward and flag buffers as torch tensors sharing the device memory (DLPack)."""
        a = self.agent
        return {name: wp.to_torch(getattr(a, name)) for name in
                ("actions", "obs", "reward", "terminated", "truncated", "final_obs")}


class NexusEnv(gym.Env):
    """One world of :class:`NexusVectorEnv` as a ``gymnasium.Env``: after a terminal step call :meth:`reset`.

    Its observations are copies; the terminal step returns that episode's last observation.
    """

    #: ``render_fps`` is set per environment: its policy rate [Hz].
    metadata = {"render_modes": ["human"]}

    def __init__(self, **kwargs):
        """The keywords of :class:`NexusVectorEnv` but ``num_envs`` (one world); an unknown one is refused."""
        kwargs.pop("num_envs", None)
        valid = [name for name in keywords_of(NexusVectorEnv) if name != "num_envs"]
        unknown = {name: value for name, value in kwargs.items() if name not in valid}
        if unknown:
            refuse_unknown(unknown, valid, type(self).__name__)
        self.vector = NexusVectorEnv(num_envs=1, **kwargs)
        self.observation_space = self.vector.single_observation_space
        self.action_space = self.vector.single_action_space
        self.render_mode = self.vector.render_mode
        self.metadata = {**type(self).metadata, "render_fps": self.vector.policy_hz}

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
