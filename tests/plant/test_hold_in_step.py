"""The free-flyer holds finished and failed worlds inside its step's launch (``SolverFreeFlyer.step_holding``):
the same bits as the engine's separate hold after the step, one launch fewer (five from 16 worlds)."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from nexus.core.executors import graph_nodes
from nexus.plant import physics
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession
from tests.worlds.test_worlds_limits import Poison

TICKS = 340


def flown(worlds: int, in_step: bool, duration: float | None = None) -> tuple[dict, int]:
    """The free-flyer's worlds, world 1 poisoned at tick 300 (in the air): the state, done flags and failed ticks."""
    physics.HOLD_IN_STEP = in_step
    try:
        options = RunConfig(mission="short", seed=5, worlds=worlds, device="cpu", solver="freeflyer")
        with FlightSession(options, extra_components=[Poison(1, 300)]) as session:
            flight = session.flight
            step = next(stage for stage in flight.loop.plan.stages if stage.name == "step")
            with wp.ScopedDevice("cpu"), wp.ScopedCapture(device="cpu") as capture:
                step.run(flight.loop.ios[id(step)])
            nodes = graph_nodes(capture.graph)
            session.fly(TICKS if duration is None else int(round(duration / options.dt)))
            state = flight.vehicle.plant.state
            out = {name: getattr(state, name).numpy().copy() for name in ("joint_q", "joint_qd", "body_q", "body_qd")}
            out["done"] = flight.loop.world_done()
            out["ticks"] = flight.loop.world_ticks()
            plant = next(c for c in flight.vehicle.components if isinstance(c, physics.Physics))
            out["failed_tick"] = plant.failed_tick.numpy().copy()
    finally:
        physics.HOLD_IN_STEP = True
    return out, nodes


@pytest.mark.parametrize("worlds, launches", [(3, 1), (16, 5)])
def test_the_hold_in_the_step_keeps_the_bits_of_the_hold_after_it(worlds, launches):
    inside, inside_nodes = flown(worlds, True)
    after, after_nodes = flown(worlds, False)
    assert after_nodes - inside_nodes == launches  # the hold's launch, and from 16 worlds its four copies
    assert list(inside["done"][:3]) == [0, 2, 0] and list(inside["failed_tick"][:3]) == [-1, 300, -1]
    assert np.isfinite(inside["body_q"]).all()  # the failed world kept its last finite state
    for name in ("joint_q", "joint_qd", "body_q", "body_qd", "done", "failed_tick"):
        assert inside[name].tobytes() == after[name].tobytes(), name


def test_a_world_that_is_done_stays_where_it_ended():
    """The short mission ends each world (done 1) at its landing; flown on past it, every world's state stays put."""
    ended, _ = flown(3, True, duration=40.0)
    held, _ = flown(3, False, duration=40.0)
    assert list(ended["done"]) == [1, 2, 1]
    for name in ("joint_q", "joint_qd", "body_q", "body_qd", "ticks"):
        assert ended[name].tobytes() == held[name].tobytes(), name
