"""Bad vehicle files fail before Newton reads them, in one line naming file, prim and attribute.

Each case edits the shipped Astro Max by text substitution into ``tmp_path``
and opens it the way ``nexus run`` does (:func:`open_stage`, then
:func:`load_plant` where the check needs Newton's joint map). The expected
values are the edited literals themselves.
"""

import logging
import re
from types import SimpleNamespace
from pathlib import Path

import pytest

from nexus.runtime.assembly import assemble
from nexus.core.errors import BuildError
from nexus.plant.assets import ROOT
from nexus.plant.loading import load_plant, open_stage

VEHICLE = ROOT / "vehicles" / "astro_max_base.usda"
BASE_INERTIA = "float3 physics:diagonalInertia = (0.178, 0.176, 0.291)"
BASE_MASS = "float physics:mass = 5.031"
ROTOR_1 = '''            double3 xformOp:translate = (0.353553, -0.353553, 0.4)
            uniform token[] xformOpOrder = ["xformOp:translate"]
            float physics:mass = 0.2'''


def edited(tmp_path: Path, *substitutions: tuple[str, str], name: str = "bad.usda") -> Path:
    """The shipped vehicle with each ``(old, new)`` replaced once; ``old`` must occur."""
    text = VEHICLE.read_text()
    for old, new in substitutions:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / name
    path.write_text(text)
    return path


def build_error(path: Path, full: bool = False) -> str:
    with pytest.raises(BuildError) as caught:
        load_plant(path, "empty") if full else open_stage(path)
    message = str(caught.value)
    assert str(path) in message
    assert "\n" not in message, message  # one line
    return message


MASS_CASES = {
    # Newton would fly these with its mass computer's guess instead (issue 9, point 1).
    "negative-base-mass": ((BASE_MASS, "float physics:mass = -5.031"),
                           r"prim /vehicle/body/base attribute 'physics:mass' is -5\.031; .*positive and finite"),
    "zero-base-mass": ((BASE_MASS, "float physics:mass = 0"), r"/vehicle/body/base attribute 'physics:mass' is 0;"),
    "nan-mass": ((BASE_MASS, "float physics:mass = nan"), r"/vehicle/body/base attribute 'physics:mass' is nan;"),
    "negative-rotor-mass": ((ROTOR_1, ROTOR_1.replace("= 0.2", "= -0.2")),
                            r"prim /vehicle/body/rotor_1 attribute 'physics:mass' is -0\.2;"),
    "missing-mass": (("            " + BASE_MASS + "\n", ""), r"rigid body /vehicle/body/base has no 'physics:mass'"),
    "zero-inertia": ((BASE_INERTIA, "float3 physics:diagonalInertia = (0, 0, 0)"),
                     r"/vehicle/body/base attribute 'physics:diagonalInertia' is \(0, 0, 0\); each principal moment"),
    "negative-inertia": ((BASE_INERTIA, "float3 physics:diagonalInertia = (0.178, -0.176, 0.291)"),
                         r"'physics:diagonalInertia' is \(0\.178, -0\.176, 0\.291\); each principal moment"),
    "infinite-inertia": ((BASE_INERTIA, "float3 physics:diagonalInertia = (inf, 0.176, 0.291)"),
                         r"'physics:diagonalInertia' is \(inf, 0\.176, 0\.291\)"),
    # 0.5 > 0.178 + 0.176 = 0.354: no rigid body has these principal moments.
    "triangle-inequality": ((BASE_INERTIA, "float3 physics:diagonalInertia = (0.178, 0.176, 0.5)"),
                            r"'physics:diagonalInertia' is \(0\.178, 0\.176, 0\.5\): 0\.5 exceeds the sum of the other two \(0\.354\)"),
    # 1e-8 < 1e-6 x 0.291: Newton's finalize would inflate it to a millionth of the largest moment.
    "tiny-inertia": ((BASE_INERTIA, "float3 physics:diagonalInertia = (1e-8, 0.176, 0.291)"),
                     r"'physics:diagonalInertia' is \(1e-08, 0\.176, 0\.291\): its smallest moment is below 2\.91e-07"),
    "missing-inertia": (("            " + BASE_INERTIA + "\n", ""),
                        r"rigid body /vehicle/body/base has no 'physics:diagonalInertia'"),
    "missing-com": (("            point3f physics:centerOfMass = (0, 0, -0.011)\n", ""),
                    r"rigid body /vehicle/body/base has no 'physics:centerOfMass'"),
    "principal-axes-not-unit": (
        ("point3f physics:centerOfMass = (0, 0, -0.011)",
         "point3f physics:centerOfMass = (0, 0, -0.011)\n            quatf physics:principalAxes = (2, 0, 0, 0)"),
        r"'physics:principalAxes' is \(2, 0, 0, 0\); it must be a unit quaternion"),
    "negative-shape-density": (
        ("double size = 1\n                double3 xformOp:translate = (0, 0, 0)",
         "double size = 1\n                float physics:density = -3\n                double3 xformOp:translate = (0, 0, 0)"),
        r"prim /vehicle/body/base/hub attribute 'physics:density' is -3;"),
}


@pytest.mark.parametrize("case", list(MASS_CASES))
def test_mass_properties_are_checked_before_newton(tmp_path, case):
    substitution, expected = MASS_CASES[case]
    message = build_error(edited(tmp_path, substitution))
    assert re.search(expected, message), message


def test_a_thin_disk_meets_the_triangle_inequality_with_equality(tmp_path):
    # A thin flat disk about its axis: Izz = Ixx + Iyy exactly (perpendicular-axis theorem), a real body.
    open_stage(edited(tmp_path, (BASE_INERTIA, "float3 physics:diagonalInertia = (0.1, 0.1, 0.2)")))


def test_two_problems_are_listed_together(tmp_path):
    path = edited(tmp_path, (BASE_MASS, "float physics:mass = -1"), (ROTOR_1, ROTOR_1.replace("= 0.2", "= 0")))
    with pytest.raises(BuildError, match=r"has 2 problems with mass properties") as caught:
        open_stage(path)
    assert "/vehicle/body/base attribute 'physics:mass' is -1" in str(caught.value)
    assert "/vehicle/body/rotor_1 attribute 'physics:mass' is 0" in str(caught.value)


def test_syntax_error_names_file_line_and_column(tmp_path):
    # Line 18 of the vehicle is `        def Xform "base" (`: 8 spaces, then the second "(" lands in column 27.
    path = edited(tmp_path, ('def Xform "base" (', 'def Xform "base" (('))
    message = build_error(path)
    assert message.startswith(f"{path}:18:27: USD cannot parse this file: Expected ) at '('"), message
    assert "ErrorException" not in message


def test_truncated_and_empty_files(tmp_path):
    truncated = tmp_path / "truncated.usda"
    truncated.write_text(VEHICLE.read_text()[:3000])  # cut inside /vehicle/body/base
    assert re.search(rf"^{re.escape(str(truncated))}:\d+:\d+: USD cannot parse this file: Expected }}", build_error(truncated))
    garbage = tmp_path / "garbage.usd"
    garbage.write_bytes(bytes(range(256)))  # not a USD file of any kind
    assert build_error(garbage) == (f"{garbage}: USD cannot open this file: it is neither a USD text file "
                                    "(starting '#usda 1.0') nor a USD binary USD can read")
    empty = tmp_path / "empty.usda"
    empty.write_text("")
    assert build_error(empty) == f"{empty}: the file is empty; a USD text file starts with '#usda 1.0' and holds prims"


ESC_CASES = {
    "channel-16": (("int nexus:channel = 3", "int nexus:channel = 16"),
                   r"ESC prim /vehicle/esc_4: nexus:channel is 16; it must be in \[0, 15\] \(.*the row has 16 outputs"),
    "negative-channel": (("int nexus:channel = 0", "int nexus:channel = -1"),
                         r"ESC prim /vehicle/esc_1: nexus:channel is -1; it must be in \[0, 15\]"),
    "zero-max-speed": (("float nexus:maxSpeed = 375", "float nexus:maxSpeed = 0"),
                       r"ESC prim /vehicle/esc_1: nexus:maxSpeed is 0 rad/s; it must be > 0"),
    "nan-kv": (("float nexus:motor:kv = 100", "float nexus:motor:kv = nan"), r"esc_1: nexus:motor:kv is nan rpm/V; it must be finite"),
    "min-above-max": (("float nexus:minSpeed = 0", "float nexus:minSpeed = 400"), r"esc_1: nexus:minSpeed must lie in \[0, nexus:maxSpeed"),
    "negative-time-constant": (("float nexus:motor:timeConstantUp = 0.05", "float nexus:motor:timeConstantUp = -0.05"),
                               r"esc_1: nexus:motor:timeConstantUp is -0\.05 s; it must be > 0"),
    "zero-thrust-coefficient": (("float nexus:thrustCoefficient = 0.000226", "float nexus:thrustCoefficient = 0"),
                                r"propeller prim /vehicle/propeller_1: nexus:thrustCoefficient is 0 N/\(rad/s\)\^2; it must be > 0"),
    "negative-diameter": (("float nexus:diameter = 0.5334", "float nexus:diameter = -1"),
                          r"propeller prim /vehicle/propeller_1: nexus:diameter is -1 m; it must be > 0 \(Propeller diameter; informative\)$"),
    "propeller-on-the-base": (("rel nexus:body = </vehicle/body/rotor_1>", "rel nexus:body = </vehicle/body/base>"),
                              r"propeller prim /vehicle/propeller_1: nexus:body /vehicle/body/base is not the body its "
                              r"rotor joint /vehicle/joints/rotor_1 turns"),
    "two-escs-one-channel": (("int nexus:channel = 1", "int nexus:channel = 0"),
                             r"ESC prims /vehicle/esc_1 and /vehicle/esc_2 both read nexus:channel 0; give each ESC its own"),
    "two-escs-one-joint": (("rel nexus:joint = </vehicle/joints/rotor_2>", "rel nexus:joint = </vehicle/joints/rotor_1>"),
                           r"ESC prims /vehicle/esc_1 and /vehicle/esc_2 both drive /vehicle/joints/rotor_1"),
}


@pytest.mark.parametrize("case", list(ESC_CASES))
def test_esc_and_propeller_values_name_the_usd_attribute(tmp_path, case):
    substitution, expected = ESC_CASES[case]
    message = build_error(edited(tmp_path, substitution), full=True)
    assert re.search(expected, message), message
    for internal in ("max_speed", "min_speed", "tau_up", "current_limit", "speed_gain", "thrust_model_factor"):
        assert internal not in message


def test_newton_warnings_while_loading_reach_the_nexus_logger_once(tmp_path, caplog):
    # A mirrored rotor body makes Newton's importer warn (warnings.warn); a squashed visual sphere makes
    # its logger warn. Both must arrive on the "nexus" logger, once each, and not also raw on "newton".
    sphere = '''            def Sphere "dome"
            {
                double radius = 0.05
                float3 xformOp:scale = (1, 2, 1)
                uniform token[] xformOpOrder = ["xformOp:scale"]
            }

            def Scope "Imu" ('''
    path = edited(
        tmp_path,
        (ROTOR_1, ROTOR_1.replace('uniform token[] xformOpOrder = ["xformOp:translate"]',
                                  'float3 xformOp:scale = (1, 1, -1)\n'
                                  '            uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]')),
        ('            def Scope "Imu" (', sphere),
    )
    with caplog.at_level(logging.WARNING):
        load_plant(path, "empty")
    nexus = [r.getMessage() for r in caplog.records if r.name == "nexus" and r.levelno == logging.WARNING]
    mirrored = [m for m in nexus if "/vehicle/body/rotor_1 has a mirrored" in m]
    squashed = [m for m in nexus if "Non-uniform scaling of spheres" in m and "/vehicle/body/base/dome" in m]
    assert len(mirrored) == 1 and len(squashed) == 1, nexus
    assert all(m.startswith(f"Newton, loading {path}: ") for m in mirrored + squashed)
    assert not [r for r in caplog.records if r.name.startswith("newton")]


def test_mujoco_refusal_is_one_build_error(tmp_path):
    # Positive, so it passes Nexus's checks and Newton keeps it, but below MuJoCo's mjMINVAL (1e-15 kg):
    # MuJoCo refuses to compile the model.
    path = edited(tmp_path, (ROTOR_1, ROTOR_1.replace("= 0.2", "= 1e-20")))
    message = build_error(path, full=True)
    assert re.search(r"MuJoCo refused the vehicle's model: .*mass and inertia of moving bodies", message), message
    assert "_vehicle_body_rotor_1" in message


@pytest.mark.parametrize("old, new, expected", [
    ("float nexus:climbSpeed = 1", "float nexus:climbSpeed = 0",
     "nexus:climbSpeed is 0 m/s; it must be > 0 (Average climb speed of the take-off)"),
    ("float nexus:yawSweep = 90", "float nexus:yawSweep = 200",
     "nexus:yawSweep is 200 deg; it must be in [0, 180] (Heading change each side of the start heading; 0 skips "
     "the sweep)"),
])
def test_mission_errors_name_the_scene_file_and_the_usd_attribute(tmp_path, old, new, expected):
    from nexus.runtime.assembly import PrimContext, _missions

    text = (ROOT / "scenes" / "empty.usda").read_text()
    assert old in text
    scene = tmp_path / "scene.usda"
    scene.write_text(text.replace(old, new, 1))
    # The vehicle's file is not at fault: the error must name the scene's.
    ctx = PrimContext(plant=SimpleNamespace(scene_path=scene), stage=None, path=VEHICLE, rotor_count=4)
    with pytest.raises(BuildError) as caught:
        _missions(open_stage(scene), ctx, "scene")
    assert str(caught.value) == f"{scene}: mission prim /scene/mission: {expected}"


@pytest.mark.parametrize("old, new, expected", [
    ("    kilogramsPerUnit = 1\n", "    kilogramsPerUnit = 0.001\n", "the file's kilogramsPerUnit is 0.001; Nexus reads SI files only"),
    # Unauthored, USD takes centimetres (0.01) and Newton would read every length as metres anyway.
    ("    metersPerUnit = 1\n", "", "the file's metersPerUnit is 0.01 (USD's default: the file does not set it)"),
])
def test_non_si_units_are_refused(tmp_path, old, new, expected):
    assert expected in build_error(edited(tmp_path, (old, new)))


@pytest.mark.parametrize("old, new, expected", [
    # Unauthored, USD takes Y up; such a vehicle used to fly to --duration without lifting off (issue 37).
    ('    upAxis = "Z"\n', "", "the file's upAxis is Y (USD's default: the file does not set it)"),
    ('    upAxis = "Z"\n', '    upAxis = "Y"\n', "the file's upAxis is Y; Nexus reads Z-up files only"),
])
def test_a_layer_that_is_not_z_up_is_refused(tmp_path, old, new, expected):
    path = edited(tmp_path, (old, new))
    message = build_error(path)
    assert message.startswith(f"{path}: {expected}")
    assert message.endswith('author upAxis = "Z" in the layer\'s metadata and give positions and axes with z up')


def test_pid_gains_are_named_and_shown_as_written(tmp_path):
    path = edited(tmp_path, ("float3 nexus:rateP = (0.15, 0.15, 3)", "float3 nexus:rateP = (0.15, -0.15, nan)"))
    with pytest.raises(BuildError) as caught:
        assemble(path, "empty", controller="pid")
    # The first element out of bounds decides the words: -0.15 is below 0 before nan is reached.
    assert str(caught.value) == (f"{path}: controller prim /vehicle/controller: nexus:rateP is (0.15, -0.15, nan) s/rad; "
                                 "it must be >= 0 (Body-rate gain, (roll, pitch, yaw) (MC_ROLLRATE_P, MC_PITCHRATE_P, "
                                 "MC_YAWRATE_P))")


def test_a_missing_sublayer_is_named(tmp_path):
    path = tmp_path / "variant.usda"
    path.write_text('#usda 1.0\n(\n    kilogramsPerUnit = 1\n    metersPerUnit = 1\n    subLayers = [@./gone.usda@]\n)\n')
    assert build_error(path) == (f"{path}: USD could not compose this file: Could not load sublayer @{tmp_path / 'gone.usda'}@ "
                                 f"of layer @{path}@; fix the path or layer it names")
