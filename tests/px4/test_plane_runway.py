"""A plane that PX4 takes off from the runway (vehicles/aerosonde_runway.usda: no air start, no catapult).

Against the scripted PX4 and its API stream, with the times of tests/px4/test_plane_mission.py (upload at 0.5 s,
arm 0.2 s later, start 0.2 s after that; the toy lands and disarms 0.6 s after the start, tick 374). The Aerosonde
rests facing east (its body x along the scene's +x), so the takeoff item lies 50 m east of the NED origin: by hand
on WGS-84 at 47.397742°, 488 m (N = 6,389,735.4 m), 50 / ((N + h) cos φ) = 6.6229e-5° of longitude, +6,622.9
degE7; the east offset leaves the parallel by θ² tan φ / 2 (θ = 50 / (N + h)), 0.02 degE7, nothing in latitude.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.runtime.config import RunConfig
from nexus.runtime.flight import build_flight
from tests.px4.test_plane_mission import OPTIONS, ORIGIN, build, fly


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plane_runway")
    summary, info, toy = fly(build("aerosonde_runway"), folder / "run")
    return summary, toy, pd.read_parquet(folder / "run" / "record.parquet"), info


def test_px4_s_parameters_take_off_from_the_runway():
    params = {}
    for vehicle in ("aerosonde_runway", "aerosonde_px4"):
        result = CliRunner().invoke(main, ["px4", "params", "--vehicle", vehicle, "--export"])
        assert result.exit_code == 0, result.output
        values = dict(line.removeprefix("export ").split("=", 1) for line in result.stdout.splitlines()
                      if line.startswith("export PX4_PARAM_"))
        params[vehicle] = (values["PX4_PARAM_RWTO_TKOFF"], values["PX4_PARAM_FW_LAUN_DETCN_ON"])
    # No start in the file: PX4's runway takeoff, no launch to detect; a catapult: the launch, no runway.
    assert params == {"aerosonde_runway": ("1", "0"), "aerosonde_px4": ("0", "1")}


def test_the_takeoff_item_lies_50_m_ahead_on_the_runway(flown):
    _, toy, _, _ = flown
    takeoff = toy.mission_items[0]
    assert takeoff[1] == 22 and takeoff[9] == 10.0  # NAV_TAKEOFF to the climb-out height [m]
    assert takeoff[7] == ORIGIN[0] and abs(takeoff[8] - (ORIGIN[1] + 6623)) <= 1
    # The rest of the mission is the catapult's (its first waypoint (0, 400) and the touchdown at the origin).
    assert abs(toy.mission_items[1][8] - 85508923) <= 1 and (toy.mission_items[9][7], toy.mission_items[9][8]) == ORIGIN


def test_the_plane_waits_on_its_wheels_until_px4_rolls_it(flown):
    summary, _, record, info = flown
    assert summary.exit_reason == "done" and summary.ticks == 374
    assert info["controller_stats"]["mission"]["landed_disarmed"] is True
    # PX4's zeros leave the plane on its three wheels: the base 0.25 m up (its place in the file), still.
    height = record["body/base.pose[2]"].to_numpy()
    speed = np.linalg.norm(record[[f"body/base.velocity[{i}]" for i in range(3)]].to_numpy(), axis=1)
    assert np.all(np.abs(height - 0.25) < 0.01) and speed.max() < 0.01
    assert math.isclose(float(record["time"].iloc[-1]), 374 * 0.004, abs_tol=1e-6)


def test_a_runway_plane_needs_px4_s_mission_and_the_nexus_stack_refuses_it(tmp_path):
    px4 = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "a"),
                                    "--vehicle", "aerosonde_runway", "--controller", "px4", "--duration", "1"])
    line = [text for text in px4.output.splitlines() if "aerosonde_runway.usda" in text]
    assert px4.exit_code != 0 and len(line) == 1 and "--px4-mission" in line[0], px4.output
    own = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "b"),
                                    "--vehicle", "aerosonde_runway", "--controller", "fixed_wing", "--duration", "1"])
    line = [text for text in own.output.splitlines() if "aerosonde_runway.usda" in text]
    assert own.exit_code != 0 and len(line) == 1 and "runway takeoff" in line[0], own.output


def test_the_runway_mission_waits_for_px4_s_altitude_reference_at_a_high_field():
    # PX4's SITL home is 488 m above sea level; TECS's reference starts at 0 m and comes up at 3 m/s, so the upload
    # waits 1.1 × 488 / 3 = 178.93 s (a catapult's mission, or a field at sea level, uploads at 6 s).
    uploads = {}
    for vehicle in ("aerosonde_runway", "aerosonde_px4"):
        config = RunConfig(vehicle=vehicle, scene="empty", controller="px4", device="cpu", duration=0.1,
                           controller_options={**OPTIONS, "mission": {"url": "udpin:127.0.0.1:0"}})
        uploads[vehicle] = build_flight(config, "cpu").vehicle.controller.mission_options.get("upload_at_s")
    assert uploads["aerosonde_px4"] is None  # the plan's own 6 s
    assert math.isclose(uploads["aerosonde_runway"], 178.9333, abs_tol=1e-3)
