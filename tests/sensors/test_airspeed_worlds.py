"""The airspeed sensor over many worlds: each world reads its own drawn wind with its own noise stream, and
world 2 of 3 is bit for bit the one-world run of world 2.

A short flight of the Astro Max with a noisy airspeed sensor and a barometer that feels the dynamic
pressure, in light turbulence, each world drawing its own mean wind from a variation file.
"""

from __future__ import annotations

import numpy as np
import pytest

from nexus.plant.assets import with_base_prims
from tests.worlds.flights import bits_differ, fly

PRIMS = """
            def Xform "Airspeed" (
                prepend apiSchemas = ["NexusAirspeedAPI"]
            )
            {
                float nexus:rate = 50
                float nexus:noiseSigma = 1
                float3 nexus:mountOffset = (0.1, 0, 0)
            }

            over "Baro"
            {
                float nexus:dynamicPressureCoefficient = 0.5
            }
"""


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    folder = tmp_path_factory.mktemp("airspeed_worlds")
    vehicle = with_base_prims(folder / "astro_max_airspeed.usda", PRIMS)
    vary = folder / "vary.toml"
    vary.write_text('wind_speed = {dist = "uniform", low = 2.0, high = 10.0}\nwind_direction = 270\n')
    args = ("--vehicle", str(vehicle), "--scene", "empty", "--vary", str(vary), "--turbulence", "light",
            "--duration", "0.5", "--seed", "8")
    many = fly(folder / "many", *args, "--worlds", "3")
    alone = fly(folder / "alone", "--world-of", f"{folder / 'many'}:2")
    return many, alone


def test_world_2_of_3_is_the_one_world_run_of_world_2(flown):
    many, alone = flown
    assert "airspeed.differential_pressure" in many.record.columns
    assert bits_differ(many.world(2), alone.world(0)) == []


def test_each_world_reads_its_own_wind_and_noise(flown):
    many, _ = flown
    pressures = [many.world(w)["airspeed.differential_pressure"].to_numpy() for w in range(3)]
    # Three different drawn winds and noise streams: no two worlds read the same series.
    assert not np.array_equal(pressures[0], pressures[1])
    assert not np.array_equal(pressures[1], pressures[2])
    assert all(np.abs(p).max() > 1.0 for p in pressures)  # 2-10 m/s of wind: pascals of dynamic pressure
