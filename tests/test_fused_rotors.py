"""One launch for the four ESCs and their servo and one for the four propellers: nine graph nodes fewer, the same bits."""

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


def servo_launches(loop):
    """Graph nodes the step stage captures for Newton's servo: the stage with the ESCs before it, less without."""
    step = next(stage for stage in loop.plan.stages if stage.name == "step")
    counts = []
    for with_escs in (True, False):
        with wp.ScopedDevice("cpu"), wp.ScopedCapture(device="cpu") as capture:
            for stage in loop.plan.stages:
                if stage.name in ("clear", "esc") and with_escs or stage is step:
                    stage.run(loop.ios[id(stage)])
        counts.append(graph_nodes(capture.graph))
    return counts


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
    assert nodes[False] - nodes[True] == 9  # 3 ESC launches, 3 propeller launches and the servo's 3 saved
    assert tables[True].num_rows == 500
    assert tables[True].equals(tables[False])


@pytest.mark.parametrize("solver", ["mujoco", "freeflyer"])
def test_the_fused_esc_launch_runs_the_servo_and_the_step_leaves_it_out(solver):
    flight = build_flight(RunConfig(mission="short", solver=solver), "cpu")
    clear_esc_step, step_alone = servo_launches(flight.loop)
    flight.loop.close()
    # clear (two memsets on the CPU: body_f and joint_f) + the fused ESCs (1) + the step without the servo, against
    # the step with Newton's servo (3 more):
    assert clear_esc_step - 3 == step_alone - 3


def test_with_substeps_the_servo_stays_the_steps(monkeypatch):
    # Each substep runs the servo on that substep's speed: one launch a tick cannot stand in for it.
    flight = build_flight(RunConfig(mission="short", substeps=2), "cpu")
    esc = next(c for c in flight.vehicle.components if isinstance(c, Esc) and c.leader is c)
    flight.loop.close()
    assert esc._servo is None


@pytest.mark.parametrize("solver", ["mujoco", "freeflyer"])
def test_the_servo_in_the_esc_launch_flies_newtons_bits(tmp_path, monkeypatch, solver):
    tables = {}
    for fuse_servo in (True, False):
        monkeypatch.setattr(Esc, "fuse_servo", fuse_servo)
        out = tmp_path / str(fuse_servo)
        # 1 s: the settling start-up (the step runs Newton's servo there: no ESC before it), lift-off, the climb.
        run_flight(RunConfig(mission="short", solver=solver, device="cpu", duration=1.0), out, progress=False)
        tables[fuse_servo] = pq.read_table(out / "record.parquet")
    assert tables[True].num_rows == 250
    assert tables[True].equals(tables[False])
