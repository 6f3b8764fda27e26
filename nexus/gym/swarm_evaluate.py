"""The swap's success bar, scored for a trained policy and for a straight-line baseline on the same episodes.

An episode is one world of the swap (:mod:`nexus.gym.swarm_tasks`) from its drawn start until its 8 s run out.
It **succeeds** when no vehicle of the world terminated (no collision: base origins never within the task's 1.0 m,
no crash, none out of bounds) and, at the episode's last state (7.98 s, the step before the world restarts),
every vehicle's *true* base origin is within ``radius`` (0.2 m) of its goal. As the hover bar
(:mod:`nexus.gym.evaluate`), the vehicles fly on the truth estimator by default (the Astro Max's own estimator
strays 0.1 to 0.3 m from the truth, which no controller flying on it can undo): the policy and the baseline see
the true state plus the observation noise. ``worlds x episodes`` episodes are
flown, each world ``episodes`` times in a row, from a seed the training never drew (``seed``, default 1000).

The policy runs in ONNX Runtime on each vehicle's observation (its own and its neighbours' features), every row
of every world in one call, with the action it was trained with (``nexus:action``: CTBR, or a velocity the
vehicle's PID cascade flies). The baseline, :class:`StraightLinePid`, flies each vehicle straight at its goal
on its own features alone, through the same action (collective and body rates, the same rate loop); it ignores
its neighbours, as a PID flying a straight line to a waypoint does.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from nexus.control.velocity_action import VelocityScaling
from nexus.core.errors import BuildError
from nexus.gym.bar_best import SCORING_SEED
from nexus.gym.agent import MAX_RATES
from nexus.gym.multi_agent import SwarmVectorEnv
from nexus.gym.swarm_tasks import swarm_task_named
from nexus.gym.swarm_training import configured_task, swarm_layout

#: The bar of issue 47: every vehicle within this distance of its goal [m] at the episode's end, no collision.
GOAL_RADIUS_M = 0.2
#: Standard gravity [m/s²], for the baseline's collective.
GRAVITY = 9.80665


class StraightLinePid:
    """The baseline: each vehicle straight at its goal on its own features (module doc), one row per vehicle.

    Position error to a velocity command along the line (1 /s, at most 1.5 m/s) plus the error's integral within
    0.5 m of the goal (0.3 /s², bounded at 1 m·s), velocity error to an acceleration (2 /s), that acceleration to a tilt of the thrust
    (6 /s on the body's down axis) and a collective, the heading held (2 /s). :meth:`restart` clears the integral
    of the rows whose world started afresh.
    """

    def __init__(self, rows: int, dt: float):
        self.integral = np.zeros((rows, 3))
        self.dt = float(dt)

    def restart(self, rows: np.ndarray) -> None:
        self.integral[rows] = 0.0

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        e, v, down, yaw_error = obs[:, 0:3], obs[:, 3:6], obs[:, 6:8], obs[:, 11]
        distance = np.linalg.norm(e, axis=1, keepdims=True)
        self.integral = np.clip(self.integral + np.where(distance < 0.5, e, 0.0) * self.dt, -1.0, 1.0)
        v_goal = e / np.maximum(distance, 1e-6) * np.minimum(1.0 * distance, 1.5) + 0.3 * self.integral
        a = 2.0 * (v_goal - v)  # [m/s², heading frame: forward, right, down]
        a[:, :2] = np.clip(a[:, :2], -3.0, 3.0)
        force = a - np.array([0.0, 0.0, GRAVITY])  # the specific force the rotors must give; they push along -down
        down_goal = -force / np.linalg.norm(force, axis=1, keepdims=True)
        # Level, the body's down axis moves as (q, -p) under body rates (p, q): steer it onto the goal's.
        q = 6.0 * (down_goal[:, 0] - down[:, 0])
        p = -6.0 * (down_goal[:, 1] - down[:, 1])
        r = 2.0 * yaw_error
        collective = np.linalg.norm(force, axis=1) / GRAVITY - 1.0  # thrust about hover's
        actions = np.stack([collective, p / MAX_RATES[0], q / MAX_RATES[1], r / MAX_RATES[2]], axis=1)
        return np.clip(actions, -1.0, 1.0).astype(np.float32)


class OnnxPolicy:
    """A swap policy exported by ``nexus train --task swap``, checked against the environment it is scored in."""

    def __init__(self, path: Path):
        import onnxruntime as ort  # noqa: PLC0415  (reason: onnxruntime loads only to run a policy)

        self.path = path = Path(path)
        again = "give the policy.onnx that `nexus train --task swap` wrote"
        if not path.is_file():
            raise BuildError(f"policy {path}: {'a folder, not a file' if path.is_dir() else 'no such file'}; {again}")
        try:
            self.session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        except Exception as error:  # noqa: BLE001  (ONNX Runtime raises its own types for what it cannot load)
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise BuildError(f"policy {path}: not an ONNX model ONNX Runtime can load ({first}); {again}") from None
        self.meta = meta = dict(self.session.get_modelmeta().custom_metadata_map)
        declared = meta.get("nexus:action", "")
        #: The action mode the environment must fly it with (``nexus:action``): velocity or CTBR.
        self.action = "velocity" if declared.startswith("velocity") else "ctbr"
        if not declared.startswith(("velocity", "ctbr")):
            raise BuildError(f"policy {path}: its nexus:action is {declared!r}; a swap policy acts with ctbr:4 or "
                             f"velocity:4; {again}")
        #: A velocity policy's scaling, with the go-to-goal law it corrects (gain, fade and its power; a gain of
        #: 0: none); None for CTBR.
        self.scaling: VelocityScaling | None = None
        if self.action == "velocity":
            try:
                self.scaling = VelocityScaling.from_metadata(meta, f"policy {path}")
            except ValueError as error:
                raise BuildError(str(error)) from None
        self.input = self.session.get_inputs()[0].name

    def check(self, env: SwarmVectorEnv) -> None:
        """Refuse in one line a policy whose observation layout is not ``env``'s."""
        layout = swarm_layout(env.task, env.vehicles)
        if self.meta.get("nexus:observation") != layout:
            raise BuildError(f"policy {self.path}: its nexus:observation is {self.meta.get('nexus:observation')!r}; "
                             f"the swap of {env.vehicles} vehicles observes {layout!r}; give the policy.onnx that "
                             f"`nexus train --task swap` wrote with --vehicles {env.vehicles}")

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        (actions,) = self.session.run(None, {self.input: np.ascontiguousarray(obs, dtype=np.float32)})
        return actions


def true_goal_distances(env: SwarmVectorEnv) -> np.ndarray:
    """Each slot's true base origin's distance from its goal [m] (the goal is kept about the vehicle's NED origin)."""
    agent = env.agent
    fleet = agent.fleet
    origin = agent.plant_arrays.ned_origin.numpy().astype(np.float64)
    base = agent.plant_arrays.body_q.numpy()[fleet.base_body::fleet.bodies_per_slot, :3].astype(np.float64)
    goal = agent.arrays.goal.numpy().astype(np.float64)
    # ENU (x east, y north, z up) to NED: (y, x, -z).
    position_ned = base[:, [1, 0, 2]] * np.array([1.0, 1.0, -1.0]) - origin[:, [1, 0, 2]] * np.array([1.0, 1.0, -1.0])
    return np.linalg.norm(position_ned - goal, axis=1)


class SwapScorer:
    """The swap's episodes built once and flown again for each policy scored (module doc): every :meth:`score`
    starts the graph from ``seed``, so two policies, or one policy twice, meet the same episodes (the training's
    own scoring, :mod:`nexus.gym.bar_best`, scores one checkpoint after another on one environment)."""

    def __init__(self, *, worlds: int = 64, episodes: int = 4, vehicles: int = 4, spacing: float = 2.0,
                 vehicle_contact: bool = True, seed: int = 1000, noise: float = 1.0, radius: float = GOAL_RADIUS_M,
                 vehicle: str = "astro_max_base", estimator: str = "truth", task="swap", action: str = "ctbr"):
        self.worlds, self.episodes, self.vehicles, self.seed = worlds, episodes, vehicles, seed
        self.radius, self.estimator, self.vehicle_contact = radius, estimator, vehicle_contact
        self.env = SwarmVectorEnv(num_envs=worlds, task=task, vehicles=vehicles, spacing=spacing,
                                  vehicle_contact=vehicle_contact, noise=noise, vehicle=vehicle, estimator=estimator,
                                  action=action)

    def score(self, policy: str | Path | OnnxPolicy | None, say=None) -> dict:
        """Fly the episodes with ``policy`` (an ONNX file, or one already loaded; None: the straight-line baseline)
        and score them."""
        env, worlds, vehicles, episodes = self.env, self.worlds, self.vehicles, self.episodes
        model = policy if isinstance(policy, OnnxPolicy) or policy is None else OnnxPolicy(policy)
        if model is not None:
            model.check(env)
        act = StraightLinePid(worlds * vehicles, 1.0 / env.policy_hz) if model is None else model
        obs, _ = env.reset(seed=self.seed)
        # Each world's episodes in turn, scored as each ends; a world whose episode ended early starts its next at
        # once, so the worlds drift apart, and the loop runs until every world has flown ``episodes``.
        scored = [[] for _ in range(worlds)]  # per world: (ended early, each vehicle's final distance [m])
        nearest = np.full((worlds, vehicles), np.inf)  # each vehicle's closest to its goal this episode [m]
        steps_flown = np.zeros(worlds, dtype=np.int64)  # steps of each world's episode so far
        closest, lengths = [], []
        while min(len(done) for done in scored) < episodes:
            distances = true_goal_distances(env).reshape(worlds, vehicles)  # before the step that may end it
            nearest = np.minimum(nearest, distances)
            steps_flown += 1
            rows = act(obs.reshape(worlds * vehicles, -1)).reshape(worlds, vehicles, -1)
            obs, _, terminated, truncated, _ = env.step(rows)
            ended = (terminated | truncated).any(axis=1)
            if hasattr(act, "restart"):
                act.restart(np.repeat(ended, vehicles))
            for w in np.flatnonzero(ended):
                if len(scored[w]) < episodes:
                    scored[w].append((bool(terminated[w].any()), distances[w].copy()))
                    closest.append(nearest[w].copy())
                    lengths.append(steps_flown[w])
                    if say is not None and sum(len(done) for done in scored) % worlds == 0:
                        say(f"evaluate: {sum(len(done) for done in scored)} of {worlds * episodes} episodes")
                nearest[w], steps_flown[w] = np.inf, 0
        policy_hz, steps, radius = env.policy_hz, env.episode_steps, self.radius
        early = np.array([[e for e, _ in done] for done in scored])  # (worlds, episodes)
        final = np.array([[d for _, d in done] for done in scored])  # (worlds, episodes, vehicles)
        within = final <= radius
        success = ~early & within.all(axis=2)
        closest = np.array(closest)
        flown = ~early
        return {"policy": "straight-line baseline" if model is None else str(model.path),
                "episodes": int(success.size), "worlds": worlds, "estimator": self.estimator, "vehicles": vehicles,
                "vehicle_contact": bool(self.vehicle_contact), "seed": self.seed,
                "radius_m": radius, "time_s": round((steps - 1) / policy_hz, 4),
                "success": int(success.sum()), "success_rate": round(float(success.mean()), 4),
                # Episodes a crash or collision ended; how long the episodes flew [s]; the vehicles that came within
                # ``radius`` of their goals at some time, and the median closest approach [m].
                "ended_early": int(early.sum()),
                "vehicles_within": round(float(within[flown].mean()) if flown.any() else 0.0, 4),
                "median_final_error_m": round(float(np.median(final[flown])), 4) if flown.any() else None,
                "mean_flown_s": round(float(np.mean(lengths)) / policy_hz, 3),
                "vehicles_reached": round(float((closest <= radius).mean()), 4),
                "median_closest_m": round(float(np.median(closest)), 4)}

    def close(self) -> None:
        self.env.close()


def scoring_task(model: OnnxPolicy | None, task="swap"):
    """The task ``model`` is flown on: the swap, with the go-to-goal law it was trained to correct if it declares
    one (``nexus:velocity_goal_gain``), and its action mode (``nexus:action``; the baseline's, None: CTBR)."""
    law = None if model is None else model.scaling
    if law is not None and law.goal_gain > 0.0:
        task = replace(swarm_task_named(task), goal_gain=law.goal_gain, goal_fade=law.goal_fade,
                       goal_fade_power=law.goal_fade_power)
    return task, "ctbr" if model is None else model.action


def evaluate_swap(policy: str | Path | None, *, worlds: int = 64, episodes: int = 4, vehicles: int = 4,
                  spacing: float = 2.0, vehicle_contact: bool = True, seed: int = 1000, noise: float = 1.0,
                  radius: float = GOAL_RADIUS_M, vehicle: str = "astro_max_base", estimator: str = "truth",
                  task="swap", say=None) -> dict:
    """Fly ``worlds x episodes`` swap episodes with ``policy`` (an ONNX file; None: the straight-line baseline) and
    score them (module doc). ``task``: the swap, or a :class:`~nexus.gym.swarm_tasks.SwarmTask` changed from it."""
    model = None if policy is None else OnnxPolicy(policy)
    task, action = scoring_task(model, task)
    scorer = SwapScorer(worlds=worlds, episodes=episodes, vehicles=vehicles, spacing=spacing,
                        vehicle_contact=vehicle_contact, seed=seed, noise=noise, radius=radius, vehicle=vehicle,
                        estimator=estimator, task=task, action=action)
    try:
        return scorer.score(model, say=say)
    finally:
        scorer.close()


def make_swarm_scorer(config) -> SwapScorer:
    """The bar's scoring during a :class:`~nexus.gym.training.TrainConfig`'s run (:mod:`nexus.gym.bar_best`): its
    ``score_episodes`` worlds flown once each, in contact, on the truth and with the bar's noise, from the scoring
    seed, with the go-to-goal law and the action the policy is trained with (scoring reads no reward)."""
    return SwapScorer(worlds=config.score_episodes, episodes=1, vehicles=config.vehicles,
                      spacing=float(config.spacing), vehicle_contact=True, seed=SCORING_SEED,
                      vehicle=config.vehicle, task=configured_task(config), action=config.action)


def compare_swap(policy: str | Path, say=None, **settings) -> dict:
    """The policy and the straight-line baseline on the same episodes (same seed, worlds and settings)."""
    return {"policy": evaluate_swap(policy, say=say, **settings), "baseline": evaluate_swap(None, say=say, **settings)}


def write_swap_evaluation(result: dict, path: Path) -> None:
    """``result`` as JSON at ``path``."""
    Path(path).write_text(json.dumps(result, indent=2) + "\n")
