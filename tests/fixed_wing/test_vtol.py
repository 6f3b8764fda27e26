"""``nexus run --vehicle standard_vtol``: a standard VTOL takes off on its rotors, goes over to its wing, flies its
route, comes back to its rotors and lands where it took off; bit for bit, eager or captured, alone or in N worlds.

The vehicle (vehicles/standard_vtol.usda): the Aerosonde's airframe, wing, pusher and surfaces plus 1.2 kg of booms and
four lift rotors of 0.2 kg: 13.0 kg. The default VTOL mission (docs/fixed_wing.md, "A standard VTOL"): up to 20 m
over the origin, nose east towards the first waypoint; the front transition until the pitot reads 16 m/s; the wing
through (0, 400), (400, 400), (400, 0) (north, east [m]; acceptance 60 m) at 40 m and 25 m/s, then towards the
landing point (the origin); the back transition 250 m before it; the rotors alone below 12 m/s, back over the
origin; down at 0.7 m/s.

Hover by hand: 13.0 · 9.80665 = 127.486 N, 31.872 N a rotor; kT = 2.26e-4 N/(rad/s)², so ω = √(31.872 / 2.26e-4)
= 375.53 rad/s; the ESCs' 560 rad/s at full command makes that a thrust fraction (375.53 / 560)² = 0.44970.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.control import registry
from nexus.plant.assets import resolve_asset
from nexus.runtime.assembly import vehicle_kind
from nexus.plant.usd_files import open_stage
from tests.worlds.flights import bits_differ, fly

TAKEOFF, FRONT, WING, BACK, RETURN, LAND, LANDED = range(7)
HOVER_FRACTION = 0.44970  # above
WAYPOINTS = [(0.0, 400.0), (400.0, 400.0), (400.0, 0.0)]  # [m]
TAKEOFF_HEIGHT, HEIGHT, AIRSPEED = 20.0, 40.0, 25.0  # [m], [m], [m/s]
TRANSITION, BLEND = 16.0, 12.0  # [m/s]
DT = 0.004  # [s]


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    return fly(tmp_path_factory.mktemp("vtol") / "one", "--vehicle", "standard_vtol")


def series(flight):
    r = flight.record
    height = -r["estimate.position[2]"].to_numpy()
    north, east = r["estimate.position[0]"].to_numpy(), r["estimate.position[1]"].to_numpy()
    controls = np.stack([r[f"controls[{i}]"].to_numpy() for i in range(8)], axis=1)
    return r.time.to_numpy(), r.vtol_phase.to_numpy(), north, east, height, controls


def thrust_fraction(command):
    return 0.5 * command + 0.5 * command * command  # the ESCs' thrust model factor 0.5


def test_a_wing_with_lift_rotors_is_a_vtol_and_flies_the_vtol_controller_by_default(flown):
    assert vehicle_kind(open_stage(resolve_asset("vehicle", "standard_vtol"))) == "vtol"
    assert vehicle_kind(open_stage(resolve_asset("vehicle", "aerosonde"))) == "plane"
    assert vehicle_kind(open_stage(resolve_asset("vehicle", "astro_max_base"))) == "multirotor"
    assert registry.DEFAULT_FOR_KIND["vtol"] == "vtol"
    assert flown.info["options"]["controller"] == "vtol"
    assert "-> vtol_mission -> vtol -> record" in flown.info["stage_plan"]


def test_every_phase_in_order_and_the_run_ends_done_on_the_ground_where_it_took_off(flown):
    time, phase, north, east, height, _ = series(flown)
    assert flown.info["exit_reason"] == "done"
    assert (np.diff(phase) >= 0).all()
    assert sorted(set(phase.tolist())) == [TAKEOFF, FRONT, WING, BACK, RETURN, LAND, LANDED]
    # Measured 2026-12-08 (docs/fixed_wing.md): the phases begin at 7.42, 10.34, 64.02, 72.88, 89.52 s; done at 146.95.
    assert 100.0 < flown.info["sim_time_s"] < 200.0
    assert abs(north[-1]) < 0.5 and abs(east[-1]) < 0.5 and abs(height[-1]) < 0.05


def test_the_descent_is_the_hand_worked_hover_and_the_take_off_flies_on_the_rotors_alone(flown):
    time, phase, north, east, height, controls = series(flown)
    # Down at 0.7 m/s, steady between 30 m and 2 m: thrust is the weight (less 0.3 % of drag on the wing flying
    # broadside, 0.5 · 1.27 · 0.7² · 0.55 · about 1.2 = 0.2 N).
    descent = (phase == LAND) & (height < 30.0) & (height > 2.0)
    sink = -flown.record["estimate.velocity[2]"].to_numpy()[descent]
    assert sink.mean() == pytest.approx(-0.7, abs=0.01)
    assert thrust_fraction(controls[descent, :4]).mean() == pytest.approx(HOVER_FRACTION, rel=0.01)
    rotors_only = (phase == TAKEOFF) | (phase >= RETURN)
    assert np.abs(controls[rotors_only, 4:8]).max() == 0.0  # no pusher, surfaces centred
    assert (flown.record.vtol_blend.to_numpy()[rotors_only] == 1.0).all()


def test_the_front_transition_reaches_its_airspeed_holding_height_on_full_pusher(flown):
    time, phase, north, east, height, controls = series(flown)
    front = phase == FRONT
    airspeed = flown.record.plane_airspeed.to_numpy()
    assert 0.5 < front.sum() * DT < 15.0  # under the 15 s timeout (measured 2.92 s)
    assert (controls[front, 4] == 1.0).all()
    assert np.abs(height[front] - TAKEOFF_HEIGHT).max() < 1.5  # measured 19.59 to 20.04 m
    first_wing = np.argmax(phase == WING)
    assert airspeed[first_wing] >= TRANSITION and airspeed[first_wing - 1] < TRANSITION
    # The rotors' share falls from 1 at 12 m/s to 0 at 16 m/s: linear in between.
    blend = flown.record.vtol_blend.to_numpy()
    between = front & (airspeed > BLEND) & (airspeed < TRANSITION)
    assert between.any()
    np.testing.assert_allclose(blend[between], 1.0 - (airspeed[between] - BLEND) / (TRANSITION - BLEND), atol=1e-5)
    assert (blend[front & (airspeed <= BLEND)] == 1.0).all()


def test_on_the_wing_the_rotors_stop_and_the_route_is_flown_at_its_height_and_speed(flown):
    time, phase, north, east, height, controls = series(flown)
    wing = phase == WING
    assert np.abs(controls[wing, :4]).max() == 0.0
    assert (flown.record.vtol_blend.to_numpy()[wing] == 0.0).all()
    cruise = wing & (time > time[np.argmax(wing)] + 20.0)  # after the climb from 20 m to 40 m
    airspeed = flown.record.plane_airspeed.to_numpy()[cruise]
    assert airspeed.min() > AIRSPEED - 2.0 and airspeed.max() < AIRSPEED + 1.0  # measured 23.37 to 24.70 m/s
    assert np.abs(height[cruise] - HEIGHT).max() < 2.0  # measured 39.18 to 40.29 m
    for point in WAYPOINTS:  # each within its 60 m acceptance (measured 18.9 to 19.0 m)
        assert np.hypot(north - point[0], east - point[1]).min() < 60.0


def test_the_back_transition_slows_on_the_wing_with_the_pusher_off_and_hands_over_below_the_blend_speed(flown):
    time, phase, north, east, height, controls = series(flown)
    back = phase == BACK
    airspeed = flown.record.plane_airspeed.to_numpy()
    began = np.argmax(back)
    assert np.hypot(north[began], east[began]) < 250.0 <= np.hypot(north[began - 1], east[began - 1])
    assert (controls[back, 4] == 0.0).all()
    assert np.abs(height[back] - height[began]).max() < 5.0  # measured 37.52 to 40.32 m from 40.24 m
    handed = np.argmax(phase == RETURN)
    assert airspeed[handed] < BLEND <= airspeed[handed - 1]
    # Back on the rotors it flies to the landing point (measured 85 m away) and holds its height within 3 m.
    hold = phase == RETURN
    assert np.abs(height[hold] - height[handed]).max() < 3.0


def test_the_landing_touches_down_at_the_landing_speed_level_and_switches_the_motors_off(flown):
    time, phase, north, east, height, controls = series(flown)
    landing = np.flatnonzero(phase == LAND)
    touchdown = landing[np.argmax(height[landing] < 0.15)]
    sink = flown.record["estimate.velocity[2]"].to_numpy()[touchdown - 10:touchdown]
    assert 0.5 < sink.mean() < 0.8  # the 0.7 m/s of the descent (MPC_LAND_SPEED), no flare
    assert np.hypot(north[touchdown], east[touchdown]) < 0.5
    assert phase[-1] == LANDED and np.abs(controls[-1]).max() == 0.0


@pytest.fixture(scope="module")
def again_and_in_worlds(tmp_path_factory):
    root = tmp_path_factory.mktemp("vtol_bits")
    return (fly(root / "again", "--vehicle", "standard_vtol"),
            fly(root / "worlds", "--vehicle", "standard_vtol", "--worlds", "2"))


def test_the_flight_repeats_bit_for_bit_and_is_world_0_of_two(flown, again_and_in_worlds):
    again, worlds = again_and_in_worlds
    assert bits_differ(flown.record, again.record) == []
    assert worlds.info["exit_reason"] == "done"
    world = worlds.world(0)
    assert bits_differ(flown.record, world[flown.record.columns]) == []


def test_eager_launches_fly_the_captured_graphs_bits(tmp_path, flown):
    # Through the take-off and into the front transition (eager runs launch each stage from Python: slow).
    eager = fly(tmp_path / "eager", "--vehicle", "standard_vtol", "--eager", "--duration", "8")
    assert eager.info["mode"] != flown.info["mode"]
    assert FRONT in set(eager.record.vtol_phase.tolist())
    assert bits_differ(flown.record.iloc[:len(eager.record)].reset_index(drop=True), eager.record) == []


MISSION = """#usda 1.0
(
    defaultPrim = "vehicle"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    upAxis = "Z"
)

def Xform "vehicle" (
    prepend references = @{vtol}@
)
{{
    def Scope "mission" (
        prepend apiSchemas = ["NexusVtolMissionAPI"]
    )
    {{
{attributes}
    }}
}}
"""


def with_mission(tmp_path, **attributes) -> str:
    lines = "\n".join(f"        {kind} nexus:{name} = {value}" for name, (kind, value) in attributes.items())
    path = tmp_path / "vtol.usda"
    path.write_text(MISSION.format(vtol=resolve_asset("vehicle", "standard_vtol"), attributes=lines))
    return str(path)


def test_a_front_transition_that_cannot_reach_its_airspeed_is_abandoned_after_its_timeout_and_lands(tmp_path):
    # 60 m/s is past anything the pusher gives; VT_TRANS_TIMEOUT 6 s: back to the rotors, home, down from 10 m.
    vehicle = with_mission(tmp_path, transitionAirspeed=("float", 60), blendAirspeed=("float", 12),
                           transitionTimeout=("float", 6), takeoffHeight=("float", 10))
    flight = fly(tmp_path / "run", "--vehicle", vehicle)
    time, phase, north, east, height, controls = series(flight)
    assert flight.info["exit_reason"] == "done"
    assert WING not in set(phase.tolist())
    front, back = np.argmax(phase == FRONT), np.argmax(phase == BACK)
    assert (back - front) * DT == pytest.approx(6.0, abs=2 * DT)
    assert abs(north[-1]) < 0.5 and abs(east[-1]) < 0.5 and abs(height[-1]) < 0.05


def test_a_blend_speed_not_below_the_transition_speed_is_one_line_naming_the_prim(tmp_path):
    vehicle = with_mission(tmp_path, transitionAirspeed=("float", 14), blendAirspeed=("float", 14))
    result = CliRunner().invoke(main, ["run", "--vehicle", vehicle, "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code != 0
    assert "/vehicle/mission: nexus:blendAirspeed (14.0 m/s) must be below nexus:transitionAirspeed (14.0 m/s)" in result.output
    assert "nothing flew" in result.output


def test_surfaces_on_the_lift_rotors_outputs_are_refused_naming_the_outputs(tmp_path):
    path = tmp_path / "overlap.usda"
    path.write_text(MISSION.format(vtol=resolve_asset("vehicle", "standard_vtol"), attributes="").replace(
        '    def Scope "mission" (\n        prepend apiSchemas = ["NexusVtolMissionAPI"]\n    )\n    {\n\n    }\n',
        '    over "body"\n    {\n        over "base"\n        {\n            over "Aileron"\n            {\n'
        '                int nexus:channel = 2\n            }\n        }\n    }\n'))
    result = CliRunner().invoke(main, ["run", "--vehicle", str(path), "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code != 0
    assert "the wing's outputs [2, 6, 7, 4] (aileron, elevator, rudder, pusher) overlap the lift rotors' 0 to 3" in result.output


def test_nexus_plot_draws_the_vtol_by_its_phases_beside_its_rotors(flown, tmp_path):
    from nexus.viz.report import write_report

    report = write_report(flown.out, out=tmp_path)
    assert {"motors", "plane", "track"} <= set(report.figures)  # the rotors keep their figure
    html = (tmp_path / "report.html").read_text()
    assert "Airspeed, height, surfaces and throttle by phase" in html and "Track from above by phase" in html


GPS_DENIED_FROM_THE_START = """
name = "{name}"
vehicle = "{vehicle}"
duration = 8.0
{fault}
[[check]]
measure = "speed"
max = 0.2
"""


def test_on_the_ekf_the_take_off_waits_for_the_estimator_s_origin(tmp_path):
    # vehicles/standard_vtol_ekf.usda: the take-off waits for the filter's READY and HORIZONTAL_VALID. With its GPS
    # denied from the first tick the filter never places its origin: the rotors never start and the vehicle does not
    # move (speed under 0.2 m/s for 8 s). The same file with its GPS is up and climbing (3 m/s) within the 8 s.
    from nexus.core.warp_setup import init_warp
    from nexus.scenario.runner import ScenarioOptions, judge, prepare
    from nexus.sweep.task import fly_point

    init_warp(False)
    paths = []
    for name, fault in (("denied", '[[fault]]\nkind = "gps_denied"\nat = 0.0\n'), ("with_gps", "")):
        path = tmp_path / f"{name}.toml"
        path.write_text(GPS_DENIED_FROM_THE_START.format(name=name, vehicle=resolve_asset("vehicle", "standard_vtol_ekf"),
                                                         fault=fault))
        paths.append(path)
    cases, points = prepare(paths, ScenarioOptions(out=tmp_path / "out"))
    for point, case in zip(points, cases):
        fly_point(point.as_dict(), str(tmp_path / point.id))
        judge(case, tmp_path / point.id)
    assert [c.verdict for c in cases] == ["passed", "failed"]
    record = pd.read_parquet(tmp_path / points[0].id / "record.parquet")
    assert np.abs(np.stack([record[f"controls[{i}]"].to_numpy() for i in range(4)])).max() == 0.0
    assert (record.vtol_phase.to_numpy() == TAKEOFF).all()


def test_on_the_ekf_the_mission_is_flown_and_lands_near_its_start(tmp_path):
    # vehicles/standard_vtol_ekf.usda: the same mission on the EKF (GPS, barometer, magnetometer, the pitot's airspeed
    # with wind states above 10 m/s, a rangefinder below 14 m). The GPS's drift (0.3 m settled 1 sigma an axis) is the
    # estimate's error: measured 2026-12-08, at most 0.63 m horizontally and 0.53 m vertically in the air, and the
    # vehicle came down 0.58 m from where it took off. Bounds 1.5 m (3.5 sigma of the drift's horizontal length).
    flight = fly(tmp_path / "ekf", "--vehicle", "standard_vtol_ekf")
    assert flight.info["exit_reason"] == "done" and "ekf_estimate" in flight.info["stage_plan"]
    r = flight.record
    phase = r.vtol_phase.to_numpy()
    assert sorted(set(phase.tolist())) == [TAKEOFF, FRONT, WING, BACK, RETURN, LAND, LANDED]
    enu = np.stack([r[f"body/base.pose[{i}]"].to_numpy() for i in range(3)], axis=1).astype(np.float64)
    enu -= enu[0]
    estimate = np.stack([r[f"estimate.position[{i}]"].to_numpy() for i in range(3)], axis=1).astype(np.float64)
    error = estimate - np.stack([enu[:, 1], enu[:, 0], -enu[:, 2]], axis=1)  # NED from ENU
    air = phase >= FRONT
    assert np.hypot(error[air, 0], error[air, 1]).max() < 1.5
    assert np.abs(error[air, 2]).max() < 1.5
    assert np.hypot(enu[-1, 0], enu[-1, 1]) < 1.5


def test_a_scenario_measures_the_vtol_by_its_own_phases_and_legs(flown):
    # nexus.worlds.plane_record on a VTOL's record: the cross-track from its legs (leg 0 from where the front
    # transition began, then waypoint to waypoint, then towards the landing point), the stall margin on the wing only
    # (its stall speed: the Aerosonde's 10.39 m/s at 11 kg times √(13/11) = 11.295 m/s), the touchdown at its landed
    # phase. Flown: 0.85 m off leg 1 from 10 s after its turn, margin at least 1.446 (the transition's 16.3 m/s).
    import pyarrow as pa

    from nexus.worlds.plane_record import PlaneRecord

    r = flown.record
    table = pa.Table.from_pandas(r, preserve_index=False)
    enu = np.stack([r[f"body/base.pose[{i}]"].to_numpy() for i in range(3)], axis=1).astype(np.float64)
    enu -= np.asarray(flown.info["ned_origin_enu_m"])
    record = PlaneRecord(np.stack([enu[:, 1], enu[:, 0], -enu[:, 2]], axis=1), table, flown.info)
    assert record.vtol and record.stall_speed() == pytest.approx(11.295, abs=0.005)
    time, phase = r.time.to_numpy(), r.vtol_phase.to_numpy()
    cross = record.series("cross_track")
    assert np.isnan(cross[(phase != WING) & (phase != BACK)]).all()
    straight = (time >= 34.0) & (time <= 40.0)  # leg 1, (0, 400) to (400, 400), 10 s after its turn at 24.3 s
    assert (r.vtol_leg.to_numpy()[straight] == 1).all()
    # By hand on leg 1: the line east = 400 m, so the cross-track is |east − 400|.
    np.testing.assert_allclose(cross[straight], np.abs(enu[straight, 0] - 400.0), atol=1e-6)
    assert cross[straight].max() < 1.5
    margin = record.series("stall_margin")
    assert np.isnan(margin[phase != WING]).all() and np.nanmin(margin) > 1.3
    rows = np.arange(len(time))
    assert len(record.in_phases(rows, ["fixed-wing"])) == int((phase == WING).sum())
    assert len(record.in_phases(rows, ["route"])) == 0  # a plane's phase names no VTOL row
    assert record.touchdown_row() == int(np.argmax(phase == LANDED)) and record.touchdown_point() < 0.5


def test_a_sweep_row_gets_the_vtol_s_plane_columns(flown):
    # nexus.sweep.figures.plane_figures on the VTOL's run: the slowest airspeed on the wing is where the transition
    # handed over (the pitot's 16 m/s; the truth's 16.32), the stall margin that over 11.295 m/s, the touchdown at the
    # descent's 0.7 m/s on the landing point. The largest cross-track is a leg's start right after a turn: a leg
    # switches within its 60 m acceptance of the waypoint, so at most about 60 m off the new line.
    from nexus.sweep.figures import plane_figures

    row = plane_figures(flown.out, flown.info)
    assert 16.0 <= row["min_airspeed"] < 17.0
    assert row["min_stall_margin"] == pytest.approx(row["min_airspeed"] / 11.295, rel=1e-3)
    assert row["touchdown_sink"] == pytest.approx(0.7, abs=0.05) and row["touchdown_point"] < 0.5
    assert 0.0 < row["max_cross_track"] < 61.0
