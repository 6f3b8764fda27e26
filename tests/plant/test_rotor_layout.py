"""Rotor layouts that cannot fly are refused when the vehicle loads, in one line naming the file and prims.

Each case edits the shipped Astro Max by text substitution (the literals are the file's own) and loads it
the way ``nexus run`` does, before any stage runs.
"""

import pytest

from nexus.core.errors import BuildError
from nexus.plant.assets import ROOT
from nexus.plant.loading import load_plant

VEHICLE = ROOT / "vehicles" / "astro_max_base.usda"
ROTORS = {  # rotor body translate and joint localPos0 of each rotor (FLU)
    1: ("(0.353553, -0.353553, 0.4)", "(0.353553, -0.353553, 0.1)"),
    2: ("(-0.353553, 0.353553, 0.4)", "(-0.353553, 0.353553, 0.1)"),
    3: ("(0.353553, 0.353553, 0.4)", "(0.353553, 0.353553, 0.1)"),
    4: ("(-0.353553, -0.353553, 0.4)", "(-0.353553, -0.353553, 0.1)"),
}
JOINTS = "/vehicle/joints/rotor_1, /vehicle/joints/rotor_2, /vehicle/joints/rotor_3, /vehicle/joints/rotor_4"


def load_error(tmp_path, *substitutions, count=1) -> str:
    text = VEHICLE.read_text()
    for old, new in substitutions:
        assert old in text, old
        text = text.replace(old, new, count)
    path = tmp_path / "bad.usda"
    path.write_text(text)
    with pytest.raises(BuildError) as caught:
        load_plant(path, "empty")
    message = str(caught.value)
    assert message.startswith(str(path)) and "\n" not in message, message
    return message


def test_rotors_that_all_spin_one_way_give_no_yaw(tmp_path):
    # Rotors 3 and 4 turned counter-clockwise like 1 and 2: the yaw row is kQ/kT times the thrust row.
    message = load_error(tmp_path, ("int nexus:spin = -1", "int nexus:spin = 1"), count=2)
    assert f"rotors {JOINTS} give no yaw authority" in message and "nexus:spin" in message


def test_rotors_in_one_line_give_no_roll(tmp_path):
    # Every rotor moved onto the body's x axis (y = 0): no rotor has a roll arm.
    edits = []
    for body, joint in ROTORS.values():
        edits += [(body, body.replace(body.split(", ")[1], "0")), (joint, joint.replace(joint.split(", ")[1], "0"))]
    message = load_error(tmp_path, *edits)
    assert f"rotors {JOINTS} give no roll authority" in message


def test_too_little_thrust_for_the_weight_is_refused(tmp_path):
    # Full thrust 4 · 2.26e-4 · 250² = 56.5 N for 5.831 kg · 9.80665 = 57.18 N: a ratio of 0.988, under 1.3.
    message = load_error(tmp_path, ("float nexus:maxSpeed = 375", "float nexus:maxSpeed = 250"), count=4)
    assert "give 56.5 N at full speed" in message and "weight of 57.18 N" in message
    assert "ratio of 0.988" in message and "at least 1.3" in message


def test_a_propeller_without_a_spin_direction_is_refused(tmp_path):
    message = load_error(tmp_path, ("        int nexus:spin = 1\n", ""))
    assert "propeller prims /vehicle/propeller_1 have no nexus:spin" in message


def test_an_esc_without_a_rotor_is_refused(tmp_path):
    # propeller_4 deleted: four ESC prims drive three rotors.
    text = VEHICLE.read_text()
    start = text.index('    def Scope "propeller_4"')
    end = text.index('    def Scope "estimator"')
    message = load_error(tmp_path, (text[start:end], ""))
    assert "4 ESC prims (/vehicle/esc_1, /vehicle/esc_2, /vehicle/esc_3, /vehicle/esc_4) for 3 rotors" in message


def test_esc_channels_must_count_from_zero(tmp_path):
    message = load_error(tmp_path, ("int nexus:channel = 3", "int nexus:channel = 5"))
    assert "use channels [0, 1, 2, 5]" in message and "channels 0 to 3" in message
