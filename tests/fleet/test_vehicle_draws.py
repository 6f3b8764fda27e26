"""A fleet's variation: each vehicle draws its own values, but its world's air and place are shared.

Two worlds of two Astro Maxes (no contact between them), 3 s of the scene's mission, a variation file drawing
the base mass, a mean wind and a start offset: vehicle 0 of world w draws what world w of a one-vehicle run draws,
vehicle 1 draws its own mass on its own branch, and both vehicles of a world fly in the world's wind, moved by
the world's start offset. Vehicle 1 of world 1 flown alone takes its own values from run.json and computes the
same bits; the fleet replays open loop bit for bit.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from nexus.cli import main
from tests.worlds.flights import bits_differ, fly

VARY = """
mass = { dist = "normal", mean = 5.031, std = 0.1, low = 4.7, high = 5.4 }
wind_speed = { dist = "uniform", low = 0.0, high = 4.0 }
start_x = { dist = "uniform", low = -1.0, high = 1.0 }
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("draws")
    vary = folder / "vary.toml"
    vary.write_text(VARY)
    common = ("--worlds", "2", "--vary", str(vary), "--duration", "3")
    return {"fleet": fly(folder / "fleet", "--vehicles", "2", "--no-vehicle-contact", *common),
            "alone": fly(folder / "alone", *common)}


def values(flown, world, vehicle=None):
    rows = flown.summary[flown.summary.world == world]
    if vehicle is not None:
        rows = rows[rows.vehicle == vehicle]
    return rows.iloc[0]


def test_vehicle_0_draws_what_its_world_draws_alone(runs):
    for world in (0, 1):
        fleet, alone = values(runs["fleet"], world, 0), values(runs["alone"], world)
        for name in ("vary.mass", "vary.wind_speed", "vary.start_x"):
            assert fleet[name] == alone[name]


def test_vehicle_1_draws_its_own_mass_in_its_world_s_wind_and_place(runs):
    for world in (0, 1):
        first, second = values(runs["fleet"], world, 0), values(runs["fleet"], world, 1)
        assert second["vary.mass"] != first["vary.mass"] and 4.7 <= second["vary.mass"] <= 5.4
        assert second["vary.wind_speed"] == first["vary.wind_speed"]
        assert second["vary.start_x"] == first["vary.start_x"]
    assert len(runs["fleet"].info["vehicle_values"]) == 4


def test_vehicle_1_of_world_1_flown_alone_takes_its_own_values_and_bits(runs, tmp_path):
    fleet = runs["fleet"]
    alone = fly(tmp_path / "one", "--world-of", f"{fleet.out}:1:1")
    rows = fleet.record[(fleet.record.world == 1) & (fleet.record.vehicle == 1)]
    rows = rows.drop(columns=["world", "vehicle"]).reset_index(drop=True)
    assert bits_differ(rows, alone.record.reset_index(drop=True)) == []


def test_the_fleet_replays_open_loop_bit_for_bit(runs):
    result = CliRunner().invoke(main, ["replay", str(runs["fleet"].out)])
    assert result.exit_code == 0, result.output
    assert "replay identical: 750 ticks of 2 worlds x 2 vehicles (3,000 rows)" in result.output
