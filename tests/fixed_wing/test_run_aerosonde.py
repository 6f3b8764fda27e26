"""``nexus run --vehicle aerosonde`` flies the plane's default mission from its air start and ends ``done``.

As a user types it (``tests/worlds/flights.py``'s ``fly``: the CLI in this process, the default scene, CPU,
250 Hz): the registry gives a plane the ``fixed_wing`` controller, the file's ``NexusAirStartAPI`` puts it
100 m up at 25 m/s east, trimmed, and the default plane mission flies the 400 m square from the NED origin
(waypoints, north-east [m]: (0, 400), (400, 400), (400, 0), (0, 0); acceptance 60 m) at 100 m and 25 m/s, then
loiters 60 s on 150 m about (200, 200) and ends the run. Figures measured 2026-12-06: docs/fixed_wing.md,
"nexus run --vehicle aerosonde".
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.plant.assets import resolve_asset
from tests.worlds.flights import bits_differ, fly

WAYPOINTS = [(0.0, 0.0), (0.0, 400.0), (400.0, 400.0), (400.0, 0.0), (0.0, 0.0)]  # the origin, then the square
ACCEPTANCE = 60.0  # [m]
AIRSPEED, HEIGHT = 25.0, 100.0  # [m/s], [m]
LOITER_TIME = 60.0  # [s]
DT = 0.004  # [s]
L1, ZETA = 60.0, 1.0 / math.sqrt(2.0)  # the stack's L1 distance [m] and its damping on a line (docs/fixed_wing.md)


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    return fly(tmp_path_factory.mktemp("aerosonde") / "one", "--vehicle", "aerosonde", "--duration", "200")


def columns(flight):
    r = flight.record
    north, east = r["estimate.position[0]"].to_numpy(), r["estimate.position[1]"].to_numpy()
    height = -r["estimate.position[2]"].to_numpy()
    speed = np.sqrt(sum(r[f"estimate.velocity[{i}]"].to_numpy() ** 2 for i in range(3)))
    return r.time.to_numpy(), north, east, height, speed, r.plane_leg.to_numpy()


def test_the_run_flies_the_plane_s_stack_and_ends_done_after_the_loiter(flown):
    assert flown.info["exit_reason"] == "done"
    t, *_, leg = columns(flown)
    # Leg 0 runs east along the start's own line: it ends 60 m short of (0, 400), after (400 − 60)/25 = 13.6 s.
    first_switch = t[np.argmax(leg == 1)]
    assert abs(first_switch - (400.0 - ACCEPTANCE) / AIRSPEED) <= 2 * DT
    # Every leg flown in order, then the loiter (leg 4) for 60 s, which ends the run on its last tick.
    assert sorted(set(leg.tolist())) == [0, 1, 2, 3, 4]
    assert np.all(np.diff(leg) >= 0)
    loiter_start = t[np.argmax(leg == 4)]
    assert abs(t[-1] - (loiter_start + LOITER_TIME)) <= 2 * DT
    # Four 400 m sides less the corners cut and the loiter: done well inside the 200 s asked for.
    assert 100.0 < t[-1] < 140.0


def test_the_first_tick_flies_from_the_trim_100_m_up_at_25_m_s(flown):
    # docs/fixed_wing.md's trim at 25 m/s, the book's root solve (g 9.81): α 2.87092°, δe −7.16447°, δt 0.676776;
    # the scene's g is 9.80665 (0.04 % less weight: α and δe move by under 0.01°).
    first = flown.record.iloc[0]
    assert abs(first["body/base.pose[2]"] - 100.0) < 1e-3 and abs(first["body/base.velocity[0]"] - 25.0) < 1e-2
    pitch = math.degrees(-2.0 * math.asin(first["body/base.pose[4]"]))  # a nose-up turn about FLU +y is negative
    assert abs(pitch - 2.87092) < 0.01
    assert abs(math.degrees(first["surface/elevator"]) - (-7.16447)) < 0.02  # at trim, not moving toward it
    assert abs(first["controls[4]"] - 0.676776) < 1e-3  # the throttle, on the propeller's channel 4
    assert abs(first["controls[1]"] - math.radians(-7.16447) / 0.5236) < 1e-3  # elevator servo: δe / travel


def test_each_leg_is_tracked_after_its_turn(flown):
    t, north, east, *_, leg = columns(flown)
    # A leg begins 60 m (the acceptance radius) off the new line, abeam the corner. Linearised, L1 closes the gap as
    # a second-order system with ω = √2·V/L1 = 0.589 rad/s and ζ = 1/√2, whose envelope is 60·e^(−ζωt):
    # 0.93 m after 10 s. Bound: 2 m from 10 s after the switch (the turn is not linear: the bank saturates at 45°).
    omega = math.sqrt(2.0) * AIRSPEED / L1
    assert 60.0 * math.exp(-ZETA * omega * 10.0) < 1.0
    for k in range(4):
        a, b = np.array(WAYPOINTS[k]), np.array(WAYPOINTS[k + 1])
        along = (b - a) / np.linalg.norm(b - a)
        on = leg == k
        offset = np.stack([north[on], east[on]], 1) - a
        cross = offset[:, 0] * along[1] - offset[:, 1] * along[0]
        settled = t[on] >= t[on][0] + 10.0
        assert np.max(np.abs(cross)) <= ACCEPTANCE + 1.0, k
        if settled.any():
            assert np.max(np.abs(cross[settled])) < 2.0, (k, np.max(np.abs(cross[settled])))
    # The loiter: on the 150 m circle within 2 m from 20 s after it began.
    on = leg == 4
    radius = np.hypot(north[on] - 200.0, east[on] - 200.0)
    assert np.max(np.abs(radius[t[on] >= t[on][0] + 20.0] - 150.0)) < 2.0


def test_airspeed_and_height_hold_through_the_turns(flown):
    _, _, _, height, speed, _ = columns(flown)
    # Still air: the airspeed is the ground speed. TECS holds both through each 45°-bank turn.
    assert np.max(np.abs(speed - AIRSPEED)) < 2.0
    assert np.max(np.abs(height - HEIGHT)) < 5.0


def test_world_i_of_n_is_the_world_flown_alone_bit_for_bit(tmp_path):
    # Three worlds (no variation: a plane cannot draw one yet, docs/fixed_wing.md), each placed at its air start
    # by the start-up; world 2 flown alone (--world-of) flies the same bits, and so does world 0.
    batch = fly(tmp_path / "n3", "--vehicle", "aerosonde", "--duration", "20", "--worlds", "3")
    alone = fly(tmp_path / "alone2", "--world-of", f"{batch.out}:2")
    assert bits_differ(batch.world(2), alone.world(0)) == []
    # Worlds 0 and 2 fly the same bits; only the sensors' samples differ (each world draws its own noise), and
    # nothing flies on them (the plane flies on the truth).
    sensors = ("imu.", "mag.", "baro.", "gps.", "airspeed.")
    assert [c for c in bits_differ(batch.world(0), batch.world(2)) if not c.startswith(sensors)] == []
    # It flew: 20 s east along leg 0 and into leg 1's turn ((400 − 60)/25 = 13.6 s), 100 m up.
    world = batch.world(2)
    assert world.plane_leg.iloc[-1] == 1
    assert abs(-world["estimate.position[2]"].iloc[-1] - HEIGHT) < 5.0


def test_plan_prints_the_plane_s_ring():
    result = CliRunner().invoke(main, ["plan", "--vehicle", "aerosonde", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "surface -> surface -> surface -> aero -> propulsion -> step" in result.output
    assert "truth_estimate -> plane_mission -> fixed_wing" in result.output


def test_a_multirotor_controller_on_the_plane_and_the_plane_s_on_a_quad_are_refused_in_one_line(tmp_path):
    plane = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "a"),
                                      "--vehicle", "aerosonde", "--controller", "mpc", "--duration", "1"])
    assert plane.exit_code != 0
    line = [text for text in plane.output.splitlines() if "--controller mpc" in text]
    assert len(line) == 1 and "aerosonde.usda" in line[0], plane.output
    assert "this vehicle is a plane; choose one of px4, hold, fixed_wing" in line[0]
    quad = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "b"),
                                     "--vehicle", "x500", "--controller", "fixed_wing", "--duration", "1"])
    assert quad.exit_code != 0
    line = [text for text in quad.output.splitlines() if "--controller fixed_wing" in text]
    assert len(line) == 1 and "x500.usda" in line[0] and "this vehicle is a multirotor" in line[0], quad.output


def test_a_run_that_names_no_controller_says_fixed_wing_and_flies_its_mission_to_done(tmp_path):
    # No --controller and no --duration: the plane's controller and its default length (150 s), which the default
    # mission ends itself at 119.68 s (the square's 4 legs, then 60 s of loiter).
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--out", str(tmp_path / "run"),
                                       "--vehicle", "aerosonde"])
    assert result.exit_code == 0, result.output
    assert "controller fixed_wing" in result.output and "ended by done" in result.output
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["options"]["controller"] == "fixed_wing"
    assert info["exit_reason"] == "done"


def test_pid_named_on_the_plane_is_refused_in_one_line(tmp_path):
    plane = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "a"),
                                      "--vehicle", "aerosonde", "--controller", "pid", "--duration", "1"])
    assert plane.exit_code != 0
    line = [text for text in plane.output.splitlines() if "--controller pid" in text]
    assert len(line) == 1 and "aerosonde.usda" in line[0], plane.output
    assert "this vehicle is a plane; choose one of px4, hold, fixed_wing" in line[0]


def test_a_start_below_the_stall_speed_and_a_plane_without_an_air_start_are_refused(tmp_path):
    # The Aerosonde's stall speed, by hand: √(2·11·9.80665 / (1.2682·0.55·(0.23 + 5.61·0.47))) = 10.39 m/s.
    stall = math.sqrt(2 * 11 * 9.80665 / (1.2682 * 0.55 * (0.23 + 5.61 * 0.47)))
    assert abs(stall - 10.39) < 0.01
    text = resolve_asset("vehicle", "aerosonde").read_text().replace("float nexus:airspeed = 25", "float nexus:airspeed = 10")
    slow = tmp_path / "slow_aerosonde.usda"
    slow.write_text(text)
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "slow"),
                                       "--vehicle", str(slow), "--duration", "1"])
    assert result.exit_code != 0
    assert "slow_aerosonde.usda: /vehicle/start: nexus:airspeed 10 m/s is below the stall speed 10.39 m/s" in result.output
    # The small electric plane declares no air start: at rest it would be below its stall speed.
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "rest"),
                                       "--vehicle", "advanced_plane", "--duration", "1"])
    assert result.exit_code != 0
    assert "advanced_plane.usda" in result.output and "apply NexusAirStartAPI" in result.output, result.output
    # hold flies either kind, but nothing in its ring starts the plane in the air: the start-up refuses it.
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "hold"),
                                       "--vehicle", "aerosonde", "--controller", "hold", "--duration", "1"])
    assert result.exit_code != 0
    assert "aerosonde.usda: /vehicle/body/base/Aero is a wing, and nothing in this ring starts the plane" in result.output
