"""The mission guidance's device side: the leg table, the landing rule, and the kernel that flies them.

The leg table is filled once, at start-up, from a
:class:`~nexus.guidance.profile.MissionPlan` computed on the host (the plan
needs the estimate of where the vehicle rests). The kernel then evaluates the
plan at the tick's ``time`` exactly as :meth:`MissionPlan.at` does, in float64
and in the same order of operations, so its setpoint has the same bits as the
host plan's rounded to float32 (``tests/guidance/test_device_guidance.py``
checks this bit for bit).
"""

from __future__ import annotations

import warp as wp

from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint

#: Phase indices, in :data:`nexus.guidance.profile.PHASES` order.
TAKEOFF, HOLD, YAW, RETURN, LAND, LANDED = 0, 1, 2, 3, 4, 5
#: The most legs a profile makes: takeoff, hold, six yaw legs, return, land.
MAX_LEGS = 10

PI = wp.constant(wp.float64(3.141592653589793))
TWO_PI = wp.constant(wp.float64(6.283185307179586))


@wp.struct
class MissionLeg:
    phase: wp.int32
    #: [s] sim time; ``end_time`` is infinite for the landing.
    start_time: wp.float64
    end_time: wp.float64
    duration: wp.float64
    #: Position goals [m, NED].
    start: wp.vec3d
    end: wp.vec3d
    #: Headings [rad], unwrapped.
    start_yaw: wp.float64
    end_yaw: wp.float64


@wp.struct
class MissionRules:
    """What the kernel needs besides the legs."""

    legs: wp.int32
    #: Height the vehicle started from (NED z) [m].
    ground_z: wp.float64
    land_speed: wp.float64  # [m/s]
    landed_height: wp.float64  # [m]
    landed_speed: wp.float64  # [m/s]
    landed_time: wp.float64  # [s]
    check_period: wp.float64  # [s]


@wp.struct
class MissionState:
    """What the guidance carries from tick to tick (landed detection): engine state, zeros at reset."""

    #: 1 once the start-up has filled the legs; until then the kernel writes nothing.
    planned: wp.int32
    #: Index into PHASES, -1 before the first call.
    phase: wp.int32
    #: 1 while the vehicle has been at rest since ``rest_since`` [s].
    resting: wp.int32
    rest_since: wp.float64
    #: Sim time of the next landed check [s].
    next_check: wp.float64


@wp.func
def smooth_step(fraction: wp.float64) -> wp.float64:
    """Minimum-jerk blend from 0 to 1 (as ``profile.smooth_step``)."""
    s = wp.min(wp.max(fraction, wp.float64(0.0)), wp.float64(1.0))
    return s * s * s * (wp.float64(10.0) - wp.float64(15.0) * s + wp.float64(6.0) * s * s)


@wp.func
def wrap(angle: wp.float64) -> wp.float64:
    """``angle`` [rad] wrapped to [−π, π), with Python's float ``%`` (floor modulo)."""
    shifted = angle + PI
    m = wp.mod(shifted, TWO_PI)
    if m != wp.float64(0.0):
        if m < wp.float64(0.0):
            m = m + TWO_PI
    else:
        m = wp.float64(0.0)
    return m - PI


@wp.kernel
def fly_mission(
    time: wp.array(dtype=wp.float64),
    estimate: wp.array(dtype=PoseTwist),
    legs: wp.array2d(dtype=MissionLeg),
    rules: wp.array(dtype=MissionRules),
    state_in: wp.array2d(dtype=MissionState),
    entered_in: wp.array2d(dtype=wp.float64),
    state_out: wp.array2d(dtype=MissionState),
    entered_out: wp.array2d(dtype=wp.float64),
    setpoint: wp.array(dtype=Setpoint),
    armed: wp.array(dtype=wp.int32),
    done: wp.array(dtype=wp.int32),
):
    world = wp.tid()
    s = state_in[world, 0]
    # Carry the state through unchanged first: the returns below leave it as it was.
    state_out[world, 0] = s
    for k in range(entered_in.shape[1]):
        entered_out[world, k] = entered_in[world, k]
    if s.planned == 0 or s.phase == LANDED:
        return
    r = rules[world]
    now = time[world]

    # The leg flown now: the first that has not ended, else the last (the landing).
    i = int(0)
    while i < r.legs - 1 and not (now < legs[world, i].end_time):
        i = i + 1
    leg = legs[world, i]

    goal = wp.vec3d()
    yaw = wp.float64(0.0)
    if leg.phase == LAND:
        sunk = leg.start[2] + r.land_speed * wp.max(now - leg.start_time, wp.float64(0.0))
        goal = wp.vec3d(leg.start[0], leg.start[1], wp.min(sunk, leg.end[2]))
        yaw = wrap(leg.end_yaw)
    else:
        blend = wp.float64(1.0)
        if leg.duration > wp.float64(0.0):
            blend = smooth_step((now - leg.start_time) / leg.duration)
        goal = wp.vec3d(
            leg.start[0] + (leg.end[0] - leg.start[0]) * blend,
            leg.start[1] + (leg.end[1] - leg.start[1]) * blend,
            leg.start[2] + (leg.end[2] - leg.start[2]) * blend,
        )
        yaw = wrap(leg.start_yaw + (leg.end_yaw - leg.start_yaw) * blend)

    if leg.phase != s.phase:
        s.phase = leg.phase
        entered_out[world, leg.phase] = now

    out = Setpoint()
    out.position = wp.vec3(wp.float32(goal[0]), wp.float32(goal[1]), wp.float32(goal[2]))
    out.yaw = wp.float32(yaw)
    setpoint[world] = out
    armed[world] = 1

    # Landed: within landed_height of the start height, slower than landed_speed, for landed_time.
    if leg.phase == LAND and now >= s.next_check:
        s.next_check = now + r.check_period
        e = estimate[world]
        height = wp.abs(wp.float64(e.position[2]) - r.ground_z)
        vx = wp.float64(e.velocity[0])
        vy = wp.float64(e.velocity[1])
        vz = wp.float64(e.velocity[2])
        speed = wp.sqrt(vx * vx + vy * vy + vz * vz)
        if height > r.landed_height or speed > r.landed_speed:
            s.resting = 0
        else:
            if s.resting == 0:
                s.resting = 1
                s.rest_since = now
            if now - s.rest_since >= r.landed_time:
                s.phase = LANDED
                entered_out[world, LANDED] = now
                armed[world] = 0
                done[world] = wp.max(done[world], 1)
    state_out[world, 0] = s
