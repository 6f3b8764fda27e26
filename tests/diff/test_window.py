"""Truncated back-propagation: with ``window`` W, a loss term's gradient reaches back at most to its window's start.

So the start velocity reaches only the first window's terms: over T = 2W ticks (the loss a mean over T),
its gradient is W/T times the gradient of the W-tick rollout's loss (a mean over W).
"""

import pytest

from nexus.diff import Rollout

W = 50


@pytest.fixture(scope="module")
def rollouts():
    return Rollout(2 * W, window=W, start_offsets=[[0.0, 0.0, 0.0]]), Rollout(W)


def test_a_truncated_gradient_of_the_start_is_the_first_windows_only(rollouts):
    truncated, first = rollouts
    _, cut = truncated.value_and_gradients(["init.vz", "mass"])
    _, whole = first.value_and_gradients(["init.vz", "mass"])
    assert cut["init.vz"] == pytest.approx(0.5 * whole["init.vz"], rel=1e-4)
    # Mass acts in every window, so its truncated gradient has the second window's terms as well.
    assert cut["mass"] != pytest.approx(0.5 * whole["mass"], rel=1e-2)


def test_a_window_of_no_whole_ticks_is_refused_in_one_line():
    from nexus.core.errors import BuildError

    with pytest.raises(BuildError, match=r"--window 0: give a whole number of ticks, 1 or more"):
        Rollout(10, window=0)
