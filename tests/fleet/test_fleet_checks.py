"""``min_separation`` and ``nexus plot`` on a fleet: a real two-vehicle flight, and a hand-made record.

The flight: ``nexus run --vehicles 2 --spacing 2 --duration 8 --controller pid`` (the scene's mission, each vehicle
from where it starts). Vehicle 1 starts 1 x 2.0 m east of vehicle 0, both at rest on the ground, so until they lift
off (after 0.2 s) they are the spacing apart, 2.0 m; in the air each drifts by its own sensors' noise, and the two
came no closer than 1.69 m in the flight measured (vehicle 1 drifts 0.3 m west by 8 s).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.runtime.run_folder import RunFolder
from nexus.scenario.checks import evaluate_run
from nexus.scenario.spec import Check, ScenarioError, load

SPACING = 2.0  # [m]


def separation(bound: float, window=(0.0, 8.0)) -> Check:
    return Check("apart", "min_separation", bound, "min", window)


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> Path:
    """Two vehicles, 2 m apart, 8 s of the scene's mission with the PID."""
    out = tmp_path_factory.mktemp("fleet") / "pair"
    flown = subprocess.run([sys.executable, "-m", "nexus.cli", "run", "--vehicles", "2", "--spacing", str(SPACING),
                            "--duration", "8", "--controller", "pid", "--device", "cpu", "--out", str(out), "--quiet"],
                           capture_output=True, text=True, timeout=600)
    assert flown.returncode == 0, flown.stderr
    return out


@pytest.fixture(scope="module")
def record(pair):
    folder = RunFolder(pair)
    return folder.record(), folder.info


def base_positions(table, vehicle: int) -> tuple[np.ndarray, np.ndarray]:
    """(time [s], base position ENU [m]) of one vehicle, straight from the record's columns."""
    mine = table.filter(pc.equal(table.column("vehicle"), vehicle))
    return (mine.column("time").to_numpy(),
            np.stack([mine.column(f"body/base.pose[{i}]").to_numpy().astype(np.float64) for i in range(3)], axis=1))


def test_at_rest_the_two_vehicles_are_the_spacing_apart(record):
    table, info = record
    # Before lift-off both rest where the line put them: 1 x 2.0 m apart, to a micrometre.
    (rest,) = evaluate_run([separation(1.0, (0.0, 0.2))], table, info)
    assert rest.passed and rest.worst == pytest.approx(SPACING, abs=1e-5)
    # A bound of 2.5 m is broken on the record's first row (0.004 s, tick 1), by 2.5 - 2.0 = 0.5 m.
    (tight,) = evaluate_run([separation(2.5, (0.0, 0.2))], table, info)
    assert not tight.passed
    assert (tight.first_time, tight.first_tick) == (0.004, 1)
    assert tight.excess == pytest.approx(0.5, abs=1e-5)
    assert "first broken at 0.004 s (tick 1), worst 2 (0.5 under); closest: vehicles 0 and 1 of world 0, 2 m apart" \
        in tight.message()


def test_over_the_flight_the_closest_approach_is_read_from_both_vehicles_rows(record):
    table, info = record
    (loose,) = evaluate_run([separation(1.0)], table, info)
    (tight,) = evaluate_run([separation(2.5)], table, info)
    assert loose.passed and not tight.passed and loose.worst == tight.worst
    # The same distance worked out from the two vehicles' pose columns, row by row (both record every tick).
    time, first = base_positions(table, 0)
    _, second = base_positions(table, 1)
    apart = np.linalg.norm(second - first, axis=1)
    closest = int(np.argmin(apart))
    assert loose.worst == pytest.approx(apart[closest], abs=1e-9)
    assert 1.6 < loose.worst < SPACING  # they drifted towards each other, 1.69 m at 8 s when measured
    assert f"{apart[closest]:.4g} m apart at {time[closest]:.3f} s" in loose.message()


def test_a_measure_of_one_vehicle_reads_each_vehicle_from_its_own_origin(record):
    table, info = record
    (landing,) = evaluate_run([Check("landing", "landing", 5.0, "max", (0.0, 8.0))], table, info)
    # Each vehicle's landing point is where it started: its horizontal distance from there at the end, not vehicle
    # 1's 2 m from vehicle 0's start.
    ends = []
    for vehicle in (0, 1):
        _, position = base_positions(table, vehicle)
        ends.append(np.hypot(*(position[-1, :2] - position[0, :2])))
    assert landing.passed and landing.worst == pytest.approx(max(ends), abs=1e-6)
    assert landing.worst < 1.0
    assert landing.detail == f"vehicle {int(np.argmax(ends))} of world 0"
    # Each vehicle's setpoint is NED from its own origin (run.json's ned_origins_enu_m): within 0.4 m of each
    # (measured), where vehicle 1 measured from vehicle 0's origin would be 2 m off.
    (error,) = evaluate_run([Check("error", "position_error", 1.0, "max", (0.0, 8.0))], table, info)
    assert error.passed and error.worst < 1.0


def test_min_separation_on_a_one_vehicle_record_fails_and_says_why():
    rows = 5
    columns = {"time": np.arange(1, rows + 1) * 0.004, **{f"body/base.pose[{i}]": np.zeros(rows) for i in range(6)},
               "body/base.pose[6]": np.ones(rows), **{f"body/base.velocity[{i}]": np.zeros(rows) for i in range(3)}}
    (alone,) = evaluate_run([separation(1.0, (0.0, 0.02))], pa.table(columns), {"tick_ns": 4_000_000})
    assert not alone.passed and "the run flew one vehicle a world" in alone.message()


def test_a_vehicle_that_stops_recording_is_held_where_it_was_last():
    # Hand-made: three vehicles of one world on the east axis, a row every 0.1 s from 0.1 to 2.0 s. Vehicles 0 and
    # 1 stand at 0 and 2 m; vehicle 2 starts at 4 m and flies west at 0.5 m/s, its last row at 1.6 s (3.2 m).
    # Vehicles 1 and 2 are 2 - 0.5 t apart: 1.5 m at 1.0 s (a min of 1.5 holds), 1.45 m at 1.1 s (broken), and
    # 1.2 m from 1.6 s on, vehicle 2 held at 3.2 m.
    time = np.round(np.arange(1, 21) * 0.1, 10)
    east = {0: np.zeros(20), 1: np.full(20, 2.0), 2: 4.0 - 0.5 * time}
    rows = [(t, v, east[v][k]) for k, t in enumerate(time) for v in (0, 1, 2) if not (v == 2 and t > 1.6 + 1e-9)]
    t, v, x = (np.array(c) for c in zip(*rows, strict=True))
    columns = {"time": t, "world": np.zeros(len(t), dtype=np.int32), "vehicle": v.astype(np.int32),
               "body/base.pose[0]": x, "body/base.pose[1]": np.zeros(len(t)), "body/base.pose[2]": np.ones(len(t)),
               **{f"body/base.pose[{i}]": np.zeros(len(t)) for i in (3, 4, 5)}, "body/base.pose[6]": np.ones(len(t)),
               **{f"body/base.velocity[{i}]": np.zeros(len(t)) for i in range(3)}}
    info = {"tick_ns": 100_000_000, "vehicles": 3}
    (result,) = evaluate_run([separation(1.5, (0.0, 2.0))], pa.table(columns), info)
    assert not result.passed
    assert result.first_time == pytest.approx(1.1) and result.first_tick == 11
    assert result.worst == pytest.approx(1.2) and result.excess == pytest.approx(0.3)
    assert result.detail == "closest: vehicles 1 and 2 of world 0, 1.2 m apart at 1.600 s"
    times, values = result.series
    assert len(times) == 20 and values[-1] == pytest.approx(1.2)  # held after its last row
    (early,) = evaluate_run([separation(1.5, (0.0, 1.0))], pa.table(columns), info)
    assert early.passed and early.worst == pytest.approx(1.5)


SCENARIO = """duration = 4.0
{fleet}
[[check]]
measure = "min_separation"
min = 1.0
"""


def test_a_scenario_sets_its_fleet_and_refuses_min_separation_without_one(tmp_path):
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(SCENARIO.format(fleet="[fleet]\nvehicles = 3\nspacing = 2.5\ncontact = false\n"))
    scenario = load(fleet)
    assert (scenario.run["vehicles"], scenario.run["spacing"], scenario.run["vehicle_contact"]) == (3, 2.5, False)
    alone = tmp_path / "alone.toml"
    alone.write_text(SCENARIO.format(fleet=""))
    with pytest.raises(ScenarioError) as caught:
        load(alone)
    assert str(caught.value) == (f"{alone}: check[0].measure: min_separation is the distance between the vehicles "
                                 "of one world, and the scenario flies one; set [fleet] vehicles = 2 or more, or "
                                 "remove the check")
    lone = tmp_path / "lone.toml"
    lone.write_text(SCENARIO.format(fleet="[fleet]\nspacing = 3.0\n"))
    with pytest.raises(ScenarioError, match=r"lone.toml: fleet.spacing: a fleet of one vehicle has no line"):
        load(lone)


def test_plot_draws_one_line_per_vehicle_the_spacing_apart(pair, tmp_path):
    from nexus.viz.fleet import load_fleet
    from nexus.viz.fleet_figures import paths

    made = CliRunner().invoke(main, ["plot", str(pair), "--out", str(tmp_path), "--vehicle", "1"])
    assert made.exit_code == 0, made.output
    assert (tmp_path / "plots" / "fleet_paths.png").read_bytes()[:4] == b"\x89PNG"
    page = (tmp_path / "report.html").read_text()
    assert "id='fig-fleet_paths'" in page and "Vehicle 1 in detail" in page
    figure = paths(load_fleet(pair, 0), 1)
    top, north, east, up, apart = figure.axes
    lines = {line.get_label(): line for line in top.get_lines()}
    assert {"vehicle 0", "vehicle 1", "vehicle 1 setpoint"} <= set(lines)
    # From vehicle 0's NED origin, vehicle 1 starts 1 x 2.0 m east (x is east in the top view).
    assert lines["vehicle 0"].get_xdata()[0] == pytest.approx(0.0, abs=1e-6)
    assert lines["vehicle 1"].get_xdata()[0] == pytest.approx(SPACING, abs=1e-6)
    assert lines["vehicle 1"].get_linewidth() > lines["vehicle 0"].get_linewidth()  # the one in detail
    assert [line.get_label() for line in east.get_lines()][:2] == ["vehicle 0", "vehicle 1"]
    assert apart.get_lines()[0].get_ydata()[0] == pytest.approx(SPACING, abs=1e-5)
    refused = CliRunner().invoke(main, ["plot", str(pair), "--out", str(tmp_path), "--vehicle", "2"])
    assert refused.exit_code == 2
    assert refused.output.strip() == (f"error: --vehicle 2 is not a vehicle of {pair}: give a vehicle in 0..1 (it "
                                      "flew 2 vehicles a world)")
