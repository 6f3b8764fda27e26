"""PX4 and the standard VTOL: the parameters for PX4's standard-VTOL airframe, and lockstep against the scripted PX4
answering as that airframe would (MAV_TYPE 22), its outputs landing on the lift ESCs, the pusher and the surfaces.

By hand for vehicles/standard_vtol.usda (13.0 kg; docs/fixed_wing.md, "A standard VTOL"):

* a lift rotor's full thrust kT·ω_max² = 2.26e-4 · 560² = 70.8736 N, its yaw moment per unit thrust kQ/kT =
  8.5e-6 / 2.26e-4 = 0.037611 m; the hover's thrust fraction (375.53 / 560)² = 0.44970;
* the rotors at (±0.6, ±0.55) m forward and sideways, 0.15 m above the base's origin; the centre of mass is
  4 · 0.2 · 0.15 / 13.0 = 0.00923 m above it, so in FRD from the centre of mass rotor 1 (front right) sits at
  (0.6, 0.55, −0.1408);
* the Aerosonde's level stall speed 10.39 m/s at 11 kg (docs/fixed_wing.md) scales with √m: 10.39 · √(13 / 11)
  = 11.295 m/s at 13 kg;
* answered 0.8 on its four lift motors, each rotor gives a thrust fraction 0.5 · 0.8 + 0.5 · 0.64 = 0.72 of its
  70.8736 N: 204.116 N in all against 13.0 · 9.80665 = 127.486 N of weight, so it climbs at 76.630 / 13.0 =
  5.8946 m/s².
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.core.errors import BuildError
from nexus.px4.errors import WrongAirframeError
from nexus.runtime.config import RunConfig
from nexus.runtime.flight import build_flight
from tests.px4.test_plane_lockstep import column, fly as fly_plane

VTOL = Path(__file__).resolve().parents[2] / "vehicles" / "standard_vtol.usda"
OPTIONS = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0}
TRAVEL = 0.5236  # [rad] every surface's nexus:travel
CLIMB = 5.8946  # [m/s²], above


def params_of(vehicle: str = "standard_vtol") -> dict:
    result = CliRunner().invoke(main, ["px4", "params", "--vehicle", vehicle])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("PX4_PARAM_")]
    return {line.split("=")[0][len("PX4_PARAM_"):]: float(line.split("=")[1]) for line in lines}


def test_nexus_px4_params_gives_px4_s_standard_vtol_airframe_the_file_s_rotors_pusher_surfaces_and_transitions():
    p = params_of()
    assert (p["MAV_TYPE"], p["CA_AIRFRAME"], p["VT_TYPE"], p["CA_ROTOR_COUNT"]) == (22, 2, 2, 5)
    assert (p["CA_ROTOR0_PX"], p["CA_ROTOR0_PY"], p["CA_ROTOR0_PZ"]) == (0.6, 0.55, -0.1408)
    assert (p["CA_ROTOR1_PX"], p["CA_ROTOR1_PY"]) == (-0.6, -0.55)  # rear left, PX4's motor 2
    assert (p["CA_ROTOR2_PX"], p["CA_ROTOR2_PY"]) == (0.6, -0.55)  # front left, clockwise
    assert [p[f"CA_ROTOR{n}_KM"] for n in range(4)] == [0.03761, 0.03761, -0.03761, -0.03761]
    assert [p[f"CA_ROTOR{n}_CT"] for n in range(4)] == [70.874] * 4
    # The pusher: the fifth rotor, along the nose, at the centre of mass, no yaw moment.
    assert (p["CA_ROTOR4_AX"], p["CA_ROTOR4_AY"], p["CA_ROTOR4_AZ"], p["CA_ROTOR4_KM"]) == (1.0, 0.0, 0.0, 0.0)
    assert 40.0 < p["CA_ROTOR4_CT"] < 200.0  # its static thrust [N]
    assert p["MPC_THR_HOVER"] == 0.4497 and p["THR_MDL_FAC"] == 0.5
    # Outputs: PX4 output n is the file's channel n: Motor1-4 the lift ESCs, Motor5 the pusher, Servo1-3 the surfaces.
    assert [p[f"PWM_MAIN_FUNC{n}"] for n in range(1, 17)] == [101, 102, 103, 104, 105, 201, 202, 203] + [0] * 8
    assert (p["CA_SV_CS_COUNT"], p["CA_SV_CS0_TYPE"], p["CA_SV_CS1_TYPE"], p["CA_SV_CS2_TYPE"]) == (3, 15, 3, 4)
    # The transitions and the vertical legs as the VTOL mission flies them (its schema's defaults).
    assert (p["VT_ARSP_TRANS"], p["VT_ARSP_BLEND"], p["VT_TRANS_TIMEOUT"], p["VT_F_TRANS_THR"]) == (16, 12, 15, 1)
    assert (p["MIS_TAKEOFF_ALT"], p["MPC_LAND_SPEED"], p["NAV_ACC_RAD"]) == (20, 0.7, 60)
    assert p["FW_AIRSPD_TRIM"] == 25 and p["FW_AIRSPD_STALL"] == pytest.approx(11.295, abs=0.01)
    assert p["RWTO_TKOFF"] == 0 and p["FW_LAUN_DETCN_ON"] == 0
    assert "FW_LND_ANG" not in p and "FW_LND_AIRSPD" not in p  # it lands on its rotors
    assert p["VT_ARSP_TRANS"] > p["FW_AIRSPD_MIN"]  # PX4 leaves the transition above its minimum airspeed


def test_the_airframe_to_start_px4_with_is_named_on_stderr():
    result = CliRunner().invoke(main, ["px4", "params", "--vehicle", "standard_vtol"])
    assert "is a standard VTOL: start PX4 with PX4_SYS_AUTOSTART=1040" in result.output


def fly(out: Path, script, duration: float, mav_type: int = 22):
    """The scripted PX4 (as PX4's standard-VTOL airframe: MAV_TYPE 22) answering ``script`` in lockstep."""
    return fly_plane(VTOL, out, script, duration, mav_type=mav_type)


LIFT = [0.8] * 4 + [0.0] * 12


@pytest.fixture(scope="module")
def lifted(tmp_path_factory):
    """1.2 s of PX4 answering 0.8 on its four lift motors from its first message."""
    return fly(tmp_path_factory.mktemp("vtol_px4") / "run", lambda n: LIFT, 1.2)


def test_px4_s_lift_motors_drive_the_lift_escs_and_climb_at_the_hand_worked_rate(lifted):
    table, summary, peer, flight = lifted
    assert summary.ticks == 300 and summary.exit_reason == "duration"
    assert flight.vehicle.controller.px4_mav_type == 22
    row = np.stack([column(table, f"controls[{i}]") for i in range(16)], axis=1)[1:]
    assert np.array_equal(row, np.tile(np.array(LIFT, dtype=np.float32), (len(row), 1)))
    # Off its gear, the ESCs settled (τ 0.05 s): the height's second difference over 0.3 to 0.6 s, at most 3.5 m/s
    # (the wing falling flat the other way: under 2 N of drag, 2 % of the 76.6 N that lifts it).
    time, z = column(table, "time"), column(table, "body/base.pose[2]")
    window = (time >= 0.3) & (time <= 0.6)
    accel = 2.0 * np.polyfit(time[window], z[window], 2)[0]
    assert accel == pytest.approx(CLIMB, rel=0.03)
    assert z[-1] - z[0] > 2.5  # ½ · 5.89 · (1.2 − 0.05)² = 3.9 m, less the lag and the drag


def test_the_pusher_and_the_surfaces_take_px4_s_motor_5_and_servos_with_their_signs(tmp_path):
    # Motor5 (output 4) full; Servo1-3 (outputs 5-7: aileron, elevator, rudder) at +0.2: the row takes the pusher as
    # it comes and the servos in the file's signs (aileron +, elevator −, rudder −: PX4's up and right positive).
    answer = [0.0] * 4 + [1.0, 0.2, 0.2, 0.2] + [0.0] * 8
    table, summary, *_ = fly(tmp_path / "run", lambda n: answer, 0.5)
    row = np.stack([column(table, f"controls[{i}]") for i in range(16)], axis=1)[1:]
    expected = np.array([0.0] * 4 + [1.0, 0.2, -0.2, -0.2] + [0.0] * 8, dtype=np.float32)
    assert np.array_equal(row, np.tile(expected, (len(row), 1)))
    # 0.2 of 0.5236 rad of travel at 6.98 rad/s: there in 4 ticks.
    assert column(table, "surface/aileron")[-1] == pytest.approx(0.2 * TRAVEL, abs=1e-6)
    assert column(table, "surface/elevator")[-1] == pytest.approx(-0.2 * TRAVEL, abs=1e-6)
    # The pusher moves it along its nose (east, as the file faces) on its wheels.
    assert column(table, "body/base.velocity[0]")[-1] > 0.5


def test_a_fixed_wing_heartbeat_ends_the_vtol_s_run_in_one_line(tmp_path):
    with pytest.raises(WrongAirframeError) as error:
        fly(tmp_path / "run", lambda n: LIFT, 0.1, mav_type=1)
    message = str(error.value)
    assert "\n" not in message and "MAV_TYPE 1" in message and "PX4_SYS_AUTOSTART=1040" in message
    assert "standard VTOL (MAV_TYPE 22" in message
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["exit_reason"] == "px4-wrong-airframe"


def test_px4_mission_flies_the_vtol_mission_as_px4_s_vtol_items():
    # The default VTOL mission: take off to 20 m towards (0, 400), the three waypoints at 40 m, land at the origin.
    config = RunConfig(vehicle=str(VTOL), scene="empty", controller="px4",
                       controller_options={**OPTIONS, "mission": {"url": "udpin:127.0.0.1:0"}}, device="cpu",
                       duration=1.0)
    flight = build_flight(config, "cpu")
    items = flight.vehicle.controller.mission_options["plane_items"]
    origin = flight.vehicle.plant.origin
    assert [item[0] for item in items] == [84, 16, 16, 16, 85]  # NAV_VTOL_TAKEOFF, NAV_WAYPOINT x3, NAV_VTOL_LAND
    assert [item[-1] for item in items] == [20.0, 40.0, 40.0, 40.0, 0.0]
    assert [item[3] for item in items[1:4]] == [60.0] * 3  # the acceptance radius
    # 400 m east at the scene's origin (h above the ellipsoid): the longitude moves by 400 / ((N(φ) + h) cos φ) [rad],
    # N the WGS-84 prime vertical radius; the takeoff item and the first waypoint share it, the landing is the origin.
    lat0, lon0 = float(origin.latitude), float(origin.longitude)
    assert items[0][6] == items[1][6] and items[0][7] == items[1][7]
    assert items[4][6] == round(lat0 * 1e7) and items[4][7] == round(lon0 * 1e7)
    a, e2 = 6378137.0, 6.69437999014e-3
    phi = math.radians(lat0)
    n = a / math.sqrt(1.0 - e2 * math.sin(phi) ** 2)
    east_deg = math.degrees(400.0 / ((n + float(origin.altitude)) * math.cos(phi)))
    assert items[1][7] == pytest.approx((lon0 + east_deg) * 1e7, abs=2)
    assert items[2][6] > items[1][6]  # (400, 400): north of the first


def test_an_offboard_policy_on_the_vtol_is_refused_before_any_stage_runs(tmp_path):
    config = RunConfig(vehicle=str(VTOL), scene="empty", controller="px4",
                       controller_options={**OPTIONS, "offboard_policy": "policies/none.onnx"}, device="cpu",
                       duration=1.0)
    with pytest.raises(BuildError, match="this vehicle is a standard VTOL: drop the option"):
        build_flight(config, "cpu")
