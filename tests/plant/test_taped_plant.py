"""The plant's copies per tick for a taped run (``TapedPlant``): Featherstone only, and given back after.

A taped run (``nexus.core.taped.TickCopies``) points the plant at one tick's copies of its state
while it runs; afterwards the plant must fly its own arrays again, so an eager flight of the same
ring after a taped run repeats the flight of a ring that never was taped, bit for bit.
"""

import numpy as np
import pytest

from nexus.runtime.assembly import assemble
from nexus.core import Loop
from nexus.core.errors import BuildError
from nexus.core.taped import TickCopies

START = (0.0, 0.0, 1.0)


def ring(solver: str):
    vehicle = assemble("astro_max_base", "empty", solver=solver)
    loop = Loop(vehicle.components, device="cpu", mode="eager")
    loop.build()
    vehicle.plant.reset(base_position=START)
    return vehicle, loop


def test_a_taped_run_of_a_mujoco_plant_is_refused_in_one_line():
    _, loop = ring("mujoco")
    with pytest.raises(BuildError, match=r"^a taped run steps Featherstone; this plant steps mujoco "
                                         r"\(use --solver featherstone\)$"):
        TickCopies(loop, 3)


def flown(vehicle, loop, ticks: int) -> list[bytes]:
    rows = []
    for _ in range(ticks):
        loop.tick()
        rows.append(vehicle.plant.state.body_q.numpy().tobytes())
    return rows


def test_after_a_taped_run_the_plant_flies_its_own_arrays_again():
    vehicle, loop = ring("featherstone")
    plant = vehicle.plant
    live = (plant.state, plant.control, plant.esc_speed)
    copies = TickCopies(loop, 4, wanted=["estimate", "controls"])
    copies.start()
    for k in range(4):
        copies.tick(k)
    assert plant.state is not live[0] and plant.state_out is not plant.state  # bound to tick 3's copies
    moved = copies.external(vehicle.physics, boundary=4).state.body_q.numpy()
    assert not np.array_equal(moved, live[0].body_q.numpy())  # the copies flew, the live state did not
    copies.release()
    assert (plant.state, plant.control, plant.esc_speed) == live
    assert plant.state_out is plant.state and plant.esc_speed_out is plant.esc_speed
    other, other_loop = ring("featherstone")
    assert flown(vehicle, loop, 5) == flown(other, other_loop, 5)
