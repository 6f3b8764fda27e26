"""A bad battery or ground-effect prim fails the build in one line naming file, prim and attribute, before any stage.

Each case writes the test layers of tests/data with one edit into ``tmp_path`` (sublayering the shipped
vehicle by its absolute path) and assembles the vehicle the way ``nexus run`` does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.core.errors import BuildError
from nexus.plant.assets import ROOT
from nexus.runtime.assembly import assemble

DATA = Path(__file__).resolve().parents[1] / "data"
BASE = ROOT / "vehicles" / "astro_max_base.usda"


def layer(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """The test layer ``name`` with ``old`` replaced by ``new`` once, sublayering the shipped vehicle."""
    text = (DATA / name).read_text().replace("@../../vehicles/astro_max_base.usda@", f"@{BASE}@")
    assert old in text, old
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return path


CURVE = "float2[] nexus:battery:openCircuitVoltage = [(0, 3.5), (1, 4.1)]"
CASES = {
    "no-cells": ("astro_max_battery.usda", "int nexus:battery:cells = 12", "int nexus:battery:cells = 0",
                 r"battery prim /vehicle/battery: nexus:battery:cells is 0; it must be >= 1 \(Cells in series\)$"),
    "voltage-falls": ("astro_max_battery.usda", CURVE,
                      "float2[] nexus:battery:openCircuitVoltage = [(0, 3.5), (0.5, 3.4), (1, 4.1)]",
                      r"battery prim /vehicle/battery: nexus:battery:openCircuitVoltage is not increasing in state "
                      r"of charge: \(0\.5, 3\.4 V\) follows \(0, 3\.5 V\); give points"),
    "charge-goes-back": ("astro_max_battery.usda", CURVE,
                         "float2[] nexus:battery:openCircuitVoltage = [(0, 3.5), (0.6, 3.8), (0.4, 3.9), (1, 4.1)]",
                         r"openCircuitVoltage is not increasing in state of charge: \(0\.4, 3\.9 V\) follows "
                         r"\(0\.6, 3\.8 V\)"),
    "curve-short-of-full": ("astro_max_battery.usda", CURVE,
                            "float2[] nexus:battery:openCircuitVoltage = [(0, 3.5), (0.8, 4.1)]",
                            r"openCircuitVoltage runs from state of charge 0 to 0\.8, not 0 to 1"),
    "zero-capacity": ("astro_max_battery.usda", "float nexus:battery:capacity = 0.04",
                      "float nexus:battery:capacity = 0",
                      r"battery prim /vehicle/battery: nexus:battery:capacity is 0 Ah; it must be > 0"),
    "negative-radius": ("astro_max_ground_effect.usda", "float nexus:rotorRadius = 0.2667",
                        "float nexus:rotorRadius = -0.2667",
                        r"ground effect prim /vehicle/propeller_1: nexus:rotorRadius is -0\.2667 m; it must be > 0"),
    "radius-not-given": ("astro_max_ground_effect.usda", "        float nexus:rotorRadius = 0.2667\n", "",
                         r"ground effect prim /vehicle/propeller_1: nexus:rotorRadius is not authored"),
    "not-on-a-propeller": ("astro_max_ground_effect.usda", 'over "propeller_1"', 'over "esc_1"',
                           r"ground effect prim /vehicle/esc_1: NexusGroundEffectAPI acts on a propeller"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_prim_fails_the_build_in_one_line(tmp_path, case):
    name, old, new, expected = CASES[case]
    path = layer(tmp_path, name, old, new)
    with pytest.raises(BuildError) as caught:
        assemble(str(path), "empty")
    message = str(caught.value)
    assert message.startswith(f"{path}: "), message
    assert "\n" not in message, message
    assert re.search(expected, message), message


def test_nexus_run_refuses_a_battery_with_no_cells_before_any_tick(tmp_path):
    path = layer(tmp_path, "astro_max_battery.usda", "int nexus:battery:cells = 12", "int nexus:battery:cells = 0")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--vehicle", str(path), "--out", str(out)])
    assert result.exit_code == 2, result.output  # bad input
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert lines == [f"error: {path}: battery prim /vehicle/battery: nexus:battery:cells is 0; it must be >= 1 "
                     "(Cells in series)"]
    info = json.loads((out / "run.json").read_text())
    assert info["ticks"] == 0 and info["status"] == "failed"
