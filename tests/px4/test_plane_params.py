"""``nexus px4 params`` on the Aerosonde: PX4's fixed-wing parameters against numbers worked by hand.

The Aerosonde (vehicles/aerosonde.usda, docs/fixed_wing.md): 11 kg, wing 0.55 m², ρ 1.2682 kg/m³, CL0 0.23,
CLα 5.61 /rad, stall angle 0.47 rad; its mission cruises at 25 m/s (the default plane mission's); aileron, elevator, rudder on channels 0, 1, 2 with
0.5236 rad of travel, the propeller's throttle on channel 4. The empty scene's g is 9.80665 m/s².
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from pxr import Usd

from nexus.cli import main
from nexus.core.errors import BuildError
from nexus.plant.loading import load_plant
from nexus.px4.params import px4_parameters
from nexus.px4.plane_outputs import plane_outputs
from tests.fixed_wing.book_model import trim as book_trim

AEROSONDE = Path(__file__).resolve().parents[2] / "vehicles" / "aerosonde.usda"


@pytest.fixture(scope="module")
def params():
    plant, _, _ = load_plant("aerosonde", "empty")
    return px4_parameters(plant)


def test_the_airframe_is_a_fixed_wing_with_one_motor_and_three_surfaces(params):
    assert params["MAV_TYPE"] == 1 and params["CA_AIRFRAME"] == 1 and params["CA_ROTOR_COUNT"] == 1
    assert params["CA_SV_CS_COUNT"] == 3
    # PX4's types: 15 single-channel aileron (rolls), 3 elevator (pitches), 4 rudder (yaws), each full scale on its
    # own axis and none on the others (PX4's defaults for one surface per axis).
    expected = {0: (15, 1.0, 0.0, 0.0), 1: (3, 0.0, 1.0, 0.0), 2: (4, 0.0, 0.0, 1.0)}
    for i, (kind, roll, pitch, yaw) in expected.items():
        assert params[f"CA_SV_CS{i}_TYPE"] == kind
        assert (params[f"CA_SV_CS{i}_TRQ_R"], params[f"CA_SV_CS{i}_TRQ_P"], params[f"CA_SV_CS{i}_TRQ_Y"]) == (roll, pitch, yaw)


def test_outputs_sit_on_the_file_s_channels_and_clear_the_rest(params):
    # Output n (PWM_MAIN_FUNC n+1) is the file's channel n: Servo1-3 (201-203) on 0-2, Motor1 (101) on 4.
    functions = [params[f"PWM_MAIN_FUNC{n}"] for n in range(1, 17)]
    assert functions == [201, 202, 203, 0, 101] + [0] * 11
    assert params["PWM_MAIN_REV"] == 0  # no output reversed: the signs are mapped by Nexus (docs/px4.md, "Planes")


def test_speeds_from_the_wing_and_the_air_start(params):
    # Stall: √(2 m g / (ρ S CLmax)), CLmax = 0.23 + 5.61·0.47 = 2.8667: √(2·11·9.80665 / (1.2682·0.55·2.8667))
    # = √(215.7463 / 1.9995586) = √107.8970 = 10.3874 m/s. Minimum 1.3 × stall = 13.5036 m/s. Trim: the mission's.
    assert params["FW_AIRSPD_STALL"] == 10.39
    assert params["FW_AIRSPD_MIN"] == 13.50
    assert params["FW_AIRSPD_TRIM"] == 25.0
    # Maximum: the fastest level flight Nexus's trim solves at full throttle or less: 31.1 m/s. The book's own root
    # solve needs throttle 0.835 there (reachable) and full throttle only at about 37.5 m/s, so 31.1 is conservative.
    assert params["FW_AIRSPD_MAX"] == 31.1
    assert book_trim(31.1).throttle < 1.0 < book_trim(37.6).throttle


def test_trim_throttle_and_servo_trims_in_px4_s_signs(params):
    # The book's trim at 25 m/s (g 9.81): δt 0.676776, δe −0.125044 rad; Nexus's at g 9.80665 is within 2e-4 of it.
    book = book_trim(25.0)
    assert params["FW_THR_TRIM"] == pytest.approx(book.throttle, abs=5e-4)
    assert (params["FW_THR_MIN"], params["FW_THR_MAX"]) == (0.0, 1.0)
    # PX4's servo sign: elevator up positive, the book's δe positive down: TRIM_PITCH = −δe / travel = 0.125044 /
    # 0.5236 = 0.23882. The lateral trim (docs/fixed_wing.md): δa 0.110°, δr −0.011° over 30° of travel: roll
    # 0.110/30 = 0.0037 (rolls right in both signs), yaw +0.011/30 = 0.0004 (PX4's rudder right positive).
    assert params["TRIM_PITCH"] == pytest.approx(-book.elevator / 0.5236, abs=5e-4)
    assert params["TRIM_ROLL"] == pytest.approx(0.110 / 30.0, abs=1e-4)
    assert params["TRIM_YAW"] == pytest.approx(0.011 / 30.0, abs=1e-4)


def test_cli_names_the_airframe_and_prints_the_plane_s_settings():
    result = CliRunner().invoke(main, ["px4", "params", "--vehicle", "aerosonde"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "PX4_PARAM_FW_AIRSPD_STALL=10.39" in lines and "PX4_PARAM_FW_AIRSPD_TRIM=25.0" in lines
    assert "PX4_PARAM_PWM_MAIN_FUNC5=101" in lines and "PX4_PARAM_MAV_TYPE=1" in lines
    assert any("PX4_SYS_AUTOSTART=1030" in line and "1030_gazebo-classic_plane" in line for line in lines)


def over(tmp: Path, text: str, name: str = "plane") -> Path:
    path = tmp / f"{name}.usda"  # a new name per layer: USD keeps an opened layer by its path
    path.write_text(f'#usda 1.0\n(\n    defaultPrim = "vehicle"\n    metersPerUnit = 1\n    kilogramsPerUnit = 1\n'
                    f'    upAxis = "Z"\n    subLayers = [@{AEROSONDE}@]\n)\n\n{text}\n')
    return path


def test_the_trim_airspeed_is_the_mission_s_and_a_mission_too_slow_for_px4_is_refused(tmp_path):
    # The vehicle file's own plane mission at 28 m/s: PX4's trim airspeed follows it; at 13 m/s, below 1.3 × stall
    # (13.50 m/s), PX4 would cruise under its own minimum: one line naming the prim and attribute.
    def mission(speed):
        path = over(tmp_path, 'over "vehicle"\n{\n    def Scope "mission" (\n'
                    '        prepend apiSchemas = ["NexusPlaneMissionAPI"]\n    )\n    {\n'
                    f'        float nexus:airspeed = {speed}\n    }}\n}}', name=f"mission_{speed}")
        return load_plant(str(path), "empty")[0], path

    plant, _ = mission(28)
    assert px4_parameters(plant)["FW_AIRSPD_TRIM"] == 28.0
    plant, path = mission(13)
    with pytest.raises(BuildError) as error:
        px4_parameters(plant)
    message = str(error.value)
    assert "\n" not in message and f"{path}: /vehicle/mission nexus:airspeed 13 m/s" in message
    assert "13.50 m/s (FW_AIRSPD_MIN)" in message


def test_a_flap_and_a_shared_channel_are_refused_naming_the_prim(tmp_path):
    flap = over(tmp_path, '''over "vehicle"
{
    over "body"
    {
        over "base"
        {
            def Scope "Flap" (
                prepend apiSchemas = ["NexusControlSurfaceAPI"]
            )
            {
                token nexus:role = "flap"
                int nexus:channel = 5
            }
        }
    }
}''')
    with pytest.raises(BuildError, match=r"/vehicle/body/base/Flap: nexus:role 'flap' has no PX4 output mapping"):
        plane_outputs(Usd.Stage.Open(str(flap)), flap)
    shared = over(tmp_path, name="shared", text='over "vehicle"\n{\n    over "body"\n    {\n        over "base"\n        {\n'
                  '            over "Rudder"\n            {\n                int nexus:channel = 4\n            }\n'
                  '        }\n    }\n}')
    with pytest.raises(BuildError, match=r"Rudder: nexus:channel = 4 is also /vehicle/body/base/Propeller's"):
        plane_outputs(Usd.Stage.Open(str(shared)), shared)


def test_the_stall_speed_worked_here_is_the_one_asserted():
    assert math.sqrt(2 * 11 * 9.80665 / (1.2682 * 0.55 * (0.23 + 5.61 * 0.47))) == pytest.approx(10.3874, abs=1e-4)
