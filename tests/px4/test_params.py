"""PX4 parameters derived from the Astro Max's file, against its geometry worked by hand."""

import math

import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.plant.loading import load_plant
from nexus.px4.params import px4_parameters


@pytest.fixture(scope="module")
def params():
    plant, _, _ = load_plant("astro_max_base", "empty")
    return px4_parameters(plant)


def test_rotor_positions_and_spins_follow_px4_quad_x(params):
    # Arms at 45° with rotors 0.5 m from the centre: x = y = 0.5/√2 = 0.3536 m. The whole
    # vehicle's centre of mass sits 4.2 mm above the base origin (5.031 kg at -11 mm,
    # 4 × 0.2 kg at +100 mm), so the rotor planes are 0.0958 m above it: PZ = -0.0958 (FRD).
    expected = {0: (+1, +1, +1), 1: (-1, -1, +1), 2: (+1, -1, -1), 3: (-1, +1, -1)}
    for n, (sx, sy, spin) in expected.items():
        assert params[f"CA_ROTOR{n}_PX"] == pytest.approx(sx * 0.3536, abs=1e-4)
        assert params[f"CA_ROTOR{n}_PY"] == pytest.approx(sy * 0.3536, abs=1e-4)
        assert params[f"CA_ROTOR{n}_PZ"] == pytest.approx(-0.0958, abs=1e-4)
        # KM = spin · kQ/kT = ±8.5e-6 / 2.26e-4 = ±0.0376; positive spins counter-clockwise.
        assert params[f"CA_ROTOR{n}_KM"] == pytest.approx(spin * 8.5e-6 / 2.26e-4, abs=1e-5)
        assert params[f"CA_ROTOR{n}_CT"] == pytest.approx(2.26e-4 * 375.0**2, abs=1e-3)
    assert params["CA_ROTOR_COUNT"] == 4


def test_hover_thrust_and_thrust_curve(params):
    # Hover speed √(m g / 4 kT) = 251.5 rad/s; collective thrust (251.5 / 375)² = 0.4498.
    hover = math.sqrt(5.831 * 9.80665 / (4 * 2.26e-4))
    assert params["MPC_THR_HOVER"] == pytest.approx((hover / 375.0) ** 2, abs=1e-4)
    assert params["THR_MDL_FAC"] == 0.5


def test_rate_gains_are_only_ever_raised(params):
    # Yaw authority, full command on all four rotors over the yaw inertia about the centre of mass:
    #   Iris (Gazebo Classic): 4 · (5.84e-6 · 1100²) N · 0.05 m / 0.055225 kg·m² = 25.59 rad/s².
    #   Astro Max: 4 · kQ·ω_max² = 4 · 8.5e-6 · 375² = 4.781 N·m, over
    #   Izz = 0.291 (base) + 4 · (0.0012 + 0.2 · 0.5²) (rotors at 0.5 m) = 0.4958 kg·m²: 9.644 rad/s².
    # Ratio 25.59 / 9.644 = 2.654, so PX4's yaw gains (P 0.2, I 0.1) become 0.531 and 0.265.
    iris = 4 * 5.84e-6 * 1100.0**2 * 0.05 / 0.055225
    astro = 4 * 8.5e-6 * 375.0**2 / (0.291 + 4 * (0.0012 + 0.2 * 0.5**2))
    assert iris / astro == pytest.approx(2.654, abs=1e-3)
    assert params["MC_YAWRATE_P"] == pytest.approx(0.2 * iris / astro, abs=1e-3)
    assert params["MC_YAWRATE_I"] == pytest.approx(0.1 * iris / astro, abs=1e-3)
    for axis, (p, i) in {"ROLL": (0.15, 0.2), "PITCH": (0.15, 0.2), "YAW": (0.2, 0.1)}.items():
        assert params[f"MC_{axis}RATE_P"] >= p and params[f"MC_{axis}RATE_I"] >= i


def test_cli_prints_environment_settings():
    result = CliRunner().invoke(main, ["px4", "params", "--vehicle", "astro_max_base"])
    assert result.exit_code == 0, result.output
    lines = [l for l in result.output.splitlines() if l.startswith("PX4_PARAM_")]
    assert "PX4_PARAM_CA_ROTOR0_KM=0.03761" in lines and "PX4_PARAM_MPC_THR_HOVER=0.4498" in lines


def test_the_hexacopter_is_a_px4_hexarotor():
    # vehicles/hexa_f550.usda: PX4's hexarotor-X numbering at 0.275 m; full thrust 6.3e-6 · 1116² = 7.846 N;
    # KM ∓ 1.008e-7 / 6.3e-6 = 0.016 m (rotor 1 clockwise: −); hover (720.3 / 1116)² = 0.4166 with
    # ω = √(2.0 · 9.80665 / (6 · 6.3e-6)) = 720.3 rad/s.
    plant, _, _ = load_plant("hexa_f550", "empty")
    params = px4_parameters(plant)
    assert params["MAV_TYPE"] == 13 and params["CA_ROTOR_COUNT"] == 6
    expected = [(0.0, 0.275, -1), (0.0, -0.275, 1), (0.2382, -0.1375, -1), (-0.2382, 0.1375, 1),
                (0.2382, 0.1375, 1), (-0.2382, -0.1375, -1)]
    for n, (px, py, spin) in enumerate(expected):
        assert params[f"CA_ROTOR{n}_PX"] == pytest.approx(px, abs=1e-4)
        assert params[f"CA_ROTOR{n}_PY"] == pytest.approx(py, abs=1e-4)
        assert params[f"CA_ROTOR{n}_KM"] == pytest.approx(spin * 0.016, abs=1e-5)
        assert params[f"CA_ROTOR{n}_CT"] == pytest.approx(7.846, abs=1e-3)
    hover = math.sqrt(2.0 * 9.80665 / (6 * 6.3e-6))
    assert params["MPC_THR_HOVER"] == pytest.approx((hover / 1116.0) ** 2, abs=1e-4)


def test_every_rotor_channel_is_assigned_a_px4_motor_output():
    # PX4 SITL's output driver (pwm_out_sim, prefix PWM_MAIN) drives a channel only when its
    # PWM_MAIN_FUNCn names a motor (Motor1 = 101 ... Motor12 = 112); airframe none_iris names 1-4.
    # Without 5 and 6 PX4 leaves the hexacopter's rotors 5 and 6 at 0.
    plant, _, _ = load_plant("hexa_f550", "empty")
    hexa = px4_parameters(plant)
    assert {k: v for k, v in hexa.items() if k.startswith("PWM_MAIN_FUNC")} == {
        "PWM_MAIN_FUNC1": 101, "PWM_MAIN_FUNC2": 102, "PWM_MAIN_FUNC3": 103,
        "PWM_MAIN_FUNC4": 104, "PWM_MAIN_FUNC5": 105, "PWM_MAIN_FUNC6": 106}
    result = CliRunner().invoke(main, ["px4", "params", "--vehicle", "hexa_f550"])
    assert result.exit_code == 0, result.output
    assert "PX4_PARAM_PWM_MAIN_FUNC6=106" in result.output.splitlines()


def test_a_quad_gets_the_four_motor_outputs_none_iris_already_has(params):
    assert {k: v for k, v in params.items() if k.startswith("PWM_MAIN_FUNC")} == {
        "PWM_MAIN_FUNC1": 101, "PWM_MAIN_FUNC2": 102, "PWM_MAIN_FUNC3": 103, "PWM_MAIN_FUNC4": 104}
