"""The differentiable rollout of the x500 and the Crazyflie (the hexacopter's: test_hexacopter_rollout.py): one second
(250 ticks) of the altitude loss (hover, then a 1 m climb) on the tape, each gradient finite and equal to central
differences of the loss within 3 %, for one parameter of each vehicle."""

import math

import pytest

from nexus.diff import Rollout

#: vehicle -> (parameter, central-difference step): 1 % of the x500's base mass (2.0 kg), 1 % of the Crazyflie's
#: rotor 1 kT (2.879933e-8 N/(rad/s)²).
CASES = {"x500": ("mass", 0.02), "crazyflie": ("rotor1.kt", 2.879933e-8 * 0.01)}


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    return request.param, Rollout(250, loss="altitude", vehicle=request.param)


def test_the_tape_gradient_is_finite_and_matches_central_differences(case):
    vehicle, rollout = case
    name, step = CASES[vehicle]
    _, gradients = rollout.value_and_gradients([name])
    assert math.isfinite(gradients[name]) and gradients[name] != 0.0
    value = rollout.get(name)
    rollout.set(name, value + step)
    above = rollout.forward()
    rollout.set(name, value - step)
    below = rollout.forward()
    rollout.set(name, value)
    assert gradients[name] == pytest.approx((above - below) / (2 * step), rel=0.03)


def test_the_trajectory_holds_one_command_per_rotor(case):
    _, rollout = case
    rollout.forward(record=True)
    controls = rollout.trajectory().controls
    assert controls.shape[1:] == (1, 4)  # (tick, world, rotor)
    assert (controls[-1] > 0.0).all()  # every rotor driven in the climb
