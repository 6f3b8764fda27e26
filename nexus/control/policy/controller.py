"""The policy controller: an ONNX model (ONNX Runtime) or a TorchScript module (torch) as a host stage.

One ``control`` stage on the host: each tick it reads the ``estimate`` and
the ``setpoint`` (and ``armed``), builds the observation the model declares
in its ONNX metadata or TorchScript extra files
(:mod:`nexus.control.policy.features`), runs the model, and writes its
action into the ``controls`` row (the first ``width`` slots, clipped to
[0, 1]; zeros while ``armed`` is 0), or, for a model whose action is
``thrust_torque:4`` (a collective thrust fraction and roll, pitch, yaw
torques in the PID's units), the ESC commands the vehicle's control
allocation (:mod:`nexus.control.allocation`) mixes from it, so one policy
output fits any rotor layout, or, for ``velocity:4`` (a velocity in the heading frame and a yaw rate), the ESC
commands the vehicle's PID cascade flies it with (:mod:`nexus.control.velocity_action`, the kernel the learning
environment flies). Everything else in the tick stays
captured in graphs. The format's runner (:mod:`nexus.control.policy.runners`,
chosen by the file's suffix) is the only part that differs.

The model file, its layouts and their widths are checked when the component
is built, before any stage runs: a missing file, an unreadable model, a
layout that names an unknown feature, or a width that disagrees with the
model's input or output is a :class:`~nexus.core.errors.BuildError` naming
the file, the metadata key (or extra file) and both widths.

The stage runs on the host, so it keeps what it carries from tick to tick
(the previous setpoint and its velocity, for the feed-forward features) in
Python, not as engine state: a ring with a host stage is never snapshotted.
It reads nothing from the PID prim but its path (the ESCs connect to it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import warp as wp

from nexus.control.allocation import Allocation, MixTables, allocation_for, mix_tables, quad_x_allocation, write_rotor_commands
from nexus.control.pid import PID_SPEC, PidGains, PidParams, PidState, device_params
from nexus.control.policy.features import (ACTIONS, FEATURES, CtbrScaling, neighbour_features, observe, parse_layout,
                                           split_neighbours)
from nexus.control.policy.runners import runner_for
from nexus.control.registry import ControllerOptions, option, register
from nexus.control.velocity_action import VelocityScaling, fly_velocity_actions
from nexus.core import Component, Read, Stage, Write
from nexus.core.errors import BuildError
from nexus.core.ports import StructView
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.frames import enu_to_ned_np
from nexus.schemas.reader import read_prim

#: The policy Nexus ships: trained by tools/train_policy.py to imitate the PID on the short mission.
DEFAULT_MODEL = Path(__file__).with_name("pid_imitation.onnx")
OBSERVATION_KEY, ACTION_KEY = "nexus:observation", "nexus:action"


@wp.kernel
def mix_actions(actions: wp.array2d(dtype=wp.float32), armed: wp.array(dtype=wp.int32), factor: float,
                tables: MixTables, controls: wp.array2d(dtype=wp.float32)):
    """Each world's ``thrust_torque`` action (collective, roll, pitch, yaw) through the allocation into ESC commands."""
    w = wp.tid()
    on = float(0.0)
    if armed[w] != 0:
        on = 1.0
    torque = wp.vec3(wp.clamp(actions[w, 1], -1.0, 1.0), wp.clamp(actions[w, 2], -1.0, 1.0),
                     wp.clamp(actions[w, 3], -1.0, 1.0))
    write_rotor_commands(controls, w, factor, wp.clamp(actions[w, 0], 0.0, 1.0), torque, on, tables, wp.int64(0))


class PolicyController(Component):
    """Runs ``model`` (an ONNX file, or TorchScript: .pt, .ts, .torchscript) every tick: observation from estimate and setpoint, action into ``controls``."""

    def __init__(self, name: str, model: str | Path = DEFAULT_MODEL, connections=None,
                 allocation: Allocation | None = None, thrust_model_factor: float = 0.5):
        """``allocation`` and ``thrust_model_factor`` (the vehicle's; PX4's quad-X and 0.5 without) mix a
        ``thrust_torque`` action."""
        super().__init__(name, connections)
        self.allocation = allocation or quad_x_allocation()
        self.thrust_model_factor = float(thrust_model_factor)
        self.model_path = Path(model)
        where = f"controller '{name}': policy {self.model_path}"
        if not self.model_path.is_file():
            raise BuildError(f"{where}: no such file; pass --policy FILE.onnx or FILE.pt (Nexus ships {DEFAULT_MODEL})")
        self.runner = runner_for(self.model_path, where)
        observation_key, action_key = self.runner.observation_key, self.runner.action_key
        meta = self.runner.metadata
        for key in (observation_key, action_key):
            if key not in meta:
                raise BuildError(f"{where}: {self.runner.declares} no '{key}'; the model must declare its layouts "
                                 f"(tools/train_policy.py shows how), e.g. {observation_key}=position_error_heading:3,...")
        try:
            self.observation = parse_layout(meta[observation_key], FEATURES, observation_key, where)
            self.action = parse_layout(meta[action_key], ACTIONS, action_key, where)
            #: The vehicle's own features, and how many other vehicles' features follow them (a fleet policy's).
            self.own_observation, self.neighbours = split_neighbours(self.observation, observation_key, where)
        except ValueError as error:
            raise BuildError(str(error)) from None
        observation_width = sum(w for _, w in self.observation)
        action_width = sum(w for _, w in self.action)
        declared = self.runner.input_width
        if declared is not None and declared != observation_width:
            raise BuildError(f"{where}: {observation_key} ({meta[observation_key]}) makes {observation_width} values, "
                             f"but {self.runner.input_label} takes {declared}")
        given = self.runner.output_width(observation_width)
        if given is not None and given != action_width:
            raise BuildError(f"{where}: {action_key} ({meta[action_key]}) names {action_width} controls, "
                             f"but {self.runner.output_label} gives {given}")
        names = [name for name, _ in self.action]
        for single in ("thrust_torque", "ctbr", "velocity"):
            if single in names and len(names) > 1:
                raise BuildError(f"{where}: {action_key} ({meta[action_key]}) mixes {single} with other actions; "
                                 f"give either {single}:4 or controls:N")
        self.action_width = action_width
        #: True for a CTBR action: collective about hover and body rates, through a rate loop here.
        self.ctbr = names == ["ctbr"]
        try:
            #: A CTBR action's hover thrust and rate range, as the model declares them.
            self.ctbr_scaling = CtbrScaling.from_metadata(meta, where) if self.ctbr else None
        except ValueError as error:
            raise BuildError(str(error)) from None
        #: True for a velocity action: the vehicle's PID cascade flies it here (:mod:`nexus.control.velocity_action`).
        self.velocity = names == ["velocity"]
        try:
            #: A velocity action's limits at ±1, as the model declares them.
            self.velocity_scaling = VelocityScaling.from_metadata(meta, where) if self.velocity else None
        except ValueError as error:
            raise BuildError(str(error)) from None
        #: True when the action is a collective and torques for the allocation to mix.
        self.mixes = names == ["thrust_torque"] or self.ctbr or self.velocity
        #: The policy's own rate [Hz] (``nexus:policy_hz``; None: every tick), checked against the tick in prepare.
        self.policy_hz = _policy_hz(meta, where)
        self.decimation = 1
        self._tick = 0
        self._held = None
        #: The CTBR rate loop (set by build_policy from the vehicle's PID prim and hover command).
        self.rate_loop: HostRateLoop | None = None
        #: The velocity action's cascade gains (set by build_policy from the vehicle's PID prim).
        self.cascade_params: PidParams | None = None
        #: Every slot's NED origin [m, ENU] (the plant's; set by build_policy), for a fleet policy's neighbours.
        self.ned_origin = None
        self.vehicles = 1
        self.inference_us: list[float] = []
        self._previous_goal = None
        self._previous_velocity = None
        self.dt = None

    def check_vehicles(self, vehicles: int) -> None:
        """A policy with neighbour features flies exactly one more vehicle a world than it has neighbours."""
        if self.neighbours and vehicles != self.neighbours + 1:
            raise BuildError(f"controller '{self.name}': policy {self.model_path}: its nexus:observation has "
                             f"{self.neighbours} neighbours, so it flies {self.neighbours + 1} vehicles a world; this "
                             f"run has {vehicles}: give --vehicles {self.neighbours + 1}")

    def stages(self) -> list[Stage]:
        return [Stage(
            "policy", "control", self._run, host=True, batched=True,
            reads=(Read("estimate", PoseTwist, (1,)), Read("setpoint", Setpoint, (1,)),
                   Read("armed", wp.int32, (1,), default=1)),
            writes=(Write("controls", wp.float32, (1, CONTROLS_WIDTH), recorded=True),),
        )]

    def prepare(self, ctx) -> None:
        self.dt = ctx.dt
        self.worlds = ctx.worlds
        self.vehicles = int(getattr(ctx, "vehicles", 1))
        self.check_vehicles(self.vehicles)
        if self.neighbours and self.ned_origin is None:
            raise BuildError(f"controller '{self.name}': a policy with neighbour features needs the vehicles' NED "
                             "origins; build it with build_policy")
        if self.policy_hz is not None:
            ratio = 1.0 / (self.policy_hz * ctx.dt)
            if abs(ratio - round(ratio)) > 1e-6 or round(ratio) < 1:
                raise BuildError(f"controller '{self.name}': policy {self.model_path}: nexus:policy_hz "
                                 f"{self.policy_hz:g} Hz is {ratio:g} ticks of {1.0 / ctx.dt:g} Hz, not a whole "
                                 "number; fly it at the tick rate it was trained at (--tick-hz)")
            self.decimation = int(round(ratio))
        if self.ctbr:
            if self.rate_loop is None:
                raise BuildError(f"controller '{self.name}': a ctbr policy needs the vehicle's rate gains; build it "
                                 "with build_policy")
            self.rate_loop.reset(ctx.worlds, ctx.dt)
        if self.velocity:
            if self.cascade_params is None:
                raise BuildError(f"controller '{self.name}': a velocity policy needs the vehicle's PID gains; build "
                                 "it with build_policy")
            self.cascade = wp.array([self.cascade_params], dtype=PidParams, device=ctx.device)
            self.cascade_state = wp.zeros(ctx.worlds, dtype=PidState, device=ctx.device)
        self.runner.prepare(ctx.device)
        if self.mixes:
            self.tables = mix_tables(self.allocation, ctx.worlds, ctx.device)

    def controls_for(self, actions: np.ndarray, armed: np.ndarray) -> np.ndarray:
        """The ``controls`` rows (worlds, 16) for the model's actions (worlds, width) and ``armed`` (worlds,)."""
        actions = np.asarray(actions, dtype=np.float32).reshape(len(armed), -1)
        if not self.mixes:
            rows = np.zeros((len(armed), CONTROLS_WIDTH), dtype=np.float32)
            rows[:, : self.action_width] = np.clip(actions, 0.0, 1.0)
            rows[np.asarray(armed) == 0] = 0.0
            return rows
        device = self.tables.mix.device
        rows = wp.zeros((len(armed), CONTROLS_WIDTH), dtype=wp.float32, device=device)
        wp.launch(mix_actions, len(armed), inputs=[wp.array(actions, dtype=wp.float32, device=device),
                                                   wp.array(np.asarray(armed, dtype=np.int32), dtype=wp.int32, device=device),
                                                   self.thrust_model_factor, self.tables], outputs=[rows], device=device)
        return rows.numpy()

    def act(self, estimate, setpoint, setpoint_velocity=None, setpoint_acceleration=None) -> np.ndarray:
        """The model's action (clipped to [0, 1]) for one estimate and setpoint (and the setpoint's velocity [m/s]
        and acceleration [m/s²], NED)."""
        observation = observe(self.observation, estimate, setpoint, setpoint_velocity, setpoint_acceleration)[None, :]
        begin = time.perf_counter()
        action = np.asarray(self.runner.run(observation), dtype=np.float32).reshape(-1)
        self.inference_us.append((time.perf_counter() - begin) * 1e6)
        if self.mixes:  # a collective in [0, 1] and torques in [-1, 1], mixed by controls_for
            return np.concatenate([np.clip(action[:1], 0.0, 1.0), np.clip(action[1:], -1.0, 1.0)])
        return np.clip(action, 0.0, 1.0)

    def _run(self, io) -> None:
        if self.worlds > 1 or self.ctbr or self.velocity or self.decimation > 1 or self.neighbours:
            self._run_worlds(io)
            return
        row = np.zeros(CONTROLS_WIDTH, dtype=np.float32)
        setpoint = io["setpoint"].read()
        goal = np.asarray(setpoint.position, dtype=np.float64)
        # The setpoint's own velocity and acceleration, as the PID feeds them forward: changes since the last tick.
        velocity = np.zeros(3) if self._previous_goal is None else (goal - self._previous_goal) / self.dt
        acceleration = np.zeros(3) if self._previous_velocity is None else (velocity - self._previous_velocity) / self.dt
        self._previous_goal, self._previous_velocity = goal, velocity
        if int(io["armed"].read()) != 0:
            action = self.act(io["estimate"].read(), setpoint, velocity, acceleration)
            if self.mixes:
                row = self.controls_for(action[None, :], np.ones(1, dtype=np.int32))[0]
            else:
                row[: self.action_width] = action
        io["controls"].write(row)

    def _run_worlds(self, io) -> None:
        """Every world in one inference: one observation row per world, one batched call of the model."""
        estimates = io["estimate"].read_all()
        setpoints = io["setpoint"].read_all()
        armed = io["armed"].read_all().reshape(-1)
        goals = np.asarray(setpoints["position"], dtype=np.float64)
        velocity = np.zeros_like(goals) if self._previous_goal is None else (goals - self._previous_goal) / self.dt
        acceleration = np.zeros_like(goals) if self._previous_velocity is None else \
            (velocity - self._previous_velocity) / self.dt
        self._previous_goal, self._previous_velocity = goals, velocity
        observations = np.stack([
            observe(self.own_observation, StructView(estimates[w], PoseTwist), StructView(setpoints[w], Setpoint),
                    velocity[w], acceleration[w])
            for w in range(self.worlds)
        ]).astype(np.float32)
        if self.neighbours:  # each other vehicle of the world, from its estimate moved to the world's frame
            places = enu_to_ned_np(self.ned_origin.numpy()) + np.asarray(estimates["position"], dtype=np.float64)
            observations = np.concatenate([observations, neighbour_features(
                places, estimates["velocity"], estimates["attitude"], self.vehicles)], axis=1)
        if self._held is None or self._tick % self.decimation == 0:  # the policy's own rate; held between
            begin = time.perf_counter()
            self._held = np.asarray(self.runner.run(observations), dtype=np.float32).reshape(self.worlds, -1)
            self.inference_us.append((time.perf_counter() - begin) * 1e6)
        self._tick += 1
        actions = self._held
        if self.ctbr:
            rates = np.stack([np.asarray(StructView(estimates[w], PoseTwist).rates, dtype=np.float64)
                              for w in range(self.worlds)])
            actions = self.rate_loop.thrust_torque(actions, rates, armed)
        if self.velocity:
            io["controls"].write_all(self.fly_velocity(actions, estimates, armed, setpoints["position"]))
            return
        io["controls"].write_all(self.controls_for(actions, armed))

    def fly_velocity(self, actions: np.ndarray, estimates: np.ndarray, armed: np.ndarray,
                     goals: np.ndarray | None = None) -> np.ndarray:
        """The ``controls`` rows (worlds, 16) for velocity actions (worlds, 4), the estimates (a structured array),
        ``armed`` and the setpoints' positions ``goals`` (worlds, 3) [m, NED] that a go-to-goal law aims at (needed
        only when the model declares one): the cascade's kernel, the one the learning environment flies."""
        device = self.tables.mix.device
        gain = float(self.velocity_scaling.goal_gain)
        if goals is None:
            if gain > 0.0:
                raise ValueError(f"controller '{self.name}': its velocity policy corrects a go-to-goal law; give goals")
            goals = np.zeros((len(armed), 3), dtype=np.float32)
        rows = wp.zeros((len(armed), CONTROLS_WIDTH), dtype=wp.float32, device=device)
        wp.launch(fly_velocity_actions, len(armed), inputs=[
            wp.array(np.asarray(actions, dtype=np.float32).reshape(len(armed), -1), dtype=wp.float32, device=device),
            wp.array(np.ascontiguousarray(estimates).reshape(-1), dtype=PoseTwist, device=device),
            wp.array(np.asarray(armed, dtype=np.int32), dtype=wp.int32, device=device), self.cascade,
            wp.vec3(*self.velocity_scaling.limits),
            wp.array(np.asarray(goals, dtype=np.float32).reshape(len(armed), 3), dtype=wp.vec3, device=device), gain,
            float(self.velocity_scaling.goal_fade), float(self.velocity_scaling.goal_fade_power),
            float(self.dt), self.tables, self.cascade_state],
            outputs=[rows], device=device)
        return rows.numpy()

    def stats(self) -> dict:
        times = np.asarray(self.inference_us) if self.inference_us else np.zeros(1)
        return {"controller": "policy", "model": str(self.model_path), "inferences": len(self.inference_us),
                "inference_us_median": round(float(np.median(times)), 1),
                "inference_us_p99": round(float(np.percentile(times, 99)), 1)}


def _policy_hz(meta: dict, where: str) -> float | None:
    text = meta.get("nexus:policy_hz")
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0.0:
        raise BuildError(f"{where}: its metadata nexus:policy_hz is {text!r}; it must be a positive rate [Hz]")
    return value


class HostRateLoop:
    """The PID's body-rate loop (:func:`nexus.control.pid.rate_loop`) on the host, for a CTBR policy.

    Each tick: collective = hover fraction · (1 + a₀) and rate goal = aᵢ · max rates, both as the model declares
    them (:class:`nexus.control.policy.features.CtbrScaling`), then the rate PID gives the normalised torques the
    allocation mixes.
    """

    def __init__(self, gains, hover_fraction: float, max_rates):
        self.p, self.i, self.d = (np.asarray(getattr(gains, k), dtype=np.float64) for k in ("rate_p", "rate_i", "rate_d"))
        self.limit = float(gains.rate_integral_limit)
        self.hover_fraction = float(hover_fraction)
        self.max_rates = np.asarray(max_rates, dtype=np.float64)

    def reset(self, worlds: int, dt: float) -> None:
        self.dt = float(dt)
        self.integral = np.zeros((worlds, 3))
        self.previous = None

    def thrust_torque(self, actions: np.ndarray, rates: np.ndarray, armed: np.ndarray) -> np.ndarray:
        """(worlds, 4) CTBR actions in [-1, 1] and body rates [rad/s, FRD] -> (worlds, 4) collective and torques."""
        a = np.clip(np.asarray(actions, dtype=np.float64), -1.0, 1.0)
        on = (np.asarray(armed).reshape(-1, 1) != 0).astype(np.float64)
        error = a[:, 1:4] * self.max_rates - rates
        bound = np.where(self.i > 0.0, self.limit / np.where(self.i > 0.0, self.i, 1.0), np.inf)
        self.integral = np.clip(self.integral + error * self.dt, -bound, bound) * on
        change = np.zeros_like(rates) if self.previous is None else (rates - self.previous) / self.dt
        self.previous = rates
        torque = np.clip(self.p * error + self.i * self.integral - self.d * change, -1.0, 1.0)
        collective = np.clip(self.hover_fraction * (1.0 + a[:, :1]), 0.0, 1.0)
        return np.concatenate([collective, torque], axis=1).astype(np.float32)


def build_policy(prim, ctx, model: str | Path | None = None) -> PolicyController:
    """The policy controller at the controller prim's path (the ESCs connect to it); ``model`` defaults to the shipped one."""
    factors = sorted({rotor.esc["thrust_model_factor"] for rotor in ctx.plant.rotors})
    policy = PolicyController(str(prim.GetPath()), model or DEFAULT_MODEL, allocation=allocation_for(ctx.plant),
                              thrust_model_factor=factors[0])
    policy.ned_origin = ctx.plant.ned_origin
    policy.check_vehicles(int(getattr(ctx.plant, "vehicles", 1)))  # before anything is built further
    if policy.ctbr:
        gains = PidGains.from_values(prim, read_prim(prim, PID_SPEC, ctx.path), ctx.path)
        scaling = policy.ctbr_scaling
        policy.rate_loop = HostRateLoop(gains, scaling.hover_thrust, scaling.max_rates)
    if policy.velocity:
        gains = PidGains.from_values(prim, read_prim(prim, PID_SPEC, ctx.path), ctx.path)
        policy.cascade_params = device_params(gains, factors[0], ctx.plant.gravity)
    if policy.mixes and len(factors) != 1:
        raise BuildError(f"controller '{policy.name}': the ESCs disagree on nexus:thrustModelFactor ({factors}); "
                         "mixing a thrust_torque action needs one")
    return policy


@dataclass(frozen=True)
class PolicyOptions(ControllerOptions):
    """``--controller policy``'s options."""

    model: str | None = option(None, "With --controller policy: the model, ONNX (.onnx) or TorchScript (.pt, needs "
                               "torch) (default: the PID imitation Nexus ships).", flag="--policy", path=True)


def _build(prim, path: str, ctx, options: PolicyOptions) -> PolicyController:
    if prim is None:  # it reads nothing from the PID prim but its path (the ESCs connect to it)
        raise BuildError(f"{ctx.path}: --controller policy needs a prim with NexusPidControllerAPI (its attitude and "
                         "rate gains)")
    return build_policy(prim, ctx, model=options.model)


register("policy", _build, help="a learned policy (ONNX, or TorchScript with torch) as a host stage",
         options=PolicyOptions, reads_setpoint=True, duration_s=60.0)
