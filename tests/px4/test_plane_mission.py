"""A plane's mission flown by PX4 (--px4-mission on a plane), against the scripted PX4 and its API stream.

The vehicle is vehicles/aerosonde_px4.usda (the Aerosonde on its wheels, launched by a catapult) with the catapult's
hold at 2 s, and the mission's times shortened for the toy: the upload at 0.5 s (tick 125: tick k sends time_usec
4000·k; the toy reports home at 0.2 s), the arm 0.2 s later (tick 175), the start 0.2 s after that (tick 225).
What goes before tick k's HIL_SENSOR reaches PX4 at its clock of tick k − 1. The toy says it landed and disarms
0.6 s of its clock after the start: the start reached it at 224·4000 = 896,000 µs, so at 1,496,000 µs, tick 374,
whose answer says disarmed; the run ends on that tick, before the catapult's push at 2 s.

The mission is the default plane mission (docs/fixed_wing.md): the 400 m square (0, 400), (400, 400), (400, 0),
(0, 0) north-east from the NED origin at 100 m, acceptance 60 m, 60 s anticlockwise on 150 m about (200, 200), the
landing at the origin flying east after a descent to 30 m on the approach circle: tangent to the final at the glide
slope's entry 30 / tan 5° = 342.90 m west of the touchdown, the loiter's radius and way round, so centred at
(150, −342.90). Latitude and longitude from the scene's origin (47.397742°, 8.545594°, 488 m) on WGS-84, by hand:
M = a(1 − e²)/w³ = 6,370,064.3 m and N = a/w = 6,389,735.4 m (w = √(1 − e² sin² φ)); a point n north, e east on the
tangent plane is at φ + n/(M + h) − θ² tan φ / 2 (θ = e/(N + h): the east offset leaves the parallel) and
λ + e/((N + h) cos φ − n sin φ). In degE7: 400 m north +35,975.39; 400 m east +52,983.28 in longitude and −1.22 in
latitude (±1 degE7 for what the first and second order leave out).
"""

from __future__ import annotations

import json
import math
import socket
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.core.errors import BuildError
from nexus.plant.assets import resolve_asset
from nexus.px4.params import px4_parameters
from nexus.px4.scripted_api import ScriptedApi
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.config import RunConfig
from nexus.runtime.flight import build_flight
from nexus.record.parts import read_record
from nexus.runtime.run import run_flight

VEHICLES = Path(__file__).resolve().parents[2] / "vehicles"
TICK_US = 4000
TIMES = {"upload_at_s": 0.5, "arm_delay_s": 0.2, "start_delay_s": 0.2}
OPTIONS = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0, "boot_patience": 0.5}
TAKEOFF, WAYPOINT, LOITER_TIME, LAND_START, LOITER_TO_ALT, LAND = 22, 16, 19, 189, 31, 21
ARM, MISSION_START = 400, 300
RELATIVE_ALT, MISSION_FRAME = 6, 2
ORIGIN = (473977420, 85455940)  # degE7


def layer(folder: Path, body: str, name: str = "plane.usda") -> Path:
    """aerosonde_px4.usda with ``body`` added to its root prim."""
    path = folder / name
    path.write_text(f'''#usda 1.0
(
    defaultPrim = "vehicle"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    upAxis = "Z"
    subLayers = [@{VEHICLES / "aerosonde_px4.usda"}@]
)

over "vehicle"
{{
{body}
}}
''')
    return path


HOLD_2S = '''    over "catapult"
    {
        float nexus:holdTime = 2
    }'''


def build(vehicle: Path | str, mission: dict | None = None, **fields):
    """The flight of ``vehicle`` under PX4 with ``mission`` (default: the shortened times); ``fields`` are further
    RunConfig fields (a fleet's ``vehicles``, ``spacing``)."""
    mission = {"url": "udpin:127.0.0.1:0", **TIMES} if mission is None else mission
    config = RunConfig(vehicle=str(vehicle), scene="empty", controller="px4",
                       controller_options={**OPTIONS, "mission": mission}, device="cpu", duration=3.0, **fields)
    return build_flight(config, "cpu")


def fly(flight, out: Path):
    """``flight`` for 3 s against the scripted PX4 (a fixed wing, zeros after a boot of three messages) and its toy
    API stream (landed and disarmed 0.6 s after the start): the summary, run.json and the toy."""
    px4 = flight.vehicle.controller
    toy = ScriptedApi(px4.commander.link.port, mission_s=0.6)
    peer = ScriptedPx4(px4.link.port, lambda n: None if n <= 3 else [0.0] * 16, api=toy, mav_type=1)
    with peer.running():
        summary = run_flight(replace(flight.options, device="cpu", duration=3.0), out, progress=False, flight=flight)
    return summary, json.loads((out / "run.json").read_text()), toy


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plane_mission")
    summary, info, toy = fly(build(layer(folder, HOLD_2S)), folder / "run")
    return summary, info["controller_stats"]["mission"], toy


def test_the_upload_holds_the_plane_mission_item_for_phase(flown):
    _, _, toy = flown
    assert toy.mission_count == 10
    assert [item[1] for item in toy.mission_items] == [TAKEOFF] + [WAYPOINT] * 4 + [LOITER_TIME, LAND_START,
                                                                                   LOITER_TO_ALT, WAYPOINT, LAND]
    assert [item[2] for item in toy.mission_items] == [RELATIVE_ALT] * 6 + [MISSION_FRAME] + [RELATIVE_ALT] * 3
    assert [item[9] for item in toy.mission_items] == [10.0] + [100.0] * 5 + [0.0, 30.0, 30.0, 0.0]  # heights [m]
    # (seq, command, frame, param1, param2, param3, param4, x, y, z): the loiter's 60 s anticlockwise on 150 m, the
    # approach circle's radius and way round, each waypoint's acceptance radius 60 m.
    loiter, land_start, approach = toy.mission_items[5], toy.mission_items[6], toy.mission_items[7]
    assert (loiter[3], loiter[5]) == (60.0, -150.0)
    assert (land_start[7], land_start[8]) == (0, 0)
    assert approach[4] == -150.0
    assert all(item[4] == 60.0 for item in toy.mission_items[1:5] + toy.mission_items[8:9])


@pytest.mark.parametrize("seq, where", [
    (0, ORIGIN),  # the takeoff at the launch point
    (1, (473977419, 85508923)),  # (0, 400): +52,983.28 east, −1.22 in latitude
    (2, (474013394, 85508927)),  # (400, 400): +35,975.39 − 1.22; +52,983.28 · (1 + 400 tan φ / (N + h)) = +52,986.9
    (3, (474013395, 85455940)),  # (400, 0)
    (4, ORIGIN),  # (0, 0)
    (5, (473995407, 85482433)),  # the loiter (200, 200): +17,987.70 − 0.30; +26,491.64 · (1 + 200 tan φ / (N + h))
    (7, (473990910, 85410519)),  # the approach circle (150, −342.90): +13,490.77 − 0.90; −45,420.13 − 1.16
    (8, (473977419, 85410520)),  # the glide slope's entry (0, −342.90): −45,420.13 east, −0.90 in latitude
    (9, ORIGIN),  # the touchdown
])
def test_each_item_s_latitude_and_longitude_is_its_point_from_the_origin(flown, seq, where):
    item = flown[2].mission_items[seq]
    assert item[0] == seq
    assert abs(item[7] - where[0]) <= 1 and abs(item[8] - where[1]) <= 1


def test_upload_arm_and_start_go_on_their_ticks_while_px4_s_clock_stands_still(flown):
    _, mission, toy = flown
    commands = mission["commands"]
    assert [c["tick"] for c in commands] == [125, 175, 225]
    assert [c["result"] for c in commands] == [0, 0, 0]
    assert toy.mission_upload_clock == 124 * TICK_US
    assert [(c, clock) for c, clock, _ in toy.commands] == [(ARM, 174 * TICK_US), (MISSION_START, 224 * TICK_US)]
    assert mission["late_commands"] == 0 and mission["clock_mismatches"] == 0


def test_the_run_ends_on_the_tick_px4_disarms_after_its_landing(flown):
    summary, mission, _ = flown
    assert summary.exit_reason == "done"
    assert summary.ticks == 374
    assert mission["landed_disarmed"] is True


SLOW_CATAPULT = '''    over "catapult"
    {
        float nexus:holdTime = 2
        float nexus:launchSpeed = 2
    }'''


def test_a_plane_still_rolling_at_px4_s_disarm_flies_on_to_its_stop(tmp_path):
    """The catapult lets go at 2 m/s (2.05 s); the toy PX4 disarms 1.4 s after the start (2.3 s), the plane rolling
    on its wheels with the throttle off: the run goes on until its ground speed is under 0.1 m/s."""
    flight = build(layer(tmp_path, SLOW_CATAPULT))
    px4 = flight.vehicle.controller
    toy = ScriptedApi(px4.commander.link.port, mission_s=1.4)
    peer = ScriptedPx4(px4.link.port, lambda n: None if n <= 3 else [0.0] * 16, api=toy, mav_type=1)
    with peer.running():
        summary = run_flight(replace(flight.options, device="cpu", duration=10.0), tmp_path / "run", progress=False,
                             flight=flight)
    mission = json.loads((tmp_path / "run" / "run.json").read_text())["controller_stats"]["mission"]
    record = read_record(tmp_path / "run" / "record.parquet").to_pandas()
    t = record.time.to_numpy()
    speed = np.hypot(record["body/base.velocity[0]"], record["body/base.velocity[1]"]).to_numpy()
    assert summary.exit_reason == "done" and mission["landed_disarmed"] is True
    disarm = 2.3  # [s]: the start at 0.9 s (TIMES) and the toy's 1.4 s
    rolling = speed[np.searchsorted(t, disarm)]
    assert 1.5 < rolling < 2.0  # let go at 2 m/s (about 2.05 s), then slowing
    # It ends on the first tick under 0.1 m/s as HIL_STATE_QUATERNION's whole cm/s give it (within a tick of the
    # float speed's), the wheels' friction alone (μ = 0.05) stopping it from v in (v − 0.1)/(μ·g) s at the most.
    assert speed[-1] < 0.1 and speed[-2] > 0.09
    # Flown: 1.93 m/s at the disarm, stopped 3.72 s later (friction alone: 3.73 s; the drag at 2 m/s is small).
    most = (rolling - 0.1) / (0.05 * 9.80665)
    assert 0.8 * most < mission["rolled_to_stop_s"] < 1.05 * most
    assert abs(t[-1] - (disarm + mission["rolled_to_stop_s"])) < 0.01


def test_the_plane_s_px4_parameters_fly_the_mission_s_landing_and_launch():
    config = RunConfig(vehicle="aerosonde_px4", scene="empty", controller="px4", device="cpu", duration=0.1)
    plant = build_flight(config, "cpu").vehicle.plant
    params = px4_parameters(plant)
    # The default mission's glide slope 5° and approach airspeed 18 m/s; its acceptance radius 60 m; the catapult's
    # push is a launch PX4 detects; no runway takeoff, no data-link-loss action (it needs a ground station to arm).
    assert (params["FW_LND_ANG"], params["FW_LND_AIRSPD"], params["NAV_ACC_RAD"]) == (5.0, 18.0, 60.0)
    assert (params["FW_LAUN_DETCN_ON"], params["RWTO_TKOFF"], params["NAV_DLL_ACT"]) == (1, 0, 0)
    assert params["ASPD_FALLBACK"] == 0  # the file's gains prim asks no fallback: PX4's default
    # PX4's mission check: the tangent from the approach circle to the touchdown, √(d² − r²) = 342.90 m, under 30 m:
    # atan(30 / 342.90) = 5.000°, within FW_LND_ANG + 0.1°.
    assert math.degrees(math.atan(30.0 / math.sqrt(150.0**2 + 342.9016**2 - 150.0**2))) < 5.0 + 0.1


def test_a_plane_that_flies_the_estimated_wind_without_its_pitot_asks_px4_for_the_same(tmp_path):
    vehicle = tmp_path / "aerosonde_px4_fallback.usda"
    vehicle.write_text('#usda 1.0\n(\n    defaultPrim = "vehicle"\n    kilogramsPerUnit = 1\n    metersPerUnit = 1\n'
                       '    upAxis = "Z"\n)\n\ndef Xform "vehicle" (\n    prepend references = '
                       f'@{resolve_asset("vehicle", "aerosonde_px4")}@\n)\n{{\n    def Scope "fixed_wing" (\n'
                       '        prepend apiSchemas = ["NexusFixedWingGainsAPI"]\n    )\n    {\n'
                       '        bool nexus:airspeedFallback = 1\n    }\n}\n')
    with socket.socket() as probe:  # a free port: the link listens on it while the flight is built
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = RunConfig(vehicle=str(vehicle), scene="empty", controller="px4", device="cpu", duration=0.1,
                       controller_options={"port": port})
    assert px4_parameters(build_flight(config, "cpu").vehicle.plant)["ASPD_FALLBACK"] == 1


def one_line(error) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


def test_a_plane_mission_with_no_waypoints_is_refused_in_one_line(tmp_path):
    vehicle = layer(tmp_path, HOLD_2S + '''
    def Scope "mission" (
        prepend apiSchemas = ["NexusPlaneMissionAPI"]
    )
    {
        float2[] nexus:waypoints = []
    }''')
    with pytest.raises(BuildError) as error:
        build(vehicle)
    assert "/vehicle/mission: nexus:waypoints is empty" in one_line(error)


def test_a_plane_mission_without_a_landing_is_refused_in_one_line(tmp_path):
    vehicle = layer(tmp_path, HOLD_2S + '''
    def Scope "mission" (
        prepend apiSchemas = ["NexusPlaneMissionAPI"]
    )
    {
        bool nexus:land = 0
    }''')
    with pytest.raises(BuildError) as error:
        build(vehicle)
    message = one_line(error)
    assert "/vehicle/mission" in message and "nexus:land is false" in message and "set nexus:land = true" in message


def test_a_catapult_that_pushes_before_px4_s_mission_starts_is_refused_in_one_line(tmp_path):
    # Default times: the start at 6 + 1 + 1 = 8 s; the push must come 1 s after it, at 9 s or later.
    vehicle = layer(tmp_path, HOLD_2S.replace("= 2", "= 8.5"))
    with pytest.raises(BuildError) as error:
        build(vehicle, {"url": "udpin:127.0.0.1:0"})
    message = one_line(error)
    assert str(vehicle) in message and "/vehicle/catapult" in message and "nexus:holdTime 8.5 s" in message
    assert "9 s or more" in message


def test_the_px4_mission_on_a_plane_released_in_the_air_is_refused_in_one_line(tmp_path):
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "run"),
                                       "--vehicle", "aerosonde", "--controller", "px4", "--px4-mission",
                                       "--duration", "1"])
    assert result.exit_code != 0
    line = [text for text in result.output.splitlines() if "--px4-mission" in text]
    assert len(line) == 1 and "aerosonde.usda" in line[0] and "starts in the air" in line[0], result.output
    assert "aerosonde_px4" in line[0]


def test_a_scenario_s_steps_on_a_plane_are_refused_in_one_line(tmp_path):
    vehicle = layer(tmp_path, HOLD_2S)
    steps = [{"action": "takeoff", "altitude": 10.0}]
    with pytest.raises(BuildError) as error:
        build(vehicle, {"url": "udpin:127.0.0.1:0", **TIMES, "steps": steps})
    message = one_line(error)
    assert "[[step]]s" in message and "plane" in message and "drop the steps" in message
