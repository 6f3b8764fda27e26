"""The battery in flight: a hover's endurance, the run it ends, and its bits.

Hover power by hand, for the Astro Max (vehicles/astro_max_base.usda): mass 5.031 + 4 · 0.2 = 5.831 kg, weight
5.831 · 9.80665 = 57.1826 N, 14.2957 N a rotor; kT = 2.26e-4 N/(rad/s)², so ω² = 14.2957 / 2.26e-4 = 63255.4
and ω = 251.506 rad/s; kQ = 8.5e-6 N·m/(rad/s)², so a rotor's shaft power is kQ·ω³ = 8.5e-6 · 251.506 · 63255.4
= 135.227 W, the four 540.91 W, and at the pack's 80 % efficiency 676.13 W electrical.

The test pack (tests/data/astro_max_battery.usda): 12 cells, 0.04 Ah, open-circuit voltage 3.5 + 0.6·s V a
cell. From state of charge s0 to empty it holds 12 · 0.04 Ah · 3600 s/h · ∫0^s0 (3.5 + 0.6 s) ds
= 1728 · (3.5 s0 + 0.3 s0²) J, and a full pack 1728 · 3.8 = 6566.4 J.
"""

from __future__ import annotations

import pytest

from tests.plant.hover import DATA, hover
from tests.worlds.flights import bits_differ, fly

BATTERY = DATA / "astro_max_battery.usda"
BOTH = DATA / "astro_max_power_ground.usda"
HOVER_POWER = 676.13  # [W], above
VARIATION = """
mass = { dist = "uniform", low = 4.8, high = 5.3 }
thrust_scale = { dist = "uniform", low = 0.97, high = 1.03, per_rotor = true }
"""


def test_a_hover_lasts_the_packs_energy_over_the_hover_power():
    # Up to 1 m (rotors at 1.4 m: ground effect is not in this vehicle anyway), 3 s to settle, then until empty.
    flown = hover(BATTERY, 1.0, settle_s=3.0, sample_s=20.0)
    assert flown.done == 3  # battery-empty
    battery = flown.battery
    s0 = float(battery["state_of_charge"][0])
    energy = 1728.0 * (3.5 * s0 + 0.3 * s0 * s0)  # [J]
    lasted = flown.time[-1] - flown.time[0]  # from the end of the first sampled tick to the tick that emptied it
    assert battery["state_of_charge"][-1] == 0.0
    assert lasted == pytest.approx(energy / HOVER_POWER, rel=0.05)
    # The terminal power is the hand figure (the losses in R0 and R1 come on top, 0.6 % here).
    assert float((battery["voltage"] * battery["current"]).mean()) == pytest.approx(HOVER_POWER, rel=0.01)


@pytest.fixture(scope="module")
def emptied(tmp_path_factory):
    root = tmp_path_factory.mktemp("battery")
    runs = [fly(root / f"run{k}", "--vehicle", str(BATTERY), "--duration", "20") for k in (0, 1)]
    return [*runs, fly(root / "eager", "--vehicle", str(BATTERY), "--duration", "20", "--eager")]


def test_an_empty_pack_ends_the_run_battery_empty(emptied):
    run = emptied[0]
    assert run.exit_code == 0
    assert run.info["status"] == "finished" and run.info["exit_reason"] == "battery-empty"
    assert "ended by battery-empty" in run.output
    # A full pack's 6566 J at about the hover's 680 W (the default mission climbs and turns too): about 9.7 s.
    assert 8.5 < run.info["sim_time_s"] < 10.5
    assert run.info["record_rows"] == run.info["ticks"] == len(run.record)
    assert "battery" in run.info["record_columns"]
    for column in ("battery.voltage", "battery.current", "battery.state_of_charge"):
        assert column in run.record
    assert run.record["battery.state_of_charge"].iloc[-1] == 0.0
    assert run.record["battery.state_of_charge"].iloc[-2] > 0.0
    # Full: 12 · 4.1 = 49.2 V at rest; near empty, 12 · 3.5 = 42 V less the sag.
    assert run.record["battery.voltage"].iloc[0] == pytest.approx(49.2, abs=1e-4)
    assert 41.0 < run.record["battery.voltage"].iloc[-1] < 42.0


def test_a_battery_run_repeats_bit_for_bit(emptied):
    assert bits_differ(emptied[0].record, emptied[1].record) == []
    # Launched stage by stage instead of replaying graphs: the same bits, and the same last tick.
    assert emptied[2].info["mode"] != emptied[0].info["mode"]
    assert bits_differ(emptied[0].record, emptied[2].record) == []


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    root = tmp_path_factory.mktemp("many")
    path = root / "vary.toml"
    path.write_text(VARIATION)
    batch = fly(root / "n16", "--vehicle", str(BOTH), "--duration", "20", "--seed", "3", "--worlds", "16",
                "--vary", str(path))
    alone = {i: fly(root / f"alone{i}", "--world-of", f"{batch.out}:{i}") for i in (0, 9, 15)}
    return batch, alone


def test_sixteen_worlds_run_out_at_their_own_ticks(many):
    batch, _ = many
    assert batch.info["exit_reason"] == "battery-empty"
    assert (batch.summary.exit_reason == "battery-empty").all()
    rows = batch.record.groupby("world").size()
    assert len(set(rows)) >= 4  # the drawn masses spread the ends


def test_a_world_of_sixteen_is_the_world_flown_alone(many):
    batch, alone = many
    for i, run in alone.items():
        assert run.info["exit_reason"] == "battery-empty"
        assert bits_differ(batch.world(i), run.world(0)) == [], i
