"""The PID kernel on hand-made estimates, and its builder on the vehicle's controller prim."""

import math

import numpy as np
import pytest
import warp as wp

from nexus.control.pid import PidController, PidGains, PidParams, PidState, device_params, gains_from_prim, pid_control
from nexus.core.errors import BuildError
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.assets import resolve_asset
from nexus.plant.loading import open_stage

HOVER_COMMAND = 0.572


def heading(yaw):
    """A level FRD→NED attitude facing ``yaw`` [rad]."""
    return wp.quat(0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))


def one_step(position=(0, 0, 0), velocity=(0, 0, 0), rates=(0, 0, 0), yaw=0.0, goal=(0, 0, 0), yaw_goal=0.0, armed=1):
    estimate = PoseTwist()
    estimate.position, estimate.velocity, estimate.rates = wp.vec3(*position), wp.vec3(*velocity), wp.vec3(*rates)
    estimate.attitude = heading(yaw)
    setpoint = Setpoint()
    setpoint.position, setpoint.yaw = wp.vec3(*goal), yaw_goal
    params = device_params(PidGains(hover_thrust=HOVER_COMMAND), thrust_model_factor=0.5, gravity=9.80665)
    state = wp.zeros(1, dtype=PidState, device="cpu")
    controls = wp.full((1, CONTROLS_WIDTH), 7.0, dtype=wp.float32, device="cpu")
    wp.launch(pid_control, 1, inputs=[
        wp.array([estimate], dtype=PoseTwist, device="cpu"), wp.array([setpoint], dtype=Setpoint, device="cpu"),
        wp.array([armed], dtype=wp.int32, device="cpu"), wp.array([params], dtype=PidParams, device="cpu"),
        state, 0.004, 4], outputs=[state, controls], device="cpu")
    return controls.numpy()[0]


def test_at_the_goal_every_rotor_gets_the_hover_command():
    controls = one_step()
    np.testing.assert_allclose(controls[:4], HOVER_COMMAND, atol=1e-5)
    np.testing.assert_array_equal(controls[4:], 0.0)


def test_disarmed_writes_zeros():
    controls = one_step(goal=(0, 0, -5), armed=0)
    np.testing.assert_array_equal(controls, np.zeros(CONTROLS_WIDTH, dtype=np.float32))


def test_below_the_goal_every_rotor_speeds_up():
    # Goal 1 m up (NED z −1): the collective rises above hover, equally on all four.
    controls = one_step(goal=(0, 0, -1))
    assert np.all(controls[:4] > HOVER_COMMAND)
    np.testing.assert_allclose(controls[:4], controls[0], atol=1e-6)


def test_heading_left_of_the_goal_speeds_up_the_counter_clockwise_rotors():
    # Facing 0 with a goal of +0.3 rad: turn right (+yaw), so slots 0 and 1 (CCW) rise.
    controls = one_step(yaw_goal=0.3)
    assert controls[0] > controls[2] and controls[1] > controls[3]


def test_goal_to_the_north_pitches_nose_down():
    # Facing north with the goal ahead: pitch down (−pitch), so the rear rotors rise.
    controls = one_step(goal=(2.0, 0, 0))
    assert controls[1] > controls[0] and controls[3] > controls[2]


def test_goal_to_the_east_rolls_right():
    # Facing north with the goal to the right (east): roll right, so the left rotors rise.
    controls = one_step(goal=(0, 2.0, 0))
    assert controls[1] > controls[0] and controls[2] > controls[3]


def test_vehicle_prim_gains_are_read():
    stage = open_stage(resolve_asset("vehicle", "astro_max_base"))
    gains = gains_from_prim(stage.GetPrimAtPath("/vehicle/controller"), "astro_max_base")
    assert gains.hover_thrust == pytest.approx(HOVER_COMMAND)
    assert gains.rate_p == pytest.approx((0.15, 0.15, 3.0))
    assert gains.attitude_p == pytest.approx((6.5, 6.5, 5.0))


def test_a_controller_for_six_rotors_fails_naming_its_prim():
    with pytest.raises(BuildError, match="/vehicle/controller.*6"):
        PidController("/vehicle/controller", rotor_count=6)
