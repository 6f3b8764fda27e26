"""One compiled rollout per loss for every test of the package (each build loads and prepares a vehicle)."""

import pytest

from nexus.diff import Rollout

#: 2 s at 250 Hz: hover 0.4 s, climb 1 m in 1 s, hover.
TICKS = 500
#: 1 s of the figure eight at 250 Hz.
EIGHT_TICKS = 250


@pytest.fixture(scope="session")
def climb():
    """The hover-and-climb rollout (altitude loss), gains as the vehicle file gives them."""
    return Rollout(TICKS, loss="altitude")


@pytest.fixture(scope="session")
def turn():
    """Hover and turn the heading 30 degrees (yaw loss)."""
    return Rollout(TICKS, loss="yaw")


@pytest.fixture(scope="session")
def eight():
    """The first second of the horizontal figure eight (figure8 loss), gains as the vehicle file gives them."""
    return Rollout(EIGHT_TICKS, loss="figure8")
