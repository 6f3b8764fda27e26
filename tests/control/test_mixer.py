"""The quad-x mixer's signs and saturation, and the inverse of the ESC's thrust model."""

import numpy as np
import pytest
import warp as wp

from nexus.control.mixer import command_for_thrust, quad_x_thrusts, thrust_fraction_np

FRONT_RIGHT, REAR_LEFT, FRONT_LEFT, REAR_RIGHT = 0, 1, 2, 3


@wp.kernel
def mix(collective: wp.array(dtype=float), torque: wp.array(dtype=wp.vec3), factor: float,
        thrusts: wp.array(dtype=wp.vec4), commands: wp.array(dtype=wp.vec4)):
    i = wp.tid()
    t = quad_x_thrusts(collective[i], torque[i])
    thrusts[i] = t
    commands[i] = wp.vec4(command_for_thrust(t[0], factor), command_for_thrust(t[1], factor),
                          command_for_thrust(t[2], factor), command_for_thrust(t[3], factor))


def run_mix(collective, torque, factor=0.5):
    collective = np.atleast_1d(np.asarray(collective, dtype=np.float32))
    torque = np.atleast_2d(np.asarray(torque, dtype=np.float32))
    thrusts = wp.zeros(len(collective), dtype=wp.vec4, device="cpu")
    commands = wp.zeros(len(collective), dtype=wp.vec4, device="cpu")
    wp.launch(mix, len(collective), inputs=[wp.array(collective, dtype=float, device="cpu"),
              wp.array(torque, dtype=wp.vec3, device="cpu"), factor], outputs=[thrusts, commands], device="cpu")
    return thrusts.numpy(), commands.numpy()


def test_positive_yaw_speeds_up_the_counter_clockwise_rotors():
    # +yaw (nose right, FRD z down) comes from the CCW rotors' drag: slots 0 and 1 up, 2 and 3 down.
    thrusts, _ = run_mix(0.45, [0.0, 0.0, 0.2])
    assert thrusts[0, FRONT_RIGHT] > 0.45 and thrusts[0, REAR_LEFT] > 0.45
    assert thrusts[0, FRONT_LEFT] < 0.45 and thrusts[0, REAR_RIGHT] < 0.45


def test_roll_right_speeds_up_the_left_rotors():
    thrusts, _ = run_mix(0.45, [0.2, 0.0, 0.0])
    assert thrusts[0, REAR_LEFT] > 0.45 and thrusts[0, FRONT_LEFT] > 0.45
    assert thrusts[0, FRONT_RIGHT] < 0.45 and thrusts[0, REAR_RIGHT] < 0.45


def test_pitch_up_speeds_up_the_front_rotors():
    thrusts, _ = run_mix(0.45, [0.0, 0.2, 0.0])
    assert thrusts[0, FRONT_RIGHT] > 0.45 and thrusts[0, FRONT_LEFT] > 0.45
    assert thrusts[0, REAR_LEFT] < 0.45 and thrusts[0, REAR_RIGHT] < 0.45


def test_torques_keep_the_collective():
    # Each torque pattern sums to zero over the four rotors, so the mean thrust stays the collective.
    thrusts, _ = run_mix([0.45] * 3, [[0.3, 0, 0], [0, -0.3, 0], [0, 0, 0.4]])
    np.testing.assert_allclose(thrusts.mean(axis=1), 0.45, atol=1e-6)


def test_saturation_keeps_roll_and_pitch_before_yaw():
    # Full roll at hover spans the whole range: the yaw demand gets no room and the roll survives intact.
    thrusts, _ = run_mix(0.45, [1.0, 0.0, 1.0])
    np.testing.assert_allclose(thrusts[0], [0.0, 1.0, 1.0, 0.0], atol=1e-6)
    assert thrusts.min() >= 0.0 and thrusts.max() <= 1.0


def test_command_inverts_the_thrust_model():
    # The Astro Max hovers at u = 0.572: (1 − 0.5)·0.572 + 0.5·0.572² = 0.4496 of full thrust.
    hover = thrust_fraction_np(0.572, 0.5)
    assert hover == pytest.approx(0.4496, abs=1e-4)
    _, commands = run_mix(hover, [0.0, 0.0, 0.0])
    np.testing.assert_allclose(commands[0], 0.572, atol=1e-5)
    # f = 0: thrust is linear in the command.
    _, commands = run_mix(0.3, [0.0, 0.0, 0.0], factor=0.0)
    np.testing.assert_allclose(commands[0], 0.3, atol=1e-6)
