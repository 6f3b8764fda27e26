"""Tape gradients of the 2 s hover-and-climb (and the heading turn) against central finite differences.

Each parameter kind: PID gains of the altitude loop and of the heading loop, the base's mass and
yaw inertia, a rotor's thrust coefficient, the ESC's time constants, and the start state. The
finite difference uses a step of 1 % of the value: the loss is computed in float32, so much
smaller steps drown in rounding (measured: 0.3 % steps scatter the quotient by a few percent).
"""

import pytest

from tests.diff.conftest import TICKS

#: Largest relative error of a tape gradient against central finite differences.
TOLERANCE = 0.02
#: Gains detuned so the loss is far from its optimum and every gradient stands well clear of rounding.
DETUNED = {"pid.kp_z": 0.5, "pid.kd_z": 2.0, "pid.ki_z": 0.5}


#: Absolute steps for parameters whose value is 0 (a relative step would be 0) [m/s]. The loss curves in init.vz:
#: with the Astro Max's drag (vehicles/astro_max_base.usda) its gradient is 0.0011747 on the tape, and central
#: differences by 0.01, 0.025, 0.05 and 0.1 m/s give 0.001135, 0.0011743, 0.0012487 and 0.0014032 (the larger
#: steps' error grows as the step squared; without drag the gradient is 0.00260 and 0.05 m/s gave 0.00264).
ABSOLUTE_STEPS = {"init.vz": 0.025}


def central_difference(rollout, name: str, rel: float = 1e-2) -> float:
    value = rollout.get(name)
    step = ABSOLUTE_STEPS.get(name, rel * abs(value))
    rollout.set(name, value + step)
    plus = rollout.forward()
    rollout.set(name, value - step)
    minus = rollout.forward()
    rollout.set(name, value)
    return (plus - minus) / (2.0 * step)


@pytest.fixture(scope="module")
def detuned_climb(climb):
    before = {name: climb.get(name) for name in DETUNED}
    for name, value in DETUNED.items():
        climb.set(name, value)
    yield climb
    for name, value in before.items():
        climb.set(name, value)


CLIMB_PARAMS = ["pid.kp_z", "pid.kd_z", "pid.ki_z", "mass", "rotor1.kt", "esc.tau_up", "esc.tau_down", "init.z",
                "init.vz"]


@pytest.fixture(scope="module")
def climb_gradients(detuned_climb):
    loss, grads = detuned_climb.value_and_gradients(CLIMB_PARAMS)
    return loss, grads


@pytest.mark.parametrize("name", CLIMB_PARAMS)
def test_climb_gradient_matches_central_differences_within_2_percent(detuned_climb, climb_gradients, name):
    _, grads = climb_gradients
    reference = central_difference(detuned_climb, name)
    assert grads[name] == pytest.approx(reference, rel=TOLERANCE)


TURN_PARAMS = ["pid.kp_yaw", "pid.kd_yaw", "inertia.zz"]


@pytest.fixture(scope="module")
def turn_gradients(turn):
    return turn.value_and_gradients(TURN_PARAMS)


@pytest.mark.parametrize("name", TURN_PARAMS)
def test_turn_gradient_matches_central_differences_within_2_percent(turn, turn_gradients, name):
    _, grads = turn_gradients
    assert grads[name] == pytest.approx(central_difference(turn, name), rel=TOLERANCE)
