"""``nexus test`` on the shipped scenarios, a broken controller and a crashing run, flown once for the module.

The shipped CPU scenarios pass; ``broken_hover`` (the hover scenario with the PID's velocity gain at a
tenth) fails its altitude and landing-in-time checks in the terminal, the JUnit file and the HTML report; a
scenario whose vehicle does not exist is an error and the others go on. The verdicts and first failing
ticks are flown again in this process, one after another, and must come out the same.
"""

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexus.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "scenarios"
BROKEN_CONTROLLER = '\n[controller]\nname = "pid"\ngain_scale = {velocity_p = 0.1}\n'


@pytest.fixture(scope="module")
def flown(tmp_path_factory, ray_cpus):
    folder = tmp_path_factory.mktemp("nexus_test")
    extra = folder / "extra"
    extra.mkdir()
    text = (SHIPPED / "takeoff_hover_land.toml").read_text().replace('name = "takeoff_hover_land"',
                                                                     'name = "broken_hover"')
    (extra / "broken_hover.toml").write_text(text + BROKEN_CONTROLLER)
    (extra / "crash.toml").write_text('vehicle = "no_such_vehicle"\n' + text.replace('name = "broken_hover"',
                                                                                    'name = "crash"'))
    out = folder / "out"
    args = ["test", str(SHIPPED), str(extra), "--parallel", "2", "--quiet", "--out", str(out),
            "--junit", str(folder / "junit.xml"), "--report", str(folder / "report"),
            "--save-baseline", str(folder / "baselines")]
    result = CliRunner().invoke(main, args)
    return folder, out, result


def test_shipped_scenarios_pass_and_the_broken_controller_fails_named_checks(flown):
    folder, out, result = flown
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    broken = f"{folder / 'extra' / 'broken_hover.toml'}::broken_hover[seed=0]"
    failed = [line for line in lines if line.startswith("FAILED ")]
    assert [line.split(" - ")[0] for line in failed] == [f"FAILED {broken}::altitude_error", f"FAILED {broken}::ended"]
    assert " - altitude_error <= 0.15 m over [2.5, 4] s: first broken at " in failed[0]
    assert any(line.startswith(f"ERROR {folder / 'extra' / 'crash.toml'}::crash[seed=0]: the run ended by "
                               "build-error") for line in lines)
    assert f"{SHIPPED / 'px4_mission.toml'}::px4_mission[seed=0] SKIPPED (no PX4 binary: give [px4] binary or " \
           "nexus test --px4-binary PATH)" in lines
    (summary,) = [line for line in lines if " passed, " in line]
    assert "= 13 passed, 1 failed, 1 errors, 5 skipped in " in summary
    rows = json.loads((out / "results.json").read_text())
    verdicts = {row["scenario"]: row["verdict"] for row in rows}
    assert verdicts == {"gps_lost": "passed", "frozen_baro": "passed", "imu_bias": "passed",
                        "hexa_rotor_loss": "passed", "hover_in_gusts": "passed",
                        "px4_mission": "skipped", "px4_steps": "skipped", "px4_link_loss": "skipped",
                        "px4_fleet": "skipped", "px4_vtol_mission": "skipped",
                        "takeoff_hover_land": "passed", "waypoint_square": "passed", "aerosonde_landing": "passed",
                        "aerosonde_blocked_pitot": "passed", "aerosonde_ekf_blocked_pitot": "passed",
                        "fleet_swap": "passed", "fleet_swap_policy": "passed", "vtol_mission": "passed",
                        "broken_hover": "failed", "crash": "error"}
    for row in rows:  # every flown case is an ordinary run folder
        if row["point"]:
            assert (out / "runs" / row["point"] / "run.json").is_file()


def test_junit_has_a_case_per_point_and_names_the_failed_checks(flown):
    folder, _, _ = flown
    suite = ET.parse(folder / "junit.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("20", "1", "1", "5")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert len(cases) == 20
    failure = cases["broken_hover[seed=0]"].find("failure")
    message = failure.get("message")
    assert message.startswith("altitude_error: first failed at 2.500 s (tick 625), ")
    assert " m over its bound 0.15 m; ended: first failed at 8.000 s (tick 2000), 1 over its bound 0" in message
    assert cases["crash[seed=0]"].find("error") is not None
    assert cases["px4_mission[seed=0]"].find("skipped").get("message").startswith("no PX4 binary")
    assert cases["takeoff_hover_land[seed=0]"].find("failure") is None
    assert cases["takeoff_hover_land[seed=0]"].find("properties") is None  # nothing to say: no empty element


def test_a_junit_parser_reads_the_file_back(flown):
    # junitparser, the library CI tools' plugins build on, reads what CI systems would: the counts, each case's
    # result and the failure's message.
    from junitparser import Error, Failure, JUnitXml, Skipped

    folder, _, _ = flown
    (suite,) = list(JUnitXml.fromfile(str(folder / "junit.xml")))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (20, 1, 1, 5)
    results = {case.name: case.result for case in suite}
    assert len(results) == 20
    (failure,) = results["broken_hover[seed=0]"]
    assert isinstance(failure, Failure) and failure.message.startswith("altitude_error: first failed at 2.500 s")
    assert [type(r) for r in results["crash[seed=0]"]] == [Error]
    assert all(isinstance(r, Skipped) for name in ("px4_mission", "px4_steps", "px4_link_loss", "px4_fleet",
                                                   "px4_vtol_mission")
               for r in results[f"{name}[seed=0]"])
    assert results["takeoff_hover_land[seed=0]"] == []  # passed


def test_the_report_draws_each_failed_check(flown):
    folder, _, _ = flown
    page = (folder / "report" / "index.html").read_text()
    assert page.count("data:image/png;base64,") == 2
    assert "<h3>altitude_error</h3>" in page and "<h3>ended</h3>" in page
    assert "13 passed, 1 failed, 1 errors, 5 skipped" in page


def test_verdicts_and_first_failing_ticks_repeat_in_another_process_one_at_a_time(flown, tmp_path):
    """The module's run flew in Ray workers two at a time; here the same points fly in this process in turn."""
    from nexus.core.warp_setup import init_warp
    from nexus.scenario.runner import ScenarioOptions, judge, prepare
    from nexus.sweep.task import fly_point

    folder, out, _ = flown
    init_warp(False)
    paths = [SHIPPED / "takeoff_hover_land.toml", folder / "extra" / "broken_hover.toml"]
    cases, points = prepare(paths, ScenarioOptions(out=tmp_path))
    before = {row["point"]: row for row in json.loads((out / "results.json").read_text())}
    for point, case in zip(points, cases):
        fly_point(point.as_dict(), str(tmp_path / point.id))
        judge(case, tmp_path / point.id)
        earlier = before[case.point_id]
        assert case.verdict == earlier["verdict"]
        assert [(r.check.name, r.passed, r.first_tick, r.worst) for r in case.results] == \
               [(c["check"], c["passed"], c["first_tick"], c["worst"]) for c in earlier["checks"]]
    assert [c.verdict for c in cases] == ["passed", "failed"]


def test_a_baseline_fails_a_regression_past_its_tolerance(flown, tmp_path):
    from nexus.scenario.baseline import compare
    from nexus.scenario.runner import ScenarioOptions, judge, prepare

    folder, out, _ = flown
    baselines = tmp_path / "baselines"
    shutil.copytree(folder / "baselines", baselines)
    cases, _ = prepare([SHIPPED / "takeoff_hover_land.toml"], ScenarioOptions(out=tmp_path, baseline=baselines))
    (case,) = cases
    judge(case, out / "runs" / case.point_id)
    compare(baselines, cases)
    assert case.verdict == "passed" and case.results[-1].check.name == "baseline:landing" and case.results[-1].passed
    path = baselines / "takeoff_hover_land.json"
    stored = json.loads(path.read_text())
    landing = stored["points"]["seed=0"]["landing"]
    stored["points"]["seed=0"]["landing"] = landing - 0.06  # as if the landing had been 6 cm better before: 1 cm past
    path.write_text(json.dumps(stored))
    judge(case, out / "runs" / case.point_id)
    compare(baselines, cases)
    assert case.verdict == "failed"
    regression = case.results[-1]
    assert regression.check.name == "baseline:landing" and not regression.passed
    assert regression.excess == pytest.approx(0.01)


def test_out_is_refused_when_it_holds_runs_and_resume_keeps_them_without_flying(flown):
    folder, out, _ = flown
    args = ["test", str(SHIPPED / "takeoff_hover_land.toml"), str(folder / "extra" / "broken_hover.toml"),
            "--parallel", "2", "--quiet", "--out", str(out)]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2
    assert f"--out {out} already holds runs; pass --resume" in refused.output
    stamps = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/run.json")}
    resumed = CliRunner().invoke(main, [*args, "--resume"])
    assert resumed.exit_code == 1, resumed.output
    assert "= 1 passed, 1 failed, 0 errors, 0 skipped in " in resumed.output
    assert {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/run.json")} == stamps  # nothing flew again


def test_the_recorded_contact_count_fails_a_landing_inside_the_window_at_its_first_touch(flown):
    """The shipped landing passes ``contact`` (its window ends where the land step begins); the same record
    judged with the whole run as the window fails at the landing's first touching tick."""
    import numpy as np

    from nexus.runtime.run_folder import RunFolder
    from nexus.scenario.checks import evaluate_run
    from nexus.scenario.spec import Check

    _, out, _ = flown
    row = next(r for r in json.loads((out / "results.json").read_text()) if r["scenario"] == "takeoff_hover_land")
    assert next(c for c in row["checks"] if c["check"] == "contact")["passed"]
    run = out / "runs" / row["point"]
    table, info = RunFolder(run).record(), RunFolder(run).peek_info()
    (landing,) = evaluate_run([Check("contact", "contact", 0.0, "max", (0.0, 8.0))], table, info)
    contact, step = table.column("contact").to_numpy(), table.column("mission_step").to_numpy()
    assert contact[0] > 0 and not landing.passed  # it rested on its legs, and it landed in the window
    first = landing.first_tick - 1  # row of the first failing tick (row 0 is tick 1)
    lifted = int(np.flatnonzero(contact == 0)[0])
    assert lifted < first and not contact[lifted:first].any() and contact[first] > 0
    assert step[first] == 2  # the touch is the land step's
