"""A loss that cannot depend on a parameter has a gradient of exactly zero (not merely small).

In a one-tick rollout the PID runs after the step it could influence: the ESCs of that tick read
the start-up command, so the gains reach nothing the loss reads. The tape still runs the PID
kernel's adjoint; every gain's gradient must come out as exactly 0.0.
"""

import pytest

from nexus.diff import Rollout
from nexus.diff.params import PID_GAINS


@pytest.fixture(scope="module")
def one_tick():
    return Rollout(1, loss="figure8")


def test_gains_cannot_reach_the_first_ticks_state_so_their_gradient_is_exactly_zero(one_tick):
    names = [f"pid.{gain}.{axis}" for gain in PID_GAINS for axis in "xyz"]
    _, grads = one_tick.value_and_gradients(names + ["init.x"])
    assert {name: grads[name] for name in names} == {name: 0.0 for name in names}


def test_the_start_does_reach_the_first_ticks_loss_as_worked_out_by_hand(one_tick):
    # The figure eight's first goal (t = 4 ms) is NED y = 0.5 sin(2 · 2π/8 · 0.004) = 3.14159e-3 m, and the
    # vehicle, hovering level, has not moved sideways in one tick: loss = (y - y_goal)². NED y is ENU x, so
    # d loss / d init.x = 2 (y - y_goal) = -6.28318e-3 (one tick, one world: the mean is that term).
    _, grads = one_tick.value_and_gradients(["init.x"])
    assert grads["init.x"] == pytest.approx(-6.28318e-3, rel=1e-3)
