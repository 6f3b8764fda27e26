"""The device loop under the MPC: attitude goal -> body rates -> torques -> control allocation.

The MPC (a host stage) writes an :class:`AttitudeGoal` at its own rate: its
rotor thrusts split the mixer's way into a collective thrust fraction and a
torque feed-forward, and the attitude and body rates it plans for its next
solve. This device stage runs every tick: it applies the feed-forward and
corrects the drift from the plan between solves with the PID controller's own
attitude law and rate PID
(:mod:`nexus.control.attitude`, :mod:`nexus.control.allocation`, gains from the
``NexusPidControllerAPI`` prim), as PX4 splits its position and attitude
loops. Its integrators are a :class:`~nexus.control.pid.PidState` the engine
owns (the MPC's state ``pid``), read from ``state_in`` and written to
``state_out`` with the position-loop fields it does not use copied through;
while ``armed`` is 0 it writes zeros and clears them.
"""

from __future__ import annotations

import warp as wp

from nexus.control.attitude import attitude_error_rates
from nexus.control.allocation import MixTables, write_rotor_commands
from nexus.control.pid import PidParams, PidState, clamp_rates, rate_loop
from nexus.estimation.pose_twist import PoseTwist


@wp.struct
class AttitudeGoal:
    """What the MPC asks of the attitude loop."""

    #: Collective thrust as a thrust fraction [-] (mean rotor thrust / full thrust).
    thrust: wp.float32
    #: Attitude goal, FRD→NED, Warp (x, y, z, w).
    attitude: wp.quat
    #: Body-rate goal [rad/s, FRD] added to the attitude law's.
    rates: wp.vec3
    #: Normalised torque feed-forward [-] (the mixer's units), the rest of the MPC's rotor thrusts.
    torque: wp.vec3


@wp.kernel
def attitude_loop(
    estimate: wp.array(dtype=PoseTwist),
    goal: wp.array(dtype=AttitudeGoal),
    armed: wp.array(dtype=wp.int32),
    params: wp.array(dtype=PidParams),
    state_in: wp.array2d(dtype=PidState),
    dt: float,
    mix: MixTables,
    time_ns: wp.array(dtype=wp.int64),
    state_out: wp.array2d(dtype=PidState),
    controls: wp.array2d(dtype=wp.float32),
):
    world = wp.tid()
    p = params[0]
    s = state_in[world, 0]
    est = estimate[world]
    g = goal[world]
    on = float(0.0)
    if armed[world] != 0:
        on = 1.0
    yaw_weight = wp.clamp(p.attitude_p[2] / wp.max(0.5 * (p.attitude_p[0] + p.attitude_p[1]), 1.0e-6), 0.0, 1.0)
    rate_goal = attitude_error_rates(est.attitude, wp.normalize(g.attitude), p.attitude_p, yaw_weight) + g.rates
    rate_goal = clamp_rates(rate_goal, p.max_rates)
    torque, rate_integral = rate_loop(p, s, est.rates, rate_goal, g.torque, dt, on)
    collective = wp.clamp(float(g.thrust), p.min_thrust, p.max_thrust)
    write_rotor_commands(controls, world, p.thrust_model_factor, collective, torque, on, mix, time_ns[world])
    out = PidState()
    out.velocity_integral = s.velocity_integral
    out.previous_velocity = s.previous_velocity
    out.previous_goal = s.previous_goal
    out.previous_goal_velocity = s.previous_goal_velocity
    out.previous_yaw_goal = s.previous_yaw_goal
    out.rate_integral = rate_integral
    out.previous_rates = est.rates
    out.primed = 1.0
    state_out[world, 0] = out
