"""The velocity action (nexus/control/velocity_action.py) against hand-worked numbers: one tick of the PID cascade
from a level, still vehicle, its gains set here (velocity P only, no integral or derivative on velocity), and the
metadata that scales it refused in one line when missing or malformed."""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

from nexus.control.pid import PidParams, PidState
from nexus.control.velocity_action import VelocityScaling, velocity_action
from nexus.estimation.pose_twist import PoseTwist

G = 9.80665  # [m/s²]
DT = 0.004  # one 250 Hz tick [s]
LIMITS = (2.0, 1.0, 1.5)  # horizontal, vertical speed [m/s], yaw rate [rad/s] at ±1


def _params() -> PidParams:
    p = PidParams()
    p.position_p = wp.vec3(1.0, 1.0, 1.0)
    p.velocity_p = wp.vec3(2.0, 2.0, 4.0)  # [1/s]
    p.velocity_i = wp.vec3(0.0, 0.0, 0.0)
    p.velocity_d = wp.vec3(0.0, 0.0, 0.0)
    p.attitude_p = wp.vec3(6.0, 6.0, 3.0)  # [1/s]
    p.rate_p = wp.vec3(0.15, 0.15, 0.2)
    p.rate_i = wp.vec3(0.2, 0.2, 0.1)
    p.rate_d = wp.vec3(0.0, 0.0, 0.0)
    p.hover_thrust = 0.4  # thrust fraction at hover [-]
    p.thrust_model_factor = 0.5
    p.max_tilt = 0.6  # [rad]
    p.max_horizontal_speed, p.max_vertical_speed = 5.0, 3.0
    p.max_rates = wp.vec3(3.8, 3.8, 3.5)
    p.acceleration_integral_limit, p.rate_integral_limit, p.max_feedforward_acceleration = 4.0, 0.3, 5.0
    p.min_thrust, p.max_thrust, p.gravity = 0.08, 0.9, G
    return p


@wp.kernel
def one_tick(params: wp.array(dtype=PidParams), estimate: wp.array(dtype=PoseTwist),
             actions: wp.array2d(dtype=wp.float32), limits: wp.vec3, goal: wp.vec3, goal_gain: float,
             goal_fade: float, goal_fade_power: float, collective: wp.array(dtype=wp.float32),
             torque: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    c, t, _ = velocity_action(params[0], PidState(), estimate[i], actions[i, 0], actions[i, 1], actions[i, 2],
                              actions[i, 3], limits, goal, goal_gain, goal_fade, goal_fade_power, DT, 1.0)
    collective[i] = c
    torque[i] = t


def _tick(actions, yaw: float = 0.0, goal=(0.0, 0.0, 0.0), goal_gain: float = 0.0, goal_fade: float = 0.0,
          goal_fade_power: float = 1.0):
    """One tick for each action row, the vehicle level and still at the origin, heading ``yaw`` [rad] (NED), its
    go-to-goal law aiming at ``goal`` [m, NED] with ``goal_gain`` [1/s] (0: none), the correction fading within
    ``goal_fade`` [m] to the power ``goal_fade_power``."""
    n = len(actions)
    est = PoseTwist()
    est.attitude = wp.quat(0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))
    estimate = wp.array([est] * n, dtype=PoseTwist, device="cpu")
    collective = wp.zeros(n, dtype=wp.float32, device="cpu")
    torque = wp.zeros(n, dtype=wp.vec3, device="cpu")
    wp.launch(one_tick, n, inputs=[wp.array([_params()], dtype=PidParams, device="cpu"), estimate,
                                   wp.array(np.asarray(actions, np.float32), dtype=wp.float32, device="cpu"),
                                   wp.vec3(*LIMITS), wp.vec3(*goal), float(goal_gain), float(goal_fade),
                                   float(goal_fade_power), collective, torque],
              device="cpu")
    return collective.numpy(), torque.numpy()


# +1 m/s forward (a₀ = 0.5 of 2 m/s) from rest: acceleration goal 2 /s x 1 m/s = 2 m/s² forward, so the thrust
# axis tilts by θ = atan(2 / 9.80665) = 0.201184 rad nose down; the attitude law asks for a pitch rate of
# 2 x 6 /s x sin(-θ/2) = -1.205071 rad/s; the rate loop gives 0.15 x that + 0.2 x (that x 0.004 s) = -0.181725;
# the collective holds the vertical: 0.4 / cos θ = 0.408234.
PITCH_TORQUE = -0.181725
TILTED_COLLECTIVE = 0.408234


def test_zero_action_from_level_hover_asks_for_hover_thrust_and_no_torque():
    collective, torque = _tick([[0.0, 0.0, 0.0, 0.0]])
    assert collective[0] == pytest.approx(0.4, abs=1e-7)
    assert np.abs(torque[0]).max() == 0.0


def test_forward_command_pitches_nose_down_by_the_hand_worked_rate():
    collective, torque = _tick([[0.5, 0.0, 0.0, 0.0]])
    assert torque[0][1] == pytest.approx(PITCH_TORQUE, abs=2e-6)  # pitch (FRD y): negative is nose down
    assert abs(torque[0][0]) < 1e-7 and abs(torque[0][2]) < 1e-7
    assert collective[0] == pytest.approx(TILTED_COLLECTIVE, abs=2e-6)


def test_the_command_is_in_the_heading_frame():
    """Heading east, 'forward' is east: the same nose-down pitch, not a roll. Heading north, 'right' (a₁) is east:
    a roll to the right by the same rate (0.15 x 1.205071 + 0.2 x 1.205071 x 0.004 = 0.181725)."""
    _, east_forward = _tick([[0.5, 0.0, 0.0, 0.0]], yaw=math.pi / 2)
    assert east_forward[0][1] == pytest.approx(PITCH_TORQUE, abs=2e-6) and abs(east_forward[0][0]) < 1e-6
    _, right = _tick([[0.0, 0.5, 0.0, 0.0]])
    assert right[0][0] == pytest.approx(-PITCH_TORQUE, abs=2e-6) and abs(right[0][1]) < 1e-6


def test_climb_and_yaw_rate_commands():
    """a₂ = -0.5: 0.5 m/s up, 4 /s x 0.5 = 2 m/s² up, collective 0.4 x (9.80665 + 2) / 9.80665 = 0.481577, level.
    a₃ = 1: a yaw rate of 1.5 rad/s fed forward, torque 0.2 x 1.5 + 0.1 x 1.5 x 0.004 = 0.3006."""
    collective, torque = _tick([[0.0, 0.0, -0.5, 0.0], [0.0, 0.0, 0.0, 1.0]])
    assert collective[0] == pytest.approx(0.481577, abs=2e-6) and np.abs(torque[0]).max() < 1e-7
    assert torque[1][2] == pytest.approx(0.3006, abs=2e-6) and collective[1] == pytest.approx(0.4, abs=1e-7)


def test_a_command_past_the_limits_is_clipped_to_them():
    """a₀ = 3 is clipped to 1: 2 m/s forward, 4 m/s² goal, tilt atan(4 / 9.80665) = 0.387287 rad, collective
    0.4 / cos(0.387287) = 0.431995 (under the 0.6 rad tilt limit)."""
    collective, _ = _tick([[3.0, 0.0, 0.0, 0.0]])
    assert collective[0] == pytest.approx(0.431995, abs=2e-6)


def test_action_zero_with_a_goal_gain_flies_at_the_goal():
    """Goal 1 m north, gain 1 /s, action 0: the law asks 1 x 1 m = 1 m/s north, which is the +1 m/s forward case
    above (pitch torque -0.181725, collective 0.408234). Goal 5 m north: the law's 5 m/s is limited to the 2 m/s
    horizontal limit, and a₀ = -0.5 (1 m/s back) leaves 1 m/s: the same numbers again. Gain 0 ignores the goal."""
    for goal, action in (((1.0, 0.0, 0.0), 0.0), ((5.0, 0.0, 0.0), -0.5)):
        collective, torque = _tick([[action, 0.0, 0.0, 0.0]], goal=goal, goal_gain=1.0)
        assert torque[0][1] == pytest.approx(PITCH_TORQUE, abs=2e-6) and abs(torque[0][0]) < 1e-7
        assert collective[0] == pytest.approx(TILTED_COLLECTIVE, abs=2e-6)
    collective, torque = _tick([[0.0, 0.0, 0.0, 0.0]], goal=(1.0, 0.0, 0.0), goal_gain=0.0)
    assert collective[0] == pytest.approx(0.4, abs=1e-7) and np.abs(torque[0]).max() == 0.0


def test_the_correction_fades_within_its_radius_of_the_goal():
    """Fade radius 2 m, goal 1 m north, gain 0.5 /s: the law asks 0.5 m/s north and a₀ = 0.5 (1 m/s forward) is
    halved (1 m of 2) to 0.5 m/s: 1 m/s in all, the forward case's numbers. Past the radius (goal 3 m north, gain
    1/6 /s: 0.5 m/s) the correction is whole: 1.5 m/s, a larger pitch than the forward case's."""
    collective, torque = _tick([[0.5, 0.0, 0.0, 0.0]], goal=(1.0, 0.0, 0.0), goal_gain=0.5, goal_fade=2.0)
    assert torque[0][1] == pytest.approx(PITCH_TORQUE, abs=2e-6)
    assert collective[0] == pytest.approx(TILTED_COLLECTIVE, abs=2e-6)
    _, torque = _tick([[0.5, 0.0, 0.0, 0.0]], goal=(3.0, 0.0, 0.0), goal_gain=1.0 / 6.0, goal_fade=2.0)
    assert torque[0][1] < PITCH_TORQUE - 0.01


def test_a_quadratic_fade_cuts_the_correction_by_the_square_of_the_distance():
    """Fade radius 2 m to the power 2, goal 1 m north, gain 0.5 /s: the law asks 0.5 m/s north and a₀ = 1 (2 m/s
    forward) is cut by (1/2)² to 0.5 m/s: 1 m/s in all, the forward case's numbers again. The same action under a
    linear fade would be halved to 1 m/s, 1.5 m/s in all: a larger pitch."""
    collective, torque = _tick([[1.0, 0.0, 0.0, 0.0]], goal=(1.0, 0.0, 0.0), goal_gain=0.5, goal_fade=2.0,
                               goal_fade_power=2.0)
    assert torque[0][1] == pytest.approx(PITCH_TORQUE, abs=2e-6)
    assert collective[0] == pytest.approx(TILTED_COLLECTIVE, abs=2e-6)
    _, linear = _tick([[1.0, 0.0, 0.0, 0.0]], goal=(1.0, 0.0, 0.0), goal_gain=0.5, goal_fade=2.0)
    assert linear[0][1] < PITCH_TORQUE - 0.01


def test_the_goal_law_is_in_ned_whatever_the_heading():
    """Heading east, goal 1 m north, gain 1: 1 m/s north is 1 m/s to the vehicle's left, a roll to the left (negative
    about FRD x) by the forward case's rate: torque x = -0.181725, no pitch."""
    _, torque = _tick([[0.0, 0.0, 0.0, 0.0]], yaw=math.pi / 2, goal=(1.0, 0.0, 0.0), goal_gain=1.0)
    assert torque[0][0] == pytest.approx(PITCH_TORQUE, abs=2e-6) and abs(torque[0][1]) < 1e-6


@pytest.mark.parametrize("meta, needle", [
    ({}, "its metadata has no 'nexus:velocity_limits', which scales its velocity:4 action"),
    ({"nexus:velocity_limits": "2,1"}, "its metadata nexus:velocity_limits is '2,1'; it must be three positive limits"),
    ({"nexus:velocity_limits": "2,-1,1.5"}, "nexus:velocity_limits is '2,-1,1.5'"),
    ({"nexus:velocity_limits": "fast,1,1"}, "nexus:velocity_limits is 'fast,1,1'"),
])
def test_missing_or_malformed_limits_are_refused_in_one_line(meta, needle):
    with pytest.raises(ValueError) as caught:
        VelocityScaling.from_metadata(meta, "policy m.onnx")
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_the_limits_read_back_from_their_metadata():
    assert VelocityScaling.from_metadata(VelocityScaling(LIMITS).metadata(), "m").limits == LIMITS
    assert "nexus:velocity_goal_gain" not in VelocityScaling(LIMITS).metadata()  # no law: no key
    assert VelocityScaling.from_metadata(VelocityScaling(LIMITS, 1.25).metadata(), "m").goal_gain == 1.25
    assert VelocityScaling.from_metadata(VelocityScaling(LIMITS, 1.25, 0.75).metadata(), "m").goal_fade == 0.75
    assert "nexus:velocity_goal_fade_power" not in VelocityScaling(LIMITS, 1.25, 0.75).metadata()  # linear: no key
    assert VelocityScaling.from_metadata(VelocityScaling(LIMITS, 1.25, 0.75).metadata(), "m").goal_fade_power == 1.0
    quadratic = VelocityScaling.from_metadata(VelocityScaling(LIMITS, 1.25, 0.75, 2.0).metadata(), "m")
    assert quadratic.goal_fade == 0.75 and quadratic.goal_fade_power == 2.0


@pytest.mark.parametrize("power", ["0.5", "5", "nan", "square"])
def test_a_malformed_fade_power_is_refused_in_one_line(power):
    meta = {"nexus:velocity_limits": "2,1,1.5", "nexus:velocity_goal_gain": "1", "nexus:velocity_goal_fade": "1",
            "nexus:velocity_goal_fade_power": power}
    with pytest.raises(ValueError) as caught:
        VelocityScaling.from_metadata(meta, "m.onnx")
    assert f"m.onnx: its metadata nexus:velocity_goal_fade_power is '{power}'; it must be a power from 1 to 4" in str(
        caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("gain", ["-1", "nan", "fast"])
def test_a_malformed_goal_gain_is_refused_in_one_line(gain):
    with pytest.raises(ValueError) as caught:
        VelocityScaling.from_metadata({"nexus:velocity_limits": "2,1,1.5", "nexus:velocity_goal_gain": gain}, "m.onnx")
    assert f"m.onnx: its metadata nexus:velocity_goal_gain is '{gain}'; it must be a gain of at least 0" in str(
        caught.value) and "\n" not in str(caught.value)
