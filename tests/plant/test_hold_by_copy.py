"""The hold of finished and failed worlds at many worlds (``hold_finished_worlds`` without its copy, then four
array copies) leaves the same bits as the one launch that copies element by element, which fewer worlds fly."""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core.executors import graph_nodes
from nexus.plant import physics
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession
from tests.worlds.test_worlds_limits import Poison

TICKS = 340


def flown(monkeypatch, by_copy_from: int) -> tuple[dict, int]:
    """Three worlds, world 1 poisoned at tick 300 (in the air): the state, the done flags and failed ticks after ``TICKS``."""
    monkeypatch.setattr(physics, "HOLD_BY_COPY_WORLDS", by_copy_from)
    with FlightSession(RunConfig(mission="short", seed=5, worlds=3, device="cpu"),
                       extra_components=[Poison(1, 300)]) as session:
        flight = session.flight
        step = next(stage for stage in flight.loop.plan.stages if stage.name == "step")
        with wp.ScopedDevice("cpu"), wp.ScopedCapture(device="cpu") as capture:
            step.run(flight.loop.ios[id(step)])
        nodes = graph_nodes(capture.graph)
        session.fly(TICKS)
        state = flight.vehicle.plant.state
        out = {name: getattr(state, name).numpy().copy() for name in ("joint_q", "joint_qd", "body_q", "body_qd")}
        out["done"] = flight.loop.world_done()
        plant = next(c for c in flight.vehicle.components if isinstance(c, physics.Physics))
        out["failed_tick"] = plant.failed_tick.numpy().copy()
    return out, nodes


def test_the_hold_by_copy_keeps_the_bits_of_the_one_launch(monkeypatch):
    by_copy, copy_nodes = flown(monkeypatch, 1)
    one_launch, launch_nodes = flown(monkeypatch, 1_000_000)
    assert copy_nodes - launch_nodes == 4  # the four array copies
    assert list(by_copy["done"]) == [0, 2, 0] and list(by_copy["failed_tick"]) == [-1, 300, -1]
    assert np.isfinite(by_copy["body_q"]).all()  # the failed world put back to its last finite state
    for name in ("joint_q", "joint_qd", "body_q", "body_qd", "done", "failed_tick"):
        assert by_copy[name].tobytes() == one_launch[name].tobytes(), name
