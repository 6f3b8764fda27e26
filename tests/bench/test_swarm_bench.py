"""The ``swarm`` bench suite at a tiny size (2 vehicles, 2 x 2 slots for the throughput, short rounds): every figure
is there, finite and positive, and the ratios are taken from the ticks reported beside them. No time is asserted."""

from __future__ import annotations

import math

import pytest

from nexus.bench import fixed_wing, swarm
from nexus.bench.suites import SUITES


@pytest.fixture(scope="module")
def result():
    patch = pytest.MonkeyPatch()
    for module, name, value in ((swarm, "ROUND_TICKS", 16), (swarm, "BIG_ROUND_TICKS", 16),
                                (swarm, "AIRBORNE_S", 0.2), (swarm, "BIG_AIRBORNE_S", 0.1),
                                (fixed_wing, "COPIES", 2), (fixed_wing, "REPLAYS", 2), (fixed_wing, "TRIES", 1)):
        patch.setattr(module, name, value)
    try:
        return swarm.run("cpu", vehicles=2, big_worlds=2, rounds=1, big_rounds=1)
    finally:
        patch.undo()


def test_the_suite_is_registered():
    assert SUITES["swarm"] == "nexus.bench.swarm"


def test_the_three_flights_have_the_same_slots_and_only_the_shared_world_runs_downwash_and_collision():
    sides = swarm.flights(2)
    assert {name: config.worlds * config.vehicles for name, config in sides.items()} == \
        {"worlds": 2, "swarm": 2, "swarm_contact": 2}
    assert sides["swarm"].vehicle_contact is False and sides["swarm_contact"].vehicle_contact is True
    assert set(swarm.flights(2, worlds=2)) == {"swarm", "swarm_contact"}  # the throughput has no worlds side


def test_every_figure_is_there_finite_and_positive(result):
    assert result["suite"] == "swarm" and result["vehicles"] == 2
    for key in ("loop_tick_us", "loop_tick_cpu_us"):
        assert set(result[key]) == {"worlds", "swarm", "swarm_contact"}
    assert result["contact_only_stages"] == ["collision", "downwash"]
    assert set(result["stage_us"]) == set(result["stage_share"]) == {"downwash", "collision"}
    assert set(result["step_us"]) == {"worlds", "swarm_contact"}
    figures = [*result["loop_tick_us"].values(), *result["loop_tick_cpu_us"].values(), *result["stage_us"].values(),
               *result["stage_share"].values(), *result["step_us"].values(), result["swarm_stages_share"],
               result["swarm_vs_worlds"], result["swarm_contact_vs_worlds"],
               result["swarm_vs_worlds_cpu"], result["swarm_contact_vs_worlds_cpu"]]
    assert all(math.isfinite(value) and value > 0.0 for value in figures)
    assert set(result["targets_met"]) == {"swarm_vs_worlds"}


def test_the_ratios_and_shares_are_taken_from_the_ticks_reported(result):
    tick, cpu = result["loop_tick_us"], result["loop_tick_cpu_us"]
    assert result["swarm_vs_worlds"] == pytest.approx(tick["swarm"] / tick["worlds"])
    assert result["swarm_contact_vs_worlds"] == pytest.approx(tick["swarm_contact"] / tick["worlds"])
    assert result["swarm_contact_vs_worlds_cpu"] == pytest.approx(cpu["swarm_contact"] / cpu["worlds"])
    assert result["stage_share"]["downwash"] == pytest.approx(result["stage_us"]["downwash"] / cpu["swarm_contact"])


def test_the_throughput_rows_count_slots_over_the_tick(result):
    rows = {row["flight"]: row for row in result["big"]}
    assert set(rows) == {"swarm", "swarm_contact"}
    assert [rows[name]["contact"] for name in ("swarm", "swarm_contact")] == [False, True]
    for row in rows.values():
        assert (row["worlds"], row["vehicles"], row["slots"]) == (2, 2, 4)
        # 4 slots over a tick of loop_tick_us microseconds: 4e6 / tick drone-steps a second.
        assert row["drone_steps_per_s"] == pytest.approx(4e6 / row["loop_tick_us"])
        assert math.isfinite(row["drone_steps_per_s"]) and row["drone_steps_per_s"] > 0.0
    assert len(dict(swarm.table(result))) == 5 + 2 + 2  # ticks, CPU ticks, two ratios, step; two stages; two rows
