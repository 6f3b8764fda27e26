"""The vehicle loads as written; bad files fail with the file, prim and attribute named."""

import re
from pathlib import Path

import numpy as np
import pytest
from pxr import Usd

from nexus.runtime.assembly import assemble
from nexus.core.errors import BuildError
from nexus.plant.assets import ROOT, available, resolve_asset
from nexus.plant.loading import load_plant

VEHICLE = ROOT / "vehicles" / "astro_max_base.usda"


def test_mass_inertia_and_com_as_loaded_equal_the_usd(astro):
    stage = Usd.Stage.Open(str(VEHICLE))
    model = astro.plant.model
    for path, index in astro.plant.body_index.items():
        prim = stage.GetPrimAtPath(path)
        assert model.body_mass.numpy()[index] == pytest.approx(prim.GetAttribute("physics:mass").Get(), rel=1e-6)
        inertia = model.body_inertia.numpy()[index]
        np.testing.assert_allclose(np.diag(inertia), prim.GetAttribute("physics:diagonalInertia").Get(), rtol=1e-6)
        np.testing.assert_allclose(inertia - np.diag(np.diag(inertia)), 0.0, atol=1e-9)
        np.testing.assert_allclose(model.body_com.numpy()[index], prim.GetAttribute("physics:centerOfMass").Get(), atol=1e-7)
    # The Astro Max's published typical empty weight: 5,831 g.
    assert astro.plant.mass == pytest.approx(5.831, abs=1e-4)


def test_rotors_follow_px4_quad_x(astro):
    rotors = astro.plant.rotors
    assert [r.joint_path for r in rotors] == [f"/vehicle/joints/rotor_{i}" for i in range(1, 5)]
    assert [r.esc["channel"] for r in rotors] == [0, 1, 2, 3]
    # PX4 quad-x: outputs 1 and 2 spin counter-clockwise, 3 and 4 clockwise.
    assert [r.spin for r in rotors] == [1, 1, -1, -1]


def test_scene_origin_is_px4_home(astro):
    origin = astro.plant.origin
    assert (origin.latitude, origin.longitude, origin.altitude) == (47.397742, 8.545594, 488.0)
    assert astro.plant.gravity == pytest.approx(9.80665, rel=1e-6)


def test_names_resolve_and_unknown_names_list_the_choices():
    assert resolve_asset("vehicle", "astro_max_base") == VEHICLE
    assert "empty" in available("scene")
    with pytest.raises(BuildError, match="unknown vehicle 'astro_mini'.*astro_max_base"):
        resolve_asset("vehicle", "astro_mini")
    with pytest.raises(BuildError, match="unknown scene 'moon'.*empty"):
        resolve_asset("scene", "moon")
    with pytest.raises(BuildError, match="does not exist"):
        resolve_asset("vehicle", "/nowhere/craft.usda")


def test_schemas_are_registered_with_fallbacks():
    stage = Usd.Stage.Open(str(VEHICLE))
    imu = stage.GetPrimAtPath("/vehicle/body/base/Imu")
    assert imu.HasAPI("NexusImuAPI")
    # Not authored in the file: the schema's fallback.
    assert imu.GetAttribute("nexus:gyroBiasSigma").Get() == 0.0


def broken_vehicle(tmp_path: Path, old: str, new: str) -> Path:
    text = VEHICLE.read_text()
    assert old in text, old
    path = tmp_path / "broken.usda"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(
    "old, new, expected",
    [
        ("int nexus:channel = 0", "int nexus:channel = 0\n        float nexus:bogus = 1",
         r"prim /vehicle/esc_1 has unknown attribute 'nexus:bogus'"),
        ("float nexus:maxSpeed = 375", "double nexus:maxSpeed = 375",
         r"prim /vehicle/esc_1 attribute 'nexus:maxSpeed' is double, but its schema declares float"),
        ("rel nexus:joint = </vehicle/joints/rotor_1>", "rel nexus:joint = </vehicle/joints/rotor_9>",
         r"prim /vehicle/esc_1 relationship 'nexus:joint' targets /vehicle/joints/rotor_9, which does not exist"),
        ('prepend apiSchemas = ["NexusEscAPI"]', 'prepend apiSchemas = ["NexusEscAPI", "NexusWarpDriveAPI"]',
         r"prim /vehicle/esc_1 applies unknown schema 'NexusWarpDriveAPI'"),
        ("int nexus:spin = 1", "int nexus:spin = 2", r"propeller prim /vehicle/propeller_\d: nexus:spin is 2; it must be one of -1, 1 \(.*\+1 counter-clockwise"),
        ("float nexus:thrustModelFactor = 0.5", "float nexus:thrustModelFactor = 1.5", r"ESC prim /vehicle/esc_\d: nexus:thrustModelFactor is 1\.5; it must be in \[0, 1\]"),
    ],
    ids=["unknown-attribute", "wrong-type", "missing-target", "unknown-schema", "bad-spin", "bad-factor"],
)
def test_bad_vehicle_files_name_file_prim_and_attribute(tmp_path, old, new, expected):
    path = broken_vehicle(tmp_path, old, new)
    with pytest.raises(BuildError) as error:
        load_plant(path, "empty")
    assert str(path) in str(error.value)
    assert re.search(expected, str(error.value)), str(error.value)


def test_unknown_controller_and_bad_substeps():
    with pytest.raises(BuildError, match="unknown controller 'autopilot'"):
        assemble("astro_max_base", "empty", controller="autopilot")


@pytest.mark.parametrize("old, new, expected", [
    ("double nexus:latitude = 47.397742", "double nexus:latitude = 95",
     "geodetic origin prim /scene/origin: nexus:latitude is 95 deg; it must be in [-90, 90]"),
    ("double nexus:longitude = 8.545594", "double nexus:longitude = -180.5",
     "geodetic origin prim /scene/origin: nexus:longitude is -180.5 deg; it must be in [-180, 180]"),
    ("double nexus:altitude = 488", "double nexus:altitude = inf",
     "geodetic origin prim /scene/origin: nexus:altitude is inf m; it must be finite"),
])
def test_bad_geodetic_origin_names_the_scene_file_and_attribute(tmp_path, old, new, expected):
    text = (ROOT / "scenes" / "empty.usda").read_text()
    assert old in text, old
    scene = tmp_path / "scene.usda"
    scene.write_text(text.replace(old, new, 1))
    with pytest.raises(BuildError) as error:
        load_plant(VEHICLE, scene)
    assert str(error.value).startswith(f"{scene}: {expected}"), str(error.value)


def test_an_unauthored_esc_value_takes_the_schema_fallback(tmp_path):
    # esc_1 authors nexus:motor:timeConstantDown = 0.07 s; without it the schema's fallback, 0.025 s, applies
    # (as float32, the attribute's type: 0.025 is not exact in binary).
    path = broken_vehicle(tmp_path, "        float nexus:motor:timeConstantDown = 0.07\n", "")
    plant, _, _ = load_plant(path, "empty")
    assert [r.esc["tau_down"] for r in plant.rotors] == [float(np.float32(0.025))] + [float(np.float32(0.07))] * 3
