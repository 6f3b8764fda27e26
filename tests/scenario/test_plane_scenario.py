"""A plane's scenario checks (``nexus/scenario/plane_checks.py``) on ``scenarios/aerosonde_landing.toml``: the shipped
scenario passes on the Aerosonde's default flight, each plane measure reads what the record says (recomputed here
from the record's own columns and numbers worked by hand), a bound tightened past the flown figure fails at the row
that broke it, and a tail gust at the end of the final really drops the plane short of its point. Figures measured
2026-12-06: docs/fixed_wing.md, "Planes in worlds, variation and scenarios".
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.runtime.run_folder import RunFolder
from nexus.scenario.checks import evaluate_run
from nexus.scenario.spec import ScenarioError, load

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "aerosonde_landing.toml"
#: The Aerosonde's stall speed by hand: √(2mg/(ρS(CL0 + CLα·α0))) = √(2·11·9.80665/(1.2682·0.55·(0.23 + 5.61·0.47)))
STALL = 10.3874  # [m/s]
ROLLOUT = 7  # plane_phase of the roll-out
LOITER_CENTRE, LOITER_RADIUS = (200.0, 200.0), 150.0  # the default mission's [m]


def nexus_test(folder: Path, *paths: Path):
    out = folder / "out"
    result = CliRunner().invoke(main, ["test", *map(str, paths), "--parallel", "1", "--quiet", "--out", str(out)])
    return result, json.loads((out / "results.json").read_text()), out


@pytest.fixture(scope="module")
def flown(tmp_path_factory, ray_cpus):
    folder = tmp_path_factory.mktemp("plane_scenario")
    result, rows, out = nexus_test(folder, SCENARIO)
    (row,) = rows
    run = out / "runs" / row["point"]
    return result, row, run


def by_name(row) -> dict:
    return {c["check"]: c for c in row["checks"]}


def test_the_shipped_landing_scenario_passes_on_the_default_flight(flown):
    result, row, _ = flown
    assert result.exit_code == 0, result.output
    assert row["verdict"] == "passed"
    checks = by_name(row)
    assert set(checks) == {"airspeed_floor", "airspeed_ceiling", "altitude_floor", "altitude_ceiling",
                           "cross_track_leg_2", "cross_track_loiter", "cross_track_final", "stall_margin",
                           "touchdown_sink", "touchdown_point", "ended"}


def test_each_plane_measure_is_what_the_record_says(flown):
    _, row, run = flown
    checks = by_name(row)
    info = json.loads((run / "run.json").read_text())
    r = RunFolder(run).record().to_pandas()
    t = r.time.to_numpy()
    phase = r.plane_phase.to_numpy()
    origin = np.array(info["ned_origin_enu_m"])
    east, north, up = (r[f"body/base.pose[{i}]"].to_numpy().astype(float) - origin[i] for i in range(3))
    speed = np.sqrt(sum(r[f"body/base.velocity[{i}]"].to_numpy().astype(float) ** 2 for i in range(3)))  # still air
    airborne = phase < ROLLOUT
    # Airspeed and stall margin: the slowest in the air is in the flare (17.01 m/s), 1.638 times the stall speed.
    assert abs(checks["airspeed_floor"]["worst"] - speed[airborne].min()) < 1e-9
    assert abs(checks["stall_margin"]["worst"] - speed[airborne].min() / STALL) < 1e-4
    assert 1.6 < checks["stall_margin"]["worst"] < 1.7
    # Altitude above the NED origin (the ground under the release: the base's rest height).
    assert abs(checks["altitude_ceiling"]["worst"] - up.max()) < 1e-9
    # Cross-track, row by row (the checks' own series, evaluated again on the run's record): on the loiter
    # | |p − centre| − R | from 81 s; on leg 2, (400, 400) to (400, 0), |north − 400|; on the final (flying east to
    # the origin) |north|.
    series = {r.check.name: r.series for r in evaluate_run(load(SCENARIO).checks, RunFolder(run).record(), info)}
    on = (phase == 2) & (t >= 81.0 - 1e-9)
    loiter = np.abs(np.hypot(north[on] - LOITER_CENTRE[0], east[on] - LOITER_CENTRE[1]) - LOITER_RADIUS)
    assert np.allclose(series["cross_track_loiter"][1], loiter, atol=1e-6) and loiter.max() < 1.0
    on = (t >= 40.0 - 1e-9) & (t <= 44.5 + 1e-9) & (phase == 1)
    assert np.allclose(series["cross_track_leg_2"][1], np.abs(north[on] - 400.0), atol=1e-6)
    on = (phase == 5) | (phase == 6)
    assert np.allclose(series["cross_track_final"][1], np.abs(north[on]), atol=1e-6)
    assert abs(checks["cross_track_final"]["worst"] - np.abs(north[on]).max()) < 1e-6
    # The touchdown: the first roll-out row, its distance from the origin; the hardest touchdown of the crash block.
    first = int(np.flatnonzero(phase == ROLLOUT)[0])
    assert abs(checks["touchdown_point"]["worst"] - math.hypot(north[first], east[first])) < 1e-9
    assert up[first] <= 0.1  # TOUCHDOWN_HEIGHT
    assert checks["touchdown_sink"]["worst"] == info["crash"]["hardest_touchdown_m_s"] < 1.0


def test_a_bound_tightened_past_the_flown_figure_fails_where_it_broke(flown, tmp_path):
    _, row, run = flown
    checks = by_name(row)
    text = SCENARIO.read_text()
    tight = tmp_path / "tight.toml"
    sink = checks["touchdown_sink"]["worst"]
    point = checks["touchdown_point"]["worst"]
    floor = checks["airspeed_floor"]["worst"]
    tight.write_text(text.replace("max = 1.5\n\n[[check]]\nname = \"touchdown_point\"",
                                  f"max = {sink - 0.05:.3f}\n\n[[check]]\nname = \"touchdown_point\"")
                     .replace("max = 12.0", f"max = {point - 0.5:.2f}")
                     .replace("min = 16.0", f"min = {floor + 0.5:.2f}"))
    info = json.loads((run / "run.json").read_text())
    results = {r.check.name: r for r in evaluate_run(load(tight).checks, RunFolder(run).record(), info)}
    failed = sorted(name for name, r in results.items() if not r.passed)
    assert failed == ["airspeed_floor", "touchdown_point", "touchdown_sink"]
    assert abs(results["touchdown_point"].excess - 0.5) < 0.01 and abs(results["touchdown_sink"].excess - 0.05) < 1e-3
    # The airspeed floor breaks in the flare, 202.2 s on, where the plane slows to 17.01 m/s.
    assert results["airspeed_floor"].first_time > 200.0
    assert "first broken at" in results["airspeed_floor"].message()


def test_a_tail_gust_in_the_last_seconds_of_the_final_drops_the_plane_short_of_the_point(tmp_path, ray_cpus):
    # A 1 − cos gust of 8 m/s from the west (behind the plane, which lands flying east) from 199 s to 202 s, the
    # final's last seconds before the flare: the airspeed falls by most of the gust's speed, the approach's 18 m/s
    # to about 12.5 m/s, near the 10.39 m/s stall, and the plane sinks onto the ground far short of the point.
    text = SCENARIO.read_text().replace('name = "aerosonde_landing"', 'name = "aerosonde_tail_gust"')
    gusty = tmp_path / "gusty.toml"
    gusty.write_text(text + "\n[[environment.gust]]\nstart = 199.0\nduration = 3.0\namplitude = 8.0\n"
                            "direction = 270.0\n")
    result, rows, _ = nexus_test(tmp_path, gusty)
    (row,) = rows
    assert result.exit_code == 1 and row["verdict"] == "failed", result.output
    checks = by_name(row)
    for name in ("airspeed_floor", "stall_margin", "touchdown_point"):
        assert not checks[name]["passed"], name
    assert 199.0 < checks["stall_margin"]["first_time"] < 202.0 and checks["stall_margin"]["worst"] < 1.3
    assert checks["touchdown_point"]["worst"] > 30.0  # short of the point: the calm flight's is 7.3 m
    assert checks["touchdown_sink"]["worst"] > 1.0  # harder than the calm flight's 0.69 m/s
    # What the gust did not reach passes: the route, the loiter, the final's line before it.
    assert checks["altitude_floor"]["passed"] and checks["cross_track_loiter"]["passed"]
    assert checks["cross_track_final"]["passed"]


def test_phases_on_a_one_value_measure_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('vehicle = "aerosonde"\nduration = 240.0\n[[check]]\nmeasure = "touchdown_sink"\nmax = 1.0\n'
                   'phases = ["final"]\n')
    with pytest.raises(ScenarioError) as error:
        load(bad)
    assert str(error.value).count("\n") == 0
    assert "check[0].phases" in str(error.value) and "touchdown_sink is one value per run" in str(error.value)


def test_a_matrix_variation_flies_a_heavier_nose_heavy_plane_in_a_tail_wind(tmp_path, ray_cpus):
    # 13 kg, the centre of mass 3 cm forward, 3 m/s of wind from the west (behind the plane on its final): the
    # stall speed at 13 kg is 10.3874·√(13/11) = 11.2923 m/s, and the stall margin reads it from the drawn mass.
    (tmp_path / "heavy.toml").write_text("mass = 13.0\ncom_x = 0.03\nwind_speed = 3.0\nwind_direction = 270.0\n")
    text = SCENARIO.read_text().replace('name = "aerosonde_landing"', 'name = "heavy"')
    (tmp_path / "heavy_scenario.toml").write_text(text + '\n[matrix]\nvary = ["heavy.toml"]\n')
    result, rows, out = nexus_test(tmp_path, tmp_path / "heavy_scenario.toml")
    (row,) = rows
    assert result.exit_code == 1 and row["verdict"] == "failed", result.output
    checks = by_name(row)
    info = json.loads((out / "runs" / row["point"] / "run.json").read_text())
    assert info["world_values"] == [{"mass": 13.0, "com_x": 0.03, "wind_speed": 3.0, "wind_direction": 270.0}]
    assert abs(checks["stall_margin"]["worst"] - checks["airspeed_floor"]["worst"] / (STALL * math.sqrt(13.0 / 11.0))) \
        < 1e-4
    # It lands hard and long: the touchdown checks fail; the route and the loiter hold.
    assert not checks["touchdown_sink"]["passed"] and not checks["touchdown_point"]["passed"]
    assert checks["cross_track_loiter"]["passed"] and checks["altitude_ceiling"]["passed"]
