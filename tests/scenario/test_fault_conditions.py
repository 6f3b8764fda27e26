"""Faults fired by a condition (``[[fault]] when = {...}``): the firing tick, the ``at`` run it equals, a
condition that never holds.

Three short flights, flown once for the module:

- ``hexa``: the F550 hexacopter, the PID told of failures, takes off to 1 m; rotor 0 fails when the base is
  above 0.5 m, and the GPS drops out when it is more than 50 m from the start (never);
- ``hexa_at``: the same with the rotor fault at the time ``hexa``'s fault fired;
- ``quad``: the Astro Max waits until 1.0 s, then takes off to 0.5 m; the barometer freezes when step 1
  begins, rotor 0 "fails" (keeping all its thrust) when the speed is above 0.3 m/s, and the GPS drops out at
  1.2 s (a second sensor fault, on a sensor of its own).
"""

import json
from pathlib import Path

import numpy as np
import pytest

from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight
from nexus.runtime.run_folder import RunFolder
from nexus.runtime.fault_trigger import PENDING_S
from nexus.scenario.fault_trigger import fault_line
from nexus.scenario.runner import PASSED, Case, judge, results_json
from nexus.scenario.spec import load

TICK_S = 0.004  # 250 Hz, the default tick

HEXA = """
duration = 2.5
vehicle = "hexa_f550"

[controller]
name = "pid"
knows_failures = true

[[fault]]
kind = "rotor"
FAULT_TIME

[[fault]]
kind = "gps_denied"
when = {distance_from_start_above = 50.0}

[[step]]
do = "takeoff"
height = 1.0
time_limit = 2.0

[[step]]
do = "hold"
time = 1.0

[[check]]
measure = "tilt"
max = 30.0
"""

QUAD = """
duration = 1.6

[[fault]]
kind = "sensor"
sensor = "Baro"
mode = "freeze"
when = {step = 1}

[[fault]]
kind = "rotor"
fraction = 1.0
when = {speed_above = 0.3}

[[fault]]
kind = "gps_denied"
at = 1.2

[[step]]
do = "wait"
until_time = 1.0

[[step]]
do = "takeoff"
height = 0.5

[[check]]
measure = "tilt"
max = 30.0
"""


def fly(folder: Path, name: str, text: str) -> Case:
    path = folder / f"{name}.toml"
    path.write_text(f'name = "{name}"\n' + text)
    scenario = load(path)
    out = folder / name
    run_flight(RunConfig(**scenario.run, scenario=scenario.ring), out, progress=False)
    case = Case(scenario, {"seed": 0}, point_id=name)
    judge(case, out)
    return case


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fault_conditions")
    hexa = fly(folder, "hexa", HEXA.replace("FAULT_TIME", "when = {altitude_above = 0.5}"))
    fired = hexa.faults[0]["time"]
    hexa_at = fly(folder, "hexa_at", HEXA.replace("FAULT_TIME", f"at = {fired!r}"))
    quad = fly(folder, "quad", QUAD)
    return {"hexa": hexa, "hexa_at": hexa_at, "quad": quad}


def record(case: Case):
    return RunFolder(case.folder).record()


def column(table, name: str) -> np.ndarray:
    return table.column(name).to_numpy()


def ticks(table) -> np.ndarray:
    return np.rint(column(table, "time") / TICK_S).astype(np.int64)


def test_an_altitude_condition_fires_the_tick_after_the_base_first_is_above_it(flown):
    case = flown["hexa"]
    table = record(case)
    origin = json.loads((case.folder / "run.json").read_text())["ned_origin_enu_m"]
    up = column(table, "body/base.pose[2]").astype(np.float64) - origin[2]
    first = int(np.argmax(up > 0.5))
    assert up[first - 1] <= 0.5 < up[first]
    fired = case.faults[0]
    assert fired["tick"] == ticks(table)[first] + 1
    assert fired["time"] == pytest.approx(fired["tick"] * TICK_S, abs=1e-12)
    # By hand: the goal climbs 1 m on a minimum-jerk curve at 1 m/s on average, so it passes 0.5 m at 0.5 s
    # after the take-off began (the first tick); the vehicle follows behind it, within half a second.
    assert 0.5 < fired["time"] < 1.0
    # The record shows -1 until the firing tick, and that tick from then on.
    faulted = column(table, "fault_tick/0")
    at_fire = int(np.flatnonzero(ticks(table) == fired["tick"])[0])
    assert set(faulted[:at_fire]) == {-1} and set(faulted[at_fire:]) == {fired["tick"]}


def test_the_pid_told_of_failures_remixes_on_the_firing_tick(flown):
    case = flown["hexa"]
    table = record(case)
    at_fire = int(np.flatnonzero(ticks(table) == case.faults[0]["tick"])[0])
    rotor0 = column(table, "controls[0]")
    assert rotor0[at_fire - 1] > 0.2  # flying on six rotors the tick before
    assert np.all(rotor0[at_fire:] == 0.0)  # the mix without rotor 0 from the firing tick on
    assert case.verdict == PASSED  # and it holds its tilt under 30 deg on five


def test_a_when_run_is_bit_identical_to_the_at_run_of_its_firing_time(flown):
    when, at = record(flown["hexa"]), record(flown["hexa_at"])
    # Only the rotor fault's firing tick is extra (both runs carry the GPS fault that never fires).
    assert set(when.column_names) - set(at.column_names) == {"fault_tick/0"}
    assert set(at.column_names) <= set(when.column_names)
    assert when.num_rows == at.num_rows == 625  # 2.5 s at 250 Hz
    for name in at.column_names:
        assert np.array_equal(column(when, name), column(at, name)), name
    values = [json.loads((flown[k].folder / "run.json").read_text())["world_values"][0]["rotor_fail_time"]
              for k in ("hexa", "hexa_at")]
    assert values == [PENDING_S, flown["hexa"].faults[0]["time"]]


def test_a_step_condition_fires_the_tick_after_the_step_begins(flown):
    case = flown["quad"]
    table = record(case)
    # By hand: the wait ends on the tick whose time reaches 1.0 s, tick 250 (1.0 s x 250 Hz); step 1 begins
    # there, and the barometer freezes from tick 251.
    step = column(table, "mission_step")
    tick = ticks(table)
    assert step[tick == 249][0] == 0 and step[tick == 250][0] == 1
    assert case.faults[0]["tick"] == 251
    assert case.faults[0]["time"] == pytest.approx(1.004, abs=1e-12)


def test_a_speed_condition_fires_the_tick_after_the_speed_first_is_above_it(flown):
    table = record(flown["quad"])
    speed = np.linalg.norm(np.stack([column(table, f"body/base.velocity[{i}]").astype(np.float64)
                                     for i in range(3)], axis=1), axis=1)
    first = int(np.argmax(speed > 0.3))
    fired = flown["quad"].faults[1]
    assert fired["tick"] == ticks(table)[first] + 1
    assert 1.0 < fired["time"] < 1.5  # resting until the take-off at 1.0 s, climbing at 1 m/s on average after


def test_a_condition_that_never_holds_is_reported_and_the_run_passes(flown):
    case = flown["hexa"]
    never = case.faults[1]
    assert never == {"fault": 1, "kind": "gps_denied", "when": {"distance_from_start_above": 50.0},
                     "describe": "fault[1] gps_denied when distance_from_start_above > 50 m", "tick": None,
                     "time": None}
    assert fault_line(never) == ("fault[1] gps_denied when distance_from_start_above > 50 m: never fired (the "
                                 "condition never held)")
    assert set(column(record(case), "fault_tick/1")) == {-1}
    assert case.verdict == PASSED
    rows = json.loads(results_json([case]))
    assert rows[0]["faults"][1]["tick"] is None
    assert rows[0]["faults"][0]["tick"] == case.faults[0]["tick"]
    assert fault_line(case.faults[0]) == (f"fault[0] rotor when altitude_above > 0.5 m: fired at "
                                          f"{case.faults[0]['time']:.3f} s (tick {case.faults[0]['tick']})")


def test_two_sensor_faults_each_act_on_their_own_sensor_from_their_own_tick(flown):
    table = record(flown["quad"])
    tick = ticks(table)
    # The barometer frozen from tick 251: the pressure of tick 250 from then on, its time stamps going on.
    pressure, stamp = column(table, "baro.pressure"), column(table, "baro.time")
    frozen = tick >= 251
    assert np.all(pressure[frozen] == pressure[tick == 250][0])
    assert len(set(pressure[(tick >= 200) & (tick <= 250)])) > 1  # it moved before
    assert stamp[tick == 400][0] > stamp[tick == 251][0]
    # The GPS dropped out at 1.2 s (tick 300): its whole sample, time included, is that of tick 299 from then on.
    gps_time = column(table, "gps.time")
    assert np.all(gps_time[tick >= 300] == gps_time[tick == 299][0])
    assert gps_time[tick == 299][0] > gps_time[tick == 200][0]  # it was sampling before


def test_the_junit_file_and_the_html_report_say_when_each_fault_fired(flown):
    import xml.etree.ElementTree as ET

    from nexus.scenario.junit import junit_xml
    from nexus.scenario.report import report_html

    case = flown["hexa"]
    testcase = ET.fromstring(junit_xml([case], 1.0)).find("testsuite/testcase")
    properties = {p.get("name"): p.get("value") for p in testcase.findall("properties/property")}
    tick = case.faults[0]["tick"]
    assert properties == {
        "fault[0]": f"fault[0] rotor when altitude_above > 0.5 m: fired at {tick * 0.004:.3f} s (tick {tick})",
        "fault[1]": "fault[1] gps_denied when distance_from_start_above > 50 m: never fired (the condition never held)"}
    page = report_html([case], 1.0)
    assert f"(tick {tick})" in page and "never fired" in page
