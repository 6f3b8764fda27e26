"""A vehicle file's pinned PX4 parameters (root prim customData ``px4Parameters``) replace the derived ones."""

import pytest

from nexus.core.errors import BuildError
from nexus.plant.assets import resolve_asset
from nexus.plant.loading import load_plant
from nexus.px4.params import px4_parameters

LAYER = """#usda 1.0
(
    defaultPrim = "vehicle"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    subLayers = [@{base}@]
    upAxis = "Z"
)

over "vehicle" (
    customData = {{
        dictionary px4Parameters = {{
{entries}
        }}
    }}
)
{{
}}
"""


def pinned(tmp_path, base: str, entries: str):
    path = tmp_path / "pinned.usda"
    path.write_text(LAYER.format(base=resolve_asset("vehicle", base), entries=entries))
    plant, _, _ = load_plant(path, "empty")
    return px4_parameters(plant)


def test_a_pin_replaces_the_derived_value_and_leaves_the_rest(tmp_path):
    # The Astro Max derives CA_ROTOR0_PX = 0.3536 and MPC_THR_HOVER = 0.4498 (tests/px4/test_params.py).
    params = pinned(tmp_path, "astro_max_base", "            double CA_ROTOR0_PX = 0.3\n            int MPC_POS_MODE = 4")
    assert params["CA_ROTOR0_PX"] == 0.3 and params["MPC_POS_MODE"] == 4
    assert params["CA_ROTOR1_PX"] == pytest.approx(-0.3536, abs=1e-4)
    assert params["MPC_THR_HOVER"] == pytest.approx(0.4498, abs=1e-4)


def test_a_pin_that_is_not_a_number_names_the_file_and_prim(tmp_path):
    with pytest.raises(BuildError, match=r"pinned.usda: prim /vehicle customData px4Parameters: 'CA_ROTOR0_PX' = 'front'"):
        pinned(tmp_path, "astro_max_base", '            string CA_ROTOR0_PX = "front"')
