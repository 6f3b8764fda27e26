"""One launch for the four ESCs and one for the four propellers: six graph nodes fewer, the same bits."""

from dataclasses import replace

import pyarrow.parquet as pq
import pytest
import warp as wp

from nexus.core.executors import graph_nodes
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.plant.esc import Esc
from nexus.plant.propeller import Propeller
from nexus.runtime.run import run_flight


def stage_nodes(loop, name):
    """Graph nodes each stage called ``name`` captures on its own, in ring order."""
    counts = []
    for stage in loop.plan.stages:
        if stage.name == name:
            with wp.ScopedDevice("cpu"), wp.ScopedCapture(device="cpu") as capture:
                stage.run(loop.ios[id(stage)])
            counts.append(graph_nodes(capture.graph))
    return counts


@pytest.fixture(params=[True, False], ids=["fused", "per-rotor"])
def fused(request, monkeypatch):
    monkeypatch.setattr(Esc, "fuse", request.param)
    monkeypatch.setattr(Propeller, "fuse", request.param)
    return request.param


def test_the_first_esc_and_propeller_launch_for_all_four(fused):
    flight = build_flight(RunConfig(mission="short"), "cpu")
    esc, propeller = stage_nodes(flight.loop, "esc"), stage_nodes(flight.loop, "propeller")
    flight.loop.close()
    assert (esc, propeller) == (([1, 0, 0, 0], [1, 0, 0, 0]) if fused else ([1, 1, 1, 1], [1, 1, 1, 1]))


def test_fused_and_per_rotor_flights_record_the_same_bits(tmp_path, monkeypatch):
    tables, nodes = {}, {}
    for fuse in (True, False):
        monkeypatch.setattr(Esc, "fuse", fuse)
        monkeypatch.setattr(Propeller, "fuse", fuse)
        flight = build_flight(RunConfig(mission="short"), "cpu")
        nodes[fuse] = flight.loop.nodes_per_tick
        out = tmp_path / str(fuse)
        # 2 s: spin-up, lift-off and the climb, with every rotor loaded differently as the PID corrects.
        run_flight(replace(flight.options, device="cpu", duration=2.0), out, progress=False, flight=flight)
        tables[fuse] = pq.read_table(out / "record.parquet")
    assert nodes[False] - nodes[True] == 6  # 3 ESC launches and 3 propeller launches saved
    assert tables[True].num_rows == 500
    assert tables[True].equals(tables[False])
