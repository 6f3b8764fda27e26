"""A snapshot of the tick state restores a flight bit for bit, plant included.

The default PID flight (the scene's mission, seed 0) on the CPU: start-up,
100 ticks, ``snap = loop.snapshot()``, 100 more ticks, whose every array is
kept as the reference; then ``loop.restore(snap)`` and the same 100 ticks
again must give the same bits in every device signal, every declared state
array, every array of state a component keeps outside the engine
(``Physics.external_state``: Newton's state and control, the ESCs' lagged
speed, MuJoCo Warp's warm start) and, beyond what the snapshot copies, every
array of MuJoCo Warp's data. A CPU run is deterministic, so "the same" means
identical bytes, not close floats.
"""

import numpy as np
import pytest
import warp as wp

from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.runtime.startup import start

#: Ticks before the snapshot and after it: 0.4 s at 250 Hz each, the spin-up, lift-off (about tick 55) and the
#: start of the climb. Measured: from tick 55 on, no constraint is active, so MuJoCo's solver does not iterate.
TICKS = 100
#: A second snapshot while the vehicle still rests on its gear (16 contacts, 32 constraint rows, the solver
#: iterating 4 to 7 times from its warm start): restoring there tests the solver's carried state too.
ON_THE_GROUND = 20


def _bytes(array: wp.array) -> np.ndarray:
    """The raw bytes of a Warp array (struct arrays included), as a flat uint8 copy."""
    return np.frombuffer(array.numpy().tobytes(), dtype=np.uint8).copy()


def _mujoco_arrays(data) -> dict[str, wp.array]:
    """Every Warp array of MuJoCo Warp's data, nested contact and constraint records included."""
    found: dict[str, wp.array] = {}
    for name, value in vars(data).items():
        if isinstance(value, wp.array):
            found[name] = value
        elif hasattr(value, "__dict__") and not isinstance(value, (int, float, str)):
            found.update({f"{name}.{k}": v for k, v in vars(value).items() if isinstance(v, wp.array)})
    return found


def everything(flight) -> dict[str, np.ndarray]:
    """A copy of every array a tick reads or writes, by a readable name."""
    loop = flight.loop
    wp.synchronize_device("cpu")
    arrays = {f"signal {o.prim} {o.signal}": o.buffer for o in loop.wiring.outputs if o.on_device}
    arrays.update({f"state {key}": array for key, array in loop.states.arrays().items()})
    for component in loop.components:
        arrays.update({f"external {component.name} {k}": a for k, a in component.external_state().items()})
    mujoco = _mujoco_arrays(flight.vehicle.plant.solver.mjw_data)
    arrays.update({f"mjw_data {k}": a for k, a in mujoco.items()})
    return {name: _bytes(array) for name, array in arrays.items()}


def differing(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> list[str]:
    assert a.keys() == b.keys()
    return [name for name in a if not np.array_equal(a[name], b[name])]


@pytest.fixture(scope="module")
def flown():
    """The flight with snapshots at ticks 20 and 100, every array at tick 100 and (the reference) at tick 200."""
    flight = build_flight(RunConfig(), "cpu")
    start(flight.loop, flight.vehicle.plant)
    loop = flight.loop
    assert loop.run(ON_THE_GROUND).reason == "ticks"
    snaps = {"ground": loop.snapshot()}
    assert loop.run(TICKS - ON_THE_GROUND).reason == "ticks"
    snaps["air"] = loop.snapshot()
    at_snapshot = everything(flight)
    assert loop.run(TICKS).reason == "ticks"
    reference = everything(flight)
    yield flight, snaps, at_snapshot, reference
    flight.loop.close()


def test_restore_repeats_the_next_100_ticks_bit_for_bit(flown):
    flight, snaps, at_snapshot, reference = flown
    loop = flight.loop
    # The 100 ticks after the snapshot changed the plant (it spun up and moved), so equal bits below mean something.
    moved = differing(at_snapshot, reference)
    assert {"signal /vehicle/body/base body/base", "external /plant state.body_q"} <= set(moved), moved
    loop.restore(snaps["air"])
    assert loop.ticks == TICKS
    # What the snapshot holds is back (the rest of MuJoCo's data is recomputed by the next step).
    assert [n for n in differing(everything(flight), at_snapshot) if not n.startswith("mjw_data")] == []
    assert loop.run(TICKS).reason == "ticks"
    assert loop.ticks == 2 * TICKS
    assert differing(everything(flight), reference) == []


def test_restore_on_the_ground_after_another_path_repeats_the_same_ticks(flown):
    flight, snaps, _, reference = flown
    loop, plant = flight.loop, flight.vehicle.plant
    loop.restore(snaps["ground"])
    # Another path: the base gets a 1 m/s sideways kick (world x) and the rotors a 50 rad/s lag error, so the
    # contacts, the solver's warm start, the ESCs, the controller and every sensor see other values.
    qd = plant.state.joint_qd.numpy()
    qd[plant._base_dof] += 1.0
    plant.state.joint_qd.assign(qd)
    plant.esc_speed.assign(plant.esc_speed.numpy() + 50.0)
    assert loop.run(TICKS - ON_THE_GROUND).reason == "ticks"
    assert loop.run(TICKS).reason == "ticks"
    assert "external /plant state.body_q" in differing(everything(flight), reference)
    loop.restore(snaps["ground"])
    assert loop.ticks == ON_THE_GROUND
    # The same two runs as the first flight (the same graph replays), from the restored tick 20.
    assert loop.run(TICKS - ON_THE_GROUND).reason == "ticks"
    assert loop.run(TICKS).reason == "ticks"
    assert differing(everything(flight), reference) == []
