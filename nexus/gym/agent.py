"""The learning agent: one device ``control`` stage that applies actions and, every ``decimation`` ticks,
computes observations, rewards, terminations and per-world resets inside the captured graph.

Each tick it turns each world's held action into the ``controls`` row: CTBR
(collective thrust and body rates through the PID's rate loop and the vehicle's
control allocation) or normalised motor commands. On the last tick of a policy
step it reads the ``estimate`` (the vehicle's estimator, at its rate), adds the
observation noise drawn from the world's own stream, scores the step, and a world
that terminated or ran out of time is put back at a fresh start drawn from its own
seed branch (position, velocity, tilt, heading; the target for the waypoint task)
without stopping the others: same step autoreset, its last observation kept in
``final_obs``. So one policy step of all worlds is one graph replay and one host
exchange (the action rows in, the observation, reward and flag rows out).
"""

from __future__ import annotations

import math

import newton
import numpy as np
from pxr import Usd
import warp as wp

from nexus.control.allocation import MixTables, allocation_for, mix_tables, write_rotor_commands
from nexus.control.pid import PID_SPEC, PidGains, PidParams, PidState, device_params, rate_loop
from nexus.control.velocity_action import VELOCITY_LIMITS, velocity_action
from nexus.core import Component, Read, Stage, Write
from nexus.estimation.ekf import Ekf
from nexus.estimation.pose_twist import PoseTwist
from nexus.gym.tasks import TRACK, WAYPOINT, Task, TaskParams
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.frames import attitude_ned_frd, ned_to_enu
from nexus.plant.hover import command_for_speed
from nexus.plant.physics import Physics
from nexus.plant.usd_checks import nexus_apis
from nexus.schemas.reader import read_prim
from nexus.sensors.samples import BaroSample, GpsSample, ImuSample

#: Action modes: CTBR (collective and body rates), normalised motor commands, and a velocity in the heading frame
#: with a yaw rate that the vehicle's PID cascade flies (:mod:`nexus.control.velocity_action`).
ACTION_MODES = ("ctbr", "motors", "velocity")
CTBR, MOTORS, VELOCITY = 0, 1, 2
#: CTBR's body-rate range at action ±1 [rad/s]: roll, pitch, yaw.
MAX_RATES = (3.0, 3.0, 1.5)
#: Observation sources: the estimator's state, or that and the raw sensors' latest samples.
OBSERVE_MODES = ("estimate", "sensors")
#: The raw-sensor features ``observe="sensors"`` appends: IMU specific force and rate, the target's height over
#: the baro height, the target minus the GPS position (NED).
SENSOR_FEATURES = ("accel_x", "accel_y", "accel_z", "gyro_x", "gyro_y", "gyro_z", "baro_height_error",
                   "gps_error_n", "gps_error_e", "gps_error_d")
#: Observation noise σ at scale 1, per feature group: position [m], velocity [m/s], tilt [-], rates [rad/s],
#: heading [rad] (GPS-grade position after fusion, a MEMS gyro's noise at 50 Hz).
NOISE_SIGMA = (0.01, 0.02, 0.005, 0.01, 0.005)


@wp.struct
class Layout:
    """Where a world's state sits in Newton's and the agent's arrays."""

    coords_per_world: int
    dofs_per_world: int
    base_coord: int
    base_dof: int
    rotors: int
    articulations_per_world: int
    decimation: int
    episode_steps: int
    step_dt: float
    tick_dt: float
    action_mode: int
    action_width: int
    obs_width: int
    noise: float
    hover_fraction: float
    hover_speed: float
    max_rates: wp.vec3
    #: The velocity action's limits at ±1: horizontal, vertical speed [m/s], yaw rate [rad/s].
    velocity_limits: wp.vec3
    #: The go-to-goal law's gain [1/s] a velocity action corrects (0: none; :mod:`nexus.control.velocity_action`) and
    #: the radius [m] its correction fades within (0: never) with the fade's power [-] (1: linear).
    goal_gain: float
    goal_fade: float
    goal_fade_power: float


@wp.struct
class Filter:
    """The EKF's state arrays (:class:`~nexus.estimation.ekf.Ekf`) that a respawn puts at the new start.

    A respawn moves the vehicle as no sensor could see: the filter, left alone, would go on estimating the old
    place (its GPS fusion gated off by the jump) and end the new episode at once. So a world that starts an
    episode starts its filter there too: position, velocity and attitude at the new start's true values, their
    covariance at the filter's initial sigmas (``nexus:gpsPosNoise``, ``nexus:gpsVelNoise``,
    ``nexus:attitudeInit``), uncorrelated with the biases, which keep what the filter learnt of the sensors.
    ``active`` 0: the vehicle flies no EKF (the arrays are placeholders).
    """

    active: int
    nominal: wp.array2d(dtype=wp.vec3)
    attitude: wp.array2d(dtype=wp.quat)
    covariance: wp.array3d(dtype=wp.float32)
    #: Initial sigma of position [m], velocity [m/s] and attitude [rad].
    sigma: wp.vec3


@wp.func
def restart_filter(f: Filter, w: int, position: wp.vec3, velocity: wp.vec3, attitude: wp.quat):
    """World ``w``'s filter at a respawn's true start (NED, body FRD to NED); see :class:`Filter`."""
    if f.active == 0:
        return
    f.nominal[w, 0] = position
    f.nominal[w, 1] = velocity
    f.attitude[w, 0] = attitude
    for i in range(15):
        for j in range(15):
            if i < 9 or j < 9:
                f.covariance[w, i, j] = 0.0
    for i in range(9):
        sigma = f.sigma[i // 3]
        f.covariance[w, i, i] = sigma * sigma


@wp.func
def figure_eight(t: float, radius: float, period: float, height: float):
    """The track task's reference at ``t`` [s]: position and velocity, NED [m, m/s]."""
    w = 2.0 * wp.pi / period
    position = wp.vec3(radius * wp.sin(w * t), 0.5 * radius * wp.sin(2.0 * w * t), -height)
    velocity = wp.vec3(radius * w * wp.cos(w * t), radius * w * wp.cos(2.0 * w * t), 0.0)
    return position, velocity


@wp.func
def noisy(value: float, sigma: float, seed: int, offset: int) -> float:
    if sigma <= 0.0:
        return value
    state = wp.rand_init(seed, offset)
    return value + sigma * wp.randn(state)


@wp.func
def write_observation(obs: wp.array2d(dtype=wp.float32), w: int, position: wp.vec3, attitude: wp.quat,
                      velocity: wp.vec3, rates: wp.vec3, target: wp.vec3, target_yaw: float, target_velocity: wp.vec3,
                      with_target_velocity: int, noise: float, seed: int, offset: int):
    """The features of :mod:`nexus.control.policy.features` (heading frame), each with its noise added."""
    x = attitude[0]
    y = attitude[1]
    z = attitude[2]
    qw = attitude[3]
    psi = wp.atan2(2.0 * (x * y + z * qw), 1.0 - 2.0 * (y * y + z * z))
    c = wp.cos(psi)
    s = wp.sin(psi)
    e = target - position
    down_x = 2.0 * (x * z + qw * y)
    down_y = 2.0 * (y * z - qw * x)
    yaw_error = wp.atan2(wp.sin(target_yaw - psi), wp.cos(target_yaw - psi))
    obs[w, 0] = noisy(c * e[0] + s * e[1], noise * 0.01, seed, offset + 0)
    obs[w, 1] = noisy(-s * e[0] + c * e[1], noise * 0.01, seed, offset + 1)
    obs[w, 2] = noisy(e[2], noise * 0.01, seed, offset + 2)
    obs[w, 3] = noisy(c * velocity[0] + s * velocity[1], noise * 0.02, seed, offset + 3)
    obs[w, 4] = noisy(-s * velocity[0] + c * velocity[1], noise * 0.02, seed, offset + 4)
    obs[w, 5] = noisy(velocity[2], noise * 0.02, seed, offset + 5)
    obs[w, 6] = noisy(c * down_x + s * down_y, noise * 0.005, seed, offset + 6)
    obs[w, 7] = noisy(-s * down_x + c * down_y, noise * 0.005, seed, offset + 7)
    obs[w, 8] = noisy(rates[0], noise * 0.01, seed, offset + 8)
    obs[w, 9] = noisy(rates[1], noise * 0.01, seed, offset + 9)
    obs[w, 10] = noisy(rates[2], noise * 0.01, seed, offset + 10)
    obs[w, 11] = noisy(yaw_error, noise * 0.005, seed, offset + 11)
    if with_target_velocity != 0:
        obs[w, 12] = c * target_velocity[0] + s * target_velocity[1]
        obs[w, 13] = -s * target_velocity[0] + c * target_velocity[1]
        obs[w, 14] = target_velocity[2]


@wp.func
def target_at(task: TaskParams, goal: wp.vec3, t: float):
    """The task's target position and velocity at episode time ``t`` [s] (NED)."""
    if task.kind == TRACK:
        return figure_eight(t, task.track_radius, task.track_period, task.height)
    return goal, wp.vec3(0.0, 0.0, 0.0)


@wp.func
def uniform(seed: int, offset: int, half_width: float) -> float:
    state = wp.rand_init(seed, offset)
    return half_width * (2.0 * wp.randf(state) - 1.0)


#: The heading a world starts and aims at [rad, NED]: east, as the vehicle files' identity attitude faces.
TARGET_YAW = wp.constant(0.5 * math.pi)


@wp.func
def place_at_start(w: int, layout: Layout, seed: int, base: int, reference: wp.vec3, spawn_position: float,
                   spawn_velocity: float, spawn_yaw: float, spawn_tilt: float, ned_origin: wp.array(dtype=wp.vec3),
                   joint_q: wp.array(dtype=wp.float32), joint_qd: wp.array(dtype=wp.float32),
                   esc_speed: wp.array(dtype=wp.float32), rotor_dof: wp.array(dtype=wp.int32),
                   rotor_spin: wp.array(dtype=wp.float32), fk_mask: wp.array(dtype=wp.bool),
                   pid: wp.array(dtype=PidState)):
    """Put row ``w``'s vehicle at a start drawn from (``seed``, draws ``base``..``base + 8``) about ``reference``
    (NED [m]) within the task's spawn bounds, its rotors at hover and its PID afresh. Returns the start's
    position [m] and velocity [m/s] (NED), attitude (body FRD to NED) and Newton's base position (ENU [m])."""
    start = reference + wp.vec3(uniform(seed, base + 0, spawn_position), uniform(seed, base + 1, spawn_position),
                                uniform(seed, base + 2, spawn_position))
    velocity = wp.vec3(uniform(seed, base + 3, spawn_velocity), uniform(seed, base + 4, spawn_velocity),
                       uniform(seed, base + 5, spawn_velocity))
    yaw_ned = TARGET_YAW + uniform(seed, base + 6, spawn_yaw)
    tilt_direction = uniform(seed, base + 7, wp.pi)
    tilt = 0.5 * (uniform(seed, base + 8, spawn_tilt) + spawn_tilt)  # in [0, spawn_tilt]
    # Newton's base: body FLU to world ENU. Heading (NED, from north) psi is an ENU yaw of pi/2 - psi.
    q_yaw = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), 0.5 * wp.pi - yaw_ned)
    q_tilt = wp.quat_from_axis_angle(wp.vec3(wp.cos(tilt_direction), wp.sin(tilt_direction), 0.0), tilt)
    rotation = q_tilt * q_yaw
    position_enu = ned_origin[w] + ned_to_enu(start)
    c0 = w * layout.coords_per_world + layout.base_coord
    for k in range(3):
        joint_q[c0 + k] = position_enu[k]
    for k in range(4):
        joint_q[c0 + 3 + k] = rotation[k]
    d0 = w * layout.dofs_per_world + layout.base_dof
    velocity_enu = ned_to_enu(velocity)
    for k in range(3):
        joint_qd[d0 + k] = velocity_enu[k]
        joint_qd[d0 + 3 + k] = 0.0
    for i in range(layout.rotors):
        joint_qd[w * layout.dofs_per_world + rotor_dof[i]] = rotor_spin[i] * layout.hover_speed
        esc_speed[w * layout.rotors + i] = layout.hover_speed
    for a in range(layout.articulations_per_world):
        fk_mask[w * layout.articulations_per_world + a] = True
    pid[w] = PidState()
    # The estimate the truth estimator will report for this state: body FRD to NED.
    return start, velocity, attitude_ned_frd(rotation), position_enu


@wp.func
def respawn(w: int, task: TaskParams, layout: Layout, seed: int, episode: int, ned_origin: wp.array(dtype=wp.vec3),
            joint_q: wp.array(dtype=wp.float32), joint_qd: wp.array(dtype=wp.float32),
            esc_speed: wp.array(dtype=wp.float32), rotor_dof: wp.array(dtype=wp.int32),
            rotor_spin: wp.array(dtype=wp.float32), fk_mask: wp.array(dtype=wp.bool),
            goal: wp.array(dtype=wp.vec3), pid: wp.array(dtype=PidState), obs: wp.array2d(dtype=wp.float32),
            noise_seed: int, ekf: Filter):
    """Put world ``w`` at a fresh start drawn from (``seed``, ``episode``) (its EKF too, if it flies one) and
    write its first observation."""
    base = episode * 64
    target = wp.vec3(0.0, 0.0, -task.height)
    if task.kind == WAYPOINT:
        target = wp.vec3(uniform(seed, base + 10, task.waypoint_range), uniform(seed, base + 11, task.waypoint_range),
                         -task.height + uniform(seed, base + 12, 0.5 * task.waypoint_range))
    goal[w] = target
    reference, reference_velocity = target_at(task, target, 0.0)
    start, velocity, attitude, position_enu = place_at_start(
        w, layout, seed, base, reference, task.spawn_position, task.spawn_velocity, task.spawn_yaw, task.spawn_tilt,
        ned_origin, joint_q, joint_qd, esc_speed, rotor_dof, rotor_spin, fk_mask, pid)
    restart_filter(ekf, w, start, velocity, attitude)
    rates = wp.vec3(0.0, 0.0, 0.0)
    write_observation(obs, w, start, attitude, velocity, rates, reference, TARGET_YAW, reference_velocity,
                      wp.where(task.kind == TRACK, 1, 0), layout.noise, noise_seed, episode * 16384)


@wp.kernel
def sensor_features(imu: wp.array(dtype=ImuSample), baro: wp.array(dtype=BaroSample), gps: wp.array(dtype=GpsSample),
                    task: TaskParams, goal: wp.array(dtype=wp.vec3), episode_step: wp.array(dtype=wp.int32),
                    sub_tick: wp.array(dtype=wp.int32), layout: Layout, origin: wp.vec3d,
                    metres_per_degree: wp.vec2d, first: int, fresh_only: int, obs: wp.array2d(dtype=wp.float32)):
    """The raw sensors' latest samples as features ``first``.. (their noise, rates and latency as they fly).

    The GPS position comes back to NED metres about the scene's geodetic origin ``origin`` (latitude,
    longitude [deg], altitude [m]) on the local tangent plane (``metres_per_degree``: north, east), the baro
    height is the pressure altitude less the origin's altitude. Before the agent's tick: against the target
    at the end of this policy step; with ``fresh_only``: only the worlds an episode just started, against its
    first target.
    """
    w = wp.tid()
    step = episode_step[w] + 1
    if fresh_only != 0:
        if episode_step[w] != 0 or sub_tick[w] != 0:
            return
        step = 0
    target, target_velocity = target_at(task, goal[w], float(step) * layout.step_dt)
    sample = imu[w]
    for k in range(3):
        obs[w, first + k] = sample.accel[k]
        obs[w, first + 3 + k] = sample.gyro[k]
    height = float(baro[w].pressure_altitude) - float(origin[2])
    obs[w, first + 6] = -target[2] - height
    fix = gps[w]
    north = float((fix.latitude - origin[0]) * metres_per_degree[0])
    east = float((fix.longitude - origin[1]) * metres_per_degree[1])
    down = -float(fix.altitude - origin[2])
    obs[w, first + 7] = target[0] - north
    obs[w, first + 8] = target[1] - east
    obs[w, first + 9] = target[2] - down


@wp.kernel
def reset_worlds(which: wp.array(dtype=wp.int32), task: TaskParams, layout: Layout, seeds: wp.array(dtype=wp.int32),
                 noise_seeds: wp.array(dtype=wp.int32), episode: wp.array(dtype=wp.int32),
                 ned_origin: wp.array(dtype=wp.vec3), joint_q: wp.array(dtype=wp.float32),
                 joint_qd: wp.array(dtype=wp.float32), esc_speed: wp.array(dtype=wp.float32),
                 rotor_dof: wp.array(dtype=wp.int32), rotor_spin: wp.array(dtype=wp.float32),
                 fk_mask: wp.array(dtype=wp.bool), goal: wp.array(dtype=wp.vec3), pid: wp.array(dtype=PidState),
                 obs: wp.array2d(dtype=wp.float32), episode_step: wp.array(dtype=wp.int32),
                 sub_tick: wp.array(dtype=wp.int32), done: wp.array(dtype=wp.int32), ekf: Filter):
    """The host's reset (``env.reset``): every world flagged in ``which`` starts its episode afresh."""
    w = wp.tid()
    fk_mask_clear = False
    for a in range(layout.articulations_per_world):
        fk_mask[w * layout.articulations_per_world + a] = fk_mask_clear
    if which[w] == 0:
        return
    respawn(w, task, layout, seeds[w], episode[w], ned_origin, joint_q, joint_qd, esc_speed, rotor_dof, rotor_spin,
            fk_mask, goal, pid, obs, noise_seeds[w], ekf)
    episode_step[w] = 0
    sub_tick[w] = 0
    done[w] = 0


@wp.func
def apply_action(w: int, est: PoseTwist, actions: wp.array2d(dtype=wp.float32), layout: Layout,
                 params: wp.array(dtype=PidParams), mix: MixTables, pid: wp.array(dtype=PidState),
                 controls: wp.array2d(dtype=wp.float32), goal: wp.vec3) -> float:
    """Row ``w``'s held action as its ``controls`` row: CTBR through the PID's rate loop (its state in ``pid``,
    the estimate's rates [rad/s]) and the allocation, a velocity through the PID's cascade
    (:func:`~nexus.control.velocity_action.velocity_action`, its go-to-goal law aiming at ``goal`` when the layout
    has a goal gain), or motor commands. Returns the action's effort as the single-agent reward penalises it."""
    rates = est.rates
    a0 = wp.clamp(actions[w, 0], -1.0, 1.0)
    a1 = wp.float32(0.0)
    a2 = wp.float32(0.0)
    a3 = wp.float32(0.0)
    if layout.action_width > 1:
        a1 = wp.clamp(actions[w, 1], -1.0, 1.0)
    if layout.action_width > 2:
        a2 = wp.clamp(actions[w, 2], -1.0, 1.0)
    if layout.action_width > 3:
        a3 = wp.clamp(actions[w, 3], -1.0, 1.0)
    effort = float(0.0)
    if layout.action_mode == CTBR:
        p = params[0]
        state = pid[w]
        collective = wp.clamp(layout.hover_fraction * (1.0 + a0), 0.0, 1.0)
        goal_rates = wp.vec3(a1 * layout.max_rates[0], a2 * layout.max_rates[1], a3 * layout.max_rates[2])
        torque, integral = rate_loop(p, state, rates, goal_rates, wp.vec3(0.0, 0.0, 0.0), layout.tick_dt, 1.0)
        write_rotor_commands(controls, w, p.thrust_model_factor, collective, torque, 1.0, mix, wp.int64(0))
        out = PidState()
        out.rate_integral = integral
        out.previous_rates = rates
        out.primed = 1.0
        pid[w] = out
        effort = a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3
    elif layout.action_mode == VELOCITY:
        p = params[0]
        collective, torque, out = velocity_action(p, pid[w], est, a0, a1, a2, a3, layout.velocity_limits, goal,
                                                  layout.goal_gain, layout.goal_fade, layout.goal_fade_power,
                                                  layout.tick_dt, 1.0)
        write_rotor_commands(controls, w, p.thrust_model_factor, collective, torque, 1.0, mix, wp.int64(0))
        pid[w] = out
        effort = a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3
    else:
        for i in range(CONTROLS_WIDTH):
            value = float(0.0)
            if i < layout.action_width:
                value = 0.5 * (wp.clamp(actions[w, i], -1.0, 1.0) + 1.0)
                effort += (value - layout.hover_fraction) * (value - layout.hover_fraction)
            controls[w, i] = value
    return effort


@wp.kernel
def agent_tick(
    estimate: wp.array(dtype=PoseTwist),
    actions: wp.array2d(dtype=wp.float32),
    task: TaskParams,
    layout: Layout,
    params: wp.array(dtype=PidParams),
    mix: MixTables,
    seeds: wp.array(dtype=wp.int32),
    noise_seeds: wp.array(dtype=wp.int32),
    ned_origin: wp.array(dtype=wp.vec3),
    joint_q: wp.array(dtype=wp.float32),
    joint_qd: wp.array(dtype=wp.float32),
    esc_speed: wp.array(dtype=wp.float32),
    rotor_dof: wp.array(dtype=wp.int32),
    rotor_spin: wp.array(dtype=wp.float32),
    done: wp.array(dtype=wp.int32),
    # state, written in place
    pid: wp.array(dtype=PidState),
    sub_tick: wp.array(dtype=wp.int32),
    episode_step: wp.array(dtype=wp.int32),
    episode: wp.array(dtype=wp.int32),
    goal: wp.array(dtype=wp.vec3),
    fk_mask: wp.array(dtype=wp.bool),
    # outputs
    controls: wp.array2d(dtype=wp.float32),
    obs: wp.array2d(dtype=wp.float32),
    final_obs: wp.array2d(dtype=wp.float32),
    reward: wp.array(dtype=wp.float32),
    terminated: wp.array(dtype=wp.bool),
    truncated: wp.array(dtype=wp.bool),
    ekf: Filter,
):
    w = wp.tid()
    for a in range(layout.articulations_per_world):
        fk_mask[w * layout.articulations_per_world + a] = False
    est = estimate[w]
    effort = apply_action(w, est, actions, layout, params, mix, pid, controls, goal[w])
    sub = sub_tick[w] + 1
    if sub < layout.decimation:
        sub_tick[w] = sub
        return
    sub_tick[w] = 0
    step = episode_step[w] + 1
    t = float(step) * layout.step_dt
    target, target_velocity = target_at(task, goal[w], t)
    count = episode[w]
    with_velocity = wp.where(task.kind == TRACK, 1, 0)
    write_observation(obs, w, est.position, est.attitude, est.velocity, est.rates, target, TARGET_YAW, target_velocity,
                      with_velocity, layout.noise, noise_seeds[w], count * 16384 + step * 16)

    error = wp.length(target - est.position)
    x = est.attitude[0]
    y = est.attitude[1]
    up = 1.0 - 2.0 * (x * x + y * y)  # cosine of the tilt from level
    height = -est.position[2]
    speed_error = est.velocity - target_velocity
    r = task.w_position * wp.exp(-error / 0.5) + task.w_precise * wp.exp(-error / 0.05)
    r = r - task.w_velocity * wp.dot(speed_error, speed_error) - task.w_rates * wp.dot(est.rates, est.rates)
    r = r - task.w_action * effort
    failed = done[w] == 2 or not wp.isfinite(error)
    ended = failed or error > task.max_error or up < task.min_up or height < task.min_height
    timeout = step >= layout.episode_steps and not ended
    if ended:
        r = r - task.crash_penalty
    if not wp.isfinite(r):
        r = -task.crash_penalty
    reward[w] = r
    terminated[w] = ended
    truncated[w] = timeout
    if ended or timeout:
        for k in range(layout.obs_width):
            final_obs[w, k] = obs[w, k]
        episode[w] = count + 1
        episode_step[w] = 0
        done[w] = 0
        respawn(w, task, layout, seeds[w], count + 1, ned_origin, joint_q, joint_qd, esc_speed, rotor_dof, rotor_spin,
                fk_mask, goal, pid, obs, noise_seeds[w], ekf)
    else:
        episode_step[w] = step


def filter_of(ctx, device) -> Filter:
    """The :class:`Filter` of the flight's EKF (its state arrays in the ring), or an inactive one."""
    f = Filter()
    ekf = next((c for c in ctx.components if isinstance(c, Ekf)), None)
    state = ctx.state_of(ekf) if ekf is not None else {}
    f.active = int(bool(state))
    if state:
        f.nominal, f.attitude, f.covariance = state["nominal"], state["attitude"], state["covariance"]
        v = ekf.values
        f.sigma = wp.vec3(float(v["gps_pos_noise"]), float(v["gps_vel_noise"]), float(v["attitude_init"]))
    else:
        f.nominal = wp.zeros((1, 1), dtype=wp.vec3, device=device)
        f.attitude = wp.zeros((1, 1), dtype=wp.quat, device=device)
        f.covariance = wp.zeros((1, 1, 1), dtype=wp.float32, device=device)
    return f


def nominal_mass(plant, stage) -> float:
    """World 0's total mass [kg] with its base body at the mass its file gives (``physics:mass``), whatever
    mass a variation file drew for it; exactly ``plant.mass`` (the same float32 sum) when none was drawn."""
    masses = plant.model.body_mass.numpy()[: plant.bodies_per_world].copy()
    attribute = stage.GetPrimAtPath(plant.base_path).GetAttribute("physics:mass")
    value = attribute.Get() if attribute and attribute.IsValid() else None
    if value is not None and float(value) > 0.0:
        masses[plant.base] = np.float32(value)
    return float(masses.sum())


class LearningAgent(Component):
    """Takes the controller's place: applies the policy's actions each tick, scores and resets each policy step.

    The host owns the action rows (:attr:`actions`) and reads :attr:`obs`, :attr:`reward`,
    :attr:`terminated`, :attr:`truncated` and :attr:`final_obs` after each replay.
    """

    def __init__(self, task: Task, *, action_mode: str, decimation: int, noise: float, observe: str = "estimate",
                 name: str = "agent"):
        super().__init__(name)
        self.observe = observe
        #: Observation width: the task's features, then the raw sensors' with ``observe="sensors"``.
        self.observation_width = task.observation_width + (len(SENSOR_FEATURES) if observe == "sensors" else 0)
        self.task = task
        self.action_mode = action_mode
        self.decimation = int(decimation)
        self.noise = float(noise)
        #: A replay is one policy step: never more ticks per replay than the decimation.
        self.max_ticks_per_replay = self.decimation
        self.plant = None

    def bind(self, plant) -> None:
        """Take the vehicle's rate gains, allocation and hover command (before the build)."""

        self.plant = plant
        gains = PidGains()
        stage = Usd.Stage.Open(str(plant.vehicle_path))
        for prim in stage.Traverse():
            if "NexusPidControllerAPI" in nexus_apis(prim):
                gains = PidGains.from_values(prim, read_prim(prim, PID_SPEC, plant.vehicle_path), plant.vehicle_path)
                break
        factor = float(plant.rotors[0].esc["thrust_model_factor"])
        self.rate_params = device_params(gains, factor, plant.gravity)
        self.allocation = allocation_for(plant)
        # Hover for the vehicle as its file gives it, not world 0's drawn base mass (``--vary mass``): the
        # drawn mass changes from world to world and episode to episode, the meaning of action 0 does not.
        speed = math.sqrt(nominal_mass(plant, stage) * plant.gravity / sum(r.thrust_coefficient for r in plant.rotors))
        u = command_for_speed(plant, speed)
        self.hover_fraction = (1.0 - factor) * u + factor * u * u  # thrust fraction at hover [-]
        self.hover_command = u
        self.hover_speed = speed
        self.action_width = len(plant.rotors) if self.action_mode == "motors" else 4

    def prepare_layout(self, ctx) -> None:
        """:attr:`layout` (where each row's state sits in Newton's and the agent's arrays, the policy step's
        timing, the action's meaning) and :attr:`episode_steps`, for the flight ``ctx`` builds."""
        plant = self.plant
        layout = Layout()
        layout.coords_per_world, layout.dofs_per_world = plant.coords_per_world, plant.dofs_per_world
        layout.base_coord, layout.base_dof = plant.base_coord, plant.base_dof
        layout.rotors = len(plant.rotors)
        layout.articulations_per_world = max(1, plant.model.articulation_count // ctx.worlds)
        layout.decimation = self.decimation
        layout.tick_dt = float(ctx.dt)
        layout.step_dt = float(ctx.dt) * self.decimation
        layout.episode_steps = max(1, int(round(self.task.episode_s / layout.step_dt)))
        layout.action_mode = ACTION_MODES.index(self.action_mode)
        layout.action_width = self.action_width
        layout.obs_width = self.observation_width
        layout.noise = self.noise
        layout.hover_fraction = self.hover_command if self.action_mode == "motors" else self.hover_fraction
        layout.hover_speed = self.hover_speed
        layout.max_rates = wp.vec3(*MAX_RATES)
        layout.velocity_limits = wp.vec3(*VELOCITY_LIMITS)
        # A multi-agent task may fly its velocity actions as corrections to a go-to-goal law (its goal_gain).
        layout.goal_gain = float(getattr(self.task, "goal_gain", 0.0))
        layout.goal_fade = float(getattr(self.task, "goal_fade", 0.0))
        layout.goal_fade_power = float(getattr(self.task, "goal_fade_power", 1.0))
        self.layout = layout
        self.episode_steps = layout.episode_steps

    def stages(self) -> list[Stage]:
        sensors = (Read("imu", ImuSample, (1,)), Read("baro", BaroSample, (1,)), Read("gps", GpsSample, (1,)))
        return [Stage("agent", "control", self._run,
                      reads=(Read("estimate", PoseTwist, (1,)), *(sensors if self.observe == "sensors" else ())),
                      writes=(Write("controls", wp.float32, (1, CONTROLS_WIDTH), recorded=True),))]

    def prepare(self, ctx) -> None:
        if self.plant is None:
            self.bind(next(c for c in ctx.components if isinstance(c, Physics)).plant)
        plant, device, n = self.plant, ctx.device, ctx.worlds
        self.worlds, self.device = n, device
        task = self.task
        self.prepare_layout(ctx)
        self.task_params = task.params()
        self.params = wp.array([self.rate_params], dtype=PidParams, device=device)
        self.mix = mix_tables(self.allocation, n, device)
        self.rotor_dof = wp.array([r.dof for r in plant.rotors], dtype=wp.int32, device=device)
        self.rotor_spin = wp.array([float(r.spin) for r in plant.rotors], dtype=wp.float32, device=device)
        self.seeds = wp.zeros(n, dtype=wp.int32, device=device)
        self.noise_seeds = wp.zeros(n, dtype=wp.int32, device=device)
        self.actions = wp.zeros((n, self.action_width), dtype=wp.float32, device=device)
        self.pid = wp.zeros(n, dtype=PidState, device=device)
        self.sub_tick = wp.zeros(n, dtype=wp.int32, device=device)
        self.episode_step = wp.zeros(n, dtype=wp.int32, device=device)
        self.episode = wp.zeros(n, dtype=wp.int32, device=device)
        self.goal = wp.zeros(n, dtype=wp.vec3, device=device)
        self.fk_mask = wp.zeros(plant.model.articulation_count, dtype=wp.bool, device=device)
        width = self.observation_width
        origin = plant.origin
        latitude = math.radians(origin.latitude)
        # WGS-84's meridian and prime-vertical radii at the origin [m]: metres per degree north and east.
        a, e2 = 6378137.0, 6.69437999014e-3
        meridian = a * (1.0 - e2) / (1.0 - e2 * math.sin(latitude) ** 2) ** 1.5
        vertical = a / math.sqrt(1.0 - e2 * math.sin(latitude) ** 2)
        self.origin = wp.vec3d(origin.latitude, origin.longitude, origin.altitude)
        self.metres_per_degree = wp.vec2d(math.radians(meridian), math.radians(vertical * math.cos(latitude)))
        self.obs = wp.zeros((n, width), dtype=wp.float32, device=device)
        self.final_obs = wp.zeros((n, width), dtype=wp.float32, device=device)
        self.reward = wp.zeros(n, dtype=wp.float32, device=device)
        self.terminated = wp.zeros(n, dtype=wp.bool, device=device)
        self.truncated = wp.zeros(n, dtype=wp.bool, device=device)
        self.which = wp.zeros(n, dtype=wp.int32, device=device)
        #: The loop's done flags (the clock, the first component, holds them before any component prepares).
        self.done = next(c for c in ctx.components if c.name == "clock").done
        self.filter = filter_of(ctx, device)

    def external_state(self) -> dict:
        return {name: getattr(self, name) for name in (
            "pid", "sub_tick", "episode_step", "episode", "goal", "obs", "final_obs", "reward", "terminated",
            "truncated", "actions", "seeds", "noise_seeds")}

    def seed(self, seed: int, first_world: int = 0) -> None:
        """Each world's seed branch from ``seed``: world i's draws do not depend on how many worlds fly."""
        seeds, noise = [], []
        for w in range(self.worlds):
            sequence = np.random.SeedSequence([int(seed), first_world + w])
            a, b = sequence.generate_state(2, dtype=np.uint32)
            seeds.append(int(a) & 0x7FFFFFFF)
            noise.append(int(b) & 0x7FFFFFFF)
        self.seeds.assign(np.asarray(seeds, dtype=np.int32))
        self.noise_seeds.assign(np.asarray(noise, dtype=np.int32))
        self.episode.zero_()

    def _fk(self) -> None:
        state = self.plant.state
        newton.eval_fk(self.plant.model, state.joint_q, state.joint_qd, state, mask=self.fk_mask)

    def reset_worlds(self, which: np.ndarray, done: wp.array) -> None:
        """Start the flagged worlds' episodes afresh (host call, outside the graph)."""
        plant = self.plant
        self.which.assign(np.asarray(which, dtype=np.int32))
        wp.launch(reset_worlds, self.worlds, inputs=[
            self.which, self.task_params, self.layout, self.seeds, self.noise_seeds, self.episode, plant.ned_origin,
            plant.state.joint_q, plant.state.joint_qd, plant.esc_speed, self.rotor_dof, self.rotor_spin,
            self.fk_mask, self.goal, self.pid, self.obs, self.episode_step, self.sub_tick, done, self.filter],
            device=self.device)
        self._fk()

    def write_sensor_features(self, imu, baro, gps, fresh_only: bool) -> None:
        """The raw-sensor features from the ``imu``, ``baro`` and ``gps`` signals (``observe="sensors"``)."""
        wp.launch(sensor_features, self.worlds, inputs=[
            imu, baro, gps, self.task_params, self.goal, self.episode_step, self.sub_tick, self.layout, self.origin,
            self.metres_per_degree, self.task.observation_width, int(fresh_only)], outputs=[self.obs],
            device=self.device)

    def _run(self, io) -> None:
        plant = self.plant
        sensors = self.observe == "sensors"
        if sensors:  # before the tick, so a world that ends keeps them in its final observation
            self.write_sensor_features(io["imu"], io["baro"], io["gps"], False)
        wp.launch(agent_tick, self.worlds, inputs=[
            io["estimate"], self.actions, self.task_params, self.layout, self.params, self.mix, self.seeds,
            self.noise_seeds, plant.ned_origin, plant.state.joint_q, plant.state.joint_qd, plant.esc_speed,
            self.rotor_dof, self.rotor_spin, self.done, self.pid, self.sub_tick, self.episode_step, self.episode,
            self.goal, self.fk_mask], outputs=[io["controls"], self.obs, self.final_obs, self.reward, self.terminated,
                                               self.truncated, self.filter], device=io.device)
        if sensors:  # a world that started an episode: its first observation against its first target
            self.write_sensor_features(io["imu"], io["baro"], io["gps"], True)
        self._fk()
