"""docs/battery.md's vehicle layer with a pack works pasted as written: the test takes the ```usda block under
"Declaring it" from the page, saves it as the page says (astro_max_16ah.usda, here in a temporary folder, flown from
the repository's root), flies it and checks from the record that the pack is the one the layer declares."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.worlds.flights import fly

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "battery.md"


def snippet() -> str:
    """The first ```usda block of the page's "Declaring it" section, as written."""
    section = DOC.read_text().split("## Declaring it", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```usda\n(.*?)^```$", section, flags=re.S | re.M)
    assert blocks, "docs/battery.md's 'Declaring it' has no ```usda block"
    return blocks[0]


def test_the_page_names_the_file_it_saves_and_the_command_that_flies_it():
    section = DOC.read_text().split("## Declaring it", 1)[1]
    assert "save it as\n`astro_max_16ah.usda` in the repository's root" in section
    assert "`nexus run --vehicle astro_max_16ah.usda`" in section


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    folder = tmp_path_factory.mktemp("snippet")
    vehicle = folder / "astro_max_16ah.usda"
    vehicle.write_text(snippet())
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # the page flies it from the repository's root
        return fly(folder / "run", "--vehicle", str(vehicle), "--mission", "short", "--duration", "3")


def test_the_pasted_layer_flies_with_the_pack_it_declares(flown):
    record = flown.record
    assert flown.info["exit_reason"] == "duration" and len(record) == 750
    assert record["body/base.pose[2]"].max() > 1.5  # it took off: the sublayer's vehicle, whole
    voltage, current = record["battery.voltage"].to_numpy(), record["battery.current"].to_numpy()
    charge = record["battery.state_of_charge"].to_numpy(dtype=np.float64)
    loaded = int(np.argmax(current > 1.0))
    # The first loaded tick sags the full pack (12 cells at 4.2 V) by R0 = 0.02 ohm alone: the RC pair
    # (1 - exp(-dt / R1 C1) = 2e-4 of R1 I) has not charged yet.
    assert (12 * 4.2 - voltage[loaded]) / current[loaded] == pytest.approx(0.02, rel=2e-3)
    # 16 Ah: the charge drawn over the flight, sum of I dt, over 3600 * 16 C, is what the state of charge lost.
    drawn = float(np.sum(current.astype(np.float64)) * 0.004) / (3600.0 * 16.0)
    assert 1.0 - charge[-1] == pytest.approx(drawn, rel=1e-3)
    assert 1.0 - charge[-1] > 1e-4
