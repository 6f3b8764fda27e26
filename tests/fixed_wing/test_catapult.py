"""A catapult start: the Aerosonde at rest on its wheels, pushed at 4 g to 18 m/s, then its climb-out.

The Aerosonde's file with its air start swapped for ``NexusCatapultAPI`` (launch speed 18 m/s, 40 m/s², held
1 s at rest), flown by ``nexus run`` (CLI in this process, CPU, default scene, 250 Hz) for 30 s. Figures measured
2026-12-06: docs/fixed_wing.md, "Catapult".
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.plant.assets import resolve_asset
from tests.fixed_wing.book_model import Aerosonde, propeller
from tests.worlds.flights import fly

G, MASS = 9.80665, 11.0  # [m/s²], [kg]
PUSH, LAUNCH_SPEED, HOLD = 40.0, 18.0, 1.0  # [m/s²], [m/s], [s]
WHEEL_FRICTION = 0.05  # the wheels' material [-]
DT = 0.004  # [s]
CATAPULT = '''    def Scope "start" (
        prepend apiSchemas = ["NexusCatapultAPI"]
    )
    {
        float nexus:launchSpeed = 18
        float nexus:acceleration = 40
        float nexus:holdTime = 1
    }
}
'''


def catapult_file(folder, *, keep_air_start: bool = False):
    text = resolve_asset("vehicle", "aerosonde").read_text()
    start = text.index('    def Scope "start" (')
    body = text[:start] + CATAPULT
    if keep_air_start:
        body = text[:start] + CATAPULT.replace('    def Scope "start"', '    def Scope "launcher"')[:-2] + text[start:]
    path = folder / ("aerosonde_both.usda" if keep_air_start else "aerosonde_catapult.usda")
    path.write_text(body)
    return path


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    folder = tmp_path_factory.mktemp("catapult")
    return fly(folder / "run", "--vehicle", str(catapult_file(folder)), "--duration", "30")


def test_the_plane_rests_on_its_wheels_until_the_push(flown):
    r = flown.record
    t = r.time.to_numpy()
    resting = t < HOLD - DT / 2
    # Settled on its wheels: the NED origin is its resting place, so height 0, no speed, throttle off.
    assert np.max(np.abs(r["estimate.position[2]"].to_numpy()[resting])) < 2e-3
    assert np.max(np.abs(r["body/base.velocity[0]"].to_numpy()[resting])) < 1e-3
    assert np.all(r["catapult_push"].to_numpy()[resting] == 0.0)
    assert np.all(r["controls[4]"].to_numpy()[resting] == 0.0) and np.all(r["plane_phase"].to_numpy()[resting] == 0)


def test_the_push_is_4_g_until_18_m_s_and_long_enough_for_px4_s_launch_detector(flown):
    r = flown.record
    t, push = r.time.to_numpy(), r["catapult_push"].to_numpy()
    on = np.flatnonzero(push > 0.0)
    assert np.all(push[on] == PUSH) and np.all(np.diff(on) == 1)  # one stroke
    assert abs(t[on[0]] - HOLD) <= DT
    # By hand: the push less the wheels' friction to 5 m/s, the throttle off, then with the propeller's full-throttle
    # thrust too (the book's propeller, at most 84.6 N, at rest: 7.7 m/s² more): the stroke lies between 18/(40 + 7.7)
    # and 18/(40 − μg) = 0.377 and 0.456 s (flown 0.412 s, 103 ticks).
    most = propeller(0.0, 1.0, Aerosonde(g=G)).thrust / MASS
    assert 7.5 < most < 7.9
    stroke = len(on) * DT
    assert LAUNCH_SPEED / (PUSH + most) < stroke < LAUNCH_SPEED / (PUSH - WHEEL_FRICTION * G)
    speed = r["body/base.velocity[0]"].to_numpy()  # east: the file's heading
    assert LAUNCH_SPEED <= speed[on[-1]] < LAUNCH_SPEED + PUSH * DT
    # The rail: v²/(2a) per part, 5²/(2·39.5) + (18² − 5²)/(2·47.7) = 3.45 m at the most thrust, 18²/(2·39.5) =
    # 4.10 m with none (flown 3.65 m).
    rail = r["body/base.pose[0]"].to_numpy()[on[-1]] - r["body/base.pose[0]"].to_numpy()[on[0] - 1]
    assert 3.45 < rail < 4.1, rail
    # The IMU's forward specific force holds above PX4's FW_LAUN_AC_THLD (30 m/s²) the whole stroke, far longer
    # than FW_LAUN_AC_T (0.05 s): PX4's detector fires.
    forward = r["imu.accel[0]"].to_numpy()[on]
    assert np.min(forward) > 30.0 and stroke > 0.05


def test_the_throttle_waits_for_the_push_then_the_plane_rotates_lifts_off_and_climbs_out(flown):
    r = flown.record
    t = r.time.to_numpy()
    speed = np.linalg.norm(np.stack([r[f"estimate.velocity[{i}]"].to_numpy() for i in range(3)], 1), axis=1)
    throttle, height, phase = r["controls[4]"].to_numpy(), -r["estimate.position[2]"].to_numpy(), r.plane_phase.to_numpy()
    assert np.all(throttle[speed < 5.0] == 0.0)  # the mission's launch detection: 5 m/s
    assert np.all(throttle[(phase == 0) & (speed >= 5.0)] == 1.0)
    # The rotation waits for the elevator to lift the nose over the mains (0.25 m behind the centre of mass): full
    # up elevator's moment 0.5·ρ·V²·S·c̄·Cmδe·0.524 ≈ 0.0344·V² N·m against the weight less the lift (α ≈ 0:
    # 0.0802·V² N) times 0.25 m, equal near 21 m/s; flown, the wheels leave the ground at 23.8 m/s, 2.82 s.
    lift_off = np.argmax(height > 0.05)
    assert 20.0 < speed[lift_off] < 27.0 and t[lift_off] < 4.0
    # Then the climb-out to 10 m, and the route.
    assert np.all(phase[height < 9.9] == 0) and t[np.argmax(phase == 1)] < 6.0
    assert np.min(height[t > t[lift_off]]) > 0.0 and height[-1] > 40.0


@pytest.fixture(scope="module")
def gusty(tmp_path_factory):
    """The same catapult file held 5 s at rest in a 5 m/s wind from the north with moderate Dryden turbulence."""
    folder = tmp_path_factory.mktemp("catapult_gusty")
    path = folder / "aerosonde_catapult.usda"
    path.write_text(catapult_file(folder).read_text().replace("float nexus:holdTime = 1", "float nexus:holdTime = 5"))
    return fly(folder / "run", "--vehicle", str(path), "--duration", "7", "--wind", "5@0", "--turbulence", "moderate")


def test_in_gusts_the_shuttle_holds_the_plane_on_its_rail_until_it_lets_go(gusty):
    r = gusty.record
    t, push = r.time.to_numpy(), r["catapult_push"].to_numpy()
    resting = t < 5.0 - DT / 2
    # The grip (10 rad/s, critically damped: 1 cm per 11 N of side force on the 11 kg plane) holds the base where
    # it rested and on its heading: flown 3.3 cm and 0.76° at most in 5 s of a side wind gusting to 5.4 m/s. Without
    # the grip (broken on purpose) the plane rolled 4.26 m and turned 118° before the push, which then read as low as
    # −19.6 m/s² along the nose.
    east, north = r["body/base.pose[0]"].to_numpy(), r["body/base.pose[1]"].to_numpy()
    assert np.max(np.hypot(east[resting] - east[0], north[resting] - north[0])) < 0.05
    x, y, z, w = (r[f"body/base.pose[{i}]"].to_numpy() for i in range(3, 7))
    heading = np.degrees(np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)))
    assert np.ptp(heading[resting]) < 1.5
    # So the push stays along the nose: PX4's launch detector sees more than its 30 m/s² the whole stroke (flown at
    # least 38.9).
    on = push > 0.0
    assert on.sum() > 0.05 / DT and np.min(r["imu.accel[0]"].to_numpy()[on]) > 30.0
    # Across the rail (east: the file's heading) the plane leaves within centimetres of where it rested (flown 4 mm).
    assert abs(north[np.flatnonzero(on)[-1]] - north[0]) < 0.02


def test_a_file_with_a_catapult_and_an_air_start_is_refused_in_one_line(tmp_path):
    both = catapult_file(tmp_path, keep_air_start=True)
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "both"),
                                       "--vehicle", str(both), "--duration", "1"])
    assert result.exit_code != 0
    line = [text for text in result.output.splitlines() if "NexusCatapultAPI" in text]
    assert len(line) == 1 and "aerosonde_both.usda: /vehicle/launcher applies NexusCatapultAPI and /vehicle/start" in line[0]
    assert "a plane starts one way" in line[0]


def test_a_hand_figure_for_the_rotation_speed():
    # The figures the rotation check above quotes, worked here: Cmδe·δe_max = 0.99·0.5236 and the moment it buys.
    moment_per_v2 = 0.5 * 1.2682 * 0.55 * 0.18994 * 0.99 * 0.5236
    lift_per_v2 = 0.5 * 1.2682 * 0.55 * 0.23
    v = math.sqrt(MASS * G * 0.25 / (moment_per_v2 + 0.25 * lift_per_v2))
    assert abs(moment_per_v2 - 0.0344) < 1e-3 and abs(lift_per_v2 - 0.0802) < 1e-3 and 20.0 < v < 23.0
