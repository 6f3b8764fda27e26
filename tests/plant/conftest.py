"""One assembled Astro Max per session for the plant tests; each test resets it."""

from pathlib import Path

import pytest

from nexus.runtime.assembly import assemble
from nexus.control.hold import HoldControls
from nexus.plant.esc import Esc
from nexus.plant.physics import Physics
from nexus.plant.propeller import Propeller

DATA = Path(__file__).parent / "data"
PLANT_TYPES = (Physics, Esc, Propeller, HoldControls)


def plant_only(vehicle):
    """The physics, ESCs, propellers and the hold controller: no sensors or estimators."""
    return [c for c in vehicle.components if isinstance(c, PLANT_TYPES)]


@pytest.fixture(scope="session")
def astro():
    return assemble("astro_max_base", "empty", controller="hold")


@pytest.fixture(scope="session")
def astro_in_void():
    return assemble("astro_max_base", DATA / "void.usda", controller="hold")
