"""PX4 flies the Aerosonde: lockstep against the scripted PX4 answering as PX4's fixed-wing airframe would.

The vehicle is vehicles/aerosonde.usda with its pitot's noise off (a layer written here), in the empty scene
(geodetic origin 488 m, g 9.80665), at its air start: 100 m up at 25 m/s east, trimmed. The scripted PX4 says
MAV_TYPE 1 (fixed wing) and answers every HIL_SENSOR with the trim as PX4 sends it (docs/px4.md, "Planes"):
the throttle on output 4 (Motor1), and each surface's trim servo value in PX4's sign on its channel (Servo1-3
on outputs 0-2: aileron, elevator, rudder). The trim at 25 m/s for g 9.80665 (docs/fixed_wing.md, "Trim";
the book's root solve at g 9.81 differs by under 0.0002 in each servo value): throttle 0.676768, aileron
0.110° (servo 0.00192/0.5236 = 0.003667), elevator −7.1594° (trailing edge down in the book's sign; PX4's
servo: up positive, so +0.124955/0.5236 = +0.238646), rudder −0.0109° (trailing edge left; PX4's servo,
right positive: +0.000362).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.core.errors import BuildError
from nexus.px4.errors import WrongAirframeError
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.config import RunConfig
from nexus.runtime.flight import build_flight
from nexus.runtime.run import run_flight

AEROSONDE = Path(__file__).resolve().parents[2] / "vehicles" / "aerosonde.usda"
THROTTLE, AILERON, ELEVATOR, RUDDER = 0.676768, 0.003667, 0.238646, 0.000362  # PX4's values, its signs
TRAVEL = 0.5236  # [rad] every surface's nexus:travel
TRIM_ROW = [AILERON, ELEVATOR, RUDDER, 0.0, THROTTLE] + [0.0] * 11
OPTIONS = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0}
DIFF_PRESSURE_BIT = 0x400  # HIL_SENSOR_UPDATED_DIFF_PRESSURE (MAVLink common.xml)


def layer(tmp: Path, body: str) -> Path:
    """The Aerosonde with ``body`` written over its base prim and its air start held at 25 m/s, 100 m up (whatever
    start the file gives it), as a USD layer whose sublayer is the file."""
    path = tmp / "aerosonde_over.usda"
    path.write_text(f'''#usda 1.0
(
    defaultPrim = "vehicle"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    upAxis = "Z"
    subLayers = [@{AEROSONDE}@]
)

over "vehicle"
{{
    over "body"
    {{
        over "base"
        {{
{body}
        }}
    }}

    def Scope "start" (
        prepend apiSchemas = ["NexusAirStartAPI"]
    )
    {{
        float nexus:airspeed = 25
        float nexus:height = 100
    }}
}}
''')
    return path


QUIET_PITOT = '''            over "Pitot"
            {
                bool nexus:noise = 0
            }'''


def fly(vehicle: Path, out: Path, script, duration: float, mav_type: int = 1):
    config = RunConfig(vehicle=str(vehicle), scene="empty", controller="px4", controller_options=OPTIONS,
                       device="cpu", duration=duration, seed=5)
    flight = build_flight(config, "cpu")
    peer = ScriptedPx4(flight.vehicle.controller.link.port, script, mav_type=mav_type)
    with peer.running():
        summary = run_flight(replace(flight.options, device="cpu", duration=duration), out, progress=False,
                             flight=flight)
    return pq.read_table(out / "record.parquet"), summary, peer, flight


def column(table, name) -> np.ndarray:
    return table.column(name).to_numpy().astype(np.float64)


@pytest.fixture(scope="module")
def quiet(tmp_path_factory):
    return layer(tmp_path_factory.mktemp("plane_px4"), QUIET_PITOT)


@pytest.fixture(scope="module")
def trimmed(quiet, tmp_path_factory):
    """4 s (1,000 ticks) of PX4 answering the trim from its first message."""
    return fly(quiet, tmp_path_factory.mktemp("trim") / "run", lambda n: TRIM_ROW, 4.0)


def test_px4_s_trim_flies_the_plane_level(trimmed):
    table, summary, peer, _ = trimmed
    assert summary.ticks == 1000 and summary.exit_reason == "duration"
    assert len(peer.of_type("HIL_SENSOR")) == 1000
    # Each answer lands on the controls row in the file's signs: the elevator's and rudder's servo values flipped.
    row = np.stack([column(table, f"controls[{i}]") for i in range(16)], axis=1)[1:]
    expected = np.array([AILERON, -ELEVATOR, -RUDDER, 0.0, THROTTLE] + [0.0] * 11, dtype=np.float32)
    assert np.array_equal(row, np.tile(expected, (len(row), 1)))
    # The trim flown open loop (docs/fixed_wing.md's trim flight held it 5 s within 0.0084 m/s, 0.037 m, 0.054 m
    # and 0.5°): 25 m/s, 100 m, east, wings level, pitch at the trim's α 2.869°; bounds 0.05 m/s, 0.25 m, 0.5°.
    z = column(table, "body/base.pose[2]")
    speed = np.sqrt(sum(column(table, f"body/base.velocity[{i}]") ** 2 for i in range(3)))
    assert np.max(np.abs(speed - 25.0)) < 0.05
    assert np.max(np.abs(z - z[0])) < 0.25
    assert abs(column(table, "body/base.pose[0]")[-1] - column(table, "body/base.pose[0]")[0] - 100.0) < 0.5
    assert np.max(np.abs(column(table, "body/base.pose[1]") - column(table, "body/base.pose[1]")[0])) < 0.25
    qx, qy, qz, qw = (column(table, f"body/base.pose[{i}]") for i in range(3, 7))
    roll = np.degrees(np.arctan2(2 * (qw * qx + qy * qz), 1 - 2 * (qx**2 + qy**2)))
    pitch = -np.degrees(np.arcsin(np.clip(2 * (qw * qy - qz * qx), -1, 1)))  # nose up: a negative turn about FLU y
    yaw = np.degrees(np.arctan2(2 * (qw * qz + qx * qy), 1 - 2 * (qy**2 + qz**2)))
    assert np.max(np.abs(roll)) < 0.5 and np.max(np.abs(yaw)) < 0.5
    assert np.max(np.abs(pitch - 2.869)) < 0.5


def test_px4_hears_a_fixed_wing_and_run_json_says_so(trimmed):
    *_, flight = trimmed
    assert flight.vehicle.controller.px4_mav_type == 1
    assert flight.vehicle.controller.stats()["px4_mav_type"] == 1


def test_diff_pressure_is_half_rho_v_squared_at_the_plane_s_airspeed_and_height(trimmed):
    table, _, peer, _ = trimmed
    sensors = peer.of_type("HIL_SENSOR")
    # The first message: the start-up's sample. The pitot reads the body-forward airspeed, 25·cos α with α the trim's
    # 0.0500749 rad: 24.96866 m/s; it sits 0.8 m ahead of the centre of mass, pitched up by α: 0.040 m above it,
    # 100.040 m over the NED origin, 588.040 m above sea level. ISA there: T = 288.15 − 0.0065·588.040 = 284.32774 K,
    # p = 101325·(T/288.15)^5.25588 = 94457.1 Pa, ρ = p/(287.05287·T) = 1.157317 kg/m³;
    # q = ½·1.157317·24.96866² = 360.752 Pa = 3.60752 hPa.
    first = sensors[0]
    assert first.fields_updated & DIFF_PRESSURE_BIT
    assert first.diff_pressure == pytest.approx(3.60752, abs=2e-4)
    # Every message: the recorded sample's ½ρu² in hPa, ρ by ISA at the pitot's recorded height.
    u = column(table, "airspeed.airspeed")
    z = column(table, "body/base.pose[2]")  # the centre of mass; the pitot is 0.04 m higher (±0.001 m in 4 s)
    origin = z[0] - 100.0
    temperature = 288.15 - 0.0065 * (488.0 + z - origin + 0.040)
    rho = 101325.0 * (temperature / 288.15) ** 5.25588 / (287.05287 * temperature)
    sent = np.array([m.diff_pressure for m in sensors])
    np.testing.assert_allclose(sent, 0.5 * rho * u * u * 0.01, rtol=2e-5)
    # 50 Hz on a 250 Hz tick: the bit on the start-up sample and every 5th tick after it, 4 s -> 201 samples.
    assert sum(bool(m.fields_updated & DIFF_PRESSURE_BIT) for m in sensors) == 201


SURFACES = {"aileron": (0, +1.0), "elevator": (1, -1.0), "rudder": (2, -1.0)}  # PX4 output channel, sign to the file


@pytest.mark.parametrize("role", list(SURFACES))
def test_one_servo_output_moves_only_its_surface_with_its_sign(role, quiet, trimmed, tmp_path):
    """PX4's output for one surface is raised by 0.2 from the 10th answer on; only that surface moves, by
    sign·0.2·travel = ±0.10472 rad (at 6.98 rad/s, 0.0279 rad a tick: there in 4 ticks)."""
    channel, sign = SURFACES[role]

    def script(n):
        row = list(TRIM_ROW)
        if n >= 10:
            row[channel] += 0.2
        return row

    table, *_ = fly(quiet, tmp_path / "run", script, 0.1)
    base = trimmed[0]
    moved = column(table, f"surface/{role}")
    trim = column(base, f"surface/{role}")[: len(moved)]
    # The 10th answer is written on tick 9 and read by the surfaces on tick 10; 4 ticks later it is there.
    assert np.array_equal(moved[:10], trim[:10])
    assert moved[14:] == pytest.approx(trim[14:] + sign * 0.2 * TRAVEL, abs=1e-6)
    for other in SURFACES:
        if other != role:
            assert np.array_equal(column(table, f"surface/{other}"), column(base, f"surface/{other}")[: len(moved)])
    # Each surface's sign by its effect, from the book's derivatives (Cℓδa > 0, Cmδe < 0, Cnδr < 0), in the body's
    # FLU axes, which are the world's (ENU) here: the plane flies east, level. PX4's positive aileron rolls right
    # (right wing down: +x in FLU as in FRD, the axis they share); its positive elevator (up, δe < 0) pitches the nose
    # up (−y in FLU, y pointing left); its positive rudder (right, δr < 0) yaws the nose right (−z in FLU, z up).
    axis, direction = {"aileron": (0, +1.0), "elevator": (1, -1.0), "rudder": (2, -1.0)}[role]
    omega = column(table, f"body/base.angular_velocity[{axis}]")
    assert direction * omega[-1] > 1e-2


def test_the_generic_type_of_px4_s_simulator_link_heartbeat_is_accepted(quiet, tmp_path):
    # Real PX4 sends MAV_TYPE 0 on the simulator link (SimulatorMavlink::send_heartbeat sets no type): no refusal.
    _, summary, _, flight = fly(quiet, tmp_path / "run", lambda n: TRIM_ROW, 0.1, mav_type=0)
    assert summary.exit_reason == "duration" and flight.vehicle.controller.px4_mav_type == 0


def test_a_multirotor_heartbeat_ends_the_plane_s_run_in_one_line(quiet, tmp_path):
    with pytest.raises(WrongAirframeError) as error:
        fly(quiet, tmp_path / "run", lambda n: TRIM_ROW, 0.1, mav_type=2)
    message = str(error.value)
    assert "\n" not in message and "MAV_TYPE 2" in message and "PX4_SYS_AUTOSTART=1030" in message
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["exit_reason"] == "px4-wrong-airframe"


def test_a_plane_without_an_airspeed_sensor_is_refused_before_any_stage_runs(tmp_path):
    vehicle = layer(tmp_path, '''            over "Pitot" (
                active = false
            )
            {
            }''')
    config = RunConfig(vehicle=str(vehicle), scene="empty", controller="px4", controller_options=OPTIONS,
                       device="cpu", duration=0.1)
    with pytest.raises(BuildError) as error:
        build_flight(config, "cpu")
    message = str(error.value)
    assert "\n" not in message and str(vehicle) in message
    assert "has no airspeed sensor (NexusAirspeedAPI)" in message and "Pitot" in message


def test_the_trim_row_is_the_trim_the_air_start_puts_on_the_surfaces(trimmed):
    # The first tick's surfaces are the air start's trim; PX4's trim answer asks for the same deflections:
    # servo·travel = 0.003667·0.5236 = 0.0019200 rad, −0.238646·0.5236 = −0.124955 rad, −0.000362·0.5236.
    table = trimmed[0]
    assert column(table, "surface/aileron")[-1] == pytest.approx(AILERON * TRAVEL, abs=2e-6)
    assert column(table, "surface/elevator")[-1] == pytest.approx(-ELEVATOR * TRAVEL, abs=2e-6)
    assert column(table, "surface/rudder")[-1] == pytest.approx(-RUDDER * TRAVEL, abs=2e-6)
    assert math.degrees(column(table, "surface/elevator")[0]) == pytest.approx(-7.1594, abs=1e-3)


def test_the_offboard_policy_on_the_plane_is_refused_in_one_line(tmp_path):
    # (--px4-mission on a plane flies the plane's mission from a catapult: tests/px4/test_plane_mission.py.)
    policy = tmp_path / "policy.onnx"
    policy.write_bytes(b"")
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "run"),
                                       "--vehicle", "aerosonde", "--controller", "px4", "--px4-offboard-policy",
                                       str(policy), "--duration", "1"])
    assert result.exit_code != 0
    line = [text for text in result.output.splitlines() if "--px4-offboard-policy" in text]
    assert len(line) == 1 and "aerosonde.usda" in line[0] and "is a plane" in line[0], result.output


def test_the_level_bounds_can_fail_without_px4_s_throttle(quiet, tmp_path):
    # PX4's motor output at 0 and the surfaces at trim: the plane glides and loses 10.9 m in 4 s (measured), so the
    # 0.25 m bound of the trim flight above is a real check.
    row = list(TRIM_ROW)
    row[4] = 0.0
    table, *_ = fly(quiet, tmp_path / "run", lambda n: row, 4.0)
    z = column(table, "body/base.pose[2]")
    assert z[0] - z[-1] > 5.0
