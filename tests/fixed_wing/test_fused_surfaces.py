"""A plane's three surfaces move in one launch, from the first one's stage, and fly the same bits as one launch each."""

from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pytest
import warp as wp

from nexus.aero.control_surfaces import ControlSurface
from nexus.core.executors import graph_nodes
from nexus.runtime.config import RunConfig
from nexus.runtime.flight import build_flight
from nexus.runtime.run import run_flight

PLANE = RunConfig(vehicle="aerosonde", controller="fixed_wing")


def surface_nodes(loop):
    """Graph nodes each surface stage captures on its own, in ring order."""
    counts = []
    for stage in loop.plan.stages:
        if stage.name == "surface":
            with wp.ScopedDevice("cpu"), wp.ScopedCapture(device="cpu") as capture:
                stage.run(loop.ios[id(stage)])
            counts.append(graph_nodes(capture.graph))
    return counts


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "per-surface"])
def test_the_first_surface_launches_for_all_three(monkeypatch, fuse):
    monkeypatch.setattr(ControlSurface, "fuse", fuse)
    flight = build_flight(PLANE, "cpu")
    try:
        flight.loop.build()
        assert surface_nodes(flight.loop) == ([1, 0, 0] if fuse else [1, 1, 1])
    finally:
        flight.loop.close()


def test_fused_and_per_surface_flights_record_the_same_bits(tmp_path, monkeypatch):
    tables = {}
    for fuse in (True, False):
        monkeypatch.setattr(ControlSurface, "fuse", fuse)
        flight = build_flight(PLANE, "cpu")
        out = tmp_path / str(fuse)
        # 4 s of the air start and the climb: the stack moves every surface, the elevator and ailerons by degrees.
        run_flight(replace(flight.options, device="cpu", duration=4.0), out, progress=False, flight=flight)
        tables[fuse] = pq.read_table(out / "record.parquet")
    assert tables[True].num_rows == 1000
    for role in ("aileron", "elevator", "rudder"):
        moved = np.ptp(tables[True].column(f"surface/{role}").to_numpy())
        assert moved > 1e-4, role  # each surface really moves in the window compared
    assert tables[True].equals(tables[False])
