"""A crash ends the run: ground contact coming down faster than 3 m/s (nexus/plant/crash.py).

The x500 (no drag prim: nothing but gravity acts while its rotors stand still) is lifted h metres above where it
settled, at rest, after start-up, and flown open loop with every motor at 0 (the hold controller). It falls
freely; MuJoCo's Euler step makes its speed after tick k exactly g·dt·k and its drop g·dt²·k(k+1)/2
(g = 9.80665 m/s², dt = 0.004 s, g·dt² = 1.569064e-4 m). Its gear meets the ground during the first tick k
whose drop reaches h; MuJoCo's collision test sees that in the state the next step starts from, so the contact is
found on tick k + 1, at the speed the vehicle brought into it, g·dt·k:

* h = 2 m: 159·160/2·g·dt² = 1.99583 m, 160·161/2·g·dt² = 2.02095 m: k = 160, found on tick 161 (0.644 s) at
  9.80665 · 0.004 · 160 = 6.2763 m/s: a crash;
* h = 0.5 m: 79·80/2 → 0.49585 m, 80·81/2 → 0.50837 m: k = 80, tick 81, 3.1381 m/s: a crash;
* h = 0.45 m: 75·76/2 → 0.44718 m, 76·77/2 → 0.45912 m: k = 76, tick 77, 2.9812 m/s: under 3 m/s, a hard
  touchdown, not a crash.
"""

import json

import numpy as np
import pyarrow.dataset as ds
import pytest

from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight
from nexus.worlds.summary import run_end_reason


def lifted(heights):
    """A ``watch`` for run_flight: after start-up, put each world's base ``heights`` [m] above where it settled."""
    def lift(flight):
        plant = flight.vehicle.plant
        origins = plant.base_positions()
        plant.reset(base_position=origins + np.array([[0.0, 0.0, h] for h in heights]))
    return lift


def drop(tmp_path, heights, seconds=1.0, vehicle="x500"):
    options = RunConfig(vehicle=vehicle, controller="hold", device="cpu", duration=seconds, worlds=len(heights))
    summary = run_flight(options, tmp_path, progress=False, watch=lifted(heights))
    return summary, json.loads((tmp_path / "run.json").read_text())


@pytest.fixture(scope="module")
def from_2_m(tmp_path_factory):
    out = tmp_path_factory.mktemp("crash")
    return out, *drop(out, [2.0])


def test_a_fall_from_2_m_ends_the_run_crashed_on_its_tick_at_its_speed(from_2_m):
    out, summary, info = from_2_m
    assert (summary.exit_reason, summary.ticks) == ("crashed", 161)
    assert (info["status"], info["exit_reason"], info["ticks"], info["error"]) == ("finished", "crashed", 161, None)
    crash = info["crash"]
    assert crash["limit_m_s"] == 3.0
    assert crash["crashed"] == {"tick": 161, "time_s": pytest.approx(0.644),
                                "speed_m_s": pytest.approx(6.2763, abs=1e-3)}
    assert (crash["hardest_touchdown_m_s"], crash["hardest_touchdown_tick"]) == (pytest.approx(6.2763, abs=1e-3), 161)


def test_the_crash_is_in_run_log_and_the_record_stops_at_its_tick(from_2_m):
    out, _, info = from_2_m
    log = (out / "run.log").read_text()
    assert "crashed at tick 161 (0.644 s): the vehicle touched down at 6.28 m/s, over the 3 m/s a crash is" in log
    assert info["warnings"] == ["crashed at tick 161 (0.644 s): the vehicle touched down at 6.28 m/s, over the 3 m/s "
                                "a crash is"]
    table = ds.dataset(out / "record.parquet").to_table()
    assert table.num_rows == 161
    # The speed it came down at, tick 160's, is in the record: g·dt·160.
    assert table.column("body/base.velocity[2]")[159].as_py() == pytest.approx(-6.2763, abs=1e-3)


def test_a_touchdown_just_under_the_limit_is_no_crash_and_one_just_over_is(tmp_path):
    summary, info = drop(tmp_path / "under", [0.45])
    assert (summary.exit_reason, summary.ticks) == ("duration", 250)
    crash = info["crash"]
    assert crash["crashed"] is None
    assert (crash["hardest_touchdown_m_s"], crash["hardest_touchdown_tick"]) == (pytest.approx(2.9812, abs=1e-3), 77)
    summary, info = drop(tmp_path / "over", [0.5])
    assert (summary.exit_reason, summary.ticks) == ("crashed", 81)
    assert info["crash"]["crashed"] == {"tick": 81, "time_s": pytest.approx(0.324),
                                        "speed_m_s": pytest.approx(3.1381, abs=1e-3)}


def test_a_vehicle_resting_where_it_settled_never_crashes(tmp_path):
    summary, info = drop(tmp_path, [0.0])
    assert summary.exit_reason == "duration" and info["crash"]["crashed"] is None
    assert info["crash"]["hardest_touchdown_m_s"] < 0.01


def test_with_many_worlds_a_crashed_world_ends_alone_and_the_summary_says_crashed(tmp_path):
    summary, info = drop(tmp_path, [2.0, 0.0])
    assert (summary.exit_reason, summary.ticks) == ("duration", 250)  # world 1 flies on to the end
    assert info["crash"]["crashed_worlds"] == [{"world": 0, "tick": 161, "time_s": pytest.approx(0.644),
                                                "speed_m_s": pytest.approx(6.2763, abs=1e-3)}]
    table = ds.dataset(tmp_path / "summary.parquet").to_table()
    assert table.column("exit_reason").to_pylist() == ["crashed", "duration"]
    assert info["warnings"] == ["1 of 2 worlds crashed, the first (world 0) at tick 161 (0.644 s): it touched down at "
                                "6.28 m/s, over the 3 m/s a crash is"]


def test_contacts_counted_by_each_world_or_by_each_contact_slot_give_the_same_flight(tmp_path, monkeypatch):
    """Up to 16 worlds each world's thread counts its contacts (one launch); above, one thread per contact slot
    does first (two): a crash from 2 m beside a touchdown from 0.45 m, both ways, the same run in every bit."""
    from nexus.plant import crash

    inside, _ = drop(tmp_path / "inside", [2.0, 0.45])
    monkeypatch.setattr(crash, "COUNT_IN_CHECK_WORLDS", 0)
    by_slot, _ = drop(tmp_path / "by_slot", [2.0, 0.45])
    assert (inside.exit_reason, inside.ticks) == (by_slot.exit_reason, by_slot.ticks) == ("duration", 250)
    infos = [json.loads((tmp_path / name / "run.json").read_text())["crash"] for name in ("inside", "by_slot")]
    assert infos[0] == infos[1]
    # The hand figures of the module doc: world 0 crashes on tick 161 at 6.2763 m/s, world 1 touches at 2.9812.
    assert infos[0]["crashed_worlds"][0]["tick"] == 161
    assert infos[0]["hardest_touchdowns_m_s"] == [pytest.approx(6.2763, abs=1e-3), pytest.approx(2.9812, abs=1e-3)]
    tables = [ds.dataset(tmp_path / name / "record.parquet").to_table() for name in ("inside", "by_slot")]
    assert tables[0].equals(tables[1])


def test_a_run_whose_every_world_crashed_ends_crashed():
    assert run_end_reason(np.array([4, 4], dtype=np.int32)) == "crashed"
    assert run_end_reason(np.array([4, 1], dtype=np.int32)) == "done"
    assert run_end_reason(np.array([3, 3], dtype=np.int32)) == "battery-empty"


def test_the_crash_detector_is_built_into_a_flight_but_not_when_asked_not_to():
    options = RunConfig(vehicle="x500", controller="hold", device="cpu")
    flight = build_flight(options, "cpu")
    try:
        assert flight.crash is not None and "-> state -> crash -> " in flight.loop.plan.text()
    finally:
        flight.loop.close()
    flight = build_flight(options, "cpu", detect_crash=False)
    try:
        assert flight.crash is None and "crash" not in flight.loop.plan.text()
    finally:
        flight.loop.close()
