"""Two PX4 instances flying two planes of one world (--controller px4 --vehicles 2 --px4-mission on a plane).

Two catapult Aerosondes (vehicles/aerosonde_px4.usda, the catapult's hold at 2 s) 200 m apart: vehicle 1 starts
200 m east of vehicle 0, so its PX4 gets the plane mission moved 200 m east, each item placed from its own start;
the scripted PX4s and their toy API streams as in tests/px4/test_plane_mission.py (upload at 0.5 s, arm 0.2 s
later, start 0.2 s after; each toy lands and disarms 0.6 s after its start, tick 374).

By hand on WGS-84 at 47.397742°, 488 m (N = 6,389,735.4 m, tan φ = 1.0916): a point e east is λ + e / ((N + h)
cos φ) of longitude, 52,983.28 degE7 per 400 m, and leaves the parallel by θ² tan φ / 2 with θ = e / (N + h). The
takeoff item at 200 m east: +26,491.64 degE7 of longitude, 0.31 degE7 off the parallel; the first waypoint (0, 400)
of vehicle 1 at 600 m east: +79,474.92, −2.76 degE7 of latitude.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import replace

import pytest

from nexus.px4.scripted_api import ScriptedApi
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.run import run_flight
from tests.px4.test_plane_mission import HOLD_2S, ORIGIN, build, layer


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    folder = tmp_path_factory.mktemp("px4_plane_fleet")
    flight = build(layer(folder, HOLD_2S), vehicles=2, spacing=200.0)
    links = flight.vehicle.controller.peers
    toys = [ScriptedApi(px4.commander.link.port, system_id=k + 1, mission_s=0.6) for k, px4 in enumerate(links)]
    peers = [ScriptedPx4(px4.link.port, lambda n: None if n <= 3 else [0.0] * 16, api=toys[k], mav_type=1)
             for k, px4 in enumerate(links)]
    with contextlib.ExitStack() as running:
        for peer in peers:
            running.enter_context(peer.running())
        summary = run_flight(replace(flight.options, device="cpu", duration=3.0), folder / "run", progress=False,
                             flight=flight)
    return summary, toys, json.loads((folder / "run" / "run.json").read_text()), flight


def test_both_planes_fly_their_missions_to_their_disarms(flown):
    summary, toys, info, _ = flown
    assert summary.exit_reason == "done" and summary.ticks == 374
    assert [toy.mission_count for toy in toys] == [10, 10]
    stats = info["controller_stats"]["instances"]
    assert len(stats) == 2 and all(s["mission"]["landed_disarmed"] for s in stats)


def test_each_plane_s_items_are_placed_from_its_own_start(flown):
    _, toys, _, _ = flown
    zero, one = toys[0].mission_items, toys[1].mission_items
    assert (zero[0][7], zero[0][8]) == ORIGIN  # vehicle 0: the single plane's mission
    assert abs(zero[1][7] - 473977419) <= 1 and abs(zero[1][8] - 85508923) <= 1
    # Vehicle 1, 200 m east: its takeoff at (0, 200), its first waypoint at (0, 600).
    assert abs(one[0][7] - ORIGIN[0]) <= 1 and abs(one[0][8] - (ORIGIN[1] + 26492)) <= 1
    assert abs(one[1][7] - (ORIGIN[0] - 3)) <= 1 and abs(one[1][8] - (ORIGIN[1] + 79475)) <= 1
    # Every item moves by the same 200 m: the touchdowns 26,492 degE7 of longitude apart.
    assert abs(one[9][8] - zero[9][8] - 26492) <= 1 and abs(one[9][7] - zero[9][7]) <= 1


def test_each_instance_flies_its_own_slot_through_the_plane_output_map(flown):
    _, _, _, flight = flown
    peers = flight.vehicle.controller.peers
    assert [p.slot for p in peers] == [0, 1]
    assert all(p.outputs is not None and p.air_start is None and not p.runway_takeoff for p in peers)
