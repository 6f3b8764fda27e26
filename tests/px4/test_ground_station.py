"""A ground station flying the scripted PX4 through Nexus at real time: paced, on ticks, recorded, replayed.

The test plays QGroundControl on a UDP port of its own (see :func:`station_socket`): it waits for the
vehicle's heartbeat, answers with its own every second, arms, and streams MANUAL_CONTROL at 25 Hz of wall
time (throttle 700, then 560), keeping every GLOBAL_POSITION_INT it gets with the moment it came. The
scripted PX4's ground-station link (:class:`nexus.px4.scripted_gcs.ScriptedGcsLink`) takes what comes on
its clock, as PX4 does, and its toy autopilot puts the throttle stick on the four motors once armed
(z / 1000). Between them, Nexus's relay (:mod:`nexus.px4.ground_station`).

Flown at ``realtime = 1`` and unpaced, in the same test: the paced flight's telemetry never runs ahead of
the wall clock (at every whole second of sim time, wall time since the first report >= sim time since it,
less 2 %: a slow machine only adds wall time), and the unpaced one is at least 3 times faster. Every input
took effect on the tick after PX4's clock took it, and the record says which: the sticks and the
datagram count on exactly those ticks, the controls the toy made of them from that tick on, the arm
command with its tick; and the hand-flown flight replays from its record bit for bit.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pytest
from pymavlink.dialects.v20 import common as mavlink

from nexus.px4.scripted_gcs import ScriptedGcsLink
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.runtime.replay import replay
from nexus.runtime.run import run_flight

TICK_US = 4000
SECONDS = 5.0
#: The station's throttle: climb for the first 2.5 s of wall time after the arm, then a little under hover.
CLIMB, AFTER = 700, 560
QGC_SYSTEM = 255


def station_socket() -> socket.socket:
    """A free UDP port of its own. Not 14550, QGroundControl's: on a shared machine every PX4 SITL running sends
    there until a ground station answers, and a station there would arm and steer someone else's PX4."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.005)
    return sock


class Station(threading.Thread):
    """QGroundControl, as far as the test needs (see the module doc)."""

    def __init__(self, sock: socket.socket):
        super().__init__(daemon=True)
        self.sock = sock
        self.port = sock.getsockname()[1]
        self.mav = mavlink.MAVLink(None, srcSystem=QGC_SYSTEM, srcComponent=190)
        self.vehicle: tuple | None = None  # where the vehicle's heartbeat came from
        self.heartbeats_in = 0
        self.positions: list[tuple[float, int, int]] = []  # (wall [s], time_boot_ms, altitude [mm])
        self.sent: list[tuple[float, str, int]] = []  # (wall [s], type, throttle or command)
        self.acks: list[int] = []
        self.stop = threading.Event()

    def _send(self, message, what: str, value: int) -> None:
        self.sock.sendto(message.pack(self.mav), self.vehicle)
        self.mav.seq = (self.mav.seq + 1) % 256
        self.sent.append((time.monotonic(), what, value))

    def run(self) -> None:
        parser = mavlink.MAVLink(None)
        armed_at = next_stick = next_beat = None
        while not self.stop.is_set():
            try:
                data, sender = self.sock.recvfrom(65536)
                for message in parser.parse_buffer(data) or []:
                    kind = message.get_type()
                    if kind == "HEARTBEAT" and message.autopilot == mavlink.MAV_AUTOPILOT_PX4:
                        self.heartbeats_in += 1
                        self.vehicle = sender
                    elif kind == "GLOBAL_POSITION_INT":
                        self.positions.append((time.monotonic(), message.time_boot_ms, message.alt))
                    elif kind == "COMMAND_ACK":
                        self.acks.append(message.command)
            except (TimeoutError, socket.timeout):
                pass
            if self.vehicle is None:
                continue
            now = time.monotonic()
            if next_beat is None or now >= next_beat:
                self._send(self.mav.heartbeat_encode(mavlink.MAV_TYPE_GCS, mavlink.MAV_AUTOPILOT_INVALID, 0, 0, 4),
                           "HEARTBEAT", 0)
                next_beat = now + 1.0
            if armed_at is None:
                self._send(self.mav.command_long_encode(1, 1, 400, 0, 1, 0, 0, 0, 0, 0, 0), "COMMAND_LONG", 400)
                armed_at = next_stick = now
            if now >= next_stick:
                throttle = CLIMB if now - armed_at < 2.5 else AFTER
                self._send(self.mav.manual_control_encode(1, 0, 0, throttle, 0, 0), "MANUAL_CONTROL", throttle)
                next_stick += 0.04


def fly(out, realtime: float | None):
    """One flight of SECONDS against the scripted PX4 and the station; (run.json, station, the peer's link)."""
    sock = station_socket()
    link = ScriptedGcsLink(default_partner=("127.0.0.1", sock.getsockname()[1]))
    options = {"host": "127.0.0.1", "port": 0, "connect_timeout": 30.0, "answer_timeout": 10.0,
               "gcs": f"127.0.0.1:{sock.getsockname()[1]}", "gcs_port": link.port}
    flight = build_flight(RunConfig(controller="px4", controller_options=options), "cpu")
    peer = ScriptedPx4(flight.vehicle.controller.link.port, lambda n: link.row(), gcs=link)
    station = Station(sock)
    station.start()
    try:
        with peer.running():
            run_flight(replace(flight.options, device="cpu", duration=SECONDS, realtime=realtime), out,
                       progress=False, flight=flight)
    finally:
        station.stop.set()
        station.join(timeout=5)
        sock.close()
    return json.loads((out / "run.json").read_text()), station, link


@pytest.fixture(scope="module")
def flights(tmp_path_factory):
    root = tmp_path_factory.mktemp("gcs")
    paced = fly(root / "paced", 1.0)
    unpaced = fly(root / "unpaced", None)
    return {"paced": (root / "paced", *paced), "unpaced": (root / "unpaced", *unpaced)}


def test_the_station_sees_the_vehicle_through_nexus_and_never_ahead_of_the_wall_clock(flights):
    _, info, station, link = flights["paced"]
    assert info["exit_reason"] == "duration" and info["ticks"] == 1250
    # Heartbeat in: the vehicle's heartbeats came from the relay, not from the peer's own port.
    assert station.heartbeats_in >= 4 and station.vehicle[1] != link.port
    relay = info["controller_stats"]["ground_station"]
    assert relay["claimed_tick"] == 1 and relay["to_gcs"] > 0 and relay["clock_mismatches"] == 0
    # Every whole second of sim time, against the first report after the first 0.1 s.
    first = next(p for p in station.positions if p[1] >= 100)
    checked = 0
    for second in range(1, int(SECONDS)):
        wall, sim_ms, _ = next(p for p in station.positions if p[1] >= first[1] + 1000 * second)
        sim_s = (sim_ms - first[1]) * 1e-3
        assert wall - first[0] >= sim_s / 1.0 * 0.98, (second, wall - first[0], sim_s)
        checked += 1
    assert checked == 4
    # The vehicle moves as the sticks ask: 700 is more than the 572 of a hover, so it climbs.
    assert station.positions[-1][2] - station.positions[0][2] > 500  # [mm]


def test_the_unpaced_flight_of_the_same_sticks_is_at_least_three_times_faster(flights):
    paced, unpaced = flights["paced"][1], flights["unpaced"][1]
    assert paced["ticks"] == unpaced["ticks"] == 1250
    assert paced["wall_time_s"] >= SECONDS  # 5 s of sim at real time
    assert unpaced["wall_time_s"] * 3 <= paced["wall_time_s"], (unpaced["wall_time_s"], paced["wall_time_s"])
    assert paced["pacing"]["factor"] == 1.0 and "pacing" not in unpaced


def _record(out):
    table = pq.read_table(out / "record.parquet")
    return {name: table.column(name).to_numpy() for name in table.column_names}


@pytest.mark.parametrize("which", ["paced", "unpaced"])
def test_each_input_is_recorded_on_the_tick_it_took_effect_on(flights, which):
    out, info, station, link = flights[which]
    record = _record(out)
    ticks = np.rint(record["time"] * 250).astype(int)
    assert np.array_equal(ticks, np.arange(1, 1251))
    # What the peer took from the station, with its clock: each took effect on the tick after that clock.
    from_station = [(clock, kind) for clock, system, kind in link.taken if system == QGC_SYSTEM]
    # Nothing lost, nothing around the relay: the peer took what the station sent, in its order, but for what came
    # after the last tick (the run was over), and exactly what the relay delivered.
    assert [kind for _, kind in from_station] == [kind for _, kind, _ in station.sent[:len(from_station)]]
    # Paced, 5 s of wall time at 25 Hz: some 125 sticks; unpaced, the heartbeat, the arm and a stick at least (the
    # station sends them the moment it hears the vehicle; the flight lasts far longer than that on any machine).
    assert len(from_station) == info["controller_stats"]["ground_station"]["to_px4"] > (50 if which == "paced" else 2)
    effect = {clock // TICK_US + 1 for clock, _ in from_station}
    delivered = record["gcs_messages"]
    assert set(ticks[delivered > 0]) == effect
    assert int(delivered.sum()) == len(from_station)
    for clock, x, y, z, r, buttons in link.sticks:  # the last sticks of a tick are the record's on that tick
        row = clock // TICK_US
        last = [s for s in link.sticks if s[0] == clock][-1]
        assert [record[f"manual_control[{i}]"][row] for i in range(5)] == list(last[1:])
    # The arm went with its tick into run.json; from that tick on the controls are the toy's z / 1000.
    commands = info["controller_stats"]["ground_station"]["commands"]
    assert [c[2:4] for c in commands] == [["COMMAND_LONG", 400]]
    arm_tick = commands[0][0]
    arm_clock = next(clock for clock, kind in from_station if kind == "COMMAND_LONG")
    assert arm_tick == arm_clock // TICK_US + 1 and commands[0][1] == pytest.approx(arm_clock * 1e-6)
    controls = record["controls[0]"]
    throttle = record["manual_control[2]"]
    assert np.all(controls[: arm_tick - 1] == 0.0)
    expected = (throttle[arm_tick - 1:] / 1000.0).astype(np.float32)
    assert np.array_equal(controls[arm_tick - 1:], expected)
    assert set(np.unique(throttle[arm_tick - 1:])) <= {CLIMB, AFTER} and CLIMB in throttle


def test_the_hand_flown_flight_replays_from_its_record(flights):
    result = replay(flights["paced"][0])
    assert result.identical and result.ticks == 1250
    # The station's columns are the controller's: not part of an open-loop replay.
    assert {"gcs_messages", "manual_control[2]"} <= set(result.not_compared)


@pytest.mark.parametrize("gcs, realtime, given, relays", [
    (None, 1.0, False, "127.0.0.1:14550"),  # paced: QGroundControl's port on this machine
    (None, None, False, None),              # unpaced: no relay unless asked
    ("10.0.0.5:14551", None, True, "10.0.0.5:14551"),
    ("off", 1.0, True, None), ("none", 2.0, True, None),
])
def test_which_ground_station_a_px4_run_relays(gcs, realtime, given, relays):
    from nexus.px4.ground_station import relayed

    assert relayed(gcs, realtime, given) == relays


def test_a_malformed_ground_station_address_is_one_line_before_anything_is_written(tmp_path):
    from click.testing import CliRunner

    from nexus.cli import main

    out = tmp_path / "never"
    result = CliRunner().invoke(main, ["run", "--controller", "px4", "--px4-gcs", "qgc", "--device", "cpu",
                                       "--out", str(out)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: --px4-gcs qgc: give the ground station's HOST:PORT, e.g. 127.0.0.1:14550 (QGroundControl's own "
        "port), or off to let it talk to PX4 directly"]
    assert not out.exists()
