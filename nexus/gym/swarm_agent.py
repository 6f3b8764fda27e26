"""The multi-agent learning agent: one device ``control`` stage over every vehicle of every world (slots) that
applies each vehicle's action every tick and, every ``decimation`` ticks, writes each vehicle's observation
(its own features and its neighbours'), scores it, and restarts the worlds whose episode ended.

A policy tick is three launches: ``gather`` (slots) puts each vehicle's place and velocity in one frame
common to its world, from its estimate (what the others could know from its broadcast estimate) or, with
``neighbours="truth"``, from its true state; ``score`` (slots) writes the observation and the reward and flags
the vehicles that crashed, flew out of bounds or came closer than the task's collision distance to another
(true distance); ``settle`` (worlds) ends a world's episode when any of its vehicles was flagged or its time
ran out, and restarts every vehicle of that world in the same step (SAME_STEP autoreset, per world).
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.control.allocation import MixTables, mix_tables
from nexus.control.attitude import heading_of
from nexus.control.pid import PidParams, PidState
from nexus.core import Component
from nexus.gym.agent import (MOTORS, TARGET_YAW, Filter, Layout, LearningAgent, apply_action, filter_of,
                             place_at_start, restart_filter, write_observation)
from nexus.gym.swarm_tasks import NEIGHBOUR_WIDTH, SwarmParams, SwarmTask
from nexus.plant.frames import enu_to_ned
from nexus.estimation.pose_twist import PoseTwist
from nexus.plant.physics import Physics

#: Where the neighbours' features come from.
NEIGHBOUR_SOURCES = ("estimate", "truth")


@wp.struct
class Fleet:
    """How the slots make worlds, and where a slot's base body sits."""

    vehicles: int
    own_width: int
    neighbour_truth: int
    bodies_per_slot: int
    base_body: int


@wp.struct
class PlantArrays:
    """The plant's arrays the agent reads and a restart writes (one index space per slot)."""

    ned_origin: wp.array(dtype=wp.vec3)
    joint_q: wp.array(dtype=wp.float32)
    joint_qd: wp.array(dtype=wp.float32)
    esc_speed: wp.array(dtype=wp.float32)
    rotor_dof: wp.array(dtype=wp.int32)
    rotor_spin: wp.array(dtype=wp.float32)
    fk_mask: wp.array(dtype=wp.bool)
    body_q: wp.array(dtype=wp.transform)
    body_qd: wp.array(dtype=wp.spatial_vector)
    body_com: wp.array(dtype=wp.vec3)


@wp.struct
class SwarmArrays:
    """The agent's own per-slot arrays (the host reads ``obs``, ``reward``, the flags and ``final_obs``)."""

    seeds: wp.array(dtype=wp.int32)
    noise_seeds: wp.array(dtype=wp.int32)
    episode: wp.array(dtype=wp.int32)
    episode_step: wp.array(dtype=wp.int32)
    sub_tick: wp.array(dtype=wp.int32)
    #: The vehicle's goal in its own NED frame [m], and how far from it ends the episode [m].
    goal: wp.array(dtype=wp.vec3)
    error_bound: wp.array(dtype=wp.float32)
    #: The distance to the goal at the previous policy step [m] (the progress reward's reference).
    previous_error: wp.array(dtype=wp.float32)
    #: Place and velocity in the world's common frame (NED axes, Newton's world origin) [m, m/s].
    place: wp.array(dtype=wp.vec3)
    place_velocity: wp.array(dtype=wp.vec3)
    #: Heading the neighbour features are turned into [rad, NED].
    heading: wp.array(dtype=wp.float32)
    #: A restart's start in the vehicle's own frame: position [m], velocity [m/s], attitude (FRD to NED).
    start_position: wp.array(dtype=wp.vec3)
    start_velocity: wp.array(dtype=wp.vec3)
    start_attitude: wp.array(dtype=wp.quat)
    pid: wp.array(dtype=PidState)
    actions: wp.array2d(dtype=wp.float32)
    obs: wp.array2d(dtype=wp.float32)
    final_obs: wp.array2d(dtype=wp.float32)
    reward: wp.array(dtype=wp.float32)
    terminated: wp.array(dtype=wp.bool)
    truncated: wp.array(dtype=wp.bool)
    done: wp.array(dtype=wp.int32)


@wp.func
def write_neighbours(obs: wp.array2d(dtype=wp.float32), s: int, fleet: Fleet, place: wp.array(dtype=wp.vec3),
                     place_velocity: wp.array(dtype=wp.vec3), psi: float):
    """The other vehicles of slot ``s``'s world, in vehicle order: position and velocity relative to ``s``'s,
    turned into ``s``'s heading frame (forward, right, down) [m, m/s]."""
    k = s % fleet.vehicles
    first = s - k
    c = wp.cos(psi)
    sn = wp.sin(psi)
    column = fleet.own_width
    for j in range(fleet.vehicles):
        if j != k:
            p = place[first + j] - place[s]
            v = place_velocity[first + j] - place_velocity[s]
            obs[s, column + 0] = c * p[0] + sn * p[1]
            obs[s, column + 1] = -sn * p[0] + c * p[1]
            obs[s, column + 2] = p[2]
            obs[s, column + 3] = c * v[0] + sn * v[1]
            obs[s, column + 4] = -sn * v[0] + c * v[1]
            obs[s, column + 5] = v[2]
            column += NEIGHBOUR_WIDTH


@wp.func
def respawn_slot(s: int, task: SwarmParams, layout: Layout, fleet: Fleet, plant: PlantArrays, a: SwarmArrays,
                 episode: int, ekf: Filter):
    """Put slot ``s`` at a fresh start drawn from (its seed, ``episode``), near its place in the line, aiming at
    the start of its mirror vehicle (K-1-k); its first observation is written once the whole world stands."""
    k = s % fleet.vehicles
    mirror = s - k + fleet.vehicles - 1 - k
    seed = a.seeds[s]
    base = episode * 64
    nominal = wp.vec3(0.0, 0.0, -task.height)
    goal = enu_to_ned(plant.ned_origin[mirror] - plant.ned_origin[s]) + nominal
    a.goal[s] = goal
    start, velocity, attitude, position_enu = place_at_start(
        s, layout, seed, base, nominal, task.spawn_position, task.spawn_velocity, task.spawn_yaw, task.spawn_tilt,
        plant.ned_origin, plant.joint_q, plant.joint_qd, plant.esc_speed, plant.rotor_dof, plant.rotor_spin,
        plant.fk_mask, a.pid)
    restart_filter(ekf, s, start, velocity, attitude)
    error = wp.length(goal - start)
    a.previous_error[s] = error
    a.error_bound[s] = wp.length(goal - nominal) + task.error_margin
    a.place[s] = enu_to_ned(position_enu)
    a.place_velocity[s] = velocity
    a.heading[s] = heading_of(attitude)
    a.start_position[s] = start
    a.start_velocity[s] = velocity
    a.start_attitude[s] = attitude
    a.episode[s] = episode
    a.episode_step[s] = 0
    a.sub_tick[s] = 0
    a.done[s] = 0


@wp.func
def restart_world(w: int, task: SwarmParams, layout: Layout, fleet: Fleet, plant: PlantArrays, a: SwarmArrays,
                  episode: int, ekf: Filter):
    """Every vehicle of world ``w`` at a fresh start, then each one's first observation (the others' starts are
    its first neighbour features)."""
    first = w * fleet.vehicles
    for k in range(fleet.vehicles):
        respawn_slot(first + k, task, layout, fleet, plant, a, episode, ekf)
    for k in range(fleet.vehicles):
        s = first + k
        write_observation(a.obs, s, a.start_position[s], a.start_attitude[s], a.start_velocity[s],
                          wp.vec3(0.0, 0.0, 0.0), a.goal[s], TARGET_YAW, wp.vec3(0.0, 0.0, 0.0), 0, layout.noise,
                          a.noise_seeds[s], episode * 16384)
        write_neighbours(a.obs, s, fleet, a.place, a.place_velocity, a.heading[s])


@wp.kernel
def swarm_act(estimate: wp.array(dtype=PoseTwist), layout: Layout, params: wp.array(dtype=PidParams),
              mix: MixTables, plant: PlantArrays, a: SwarmArrays, controls: wp.array2d(dtype=wp.float32)):
    """Each slot's held action as its ``controls`` row (CTBR through the PID's rate loop, a velocity through its
    cascade, or motor commands:
    :func:`nexus.gym.agent.apply_action`, as the single-agent tick applies it); counts the ticks of the policy
    step."""
    s = wp.tid()
    for i in range(layout.articulations_per_world):
        plant.fk_mask[s * layout.articulations_per_world + i] = False
    apply_action(s, estimate[s], a.actions, layout, params, mix, a.pid, controls, a.goal[s])
    sub = a.sub_tick[s] + 1
    if sub < layout.decimation:
        a.sub_tick[s] = sub
    else:
        a.sub_tick[s] = 0


@wp.func
def action_effort(layout: Layout, a: SwarmArrays, s: int) -> float:
    """The action's size the reward penalises: the CTBR (or velocity) values squared, or each motor's step from
    hover squared."""
    effort = float(0.0)
    for i in range(layout.action_width):
        value = wp.clamp(a.actions[s, i], -1.0, 1.0)
        if layout.action_mode == MOTORS:
            value = 0.5 * (value + 1.0) - layout.hover_fraction
        effort += value * value
    return effort


@wp.func
def true_origin(plant: PlantArrays, fleet: Fleet, s: int) -> wp.vec3:
    """Slot ``s``'s base origin, Newton's world ENU [m]."""
    return wp.transform_get_translation(plant.body_q[s * fleet.bodies_per_slot + fleet.base_body])


@wp.kernel
def swarm_gather(estimate: wp.array(dtype=PoseTwist), fleet: Fleet, plant: PlantArrays, a: SwarmArrays):
    """On a policy tick: each slot's place and velocity in its world's common frame (NED axes), from its estimate
    about its own NED origin or, with ``neighbour_truth``, from its true base origin and velocity."""
    s = wp.tid()
    if a.sub_tick[s] != 0:
        return
    est = estimate[s]
    a.heading[s] = heading_of(est.attitude)
    if fleet.neighbour_truth != 0:
        b = s * fleet.bodies_per_slot + fleet.base_body
        pose = plant.body_q[b]
        omega = wp.spatial_bottom(plant.body_qd[b])
        # Newton gives the centre of mass's velocity; the origin moves with v_com - omega x (R com).
        velocity = wp.spatial_top(plant.body_qd[b]) - wp.cross(
            omega, wp.quat_rotate(wp.transform_get_rotation(pose), plant.body_com[b]))
        a.place[s] = enu_to_ned(wp.transform_get_translation(pose))
        a.place_velocity[s] = enu_to_ned(velocity)
    else:
        a.place[s] = enu_to_ned(plant.ned_origin[s]) + est.position
        a.place_velocity[s] = est.velocity


@wp.kernel
def swarm_score(estimate: wp.array(dtype=PoseTwist), task: SwarmParams, layout: Layout, fleet: Fleet,
                plant: PlantArrays, a: SwarmArrays):
    """On a policy tick: each slot's observation, reward and ``terminated`` flag (see the module doc)."""
    s = wp.tid()
    if a.sub_tick[s] != 0:
        return
    est = estimate[s]
    step = a.episode_step[s] + 1
    write_observation(a.obs, s, est.position, est.attitude, est.velocity, est.rates, a.goal[s], TARGET_YAW,
                      wp.vec3(0.0, 0.0, 0.0), 0, layout.noise, a.noise_seeds[s], a.episode[s] * 16384 + step * 16)
    write_neighbours(a.obs, s, fleet, a.place, a.place_velocity, a.heading[s])
    error = wp.length(a.goal[s] - est.position)
    progress = a.previous_error[s] - error
    a.previous_error[s] = error
    k = s % fleet.vehicles
    first = s - k
    crowding = float(0.0)
    collided = int(0)
    here = true_origin(plant, fleet, s)
    for j in range(fleet.vehicles):
        if j != k:
            apart = wp.length(a.place[first + j] - a.place[s])
            closeness = wp.max(0.0, 1.0 - apart / task.safe_distance)
            crowding += closeness * closeness
            if wp.length(true_origin(plant, fleet, first + j) - here) < task.collision_distance:
                collided = 1
    x = est.attitude[0]
    y = est.attitude[1]
    up = 1.0 - 2.0 * (x * x + y * y)  # cosine of the tilt from level
    height = -est.position[2]
    r = task.w_progress * progress + task.w_goal * wp.exp(-error / 0.2)
    r = r - task.w_rates * wp.dot(est.rates, est.rates) - task.w_action * action_effort(layout, a, s)
    r = r - task.w_proximity * crowding
    failed = a.done[s] == 2 or not wp.isfinite(error)
    ended = failed or collided != 0 or error > a.error_bound[s] or up < task.min_up or height < task.min_height
    if ended:
        r = r - task.crash_penalty
    if not wp.isfinite(r):
        r = -task.crash_penalty
    a.reward[s] = r
    a.terminated[s] = ended


@wp.kernel
def swarm_settle(task: SwarmParams, layout: Layout, fleet: Fleet, plant: PlantArrays, a: SwarmArrays, ekf: Filter):
    """On a policy tick, per world: a world with a terminated vehicle, or whose time ran out, ends for every
    vehicle (the others truncated), keeps each last observation in ``final_obs`` and restarts."""
    w = wp.tid()
    first = w * fleet.vehicles
    if a.sub_tick[first] != 0:
        return
    step = a.episode_step[first] + 1
    ended = int(0)
    for k in range(fleet.vehicles):
        if a.terminated[first + k]:
            ended = 1
    timeout = step >= layout.episode_steps
    if ended != 0 or timeout:
        for k in range(fleet.vehicles):
            s = first + k
            a.truncated[s] = not a.terminated[s]
            for i in range(layout.obs_width):
                a.final_obs[s, i] = a.obs[s, i]
        restart_world(w, task, layout, fleet, plant, a, a.episode[first] + 1, ekf)
    else:
        for k in range(fleet.vehicles):
            a.episode_step[first + k] = step
            a.truncated[first + k] = False


@wp.kernel
def swarm_reset(which: wp.array(dtype=wp.int32), task: SwarmParams, layout: Layout, fleet: Fleet,
                plant: PlantArrays, a: SwarmArrays, ekf: Filter):
    """The host's reset (``env.reset``): every world flagged in ``which`` starts its episode afresh."""
    w = wp.tid()
    for i in range(layout.articulations_per_world * fleet.vehicles):
        plant.fk_mask[w * fleet.vehicles * layout.articulations_per_world + i] = False
    if which[w] == 0:
        return
    restart_world(w, task, layout, fleet, plant, a, a.episode[w * fleet.vehicles], ekf)
    for k in range(fleet.vehicles):
        a.terminated[w * fleet.vehicles + k] = False
        a.truncated[w * fleet.vehicles + k] = False


class SwarmAgent(LearningAgent):
    """Takes the controller's place for every vehicle of every world: the multi-agent :class:`LearningAgent`.

    The host owns :attr:`actions` (slots x action width) and reads :attr:`obs`, :attr:`reward`,
    :attr:`terminated`, :attr:`truncated` and :attr:`final_obs` (one row per slot) after each replay.
    """

    def __init__(self, task: SwarmTask, *, vehicles: int, action_mode: str, decimation: int, noise: float,
                 neighbours: str = "estimate", name: str = "agent"):
        Component.__init__(self, name)  # LearningAgent's fields, the observation's width a fleet's own
        self.observe, self.task, self.action_mode = "estimate", task, action_mode
        self.decimation, self.noise = int(decimation), float(noise)
        #: A replay is one policy step: never more ticks per replay than the decimation.
        self.max_ticks_per_replay = self.decimation
        self.plant = None
        self.vehicles = int(vehicles)
        self.neighbours = neighbours
        self.observation_width = task.observation_width_for(self.vehicles)

    def prepare(self, ctx) -> None:
        if self.plant is None:
            self.bind(next(c for c in ctx.components if isinstance(c, Physics)).plant)
        plant, device, n = self.plant, ctx.device, ctx.worlds
        if ctx.vehicles != self.vehicles:
            raise ValueError(f"the ring flies {ctx.vehicles} vehicles a world; this agent was built for "
                             f"{self.vehicles}")
        self.slots, self.worlds, self.device = n, n // self.vehicles, device
        task = self.task
        self.prepare_layout(ctx)
        fleet = Fleet()
        fleet.vehicles = self.vehicles
        fleet.own_width = task.own_width
        fleet.neighbour_truth = int(self.neighbours == "truth")
        fleet.bodies_per_slot = plant.bodies_per_world
        fleet.base_body = plant.base
        self.fleet = fleet
        self.task_params = task.params()
        self.params = wp.array([self.rate_params], dtype=PidParams, device=device)
        self.mix = mix_tables(self.allocation, n, device)
        self.fk_mask = wp.zeros(plant.model.articulation_count, dtype=wp.bool, device=device)
        arrays = PlantArrays()
        arrays.ned_origin = plant.ned_origin
        arrays.joint_q, arrays.joint_qd = plant.state.joint_q, plant.state.joint_qd
        arrays.esc_speed = plant.esc_speed
        arrays.rotor_dof = wp.array([r.dof for r in plant.rotors], dtype=wp.int32, device=device)
        arrays.rotor_spin = wp.array([float(r.spin) for r in plant.rotors], dtype=wp.float32, device=device)
        arrays.fk_mask = self.fk_mask
        arrays.body_q, arrays.body_qd, arrays.body_com = plant.state.body_q, plant.state.body_qd, plant.model.body_com
        self.plant_arrays = arrays
        width = self.observation_width
        a = SwarmArrays()
        for name in ("seeds", "noise_seeds", "episode", "episode_step", "sub_tick"):
            setattr(a, name, wp.zeros(n, dtype=wp.int32, device=device))
        for name in ("goal", "place", "place_velocity", "start_position", "start_velocity"):
            setattr(a, name, wp.zeros(n, dtype=wp.vec3, device=device))
        for name in ("error_bound", "previous_error", "heading", "reward"):
            setattr(a, name, wp.zeros(n, dtype=wp.float32, device=device))
        a.start_attitude = wp.zeros(n, dtype=wp.quat, device=device)
        a.pid = wp.zeros(n, dtype=PidState, device=device)
        a.actions = wp.zeros((n, self.action_width), dtype=wp.float32, device=device)
        a.obs = wp.zeros((n, width), dtype=wp.float32, device=device)
        a.final_obs = wp.zeros((n, width), dtype=wp.float32, device=device)
        a.terminated = wp.zeros(n, dtype=wp.bool, device=device)
        a.truncated = wp.zeros(n, dtype=wp.bool, device=device)
        #: The loop's done flags (the clock, the first component, holds them before any component prepares).
        a.done = next(c for c in ctx.components if c.name == "clock").done
        self.arrays = a
        for name in ("seeds", "noise_seeds", "episode", "actions", "obs", "final_obs", "reward", "terminated",
                     "truncated"):
            setattr(self, name, getattr(a, name))
        self.which = wp.zeros(self.worlds, dtype=wp.int32, device=device)
        self.filter = filter_of(ctx, device)

    def external_state(self) -> dict:
        a = self.arrays
        return {name: getattr(a, name) for name in SwarmArrays.vars if name != "done"}

    def seed(self, seed: int, first_world: int = 0) -> None:
        """Each vehicle's seed branch from (``seed``, world, vehicle): its draws depend on neither how many worlds
        nor how many vehicles fly."""
        seeds, noise = [], []
        for s in range(self.slots):
            world, vehicle = divmod(s, self.vehicles)
            a, b = np.random.SeedSequence([int(seed), first_world + world, vehicle]).generate_state(2, np.uint32)
            seeds.append(int(a) & 0x7FFFFFFF)
            noise.append(int(b) & 0x7FFFFFFF)
        self.seeds.assign(np.asarray(seeds, dtype=np.int32))
        self.noise_seeds.assign(np.asarray(noise, dtype=np.int32))
        self.episode.zero_()

    def reset_worlds(self, which: np.ndarray, done: wp.array | None = None) -> None:
        """Start the flagged worlds' episodes afresh, every vehicle of each (host call, outside the graph)."""
        self.which.assign(np.asarray(which, dtype=np.int32))
        wp.launch(swarm_reset, self.worlds, inputs=[self.which, self.task_params, self.layout, self.fleet,
                                                    self.plant_arrays, self.arrays, self.filter], device=self.device)
        self._fk()

    def _run(self, io) -> None:
        a, plant, fleet = self.arrays, self.plant_arrays, self.fleet
        wp.launch(swarm_act, self.slots, inputs=[io["estimate"], self.layout, self.params, self.mix, plant, a],
                  outputs=[io["controls"]], device=io.device)
        wp.launch(swarm_gather, self.slots, inputs=[io["estimate"], fleet, plant, a], device=io.device)
        wp.launch(swarm_score, self.slots, inputs=[io["estimate"], self.task_params, self.layout, fleet, plant, a],
                  device=io.device)
        wp.launch(swarm_settle, self.worlds, inputs=[self.task_params, self.layout, fleet, plant, a, self.filter],
                  device=io.device)
        self._fk()
