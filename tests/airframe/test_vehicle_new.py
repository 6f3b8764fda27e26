"""`nexus vehicle new`: its files pass every vehicle check, PX4's parameters follow from them, a generated
quad flies the default mission, and the shipped vehicles are what their TOML descriptions generate."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from nexus.cli import EXIT_BAD_INPUT, main
from nexus.plant.loading import load_plant
from tests.record_truth import truth_ned_position

ROOT = Path(__file__).resolve().parents[2]


def new(*args):
    return CliRunner().invoke(main, ["vehicle", "new", *args])


def test_a_generated_hexa_passes_the_vehicle_checks_and_px4_mixes_six_rotors(tmp_path):
    out = tmp_path / "hex.usda"
    result = new("hex", "--frame", "hexa-x", "--arm", "0.275", "--mass", "2.4", "--out", str(out))
    assert result.exit_code == 0, result.output
    plant, _, _ = load_plant(out, "empty")  # schemas, units, mass properties, ESC channels, propellers
    assert len(plant.rotors) == 6
    assert plant.mass == pytest.approx(2.4, rel=1e-6)
    params = CliRunner().invoke(main, ["px4", "params", "--vehicle", str(out)])
    assert params.exit_code == 0, params.output
    lines = dict(line.split("=") for line in params.output.split() if line.startswith("PX4_PARAM_"))
    assert lines["PX4_PARAM_CA_ROTOR_COUNT"] == "6"
    # PX4's hex_x motor 1 sits on the right (FRD +y) and turns clockwise (KM < 0); motor 5 front right at 30°:
    # (0.275 cos 30°, 0.275 sin 30°) = (0.2382, 0.1375).
    assert float(lines["PX4_PARAM_CA_ROTOR0_PX"]) == pytest.approx(0.0, abs=1e-4)
    assert float(lines["PX4_PARAM_CA_ROTOR0_PY"]) == pytest.approx(0.275, abs=1e-4)
    assert float(lines["PX4_PARAM_CA_ROTOR0_KM"]) < 0 < float(lines["PX4_PARAM_CA_ROTOR1_KM"])
    assert float(lines["PX4_PARAM_CA_ROTOR4_PX"]) == pytest.approx(0.2382, abs=1e-4)
    assert float(lines["PX4_PARAM_CA_ROTOR4_PY"]) == pytest.approx(0.1375, abs=1e-4)
    assert float(lines["PX4_PARAM_MPC_THR_HOVER"]) == pytest.approx(0.5, abs=1e-4)  # hover at half thrust


@pytest.mark.parametrize("frame, rotors", [("quad-plus", 4), ("hexa-plus", 6), ("octo-x", 8), ("x8", 8)])
def test_every_frame_writes_a_file_the_vehicle_checks_accept(tmp_path, frame, rotors):
    out = tmp_path / f"{frame}.usda"
    result = new("v", "--frame", frame, "--arm", "0.3", "--mass", "3", "--out", str(out))
    assert result.exit_code == 0, result.output
    plant, _, _ = load_plant(out, "empty")
    assert len(plant.rotors) == rotors and plant.mass == pytest.approx(3.0, rel=1e-6)


@pytest.mark.parametrize("args, message", [
    (["--arm", "-0.275", "--mass", "2.4"], "error: --arm is -0.275; it must be a positive number"),
    (["--arm", "0.275", "--mass", "0"], "error: --mass is 0.0; it must be a positive number"),
    (["--frame", "tri", "--arm", "0.275", "--mass", "2.4"], "error: --frame is 'tri'; choose one of"),
    (["--arm", "0.275", "--mass", "2.4", "--max-speed", "300"], "error: --max-speed: thrust-to-weight ratio"),
])
def test_bad_options_are_one_line_and_write_nothing(tmp_path, args, message):
    out = tmp_path / "v.usda"
    result = new("v", *args, "--out", str(out))
    assert result.exit_code == EXIT_BAD_INPUT
    assert result.output.startswith(message) and result.output.count("\n") == 1, result.output
    assert not out.exists()


def test_from_toml_with_sizing_options_is_refused(tmp_path):
    result = new("v", "--from", str(ROOT / "vehicles/sources/x500.toml"), "--mass", "3", "--out", str(tmp_path / "v.usda"))
    assert result.exit_code == EXIT_BAD_INPUT and "drop --mass" in result.output


@pytest.mark.parametrize("name", ["x500", "crazyflie"])
def test_shipped_vehicles_are_what_their_descriptions_generate(tmp_path, name):
    out = tmp_path / f"{name}.usda"
    result = new(name, "--from", f"vehicles/sources/{name}.toml", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_text() == (ROOT / "vehicles" / f"{name}.usda").read_text()


def test_a_generated_quad_flies_the_default_mission_and_lands_where_it_took_off(tmp_path):
    out = tmp_path / "quad.usda"
    assert new("quad", "--arm", "0.25", "--mass", "1.5", "--out", str(out)).exit_code == 0
    run = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--vehicle", str(out), "--out", str(run), "--quiet"])
    assert result.exit_code == 0, result.output
    assert_flew_the_default_mission(run)


def assert_flew_the_default_mission(run: Path):
    """The scene's mission: up to 5 m, a yaw sweep, back down where it started, ended by the mission.

    Measured on the truth (what the vehicle did), which the shipped EKF flies within its own errors of: the
    GPS's slow drift (horizontalDriftSigma 0.3 m and verticalDriftSigma 0.5 m, settled 1-sigma), which no filter
    without another position source removes. The bounds allow the controller's own 0.35 m plus that drift.
    """
    record = pd.read_parquet(run / "record.parquet")
    truth = truth_ned_position(record)
    goal = record[[f"setpoint.position[{i}]" for i in range(3)]].to_numpy()
    assert truth[:, 2].min() == pytest.approx(-5.0, abs=0.6)  # reached 5 m (NED z up is negative)
    assert np.linalg.norm(truth - goal, axis=1).max() < 1.0  # never further than 1 m from its setpoint
    assert np.linalg.norm(truth[-1, :2]) < 1.0  # landed within 1 m of where it took off (3 sigma of the drift)
    assert abs(truth[-1, 2]) < 0.05  # on the ground
    assert record["time"].iloc[-1] < 30.0  # the mission ended the run (about 28 s), not the 60 s duration


def test_the_commands_frame_list_is_the_generators():
    # The command keeps its own copy so `nexus vehicle new --help` loads nothing heavy.
    from nexus.airframe.frames import FRAMES
    from nexus.commands.vehicle import FRAME_NAMES

    assert FRAME_NAMES == tuple(FRAMES)
