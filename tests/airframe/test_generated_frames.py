"""Vehicles `nexus vehicle new` writes for the frames beyond the quad-X fly the short mission with the PID on the
gains the rule gives them (no hand tuning), hover at the hand formula's rotor speed and land where they took off;
`nexus px4 params` derives their PX4 parameters.

Every frame gets kT = 1e-5 N/(rad/s)² and 1000 rad/s at full command, and 0.5 kg of vehicle per rotor, so each
rotor carries 0.5 · 9.80665 = 4.903 N at hover: ω = √(m g / (n kT)) = √(4.903 / 1e-5) = 700.24 rad/s, thrust fraction
(700.24 / 1000)² = 0.4903 (thrust model factor 0: the command is the thrust fraction), full thrust 10 N a rotor,
thrust-to-weight 10 / 4.903 = 2.04.
"""

import math

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from tests.record_truth import truth_ned_position
from tests.worlds.flights import fly

#: frame -> (arm [m], rotors, PX4's MAV_TYPE: 2 quadrotor, 13 hexarotor, 14 octorotor)
FRAMES = {"quad-plus": (0.25, 4, 2), "hexa-x": (0.3, 6, 13), "octo-x": (0.35, 8, 14), "x8": (0.25, 8, 14)}
HOVER_SPEED = 700.24  # [rad/s], above


def generate(folder, frame):
    arm, rotors, _ = FRAMES[frame]
    out = folder / f"{frame}.usda"
    result = CliRunner().invoke(main, ["vehicle", "new", frame.replace("-", "_"), "--frame", frame, "--arm", str(arm),
                                       "--mass", str(0.5 * rotors), "--thrust-coefficient", "1e-5", "--max-speed",
                                       "1000", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module", params=list(FRAMES))
def flown(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    vehicle = generate(folder, request.param)
    return request.param, vehicle, fly(folder / "run", "--vehicle", str(vehicle), "--mission", "short")


def test_the_hand_formula_gives_700_rad_per_s():
    assert math.sqrt(0.5 * 9.80665 / 1e-5) == pytest.approx(HOVER_SPEED, abs=0.01)


def test_each_frame_hovers_at_the_hand_formulas_rotor_speed(flown):
    frame, _, run = flown
    rotors = FRAMES[frame][1]
    # The short mission holds 2 m from about 1.6 s to 2.6 s; 2.2-2.6 s is past the climb's overshoot.
    hold = run.record[(run.record.time > 2.2) & (run.record.time < 2.6)]
    commands = hold[[f"controls[{i}]" for i in range(rotors)]].to_numpy().mean(axis=0)
    speeds = 1000.0 * np.sqrt(commands)  # ESC: ω = maxSpeed · √u at thrust model factor 0, minSpeed 0
    # Within 1 %: the EKF's estimate follows the GPS's drift during the hold, so the vehicle is still moving by a
    # few cm/s (3 cm/s up, measured) and its thrust is not exactly the hover's.
    assert speeds == pytest.approx([HOVER_SPEED] * rotors, rel=0.01)
    assert (run.record[[f"controls[{i}]" for i in range(rotors, 16)]].to_numpy() == 0.0).all()


def test_each_frame_flies_the_short_mission_and_lands_where_it_took_off(flown):
    # The generated file flies its EKF, so the checks read the true pose: the vehicle goes where its estimate says
    # the goal is, and the estimate is off by the EKF's error on this flight (0.435 m at most, mostly vertical: the
    # GPS's height drift, 0.5 m settled 1 sigma, which the filter follows).
    _, _, run = flown
    record = run.record
    truth = truth_ned_position(record)
    estimate = record[[f"estimate.position[{i}]" for i in range(3)]].to_numpy()
    goal = record[[f"setpoint.position[{i}]" for i in range(3)]].to_numpy()
    assert run.info["exit_reason"] == "done"  # the mission ended the run, landed and disarmed
    assert np.linalg.norm(truth - estimate, axis=1).max() < 0.5  # the EKF's error, as above
    assert truth[:, 2].min() == pytest.approx(-2.0, abs=0.15)  # up to 2 m (NED: negative), less the EKF's error
    # Within 0.35 m of the setpoint all the way (the largest gap is the landing goal pushed 0.3 m into the ground).
    assert np.linalg.norm(truth - goal, axis=1).max() < 0.35
    assert np.linalg.norm(truth[-1]) < 0.1  # landed within 10 cm of the start (the NED origin), GPS drift included


def test_px4_parameters_follow_from_each_generated_file(flown):
    frame, vehicle, _ = flown
    arm, rotors, mav_type = FRAMES[frame]
    result = CliRunner().invoke(main, ["px4", "params", "--vehicle", str(vehicle)])
    assert result.exit_code == 0, result.output
    params = dict(line.removeprefix("PX4_PARAM_").split("=") for line in result.output.split()
                  if line.startswith("PX4_PARAM_"))
    assert int(params["CA_ROTOR_COUNT"]) == rotors and int(params["MAV_TYPE"]) == mav_type
    assert float(params["MPC_THR_HOVER"]) == pytest.approx(0.4903, abs=1e-4)
    for k in range(rotors):
        assert float(params[f"CA_ROTOR{k}_CT"]) == pytest.approx(10.0, abs=1e-3)  # kT · 1000² [N]
        radius = math.hypot(float(params[f"CA_ROTOR{k}_PX"]), float(params[f"CA_ROTOR{k}_PY"]))
        assert radius == pytest.approx(arm, abs=1e-4)
    spins = [np.sign(float(params[f"CA_ROTOR{k}_KM"])) for k in range(rotors)]
    assert sum(spins) == 0  # half of the rotors each way


def test_a_hexa_x_rolls_with_three_arms_of_lever_and_pitches_with_two_root_three():
    # The allocation moves the side rotors (at ±arm across) by 0.5 and the four corner rotors (±arm/2 across) by
    # 0.25 per unit of roll torque: 0.5 T (2 · 1 + 4 · 0.25) arm = 1.5 T arm; pitch moves the four corner rotors
    # (±arm·√3/2 fore and aft) by 0.5: 0.5 T · 4 · √3/2 arm = √3 T arm. The rule's rate gain sees these moments,
    # not Σ|y| (which would be 2 T arm for roll).
    from nexus.airframe.gains import authority
    from nexus.airframe.sizing import AirframeInput, size

    airframe = size("hexa", AirframeInput(frame="hexa-x", arm=0.3, mass=3.0, thrust_coefficient=1e-5, max_speed=1000.0))
    roll, pitch, yaw = authority(airframe)
    xx, yy, zz = airframe.inertia()
    assert roll * xx == pytest.approx(1.5 * 10.0 * 0.3, rel=1e-6)  # [N m] per unit
    assert pitch * yy == pytest.approx(math.sqrt(3.0) * 10.0 * 0.3, rel=1e-6)
    # Yaw: every rotor by 0.5 the way that turns it, 0.5 · 6 · T · kQ/kT.
    assert yaw * zz == pytest.approx(0.5 * 6 * 10.0 * airframe.torque_coefficient / 1e-5, rel=1e-6)


@pytest.mark.parametrize("frame", ["quad-x", "quad-plus", "hexa-x", "hexa-plus", "octo-x", "x8"])
def test_the_gain_rules_authority_is_the_allocations(frame):
    # The rule works the allocation's column scale out in NumPy (no Warp in `nexus vehicle new`); the allocation
    # built from the same rotors (FRD about the centre of mass, upright) must ask for the same moment per unit.
    from nexus.airframe.gains import authority
    from nexus.airframe.sizing import AirframeInput, size
    from nexus.control.allocation import Allocation
    from nexus.plant.rotor_geometry import RotorGeometry, effectiveness

    airframe = size("v", AirframeInput(frame=frame, arm=0.3, mass=3.0))
    moment = airframe.torque_coefficient / airframe.thrust_coefficient
    full = airframe.thrust_coefficient * airframe.max_speed**2
    height = airframe.centre_of_mass_height
    geometry = [RotorGeometry(channel=k, index=k, joint_path=f"rotor_{k + 1}",
                              position=(r.position[0], -r.position[1], height - r.position[2]), axis=(0.0, 0.0, -1.0),
                              yaw_moment=r.place.spin * moment, max_thrust=full) for k, r in enumerate(airframe.rotors)]
    scales = Allocation.from_matrix(effectiveness(geometry)).scales
    inertia = airframe.inertia()
    assert authority(airframe) == pytest.approx([scales[k] / inertia[k] for k in range(3)], rel=1e-9)
