"""The mission guidance's device side: the leg table, the landing rule, and the kernel that flies them.

The leg table is filled once, at start-up, from a
:class:`~nexus.guidance.profile.MissionPlan` computed on the host (the plan
needs the estimate of where the vehicle rests). The kernel then evaluates the
plan at the tick's ``time`` exactly as :meth:`MissionPlan.at` does, in float64
and in the same order of operations, so its setpoint has the same bits as the
host plan's rounded to float32 (``tests/guidance/test_device_guidance.py``
checks this bit for bit).

Beside the plan, the kernel reads what the estimator says of its estimate
(``estimate_status`` and ``estimate_reset``, :mod:`nexus.estimation.estimate_status`):
the plan waits, disarmed, until the estimate is aligned, has its origin and
a valid horizontal position,
and then runs that much later (phase ``align``); a loss of the horizontal
position in the air holds the height and heading, then descends in place
(``position_hold``, ``position_land``); and every position goal is shifted by
the sum of the estimator's position resets. With the defaults a reader takes
when no estimator writes them (trusted, no reset), none of this changes a bit.
"""

from __future__ import annotations

import warp as wp

from nexus.estimation.estimate_status import HORIZONTAL_VALID, READY
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint

#: Phase indices, in :data:`nexus.guidance.profile.PHASES` order.
TAKEOFF, HOLD, YAW, RETURN, LAND, LANDED, ALIGN, POSITION_HOLD, POSITION_LAND, GOTO = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
#: The most legs a profile makes: takeoff, hold, six yaw legs, return, land.
MAX_LEGS = 10

#: What the start waits for: aligned with its origin (READY) and a horizontal position to fly on. PX4 too
#: refuses a mission's take-off without a valid position; taking off without one would only turn at once into
#: the position-loss landing.
START_STATUS = READY | HORIZONTAL_VALID
STATUS_START = wp.constant(START_STATUS)
STATUS_HORIZONTAL = wp.constant(HORIZONTAL_VALID)
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
    #: Hold after the horizontal position turns invalid, before the descent in place [s].
    loss_hold: wp.float64


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
    #: 1 once the estimate was ready (START_STATUS: aligned, origin set, position valid) and the plan began.
    aligned: wp.int32
    #: Sim time of the first call [s]: the plan's start, had the estimate been ready at once.
    first_call: wp.float64
    #: How much later than planned the plan runs [s]: the wait for alignment.
    delay: wp.float64
    #: Added to the plan's heading [rad] and height [m, NED z] when the plan began after a wait:
    #: the estimate's heading and height then, less those it was planned from.
    yaw_shift: wp.float64
    z_shift: wp.float64
    #: Position loss: the height goal [m, NED z, before the reset shift] and heading goal [rad] held,
    #: and the sim time [s] of the phase's start (hold, then descent).
    hold_z: wp.float64
    hold_yaw: wp.float64
    lost_since: wp.float64


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


@wp.func
def heading(q: wp.quat) -> wp.float64:
    """Heading [rad, NED] of an FRD→NED attitude quaternion (x, y, z, w), as ``profile.heading_of``."""
    x = wp.float64(q[0])
    y = wp.float64(q[1])
    z = wp.float64(q[2])
    w = wp.float64(q[3])
    return wp.atan2(wp.float64(2.0) * (x * y + z * w), wp.float64(1.0) - wp.float64(2.0) * (y * y + z * z))


@wp.func
def shifted(value: wp.float64, by: wp.float32) -> wp.float32:
    """``value`` + ``by`` rounded once to float32; ``value`` rounded as it is when ``by`` is 0 (keeps a -0.0)."""
    if by == wp.float32(0.0):
        return wp.float32(value)
    return wp.float32(value + wp.float64(by))


@wp.kernel
def fly_mission(
    time: wp.array(dtype=wp.float64),
    estimate: wp.array(dtype=PoseTwist),
    status: wp.array(dtype=wp.int32),
    reset: wp.array(dtype=wp.vec3),
    legs: wp.array2d(dtype=MissionLeg),
    rules: wp.array(dtype=MissionRules),
    state_in: wp.array2d(dtype=MissionState),
    entered_in: wp.array2d(dtype=wp.float64),
    state_out: wp.array2d(dtype=MissionState),
    entered_out: wp.array2d(dtype=wp.float64),
    setpoint: wp.array(dtype=Setpoint),
    armed: wp.array(dtype=wp.int32),
    mission_phase: wp.array(dtype=wp.int32),
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
    e = estimate[world]
    flags = status[world]
    moved = reset[world]

    # The start waits, disarmed, until the estimate is aligned, has its origin and a valid horizontal position
    # (START_STATUS); the plan then runs that much later, from the heading and height the estimate has then.
    if s.phase == -1:
        s.first_call = now
    if s.aligned == 0:
        first = legs[world, 0]
        if (flags & STATUS_START) == STATUS_START:
            s.aligned = 1
            if s.phase == ALIGN:
                s.delay = now - s.first_call
                s.yaw_shift = wrap(heading(e.attitude) - first.start_yaw)
                s.z_shift = wp.float64(e.position[2]) - first.start[2]
        else:
            if s.phase != ALIGN:
                s.phase = ALIGN
                entered_out[world, ALIGN] = now
            idle = Setpoint()
            idle.position = wp.vec3(shifted(first.start[0], moved[0]), shifted(first.start[1], moved[1]),
                                    shifted(first.start[2], moved[2]))
            idle.yaw = wp.float32(wrap(first.start_yaw))
            setpoint[world] = idle
            armed[world] = 0
            mission_phase[world] = ALIGN
            state_out[world, 0] = s
            return
    t = now - s.delay
    ground_z = r.ground_z
    if s.z_shift != wp.float64(0.0):
        ground_z = ground_z + s.z_shift

    goal = wp.vec3d()
    yaw = wp.float64(0.0)
    # 1 once the descent's goal has sunk to the start height: a vehicle at rest then is on the ground,
    # whatever height its estimate says.
    reached = int(0)
    lost = s.phase == POSITION_HOLD or s.phase == POSITION_LAND
    if not lost:
        # The leg flown now: the first that has not ended, else the last (the landing).
        i = int(0)
        while i < r.legs - 1 and not (t < legs[world, i].end_time):
            i = i + 1
        leg = legs[world, i]
        if leg.phase == LAND:
            sunk = leg.start[2] + r.land_speed * wp.max(t - leg.start_time, wp.float64(0.0))
            goal = wp.vec3d(leg.start[0], leg.start[1], wp.min(sunk, leg.end[2]))
            yaw = leg.end_yaw
            if sunk >= r.ground_z:
                reached = 1
        else:
            blend = wp.float64(1.0)
            if leg.duration > wp.float64(0.0):
                blend = smooth_step((t - leg.start_time) / leg.duration)
            goal = wp.vec3d(
                leg.start[0] + (leg.end[0] - leg.start[0]) * blend,
                leg.start[1] + (leg.end[1] - leg.start[1]) * blend,
                leg.start[2] + (leg.end[2] - leg.start[2]) * blend,
            )
            yaw = leg.start_yaw + (leg.end_yaw - leg.start_yaw) * blend
        if s.yaw_shift != wp.float64(0.0):
            yaw = yaw + s.yaw_shift
        yaw = wrap(yaw)
        if s.z_shift != wp.float64(0.0):
            goal = wp.vec3d(goal[0], goal[1], goal[2] + s.z_shift)
        if (flags & STATUS_HORIZONTAL) == 0:
            # The horizontal position is lost in the air: hold the height and heading the plan asks now (during
            # the landing, go on descending from there), never to resume the plan.
            s.hold_z = goal[2]
            s.hold_yaw = yaw
            s.lost_since = now
            s.phase = POSITION_HOLD
            if leg.phase == LAND:
                s.phase = POSITION_LAND
            s.resting = 0
            entered_out[world, s.phase] = now
            lost = True
        elif leg.phase != s.phase:
            s.phase = leg.phase
            entered_out[world, leg.phase] = now
    if lost:
        if s.phase == POSITION_HOLD and now - s.lost_since >= r.loss_hold:
            s.phase = POSITION_LAND
            s.lost_since = now
            entered_out[world, POSITION_LAND] = now
        z = s.hold_z
        if s.phase == POSITION_LAND:
            sunk = s.hold_z + r.land_speed * (now - s.lost_since)
            floor = legs[world, r.legs - 1].end[2] + s.z_shift
            z = wp.min(sunk, floor)
            if sunk >= ground_z:
                reached = 1
        goal = wp.vec3d(wp.float64(0.0), wp.float64(0.0), z)
        yaw = s.hold_yaw

    out = Setpoint()
    if lost:
        # The horizontal goal is the estimate itself: no position error, which the estimate can no longer
        # measure, drives the vehicle; the height goal is shifted by the resets as every goal is.
        out.position = wp.vec3(e.position[0], e.position[1], shifted(goal[2], moved[2]))
    else:
        out.position = wp.vec3(shifted(goal[0], moved[0]), shifted(goal[1], moved[1]), shifted(goal[2], moved[2]))
    out.yaw = wp.float32(yaw)
    setpoint[world] = out
    armed[world] = 1

    # Landed: in a landing, slower vertically than landed_speed for landed_time, and on the ground: within
    # landed_height of the start height (as the estimate, shifted by its resets, says), or the descent's goal
    # has already sunk to it (an estimated height that wanders more than landed_height still lands).
    if (s.phase == LAND or s.phase == POSITION_LAND) and now >= s.next_check:
        s.next_check = now + r.check_period
        ground = ground_z
        if moved[2] != wp.float32(0.0):
            ground = ground + wp.float64(moved[2])
        height = wp.abs(wp.float64(e.position[2]) - ground)
        sinking = wp.abs(wp.float64(e.velocity[2]))
        if (height > r.landed_height and reached == 0) or sinking > r.landed_speed:
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
    mission_phase[world] = s.phase
    state_out[world, 0] = s
