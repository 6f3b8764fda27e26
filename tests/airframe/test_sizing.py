"""The generator's sizing and gain rules (docs/vehicles.md), against numbers worked out by hand."""

import math

import pytest

from nexus.airframe.frames import FRAMES
from nexus.airframe.gains import pid_gains
from nexus.airframe.sizing import AirframeInput, size
from nexus.core.errors import BuildError


@pytest.fixture(scope="module")
def quad():
    """`nexus vehicle new q --frame quad-x --arm 0.25 --mass 1.5`: everything else by the rules."""
    return size("q", AirframeInput(frame="quad-x", arm=0.25, mass=1.5))


def test_a_quad_of_arm_and_mass_alone_hovers_at_half_thrust(quad):
    # Rotors 5 % of 1.5 kg: 4 × 0.01875 kg; neighbours 2·0.25·sin 45° = 0.35355 m apart, propellers 90 %:
    # D = 0.31820 m; kT = 0.1 · 1.225 · D⁴ / (4π²) = 0.1225 · 0.0102516 / 39.4784 = 3.1810e-5 N/(rad/s)².
    assert quad.rotor_mass == pytest.approx(0.01875)
    assert quad.base_mass == pytest.approx(1.425)
    assert quad.diameter == pytest.approx(0.31820, abs=1e-5)
    assert quad.thrust_coefficient == pytest.approx(3.1810e-5, rel=1e-4)
    # Hover √(1.5 · 9.80665 / (4 · 3.1810e-5)) = 340.01 rad/s; maximum √2 × that (thrust-to-weight 2).
    assert quad.hover_speed == pytest.approx(340.01, abs=0.02)
    assert quad.max_speed == pytest.approx(340.01 * math.sqrt(2), abs=0.03)
    assert quad.thrust_to_weight == pytest.approx(2.0)
    assert quad.hover_command == pytest.approx(0.5)  # thrust model factor 0: command = thrust fraction
    # kQ = 0.04 · 1.225 · D⁵ / (8π³) = 0.049 · 3.26204e-3 / 248.050 = 6.4439e-7 N·m/(rad/s)².
    assert quad.torque_coefficient == pytest.approx(6.4439e-7, rel=1e-4)


def test_the_box_estimate_and_the_whole_inertia(quad):
    # Hub 60 % of 1.425 kg = 0.855 kg, a 0.25 × 0.25 × 0.0833 m box; 0.1425 kg at each rotor (y² = x² = 0.03125):
    # base Ixx = 0.855 (0.0625 + 0.006944) / 12 + 4 · 0.1425 · 0.03125 = 0.0049479 + 0.0178125 = 0.0227604.
    assert quad.base_inertia[0] == pytest.approx(0.0227604, rel=1e-5)
    assert quad.base_inertia[2] == pytest.approx(0.0089063 + 0.035625, rel=1e-5)
    # Whole: centre of mass 4 · 0.01875 · 0.0625 / 1.5 = 3.125 mm up; each rotor Izz = 0.01875 D² / 24 = 7.9102e-5,
    # Ixx 0.55 Izz = 4.3506e-5, and 0.01875 (0.03125 + 0.059375²) = 6.52039e-4 from its place:
    # Ixx = 0.0227604 + 1.425 · 0.003125² + 4 · (4.3506e-5 + 6.52039e-4) = 0.0255565.
    assert quad.inertia()[0] == pytest.approx(0.0255565, rel=1e-5)
    assert quad.inertia()[2] == pytest.approx(0.0495352, rel=1e-5)


def test_rate_gains_put_the_crossover_at_12_and_10_rad_per_s(quad):
    gains = pid_gains(quad)
    # Roll: 0.5 · T_max · Σ|y| / Ixx = 0.5 · 7.35499 N · 0.707107 m / 0.0255565 = 101.750 rad/s² per unit:
    # rate P = 12 / 101.750 = 0.11794. Yaw: 0.5 · 7.35499 · 4 · 0.020257 / 0.0495352 = 6.0152: 10 / 6.0152 = 1.6624.
    assert gains.rate_p[0] == pytest.approx(0.11794, rel=1e-3)
    assert gains.rate_p[1] == pytest.approx(0.11794, rel=1e-3)
    assert gains.rate_p[2] == pytest.approx(1.6624, rel=1e-3)
    assert gains.rate_i[0] == pytest.approx(0.11794 * 4 / 3, rel=1e-3)
    assert gains.rate_d[0] == pytest.approx(0.11794 * 0.02, rel=1e-3)
    assert gains.rate_i[2] == pytest.approx(1.6624 / 6, rel=1e-3)
    assert gains.attitude_p == pytest.approx((6.5, 6.5, 5.0))
    assert gains.hover_thrust == pytest.approx(0.5)
    assert gains.max_tilt == pytest.approx(math.radians(45.0))  # acos(1 / 1.8) = 56° is above the 45° cap


def test_a_small_thrust_margin_limits_the_tilt_and_slow_motors_the_crossover():
    # Maximum speed 402.31 rad/s = 340.01 · √1.4: thrust-to-weight 1.4, so tilt ≤ acos(1 / (0.9 · 1.4)) = 37.47°.
    # τ_up 0.1 s: crossover 0.6 / 0.1 = 6 rad/s, half of 12: attitude gains halve, roll rate P = 6 / A.
    slow = size("s", AirframeInput(frame="quad-x", arm=0.25, mass=1.5, max_speed=402.31, tau_up=0.1))
    assert slow.thrust_to_weight == pytest.approx(1.4, abs=1e-4)
    gains = pid_gains(slow)
    assert math.degrees(gains.max_tilt) == pytest.approx(37.47, abs=0.01)
    assert gains.attitude_p[0] == pytest.approx(3.25)
    assert gains.attitude_p[2] == pytest.approx(5.0 * 5.0 / 10.0)  # yaw crossover 0.5 / 0.1 = 5 rad/s


def test_every_frame_balances_its_spins_and_its_rotors_about_the_centre():
    for name, places in FRAMES.items():
        assert sum(p.spin for p in places) == 0, name
        positions = [p.position(1.0) for p in places]
        assert sum(x for x, _ in positions) == pytest.approx(0.0, abs=1e-12), name
        assert sum(y for _, y in positions) == pytest.approx(0.0, abs=1e-12), name
    assert {name: len(p) for name, p in FRAMES.items()} == {
        "quad-x": 4, "quad-plus": 4, "hexa-x": 6, "hexa-plus": 6, "octo-x": 8, "x8": 8}


def test_hexa_x_is_px4s_hex_x_geometry():
    # PX4's hex_x.toml (FRD, unit arm): 1 (0, 1) CW, 2 (0, -1) CCW, 3 (0.866, -0.5) CW, 4 (-0.866, 0.5) CCW,
    # 5 (0.866, 0.5) CCW, 6 (-0.866, -0.5) CW. FLU flips y.
    expected = [((0, 1), -1), ((0, -1), 1), ((0.866025, -0.5), -1), ((-0.866025, 0.5), 1), ((0.866025, 0.5), 1),
                ((-0.866025, -0.5), -1)]
    for place, ((x, y_frd), spin) in zip(FRAMES["hexa-x"], expected):
        assert place.position(1.0) == pytest.approx((x, -y_frd), abs=1e-6)
        assert place.spin == spin


@pytest.mark.parametrize("given, message", [
    (dict(arm=-0.2, mass=1.5), "--arm is -0.2; it must be a positive number"),
    (dict(arm=0.25, mass=0.0), "--mass is 0.0; it must be a positive number"),
    (dict(arm=0.25, mass=-1.0), "--mass is -1.0; it must be a positive number"),
    (dict(frame="tri", arm=0.25, mass=1.5), "--frame is 'tri'; choose one of quad-x, quad-plus, hexa-x"),
    # Thrust-to-weight (350 / 340.01)² = 1.06: under 1.3.
    (dict(arm=0.25, mass=1.5, max_speed=350.0), "--max-speed: thrust-to-weight ratio 1.06"),
    (dict(arm=0.25), "--mass is missing"),
])
def test_a_value_out_of_its_physical_range_is_one_line_naming_the_option(given, message):
    with pytest.raises(BuildError) as caught:
        size("q", AirframeInput(**given))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_toml_file_error_names_the_file_and_key(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('frame = "quad-x"\narm = 0.25\nmass = 1.5\nthrust_coefficient = 1e-6\nmax_speed = 1300.0\n')
    # 4 · 1e-6 · 1300² / (1.5 · 9.80665) = 6.76 / 14.71 = 0.46.
    with pytest.raises(BuildError, match=r"bad.toml: key 'max_speed': thrust-to-weight ratio 0.46"):
        size("q", AirframeInput.from_toml(path), str(path))
    path.write_text('frame = "quad-x"\narm = 0.25\nmass = 1.5\nrotor_count = 4\n')
    with pytest.raises(BuildError, match=r"bad.toml: unknown key 'rotor_count'"):
        AirframeInput.from_toml(path)
    path.write_text('frame = "quad-x"\narm = 0.25\nmass = 1.5\ntau_up = -0.01\n')
    with pytest.raises(BuildError, match=r"bad.toml: key 'tau_up' is -0.01; it must be a positive number"):
        size("q", AirframeInput.from_toml(path), str(path))


@pytest.mark.parametrize("extra, message", [
    ('sensors = ["imu", "lidar"]', "key 'sensors' is ['imu', 'lidar']; give a list of imu, mag, baro, gps"),
    ('[px4]\nCA_ROTOR0_PX = "front"', "key 'px4' is {'CA_ROTOR0_PX': 'front'}; each entry must be a PX4 parameter"),
])
def test_sensors_and_px4_pins_are_checked_too(tmp_path, extra, message):
    path = tmp_path / "v.toml"
    path.write_text(f'frame = "quad-x"\narm = 0.25\nmass = 1.5\n{extra}\n')
    with pytest.raises(BuildError) as caught:
        size("v", AirframeInput.from_toml(path), str(path))
    assert message in str(caught.value)
