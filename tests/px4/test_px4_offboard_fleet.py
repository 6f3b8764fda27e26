"""A CTBR policy flown through PX4's offboard mode by two PX4 instances in one world, against scripted PX4s.

Two Astro Maxes 2.5 m apart (vehicle 1 east of vehicle 0), no contact, each flown by a scripted PX4 of its own
(system id k + 1, its API toy on a port of its own) with the hand-built policy of ``test_offboard.py``: a₀ = 0.24 +
0.1·(setpoint z − estimate z), a₁ = 0.05, a₂ = −0.05, a₃ = 0.3 + 0.5·(yaw rate), hover 0.5, max rates (2, 4, 1)
rad/s. Each instance's setpoints must be that policy of its own vehicle's rows: vehicle 1 flown alone against the
same script gets the same bytes. A fleet policy (one neighbour) adds 0.04·(neighbour's x in the heading frame)
to a₁: both rest facing east, so that is about +2.5 m for vehicle 0 and −2.5 m for vehicle 1, and their roll rates
are about 2·0.15 = 0.3 and 2·(−0.05) = −0.1 rad/s.
"""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pytest
from pymavlink.dialects.v20 import common as mavlink

from nexus.core.errors import BuildError
from nexus.px4.scripted_api import ScriptedApi
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.config import RunConfig
from nexus.runtime.flight import build_flight
from nexus.runtime.run import run_flight
from tests.px4.test_offboard import LAYOUT, SCALING, TIMING, _model

TICK_US = 4000
LINK = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0,
        "offboard_url": "udpin:127.0.0.1:0", "boot_patience": 0.5, **TIMING}


def _fleet_model(path, neighbours: int = 1) -> str:
    """The hand policy with one neighbour pair per other vehicle: a₁ also takes 0.04 of the first one's x [m]."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inputs = 6 + 6 * neighbours
    weights = np.zeros((inputs, 4), np.float32)
    weights[2, 0], weights[5, 3], weights[6, 1] = 0.1, 0.5, 0.04
    bias = np.array([0.24, 0.05, -0.05, 0.3], np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["observation", "weights", "bias"], ["action"])], "ctbr",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, [1, inputs])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(weights, "weights"), numpy_helper.from_array(bias, "bias")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    observation = LAYOUT + ",neighbour_position_heading:3,neighbour_velocity_heading:3" * neighbours
    helper.set_model_props(model, {"nexus:observation": observation, "nexus:action": "ctbr:4", **SCALING})
    onnx.save(model, str(path))
    return str(path)


def fly(out, model: str, vehicles: int = 2, first_vehicle: int = 0, seconds: float = 1.0):
    """Fly ``vehicles`` PX4 instances in offboard against scripted PX4s: instance i silent for 3 + i sensor
    messages, then answering with its toy's offboard row."""
    config = RunConfig(controller="px4", controller_options={**LINK, "offboard_policy": model}, vehicles=vehicles,
                       spacing=2.5, vehicle_contact=False, first_vehicle=first_vehicle)
    flight = build_flight(config, "cpu")
    controller = flight.vehicle.controller
    pilots = getattr(controller, "peers", [controller])
    toys = [ScriptedApi(px4.offboard.commander.link.port, offboard_lead_s=0.3, system_id=first_vehicle + k + 1)
            for k, px4 in enumerate(pilots)]
    peers = [ScriptedPx4(px4.link.port, lambda n, toy=toy, i=first_vehicle + k: None if n <= 3 + i else
                         toy.offboard_row(), api=toy) for k, (px4, toy) in enumerate(zip(pilots, toys))]
    with contextlib.ExitStack() as running:
        for peer in peers:
            running.enter_context(peer.running())
        summary = run_flight(replace(flight.options, device="cpu", duration=seconds), out / "run", progress=False,
                             flight=flight)
    record = pq.read_table(out / "run" / "record.parquet").to_pandas()
    record["tick"] = np.rint(record["time"].to_numpy() * 250).astype(int)
    return summary, json.loads((out / "run" / "run.json").read_text()), record, toys, pilots


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return _model(tmp_path_factory.mktemp("ctbr") / "ctbr.onnx")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, model):
    return fly(tmp_path_factory.mktemp("offboard_fleet"), model)


@pytest.fixture(scope="module")
def alone(tmp_path_factory, model):
    """Vehicle 1 of the fleet flown alone: its random streams, its place 2.5 m east, its PX4's script and system."""
    return fly(tmp_path_factory.mktemp("offboard_alone"), model, vehicles=1, first_vehicle=1)


def _target(raw: bytes) -> int:
    (message,) = mavlink.MAVLink(None).parse_buffer(raw)
    return message.target_system


def test_each_instance_takes_its_setpoints_on_its_own_port_for_its_own_system(fleet):
    summary, info, _, toys, pilots = fleet
    assert summary.exit_reason == "duration" and summary.ticks == 250
    assert info["stage_plan"].endswith("-> px4_row) host(offboard) host(exchange) graph(summary -> record), "
                                       "1 world x 2 vehicles")
    assert len({pilot.offboard.commander.link.port for pilot in pilots}) == 2
    # 50 Hz from tick 50 (0.2 s) to tick 250: (250 − 50) / 5 + 1 = 41 setpoints each, each arrived with PX4's
    # clock at the tick before its own, addressed to that instance's MAV_SYS_ID (k + 1), none to the other's.
    for k, toy in enumerate(toys):
        assert [clock for clock, *_ in toy.setpoints] == [(n - 1) * TICK_US for n in range(50, 251, 5)]
        assert {_target(raw) for raw in toy.setpoint_bytes} == {k + 1} and toy.foreign_setpoints == 0
        # The switch at 0.6 s (tick 150), the arm 0.2 s later (tick 200), each to its own system only.
        assert [(c, clock) for c, clock, _ in toy.commands] == [(176, 149 * TICK_US), (400, 199 * TICK_US)]
        assert toy.foreign_commands == 0
    stats = [each["offboard"] for each in info["controller_stats"]["instances"]]
    assert [(s["setpoints"], s["first_setpoint_tick"], s["clock_mismatches"]) for s in stats] == [(41, 50, 0)] * 2


def test_each_setpoint_is_the_policy_of_its_own_vehicles_rows(fleet):
    _, _, record, toys, _ = fleet
    for k, toy in enumerate(toys):
        mine = record[record.vehicle == k].set_index("tick")
        for clock, _, _, rates, thrust in toy.setpoints:
            row = mine.loc[clock // TICK_US + 1]
            height_error = float(row["setpoint.position[2]"]) - float(row["estimate.position[2]"])
            a0 = float(row["ctbr[0]"])
            assert a0 == pytest.approx(0.24 + 0.1 * height_error, abs=1e-6)
            assert thrust == np.float32(0.5 * (1.0 + a0)) and thrust == pytest.approx(0.62 + 0.05 * height_error,
                                                                                        abs=1e-6)
            assert rates[2] == pytest.approx(0.3 + 0.5 * float(row["estimate.rates[2]"]), abs=1e-6)
    # The two vehicles' height errors differ (each vehicle's own sensors' noise; by 0.1 to 0.18 m here), so each
    # pair of thrusts sent on one tick differs too: by more than 0.05 · 0.02 m = 0.001 at the least.
    assert all(abs(a[4] - b[4]) > 1e-3 for a, b in zip(*(toy.setpoints for toy in toys)))


def test_vehicle_1_flown_alone_gets_the_same_setpoints_byte_for_byte(fleet, alone):
    _, _, record, toys, _ = fleet
    _, info, single, (toy,), _ = alone
    assert info["options"]["first_vehicle"] == 1
    assert len(toy.setpoint_bytes) == 41 and toys[1].setpoint_bytes == toy.setpoint_bytes
    assert toys[1].commands == toy.commands
    mine = record[record.vehicle == 1].drop(columns=["world", "vehicle"]).reset_index(drop=True)
    theirs = single.reset_index(drop=True)[mine.columns]
    for column in ("ctbr[0]", "ctbr[1]", "ctbr[2]", "ctbr[3]", "controls[0]", "estimate.position[2]"):
        assert mine[column].to_numpy().tobytes() == theirs[column].to_numpy().tobytes(), column


@pytest.fixture(scope="module")
def neighbours(tmp_path_factory):
    out = tmp_path_factory.mktemp("offboard_neighbours")
    return fly(out, _fleet_model(out / "fleet.onnx"))


def test_a_fleet_policy_sees_the_other_vehicle_from_its_own(neighbours):
    """a₁ = 0.05 + 0.04·x, x the other vehicle's position less this one's, in this one's heading frame: each
    estimate (its own NED frame) moved by its start, vehicle 1's 2.5 m east, NED (0, 2.5, 0)."""
    summary, _, record, toys, _ = neighbours
    assert summary.exit_reason == "duration"
    start = {0: (0.0, 0.0), 1: (0.0, 2.5)}
    rolls = []
    for k, toy in enumerate(toys):
        assert len(toy.setpoints) == 41
        for clock, _, _, rates, _ in toy.setpoints:
            rows = record[record.tick == clock // TICK_US + 1].set_index("vehicle")
            x, y, z, w = (float(rows.loc[k, f"estimate.attitude[{i}]"]) for i in range(4))
            psi = math.atan2(2.0 * (x * y + z * w), 1.0 - 2.0 * (y * y + z * z))
            here = [float(rows.loc[k, f"estimate.position[{i}]"]) + start[k][i] for i in (0, 1)]
            there = [float(rows.loc[1 - k, f"estimate.position[{i}]"]) + start[1 - k][i] for i in (0, 1)]
            dn, de = there[0] - here[0], there[1] - here[1]
            assert psi == pytest.approx(math.pi / 2, abs=0.05)  # facing east (its estimate, within 3 degrees)
            ahead = math.cos(psi) * dn + math.sin(psi) * de
            a1 = float(rows.loc[k, "ctbr[1]"])
            assert a1 == pytest.approx(0.05 + 0.04 * ahead, abs=1e-6)
            assert rates[0] == np.float32(2.0 * a1)
            rolls.append((k, rates[0]))
    # Vehicle 0 sees the other about 2.5 m ahead, vehicle 1 about 2.5 m behind.
    assert all(r == pytest.approx(0.3 if k == 0 else -0.1, abs=0.01) for k, r in rolls)


# -- bad input: refused when the flight is built, before any stage runs, in one line -----------------------------


@pytest.mark.parametrize("vehicles", [1, 3])
def test_a_fleet_policy_for_another_fleet_size_is_refused_naming_the_file(tmp_path, vehicles):
    path = _fleet_model(tmp_path / "pair.onnx")
    config = RunConfig(controller="px4", controller_options={**LINK, "offboard_policy": path}, vehicles=vehicles,
                       spacing=2.5, vehicle_contact=False)
    with pytest.raises(BuildError, match=rf"^--px4-offboard-policy {path}: its nexus:observation has 1 neighbours, "
                       rf"so it flies 2 vehicles in one world .*; this run has --vehicles {vehicles}: give "
                       r"--vehicles 2$") as error:
        build_flight(config, "cpu")
    assert "\n" not in str(error.value)


def test_an_offboard_policy_on_a_plane_fleet_is_refused_in_one_line(tmp_path, model):
    config = RunConfig(vehicle="aerosonde_px4", scene="empty", controller="px4", vehicles=2, spacing=400.0,
                       controller_options={**LINK, "offboard_policy": model})
    with pytest.raises(BuildError, match=r"--px4-offboard-policy flies a multirotor's thrust and body rates, and "
                       r"this vehicle is a plane") as error:
        build_flight(config, "cpu")
    assert "\n" not in str(error.value)
