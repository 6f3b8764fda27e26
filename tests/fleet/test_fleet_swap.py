"""scenarios/fleet_swap.toml: four Astro Maxes swap ends of their line, crossing its centre together 2.5 m apart.

Flown as ``nexus test`` flies it, in this process so a test can break it: the shipped file passes; with the other
vehicles' jets three times too strong (kT tripled for the sources only) the lowest vehicle sinks past the 2 m
altitude bound; with every route at one height the vehicles meet at the centre, and the collision and separation
checks fail. Without downwash (``--no-vehicle-contact``) every vehicle holds its height through the crossing to
a centimetre (measured 0.00 m), so the dips the shipped flight shows are the downwash's.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nexus.air import downwash
from nexus.runtime.run import run_flight
from nexus.scenario.runner import ScenarioOptions, judge, prepare

ROOT = Path(__file__).resolve().parents[2]


def fly(folder: Path, text: str):
    """The scenario ``text`` flown once into ``folder``: its judged case and its record."""
    path = folder / "fleet_swap.toml"
    path.write_text(text)
    cases, points = prepare([path], ScenarioOptions(out=folder))
    run_flight(points[0].config, folder / "run", progress=False)
    judge(cases[0], folder / "run")
    return cases[0], pd.read_parquet(folder / "run" / "record.parquet")


def verdicts(case) -> dict[str, bool]:
    return {r.check.name: r.passed for r in case.results}


def dips(record: pd.DataFrame) -> list[float]:
    """How far each vehicle sank below its route's height [m] while crossing (8 to 18 s)."""
    out = []
    for vehicle, height in enumerate((3.0, 5.5, 8.0, 10.5)):
        rows = record[(record.vehicle == vehicle) & (record.time > 9.0) & (record.time < 18.0)]
        out.append(height - float((rows["body/base.pose[2]"] - 0.3).min()))  # the base rests 0.3 m up
    return out


@pytest.fixture(scope="module")
def flights(tmp_path_factory):
    text = (ROOT / "scenarios" / "fleet_swap.toml").read_text()
    flown = {"shipped": fly(tmp_path_factory.mktemp("swap"), text)}
    flat = re.sub(r"waypoints = \[\[0\.0, (\d\.0), [\d.]+\]\]", r"waypoints = [[0.0, \1, 3.0]]", text)
    assert flat.count(", 3.0]]") == 4
    flown["one_height"] = fly(tmp_path_factory.mktemp("flat"), flat)
    original = downwash.Downwash._fleet

    def strong(self, device):
        fleet = original(self, device)
        fleet.thrust_coefficient = downwash.wp.array(fleet.thrust_coefficient.numpy() * 3.0, dtype=downwash.wp.float32,
                                                     device=device)
        return fleet

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(downwash.Downwash, "_fleet", strong)
        flown["strong_jets"] = fly(tmp_path_factory.mktemp("strong"), text)
    alone = text.replace("spacing = 2.0", "spacing = 2.0\ncontact = false").replace(
        '[[check]]\nmeasure = "collisions"\nmax = 0\n\n', "")
    flown["no_contact"] = fly(tmp_path_factory.mktemp("alone"), alone)
    return flown


def test_the_shipped_swap_passes_and_the_lower_vehicles_sink_in_the_downwash(flights):
    case, record = flights["shipped"]
    assert verdicts(case) == {"min_separation": True, "collisions": True, "altitude_error": True, "ended": True}
    sunk = dips(record)
    # Under three, two and one vehicles: the lowest sinks most, the top one not at all.
    assert sunk[0] == pytest.approx(1.52, abs=0.1) and sunk[1] == pytest.approx(0.98, abs=0.1)
    assert sunk[2] == pytest.approx(0.64, abs=0.1) and abs(sunk[3]) < 0.02
    ends = record.groupby("vehicle")["body/base.pose[0]"].last().to_numpy()
    assert ends == pytest.approx([6.0, 4.0, 2.0, 0.0], abs=0.1)  # each landed at another's start


def test_without_downwash_no_vehicle_sinks(flights):
    case, record = flights["no_contact"]
    assert all(verdicts(case).values())
    assert np.abs(dips(record)).max() < 0.02


def test_jets_three_times_too_strong_fail_the_altitude_bound(flights):
    case, record = flights["strong_jets"]
    assert not verdicts(case)["altitude_error"]
    assert dips(record)[0] > 2.0


def test_routes_at_one_height_collide_and_fail(flights):
    case, _ = flights["one_height"]
    failed = {name for name, passed in verdicts(case).items() if not passed}
    assert {"collisions", "min_separation"} <= failed
    message = next(r.message() for r in case.results if r.check.name == "collisions")
    assert "first: vehicles" in message and "of world 0" in message
