"""A snapshot restores a --solver freeflyer flight bit for bit, the momentum the solver carries included.

The free-flyer keeps, beside Newton's state, each world's angular momentum and the rates it wrote
(``SolverFreeFlyer.carried``); ``Physics.external_state`` hands them to the snapshot. Restored after another
path, the state's bits are the snapshot's again, and so must be the carried momentum: rebuilt from the
float32 rates instead, it would differ in its last bits and the next ticks with it.
"""

import numpy as np
import pytest
import warp as wp

from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.runtime.startup import start

TICKS = 100  # 0.4 s: spin-up, lift-off and the start of the climb


def everything(flight) -> dict[str, bytes]:
    loop = flight.loop
    wp.synchronize_device("cpu")
    arrays = {f"signal {o.prim} {o.signal}": o.buffer for o in loop.wiring.outputs if o.on_device}
    arrays.update({f"state {key}": array for key, array in loop.states.arrays().items()})
    for component in loop.components:
        arrays.update({f"external {component.name} {k}": a for k, a in component.external_state().items()})
    return {name: array.numpy().tobytes() for name, array in arrays.items()}


@pytest.fixture(scope="module")
def flight():
    flight = build_flight(RunConfig(solver="freeflyer"), "cpu")
    start(flight.loop, flight.vehicle.plant)
    yield flight
    flight.loop.close()


def test_restore_after_another_path_repeats_the_ticks_bit_for_bit(flight):
    loop, plant = flight.loop, flight.vehicle.plant
    assert "external /plant freeflyer.momentum" in everything(flight)  # the carried arrays are snapshotted
    assert loop.run(TICKS).reason == "ticks"
    snap = loop.snapshot()
    assert loop.run(TICKS).reason == "ticks"
    reference = everything(flight)
    loop.restore(snap)
    # Another path: a 0.2 rad/s roll kick, 50 ticks flown on it (the carried momentum follows that path).
    qd = plant.state.joint_qd.numpy()
    qd[plant.base_dof + 3] += 0.2
    plant.state.joint_qd.assign(qd)
    assert loop.run(50).reason == "ticks"
    loop.restore(snap)
    assert loop.run(TICKS).reason == "ticks"
    again = everything(flight)
    assert [name for name in reference if reference[name] != again[name]] == []
    assert np.frombuffer(reference["external /plant freeflyer.valid"], dtype=np.int32).tolist() == [1]
