"""The scale suite's both-cores figure (nexus/bench/scale_shards.py): each shard flies its range of the worlds as
``nexus run --shards`` splits them, every shard and the one process fly the same ticks, and the figures follow
from the rounds' wall times. No timing is asserted."""

from __future__ import annotations

import pytest

from nexus.bench import scale_shards


@pytest.fixture(scope="module")
def row():
    return scale_shards.measure("freeflyer", 4, "cpu", shards=2, rounds=2, ticks=16, airborne_s=0.1)


def test_the_shards_are_nexus_runs_ranges_of_the_same_flight():
    config = scale_shards.shard_config("freeflyer", 2, 2, "cpu")
    assert (config.worlds, config.first_world, config.record_mode, config.solver, config.estimator) == (
        2, 2, "summary", "freeflyer", "truth")


def test_one_process_and_two_shards_fly_the_same_worlds_and_ticks(row):
    one, many = row["one_process"], row["sharded"]
    assert (one["shards"], one["ranges"]) == (1, [(0, 4)])
    assert (many["shards"], many["ranges"]) == (2, [(0, 2), (2, 2)])
    for side in (one, many):
        assert (side["ticks"], side["rounds"], len(side["round_wall_s"])) == (16, 2, 2)
        assert side["best_wall_s"] == min(side["round_wall_s"]) > 0
        assert len(side["best_cpu_s"]) == side["shards"]
        assert side["drone_ticks_per_s"] == pytest.approx(4 * 16 / side["best_wall_s"])
        assert side["cpu_us_per_world_tick"] > 0
    assert (row["solver"], row["worlds"], row["shards"], row["round_ticks"]) == ("freeflyer", 4, 2, 16)
    assert row["cpu_efficiency"] == pytest.approx(
        row["one_process"]["cpu_us_per_world_tick"] / row["sharded"]["cpu_us_per_world_tick"])
    assert row["efficiency"] == pytest.approx(
        row["sharded_drone_ticks_per_s"] / (2 * row["one_process_drone_ticks_per_s"]))


def test_a_round_is_about_a_quarter_million_world_ticks_within_64_to_1024_ticks():
    assert scale_shards.round_ticks(16) == 1024  # 16,384 ticks capped
    assert scale_shards.round_ticks(1024) == 256  # 262,144 / 1,024
    assert scale_shards.round_ticks(4096) == 64
    assert scale_shards.round_ticks(100_000) == 64
