"""The MPC flies every vehicle on a model built from its effectiveness matrix: the x500, the Crazyflie and a generated
octocopter each climb 1 m, hover at the hand formula's rotor speed and land where they took off (the F550 hexacopter
flies the MPC's figure eight in tests/control/test_hexacopter.py).

The scene (examples/hover_and_land.usda, the command in docs/vehicles.md) is the waypoints scene with two points: up
1 m at 1 m/s (1 s), 1.5 s there, down (1 s), on the ground from 3.5 s; the flight ends at 4.25 s. The MPC previews its
1 s horizon, so the hover is read over 1.5-2.0 s, after the climb has settled and before the descent comes into view.
"""

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from tests.worlds.flights import fly

ROOT = Path(__file__).resolve().parents[2]


def speed_of(command, max_speed, factor):
    """The ESC's steady speed [rad/s]: maxSpeed · √((1 − f)·u + f·u²) (the x500's 150 rad/s floor is below hover)."""
    return max_speed * np.sqrt((1.0 - factor) * command + factor * command * command)


#: vehicle -> (rotors, maxSpeed [rad/s], thrust model factor, hover speed by hand [rad/s]); the hand figures:
#: x500 √(2.064308 · 9.80665 / (4 · 8.54858e-6)) = 769.43; Crazyflie √(0.027 · 9.80665 / (4 · 2.879933e-8)) = 1516.08;
#: hexacopter √(2.0 · 9.80665 / (6 · 6.3e-6)) = 720.3; octocopter √(4 · 9.80665 / (8 · 1e-5)) = 700.24.
VEHICLES = {
    "x500": (4, 1000.0, 1.0, 769.43),
    "crazyflie": (4, 2268.9, 1.0, 1516.08),
    "octo": (8, 1000.0, 0.0, 700.24),
}


@pytest.fixture(scope="module")
def scene():
    """The shipped scene that docs/vehicles.md's command flies."""
    return ROOT / "examples" / "hover_and_land.usda"


@pytest.fixture(scope="module", params=list(VEHICLES))
def flown(request, scene, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    vehicle = request.param
    if vehicle == "octo":  # 4 kg on eight 1e-5 N/(rad/s)² rotors at 1000 rad/s
        vehicle = str(folder / "octo.usda")
        made = CliRunner().invoke(main, ["vehicle", "new", "octo", "--frame", "octo-x", "--arm", "0.35", "--mass", "4",
                                         "--thrust-coefficient", "1e-5", "--max-speed", "1000", "--out", vehicle])
        assert made.exit_code == 0, made.output
    # On the true state: the MPC's hover and landing, not the estimator's errors, are measured.
    run = fly(folder / "run", "--vehicle", vehicle, "--controller", "mpc", "--scene", str(scene), "--duration", "4.25",
              "--estimator", "truth")
    return request.param, run


def test_the_hand_figures():
    assert math.sqrt(2.064308 * 9.80665 / (4 * 8.54858e-6)) == pytest.approx(769.43, abs=0.01)
    assert math.sqrt(0.027 * 9.80665 / (4 * 2.879933e-8)) == pytest.approx(1516.08, abs=0.01)
    assert math.sqrt(2.0 * 9.80665 / (6 * 6.3e-6)) == pytest.approx(720.3, abs=0.05)
    assert math.sqrt(4.0 * 9.80665 / (8 * 1e-5)) == pytest.approx(700.24, abs=0.01)


def test_the_mpc_hovers_each_vehicle_at_the_hand_formulas_rotor_speed(flown):
    name, run = flown
    rotors, max_speed, factor, expected = VEHICLES[name]
    hold = run.record[(run.record.time > 1.5) & (run.record.time < 2.0)]
    assert hold["estimate.position[2]"].to_numpy() == pytest.approx(-1.0, abs=0.01)  # 1 m up, within 1 cm
    commands = hold[[f"controls[{i}]" for i in range(rotors)]].to_numpy().mean(axis=0)
    assert speed_of(commands, max_speed, factor) == pytest.approx([expected] * rotors, rel=0.005)
    assert (run.record[[f"controls[{i}]" for i in range(rotors, 16)]].to_numpy() == 0.0).all()


def test_the_mpc_lands_each_vehicle_where_it_took_off(flown):
    _, run = flown
    position = run.record[[f"estimate.position[{i}]" for i in range(3)]].to_numpy()
    assert run.info["exit_reason"] == "duration"  # flew the whole 4.25 s: no failed solves ended it
    assert np.abs(position[:, :2]).max() < 0.01  # straight up and down: never 1 cm sideways
    assert np.linalg.norm(position[-1]) < 0.01  # on the ground within 1 cm of the start (the NED origin)
