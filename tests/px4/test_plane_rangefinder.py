"""A PX4 plane with a rangefinder lands on PX4's terrain estimate (vehicles/aerosonde_px4_rangefinder.usda).

The default mission's final starts 30 m up at 18 m/s on a 5° slope; PX4 aborts a landing whose ground is not
measured within 10 s of that start, when the glide is 30 − 10 × 18 × tan 5° = 14.25 m up. A 14 m laser is short of
it by 0.25 m (`nexus px4 params` warns, naming the prim); the file's 100 m laser is not.
"""

from __future__ import annotations

import logging
from pathlib import Path

from click.testing import CliRunner

from nexus.cli import main

VEHICLE = "aerosonde_px4_rangefinder"
VEHICLES = Path(__file__).resolve().parents[2] / "vehicles"


def params(vehicle: str) -> dict:
    result = CliRunner().invoke(main, ["px4", "params", "--vehicle", vehicle, "--export"])
    assert result.exit_code == 0, result.output
    return dict(line.removeprefix("export PX4_PARAM_").split("=", 1) for line in result.stdout.splitlines()
                if line.startswith("export PX4_PARAM_"))


def test_a_plane_with_a_rangefinder_keeps_px4_s_terrain_landing_and_its_abort(caplog):
    with caplog.at_level(logging.WARNING, logger="nexus"):
        with_laser, without = params(VEHICLE), params("aerosonde_px4")
    # The airframe's FW_LND_USETER 1 and FW_LND_ABORT 3 stay (not written); without a laser both are set to 0.
    assert "FW_LND_USETER" not in with_laser and "FW_LND_ABORT" not in with_laser
    assert (without["FW_LND_USETER"], without["FW_LND_ABORT"]) == ("0", "0")
    assert not [r for r in caplog.records if "maxDistance" in r.getMessage()]


def test_a_laser_too_short_for_the_final_is_warned_about_naming_its_prim(tmp_path, caplog):
    short = tmp_path / "short.usda"
    short.write_text(f'''#usda 1.0
(
    defaultPrim = "vehicle"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    upAxis = "Z"
    subLayers = [@{VEHICLES / (VEHICLE + ".usda")}@]
)

over "vehicle"
{{
    over "body"
    {{
        over "base"
        {{
            over "Range"
            {{
                float nexus:maxDistance = 14
            }}
        }}
    }}
}}
''')
    with caplog.at_level(logging.WARNING, logger="nexus"):
        params(str(short))
    warned = [r.getMessage() for r in caplog.records if "maxDistance" in r.getMessage()]
    assert len(warned) == 1 and "/vehicle/body/base/Range" in warned[0] and "14.3 m up" in warned[0], warned
