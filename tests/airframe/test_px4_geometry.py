"""Frames `nexus vehicle new` writes hold PX4's own geometry: rotor k where PX4's motor k sits, at PX4's height,
turning PX4's way (hexa-x is checked in test_sizing.py and test_vehicle_new.py).

Each frame is generated with a 0.5 m arm and read back through `nexus px4 params`, whose CA_ROTORn_PX/PY/PZ/KM
follow PX4's convention (control allocator, src/modules/control_allocator/module.yaml): FRD metres from the
centre of mass (x forward, y right, z down) and KM > 0 for a counter-clockwise rotor (seen from above). So
PX4's numbers compare directly: PX4's generic airframes place their rotors at a 0.5 m arm (hexa +, octo x) or
on a unit circle (the mixer geometries; times 0.5 here). KM's size is each vehicle's own torque over thrust
(PX4's generic files leave it at the default 0.05), so only its sign is PX4's.

Heights: PX4's flat frames leave PZ at 0 (every rotor in one plane); Nexus's rotor plane sits above the
centre of mass, so the check is that every rotor has the same PZ. The x8 (PX4's octo coaxial) has its upper
rotors 0.1 arm above and its lower 0.1 arm below the pair's middle (octa_cox.toml: PZ -0.1 and +0.1 on a unit
arm, FRD); generated with coaxial_gap = 0.05 m (0.1 x 0.5 m), PZ minus the middle is -0.05 m for rotors 0-3
and +0.05 m for rotors 4-7.
"""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main

ARM = 0.5  # [m]
CCW, CW = 1, -1

#: frame -> [(PX, PY) [m, FRD], spin] for PX4's motors 1.. (rotor 0.. here).
PX4 = {
    # PX4/PX4-Autopilot src/modules/systemlib/mixer/multi_tables.py (commit 03bebdda), `quad_plus`:
    # [90, CCW], [-90, CCW], [0, CW], [180, CW], angles clockwise from the nose, position (cos, sin) on a unit
    # arm; x 0.5 m. (ROMFS airframe 5001_quad_+ sets `MIXER quad_+`, this table.)
    "quad-plus": [((0.0, 0.5), CCW), ((0.0, -0.5), CCW), ((0.5, 0.0), CW), ((-0.5, 0.0), CW)],
    # PX4/PX4-Autopilot ROMFS/px4fmu_common/init.d/airframes/7001_hexa_+ (commit f3cb7d30):
    # CA_ROTOR0 (0.5, 0.0) KM -0.05; 1 (-0.5, 0.0) KM default +0.05; 2 (-0.25, -0.43) KM -0.05;
    # 3 (0.25, 0.43) +0.05; 4 (0.25, -0.43) +0.05; 5 (-0.25, 0.43) KM -0.05. (0.43 is PX4's rounding of
    # 0.5 sin 60° = 0.4330; hex_plus.toml gives 0.866025 on a unit arm.)
    "hexa-plus": [((0.5, 0.0), CW), ((-0.5, 0.0), CCW), ((-0.25, -0.43), CW), ((0.25, 0.43), CCW),
                  ((0.25, -0.43), CCW), ((-0.25, 0.43), CW)],
    # ROMFS/px4fmu_common/init.d/airframes/8001_octo_x as PX4 sets CA_ROTORn since the control allocator
    # (junwoo091400/PX4-Autopilot commit 8f68d7f3; PX4/PX4-Autopilot's src/lib/mixer/MultirotorMixer/geometries/
    # octa_x.toml, commit 8ab295e8, gives the same on a unit arm: 0.9238795 and 0.3826834, x 0.5 = 0.4619, 0.1913):
    # 0 (0.46, 0.19) KM -0.05; 1 (-0.46, -0.19) -0.05; 2 (0.19, 0.46) +; 3 (-0.46, 0.19) +; 4 (0.46, -0.19) +;
    # 5 (-0.19, -0.46) +; 6 (0.19, -0.46) KM -0.05; 7 (-0.19, 0.46) KM -0.05.
    "octo-x": [((0.46, 0.19), CW), ((-0.46, -0.19), CW), ((0.19, 0.46), CCW), ((-0.46, 0.19), CCW),
               ((0.46, -0.19), CCW), ((-0.19, -0.46), CCW), ((0.19, -0.46), CW), ((-0.19, 0.46), CW)],
    # PX4/PX4-Autopilot src/lib/mixer/MultirotorMixer/geometries/octa_cox.toml (commit 20c863c9), the mixer of
    # airframe 12001_octo_cox: unit arm, x 0.5 (0.707107 x 0.5 = 0.3536); rotors 1-4 "top", 5-8 "bottom":
    # front_right_top CCW, front_left_top CW, rear_left_top CCW, rear_right_top CW, front_left_bottom CCW,
    # front_right_bottom CW, rear_right_bottom CCW, rear_left_bottom CW.
    "x8": [((0.3536, 0.3536), CCW), ((0.3536, -0.3536), CW), ((-0.3536, -0.3536), CCW), ((-0.3536, 0.3536), CW),
           ((0.3536, -0.3536), CCW), ((0.3536, 0.3536), CW), ((-0.3536, 0.3536), CCW), ((-0.3536, -0.3536), CW)],
}
#: x8: PZ minus the middle of the pair [m, FRD: negative is up], octa_cox.toml's -0.1 / +0.1 x 0.5.
X8_HEIGHTS = [-0.05] * 4 + [0.05] * 4


@pytest.fixture(scope="module")
def px4_params(tmp_path_factory):
    """frame -> the CA_ROTORn_* values `nexus px4 params` derives from the file `nexus vehicle new` wrote."""
    folder = tmp_path_factory.mktemp("px4_geometry")
    params = {}
    for frame in PX4:
        description = folder / f"{frame}.toml"
        description.write_text(f'frame = "{frame}"\narm = {ARM}\nmass = 4.0\ncoaxial_gap = 0.05\n')
        vehicle = folder / f"{frame}.usda"
        made = CliRunner().invoke(main, ["vehicle", "new", "v", "--from", str(description), "--out", str(vehicle)])
        assert made.exit_code == 0, made.output
        result = CliRunner().invoke(main, ["px4", "params", "--vehicle", str(vehicle)])
        assert result.exit_code == 0, result.output
        params[frame] = {name: float(value) for name, value in (line.removeprefix("PX4_PARAM_").split("=")
                                                                 for line in result.output.split()
                                                                 if line.startswith("PX4_PARAM_CA_ROTOR"))}
    return params


def column(params: dict, rotors: int, field: str) -> np.ndarray:
    return np.array([params[f"CA_ROTOR{k}_{field}"] for k in range(rotors)])


@pytest.mark.parametrize("frame", list(PX4))
def test_each_rotor_sits_where_px4s_motor_of_that_number_sits(px4_params, frame):
    expected = PX4[frame]
    params = px4_params[frame]
    assert params["CA_ROTOR_COUNT"] == len(expected)
    positions = np.stack([column(params, len(expected), "PX"), column(params, len(expected), "PY")], axis=1)
    assert positions == pytest.approx(np.array([p for p, _ in expected]), abs=0.005)  # PX4's 2-digit rounding


@pytest.mark.parametrize("frame", list(PX4))
def test_each_rotor_turns_the_way_px4s_motor_of_that_number_turns(px4_params, frame):
    expected = PX4[frame]
    km = column(px4_params[frame], len(expected), "KM")
    assert np.sign(km).astype(int).tolist() == [spin for _, spin in expected]
    assert np.abs(km) == pytest.approx(np.full(len(expected), np.abs(km[0])), rel=1e-9)  # one rotor type


@pytest.mark.parametrize("frame", ["quad-plus", "hexa-plus", "octo-x"])
def test_a_flat_frames_rotors_share_one_plane(px4_params, frame):
    heights = column(px4_params[frame], len(PX4[frame]), "PZ")
    assert np.all(heights == heights[0])
    assert heights[0] < 0.0  # the rotor plane above the centre of mass (FRD z down)


def test_the_x8s_upper_rotors_are_px4s_top_and_its_lower_px4s_bottom(px4_params):
    heights = column(px4_params["x8"], 8, "PZ")
    middle = heights.mean()
    assert heights - middle == pytest.approx(X8_HEIGHTS, abs=1e-4)
