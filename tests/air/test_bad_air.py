"""Bad air and drag input: each a one-line error naming the file, the prim and the attribute, before any stage runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from nexus.air.wind_field import WindField
from nexus.core import BuildError
from nexus.plant.assets import ROOT

EMPTY = ROOT / "scenes" / "empty.usda"
VEHICLE = ROOT / "vehicles" / "astro_max_base.usda"


def scene(tmp_path: Path, body: str) -> Path:
    """The empty scene with ``body`` (prims under /scene) added."""
    path = tmp_path / "scene.usda"
    path.write_text(f'#usda 1.0\n(\n    defaultPrim = "scene"\n    kilogramsPerUnit = 1\n    metersPerUnit = 1\n    upAxis = "Z"\n    subLayers = [@{EMPTY}@]\n)\n\n'
                    f'over "scene"\n{{\n{body}\n}}\n')
    return path


def wind_prim(*lines: str) -> str:
    return '    def Scope "air" (prepend apiSchemas = ["NexusWindAPI"])\n    {\n' + "".join(
        f"        {line}\n" for line in lines) + "    }\n"


def gust_prim(*lines: str) -> str:
    return '    def Scope "gust" (prepend apiSchemas = ["NexusGustAPI"])\n    {\n' + "".join(
        f"        {line}\n" for line in lines) + "    }\n"


def air_error(path: Path, run_duration: float = 10.0, **options) -> str:
    plant = SimpleNamespace(scene_path=path, base_path="/vehicle/body/base", body_label=lambda p: p.rsplit("/", 1)[-1])
    with pytest.raises(BuildError) as caught:
        WindField.from_scene(plant, options.get("wind"), options.get("turbulence"), run_duration)
    message = str(caught.value)
    assert "\n" not in message, message
    return message


CASES = {
    "negative-intensity": (wind_prim('token nexus:turbulence = "custom"', "float3 nexus:turbulenceIntensity = (-1, 1, 0.5)"),
                           "wind prim /scene/air: nexus:turbulenceIntensity is (-1, 1, 0.5) m/s; it must be >= 0"),
    "negative-length-scale": (wind_prim('token nexus:turbulence = "custom"', "float3 nexus:turbulenceLengthScale = (100, -5, 10)"),
                              "wind prim /scene/air: nexus:turbulenceLengthScale is (100, -5, 10) m; it must be > 0"),
    "unknown-level": (wind_prim('token nexus:turbulence = "hurricane"'),
                      "wind prim /scene/air: nexus:turbulence is hurricane; it must be one of none, light, moderate, "
                      "severe, custom"),
    "negative-speed": (wind_prim("float nexus:speed = -3"), "wind prim /scene/air: nexus:speed is -3 m/s; it must be >= 0"),
    "roughness-above-reference": (wind_prim('token nexus:profile = "logarithmic"', "float nexus:roughnessLength = 12"),
                                  "wind prim /scene/air: nexus:roughnessLength (12 m) is not below "
                                  "nexus:referenceHeight (10 m)"),
    "two-wind-prims": (wind_prim() + wind_prim().replace('"air"', '"air2"'),
                       "wind prims /scene/air, /scene/air2: a scene has one air"),
    "gust-without-direction": (gust_prim("float nexus:start = 1", "float nexus:amplitude = 4"),
                               "gust prim /scene/gust: nexus:direction is not authored; give the direction"),
    "gust-longer-than-the-run": (gust_prim("float nexus:duration = 12", "float nexus:direction = 90"),
                                 "gust prim /scene/gust: nexus:duration is 12 s, longer than the run (10 s)"),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_air_is_one_line_naming_file_prim_and_attribute(tmp_path, case):
    body, expected = CASES[case]
    path = scene(tmp_path, body)
    assert f"{path}: {expected}" in air_error(path)


def test_an_unknown_turbulence_option_is_refused():
    plant = SimpleNamespace(scene_path=EMPTY, base_path="/vehicle/body/base", body_label=lambda p: "base")
    with pytest.raises(BuildError, match=r"^--turbulence hurricane: choose one of light, moderate, severe$"):
        WindField.from_scene(plant, None, "hurricane", 10.0)


def test_a_negative_drag_coefficient_stops_nexus_run_before_it_flies(tmp_path):
    path = tmp_path / "drag.usda"
    path.write_text((ROOT / "tests" / "data" / "astro_max_drag.usda").read_text()
                    .replace("@../../vehicles/astro_max_base.usda@", f"@{VEHICLE}@")
                    .replace("float nexus:rotorDragCoefficient = 0.0005", "float nexus:rotorDragCoefficient = -0.0005"))
    failed = subprocess.run([sys.executable, "-m", "nexus.cli", "run", "--vehicle", str(path), "--device", "cpu",
                             "--out", str(tmp_path / "r"), "--quiet"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=600)
    assert failed.returncode != 0
    expected = (f"{path}: drag prim /vehicle/body/base/Drag: nexus:rotorDragCoefficient is -0.0005 N/((m/s)(rad/s)); "
                "it must be >= 0")
    assert expected in failed.stderr
    assert json.loads((tmp_path / "r" / "run.json").read_text())["exit_reason"] == "build-error"
