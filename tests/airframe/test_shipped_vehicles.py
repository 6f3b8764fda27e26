"""The x500 and the Crazyflie: hover rotor speeds measured in flight against the hand formula, the x500's PX4
parameters against PX4's airframe 4001_gz_x500, and the default mission flown with the PID."""

import math

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.core import Loop
from nexus.plant.loading import load_plant
from nexus.px4.params import px4_parameters
from nexus.runtime.assembly import assemble
from nexus.runtime.startup import start
from tests.airframe.test_vehicle_new import assert_flew_the_default_mission


def hover_speed_in_flight(vehicle: str) -> np.ndarray:
    """Each rotor's mean speed [rad/s] over 6.0-7.5 s of the default mission: the 3 s hold at 5 m (5.0-8.0 s)."""
    flight = assemble(vehicle, "empty", device="cpu", estimator="truth")  # the physics: fly on the true state
    loop = Loop(flight.components, device="cpu")
    start(loop, flight.plant)
    mission = next(c for c in flight.components if getattr(c, "is_guidance", False))
    speeds = []
    for tick in range(1, 1876):
        loop.run(1)
        if tick > 1500:
            assert mission.phase == "hold"
            qd = flight.plant.state.joint_qd.numpy()
            speeds.append([abs(qd[r.dof]) for r in flight.plant.rotors])
    return np.mean(speeds, axis=0)


def test_x500_hovers_at_the_hand_formulas_rotor_speed():
    # √(m g / (4 kT)) with m = 2.0 kg (base_link) + 4 × 0.016077 kg (rotor links) = 2.064308 kg:
    # √(2.064308 · 9.80665 / (4 · 8.54858e-6)) = 769.43 rad/s. (The base link alone, 2.0 kg, would give 757.35.)
    measured = hover_speed_in_flight("x500")
    assert measured == pytest.approx([769.43] * 4, abs=0.5)  # 0.5 rad/s: the hold's last transients


def test_crazyflie_hovers_at_the_hand_formulas_rotor_speed():
    # √(0.027 · 9.80665 / (4 · 2.879933e-8)) = 1516.08 rad/s (Förster: 27 g, C_T 3.1582e-10 N/rpm²).
    measured = hover_speed_in_flight("crazyflie")
    assert measured == pytest.approx([1516.08] * 4, abs=1.0)


def test_x500_px4_parameters_are_its_airframes():
    plant, _, _ = load_plant("x500", "empty")
    params = px4_parameters(plant)
    # PX4-Autopilot ROMFS/px4fmu_common/init.d-posix/airframes/4001_gz_x500 sets these (FRD, KM > 0: CCW):
    airframe = {0: (0.13, 0.22, 0.05), 1: (-0.13, -0.20, 0.05), 2: (0.13, -0.22, -0.05), 3: (-0.13, 0.20, -0.05)}
    assert params["CA_ROTOR_COUNT"] == 4
    for n, (px, py, km) in airframe.items():
        assert (params[f"CA_ROTOR{n}_PX"], params[f"CA_ROTOR{n}_PY"], params[f"CA_ROTOR{n}_KM"]) == (px, py, km)
        # Not set by the airframe, derived from the model: rotors 0.06 m above the base link, whose centre of
        # mass is 4 · 0.016077 · 0.06 / 2.064308 = 1.87 mm below the whole vehicle's: PZ = -0.0581 (FRD).
        assert params[f"CA_ROTOR{n}_PZ"] == pytest.approx(-0.0581, abs=1e-4)
        assert params[f"CA_ROTOR{n}_CT"] == pytest.approx(8.54858e-6 * 1000.0**2, abs=1e-3)
    assert params["MPC_THR_HOVER"] == 0.6  # the airframe's; the model's (769.43 / 1000)² = 0.592 is overridden


def test_x500_model_spins_as_the_airframe_orders_its_motors():
    # Motors 1 and 2 (front right, rear left) counter-clockwise, 3 and 4 clockwise; the model's rotors sit at
    # (±0.174, ±0.174) m (x500_base/model.sdf rotor_k poses).
    plant, _, _ = load_plant("x500", "empty")
    rotors = sorted(plant.rotors, key=lambda r: r.esc["channel"])
    assert [r.spin for r in rotors] == [1, 1, -1, -1]
    assert [r.torque_coefficient / r.thrust_coefficient for r in rotors] == pytest.approx([0.016] * 4)
    assert plant.mass == pytest.approx(2.064308, abs=1e-6)


@pytest.mark.parametrize("vehicle", ["x500", "crazyflie"])
def test_the_default_mission_with_the_pid(tmp_path, vehicle):
    run = tmp_path / vehicle
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--vehicle", vehicle, "--out", str(run), "--quiet"])
    assert result.exit_code == 0, result.output
    assert_flew_the_default_mission(run)
