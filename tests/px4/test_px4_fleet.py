"""Several PX4 instances flying the vehicles of one world, in one lockstep tick, against scripted PX4s.

Three Astro Maxes 2.5 m apart without contact between them, each flown by a scripted PX4 of its own that boots
silent for a few ticks and then answers every sensor message with one row: vehicle k's motors all at
0.5722 + 0.05·k (0.5722 is the hover command), so vehicle 0 hovers and the others climb. Vehicle 2 flown alone
against the same script computes the same bits: the fleet routes each vehicle's sensors to its own PX4 and each
PX4's answer to its own vehicle.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pytest
from pymavlink.dialects.v20 import common as mavlink

from nexus.core.errors import BuildError
from nexus.px4 import run_options
from nexus.px4.errors import LinkClosedError
from nexus.px4.scripted_gcs import ScriptedGcsLink
from nexus.px4.scripted_api import ScriptedApi
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.config import RunConfig
from nexus.runtime.flight import build_flight
from nexus.runtime.run import run_flight
from nexus.scenario.fleet_checks import vehicle_rows

HOVER = 0.5722
LINK = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0}


def script(k: int, hold_at: int | None = None):
    """Vehicle k's PX4: silent for 5 + k sensor messages (a boot), then every motor at HOVER + 0.05·k."""
    row = [HOVER + 0.05 * k] * 4 + [0.0] * 12
    return lambda n: "hold" if n == hold_at else (None if n <= 5 + k else row)


def fly(out, vehicles=3, seconds=1.0, first_vehicle=0, scripts=None, apis=None, link=None, during=None, gcs=None,
        **config):
    """Fly the PX4 fleet against scripted PX4s (``during(peers)`` runs beside the flight, in a thread; ``gcs``:
    each PX4's scripted ground-station link)."""
    options = RunConfig(controller="px4", controller_options={**LINK, **(link or {})}, vehicles=vehicles,
                        spacing=2.5, vehicle_contact=False, first_vehicle=first_vehicle, **config)
    flight = build_flight(options, "cpu")
    controller = flight.vehicle.controller
    links = getattr(controller, "peers", [controller])
    scripts = scripts or [script(first_vehicle + k) for k in range(len(links))]
    toys = [None if apis is None else ScriptedApi(px4.commander.link.port, system_id=k + 1, **apis)
            for k, px4 in enumerate(links)]
    peers = [ScriptedPx4(px4.link.port, scripts[k], api=toys[k], gcs=None if gcs is None else gcs[k])
             for k, px4 in enumerate(links)]
    with contextlib.ExitStack() as running:
        for peer in peers:
            running.enter_context(peer.running())
        if during is not None:
            threading.Thread(target=during, args=(peers,), daemon=True).start()
        summary = run_flight(replace(flight.options, device="cpu", duration=seconds), out, progress=False,
                             flight=flight)
    record = pq.read_table(out / "record.parquet").to_pandas()
    return summary, json.loads((out / "run.json").read_text()), record, peers, toys


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return fly(tmp_path_factory.mktemp("px4_fleet"))


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    """Vehicle 2 of the fleet flown alone: its random streams, its place 5 m east, its PX4's script."""
    return fly(tmp_path_factory.mktemp("px4_alone"), vehicles=1, first_vehicle=2)


def test_one_exchange_serves_every_instance_of_the_world(fleet):
    summary, info, _, peers, _ = fleet
    assert summary.exit_reason == "duration"
    assert info["stage_plan"].endswith("-> gps -> px4_row) host(exchange) graph(summary -> record), "
                                       "1 world x 3 vehicles")
    stats = info["controller_stats"]
    assert [(e["instance"], e["vehicle"]) for e in stats["instances"]] == [(0, 0), (1, 1), (2, 2)]
    # 250 ticks of 4 ms; instance k was silent for its first 5 + k sensor messages and answered every one after.
    assert [e["exchanges"] for e in stats["instances"]] == [250] * 3
    assert [e["answers"] for e in stats["instances"]] == [245, 244, 243]
    # Exchanges count from 1: the first answer came with the (6 + k)th.
    assert [e["first_answer_tick"] for e in stats["instances"]] == [6, 7, 8]
    for peer in peers:
        stamps = [m.time_usec for m in peer.of_type("HIL_SENSOR")]
        assert stamps == [4000 * n for n in range(1, 251)]


def test_each_vehicle_flies_on_its_own_instances_answer(fleet):
    _, _, record, _, _ = fleet
    late = record[record.time > 0.1].sort_values(["time", "vehicle"])
    motors = late.pivot(index="time", columns="vehicle", values="controls[0]")
    assert motors.to_numpy() == pytest.approx(np.tile([0.5722, 0.6222, 0.6722], (len(motors), 1)), abs=1e-6)
    # The hover command holds vehicle 0 within a few centimetres of its start; the others climb, 2 the most.
    end = record[record.time == record.time.max()].sort_values("vehicle")
    start = record[record.time == record.time.min()].sort_values("vehicle")
    climb = end["body/base.pose[2]"].to_numpy() - start["body/base.pose[2]"].to_numpy()
    assert abs(climb[0]) < 0.05 and 0.1 < climb[1] < climb[2]


def test_each_vehicle_is_its_own_place_on_the_earth(fleet):
    """Vehicle k starts 2.5·k m east of vehicle 0: PX4's truth puts it there. At the origin's latitude
    47.397742° a degree of longitude is (π/180)·N·cos φ = 75,489.74 m on WGS-84 (N = a/√(1 − e² sin² φ) =
    6,389,735.35 m), so 2.5 m east is 331.17e-7° (degE7)."""
    _, _, _, peers, _ = fleet
    first = [next(iter(peer.of_type("HIL_STATE_QUATERNION"))) for peer in peers]
    assert [m.lat - first[0].lat for m in first] == [0, 0, 0]
    assert [m.lon - first[0].lon for m in first] == pytest.approx([0.0, 331.17, 662.34], abs=1.0)


def test_vehicle_2_flown_alone_by_its_px4_computes_the_same_bits(fleet, alone):
    _, _, record, peers, _ = fleet
    _, info, single, (peer,), _ = alone
    assert info["options"]["first_vehicle"] == 2
    mine = record[record.vehicle == 2].drop(columns=["world", "vehicle"]).reset_index(drop=True)
    theirs = single.reset_index(drop=True)
    assert sorted(mine.columns) == sorted(theirs.columns) and len(mine) == len(theirs) == 250
    theirs = theirs[mine.columns]
    for column in mine.columns:
        assert (mine[column].to_numpy() == theirs[column].to_numpy()).all(), column
    # What instance 2 was sent is what the lone PX4 was sent, message for message.
    sent = [m.get_msgbuf() for m in peers[2].of_type("HIL_SENSOR")]
    assert sent == [m.get_msgbuf() for m in peer.of_type("HIL_SENSOR")]


def test_one_late_instance_holds_every_other(tmp_path):
    """Instance 1 withholds its answer to tick 100 for 0.3 s of wall time: no instance gets tick 101 meanwhile."""
    seen = {}

    def watch(peers):
        peers[1].holding.wait(30.0)
        time.sleep(0.3)
        seen["sensors"] = [p.sensors for p in peers]
        peers[1].release()

    summary, *_ = fly(tmp_path, seconds=0.5, scripts=[script(0), script(1, hold_at=100), script(2)], during=watch)
    assert summary.exit_reason == "duration"
    assert seen["sensors"] == [100, 100, 100]


def test_an_instance_that_drops_its_link_ends_the_run_naming_it(tmp_path):
    options = RunConfig(controller="px4", controller_options=LINK, vehicles=3, spacing=2.5, vehicle_contact=False)
    flight = build_flight(options, "cpu")
    links = flight.vehicle.controller.peers
    peers = [ScriptedPx4(px4.link.port, script(k), disconnect_after=40 if k == 1 else None)
             for k, px4 in enumerate(links)]
    with contextlib.ExitStack() as running:
        for peer in peers:
            running.enter_context(peer.running())
        with pytest.raises(LinkClosedError, match=r"^PX4 instance 1 \(vehicle 1, TCP port \d+\): PX4 closed the link"):
            run_flight(replace(flight.options, device="cpu", duration=1.0), tmp_path, progress=False, flight=flight)
        # Every link is closed with the run: the other instances see their connection end.
        for peer in (peers[0], peers[2]):
            peer.join(timeout=5.0)
            assert not peer.is_alive()
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["exit_reason"] == "px4-disconnected"
    assert info["error"].startswith(f"PX4 instance 1 (vehicle 1, TCP port {links[1].link.port}): ")
    # Instance 1 dropped its link on its 40th sensor message: 39 ticks were flown, every one of them recorded.
    assert info["ticks"] == 39 and pq.read_table(tmp_path / "record.parquet").num_rows == 3 * 39


def test_each_instance_flies_its_mission_to_its_own_system(tmp_path):
    plan = {"altitude": 1.0, "hold_s": 0.3, "yaw_hold_s": 0.3, "arm_at_s": 0.5, "takeoff_delay_s": 0.2,
            "climb_s": 1.0, "land_s": 1.5}
    rows = [[HOVER] * 4 + [0.0] * 12] * 2
    summary, info, _, _, toys = fly(tmp_path, vehicles=2, seconds=8.0, apis={},
                                    scripts=[lambda n, r=r: None if n <= 3 else r for r in rows],
                                    link={"mission": {"url": "udpin:127.0.0.1:0", **plan}, "boot_patience": 0.5})
    assert summary.exit_reason == "done"
    lines = run_options.report_mission(tmp_path, info)
    assert [line.split(":")[0] for line in lines[:1]] == ["  vehicle 0 (PX4 instance 0)"]
    assert any(line.startswith("  vehicle 1 (PX4 instance 1): ") for line in lines)
    assert len(json.loads((tmp_path / "mission.json").read_text())["vehicles"]) == 2
    # A scenario judges each vehicle on its own instance's counts (its px4_mission check reads its mission).
    rows = vehicle_rows(pq.read_table(tmp_path / "record.parquet"), info)
    assert [(r.vehicle, r.info["controller_stats"]["instance"]) for r in rows] == [(0, 0), (1, 1)]
    assert all(r.info["controller_stats"]["mission"]["landed_disarmed"] for r in rows)
    for k, toy in enumerate(toys):
        report = info["controller_stats"]["instances"][k]["mission"]
        assert report["landed_disarmed"] and [c["result"] for c in report["commands"]] == [0] * 6
        # Arm, takeoff, three yaws and the landing, each to its own PX4's system id only.
        assert [c for c, _, _ in toy.commands] == [400, 22, 192, 192, 192, 21]
        assert toy.foreign_commands == 0 and toy.system_id == k + 1


def _gcs_links(count: int, station: tuple) -> list:
    """Scripted ground-station links of PX4 instances 0..count-1, on consecutive free UDP ports."""
    for base in range(38570, 48570, 10):
        links = []
        try:
            for k in range(count):
                links.append(ScriptedGcsLink(base + k, default_partner=station, system_id=k + 1))
            return links
        except OSError:
            for link in links:
                link.close()
    raise RuntimeError("no consecutive free UDP ports")


def test_a_ground_station_sees_every_vehicle_through_the_relays(tmp_path):
    station = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    station.bind(("127.0.0.1", 0))  # not 14550: other PX4s on a shared machine send there
    address = station.getsockname()
    links = _gcs_links(2, address)
    summary, info, *_ = fly(tmp_path, vehicles=2, gcs=links,
                            link={"gcs": f"127.0.0.1:{address[1]}", "gcs_port": links[0].port})
    station.setblocking(False)
    parser, systems = mavlink.MAVLink(None), set()
    with contextlib.suppress(BlockingIOError):
        while True:
            for message in parser.parse_buffer(station.recv(65536)) or []:
                if message.get_type() == "HEARTBEAT":
                    systems.add(message.get_srcSystem())
    station.close()
    assert summary.exit_reason == "duration"
    # Each instance's relay forwards its PX4's heartbeats (MAV_SYS_ID 1 and 2) to the one station.
    assert systems == {1, 2}
    relays = [e["ground_station"] for e in info["controller_stats"]["instances"]]
    assert [r["px4_port"] for r in relays] == [links[0].port, links[0].port + 1]
    assert all(r["to_gcs"] > 0 for r in relays)


@pytest.mark.parametrize(("config", "words"), [
    ({"vehicles": 11}, "11 PX4 instances from instance 0 end at instance 10"),
    ({"vehicles": 3, "controller_options": {**LINK, "port": 4568}}, "from instance 8 end at instance 10"),
])
def test_more_instances_than_the_ports_allow_are_refused_before_any_stage(config, words):
    options = RunConfig(controller="px4", **{"controller_options": LINK, "spacing": 2.5, **config})
    with pytest.raises(BuildError, match=words):
        build_flight(options, "cpu")


def test_px4_flies_one_world_of_vehicles_only():
    with pytest.raises(BuildError, match="--controller px4 --worlds 2"):
        RunConfig(controller="px4", controller_options=LINK, vehicles=2, worlds=2, spacing=2.5).check()
