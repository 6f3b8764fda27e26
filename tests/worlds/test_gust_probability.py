"""Which worlds a drawn ``gust_probability`` gives the gust, pinned for a seed: world w gets it when the first
uniform number of its own stream ``vary/gust_occurs/<w>`` is under the probability.

The streams, worked out once with hashlib and NumPy alone (RngTree's definition: PCG64 seeded with the
little-endian blake2b-128 digest of ``nexus-rng/<seed>/<path>``), seed 7, the first ``random()`` of world 0..15:

    0.2535 0.0940 0.9546 0.9119 0.9560 0.4456 0.1111 0.1934
    0.8038 0.2629 0.4410 0.2526 0.6240 0.6584 0.0135 0.4916

so with probability 0.5 the gust blows in worlds 0, 1, 5, 6, 7, 9, 10, 11, 14, 15 and not in 2, 3, 4, 8, 12, 13.
A world that drew from another world's stream (or the run's, or one stream for all) gets another set.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nexus.core.rng import RngTree
from nexus.runtime.config import RunConfig
from nexus.worlds.drawn import world_values
from nexus.worlds.variation import load_variation

SEED = 7
GUST_WORLDS = [0, 1, 5, 6, 7, 9, 10, 11, 14, 15]
CALM_WORLDS = [2, 3, 4, 8, 12, 13]
#: A 4 m/s gust from the west (blowing east, +x) from 0.1 s for 0.2 s: its peak at 0.2 s, tick 50 at 250 Hz.
VARY = """
gust_start_time = 0.1
gust_duration = 0.2
gust_amplitude = 4.0
gust_direction = 270.0
gust_probability = 0.5
"""


@pytest.fixture(scope="module")
def vary_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("gust_probability") / "gust.toml"
    path.write_text(VARY)
    return path


def gust_worlds(values: list[dict], first: int = 0) -> list[int]:
    return [world for world, v in enumerate(values, first) if math.isfinite(v["gust_start_time"])]


def test_sixteen_worlds_get_the_gust_in_the_worlds_their_own_streams_choose(vary_file):
    values = load_variation(vary_file, rotors=4, sensors=[]).draw(RngTree(SEED), 16)
    assert gust_worlds(values) == GUST_WORLDS
    for world in GUST_WORLDS:  # a world with the gust keeps the file's values
        assert (values[world]["gust_start_time"], values[world]["gust_duration"], values[world]["gust_amplitude"],
                values[world]["gust_direction"]) == (0.1, 0.2, 4.0, 270.0)
    assert all(values[world]["gust_start_time"] == math.inf for world in CALM_WORLDS)
    assert all("gust_probability" not in v for v in values)  # spent on the start time


def test_a_run_of_worlds_8_to_15_gives_each_the_gust_its_index_chooses(vary_file):
    # What a run flying worlds 8..15 only (--world-of, a cross batch) draws: worlds 9, 10, 11, 14 and 15 have the
    # gust, 8, 12 and 13 do not, the same as in the 16-world run.
    from nexus.plant.loading import load_plant

    plant, _, _ = load_plant("astro_max_base", "empty")
    options = RunConfig(vary=str(vary_file), seed=SEED, worlds=8, first_world=8)
    values = world_values(options, plant, [])
    assert gust_worlds(values, first=8) == [9, 10, 11, 14, 15]


def test_the_wind_blows_the_gust_in_those_worlds_and_is_still_in_the_others(vary_file):
    from nexus.air.wind_field import WindField
    from tests.air.conftest import wind_series

    values = load_variation(vary_file, rotors=4, sensors=[]).draw(RngTree(SEED), 16)
    wind = wind_series(WindField(), 60, worlds=16, variation=values)  # no mean wind, no turbulence
    peak = wind[49]  # tick 50 ends at 0.2 s: A/2 (1 - cos(pi)) = 4 m/s toward the east
    assert peak[GUST_WORLDS] == pytest.approx(np.tile([4.0, 0.0, 0.0], (10, 1)), abs=1e-5)
    assert np.all(wind[:, CALM_WORLDS] == 0.0)
