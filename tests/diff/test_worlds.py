"""N worlds in one rollout: the loss is the mean of each world's, and so is its gradient."""

import numpy as np
import pytest

from nexus.diff import Rollout

TICKS = 100
OFFSETS = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.3]])


@pytest.fixture(scope="module")
def pair():
    return Rollout(TICKS, worlds=2, start_offsets=OFFSETS, loss="altitude")


def test_two_worlds_loss_and_gradient_are_the_mean_of_each_world_alone(pair):
    names = ["pid.kd_z", "mass"]
    both, grads = pair.value_and_gradients(names)
    alone = [Rollout(TICKS, start_offsets=OFFSETS[i:i + 1], loss="altitude") for i in range(2)]
    each = [r.value_and_gradients(names) for r in alone]
    assert both == pytest.approx(0.5 * (each[0][0] + each[1][0]), rel=1e-5)
    for name in names:
        assert grads[name] == pytest.approx(0.5 * (each[0][1][name] + each[1][1][name]), rel=1e-4)
