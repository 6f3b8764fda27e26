"""A scenario's MAVLink link loss, flown from inside the lockstep loop against the scripted PX4.

The in-loop mission plays a ground station only in a run with a link loss: a
GCS HEARTBEAT on the first tick at or after each whole second, none inside
the loss's window [start, end). The scripted PX4 models PX4's data-link-loss
detection (no GCS heartbeat for more than COM_DL_LOSS_T) and says its
failsafe text, which the scenario's ``px4_failsafe`` check catches.

Hand numbers (tick k sends time_usec 4000·k; a heartbeat or command sent
before tick k's HIL_SENSOR reaches PX4 at its clock of tick k − 1):

* window [1.5, 3.0) s: heartbeats at 1.0 s (tick 250) and 3.0 s (tick 750);
  the one of 2.0 s (tick 500) is not sent; ticks 375..749 (375 of them) are silent;
* PX4 takes them at 0.996 s and 2.996 s; with COM_DL_LOSS_T = 1 s the link is
  lost on the first clock after 0.996 + 1 = 1.996 s: 2.0 s, tick 500, where the
  toy says its failsafe (its 250 Hz telemetry stamps the stream with 2000 ms first);
* the first yaw, due at 0.7 + 1.3 = 2.0 s inside the window, goes at 3.0 s (tick 750).
"""

import json
import sys
from dataclasses import replace

import pytest

from nexus.px4.scripted_api import DATA_LINK_LOST_TEXT, ScriptedApi
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.run import run_flight
from nexus.scenario.runner import Case, _px4_settings, judge
from nexus.scenario.spec import load
from nexus.sweep.px4_fleet import mission_options
from tests.px4.test_lockstep import HOVER, boots_then, px4_flight
from tests.px4.test_mission_lockstep import PLAN, REPOSITION

SCENARIO = """
name = "px4_{name}"
duration = 3.5

[controller]
name = "px4"

[px4]
binary = {binary!r}
mission = "nexus"
{fault}
[[check]]
measure = "px4_failsafe"
"""
LOSS = '\n[[fault]]\nkind = "link_loss"\nat = 1.5\nend = 3.0\n'


def fly_scenario(folder, fault: str):
    """Load the scenario, build its in-loop mission options as the sweep's fleet does, fly 3.5 s, judge it."""
    path = folder / "s.toml"
    path.write_text(SCENARIO.format(name=folder.name, binary=sys.executable, fault=fault))
    scenario = load(path)
    mission = {**mission_options(_px4_settings(scenario), "udpin:127.0.0.1:0"), **PLAN}
    flight, px4 = px4_flight(mission=mission, answer_timeout=5.0, boot_patience=0.5)
    toy = ScriptedApi(px4.commander.link.port, telemetry_hz=250.0, dl_loss_s=1.0)
    peer = ScriptedPx4(px4.link.port, boots_then([HOVER] * 4, silent=3), api=toy)
    out = folder / "run"
    with peer.running():
        run_flight(replace(flight.options, device="cpu", duration=3.5), out, progress=False, flight=flight)
    case = Case(scenario, {})
    judge(case, out)
    return json.loads((out / "run.json").read_text())["controller_stats"]["mission"], toy, case


@pytest.fixture(scope="module")
def lost(tmp_path_factory):
    return fly_scenario(tmp_path_factory.mktemp("lost"), LOSS)


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    return fly_scenario(tmp_path_factory.mktemp("kept"), "")


def test_the_ground_station_beats_at_1_hz_and_falls_silent_over_the_window(lost):
    mission, toy, _ = lost
    assert mission["link_loss"] == {"start_s": 1.5, "end_s": 3.0, "heartbeat_ticks": [250, 750], "silent_ticks": 375}
    assert toy.gcs_heartbeats == [996_000, 2_996_000]  # PX4's clock at the tick before each


def test_px4_says_its_failsafe_when_no_heartbeat_came_for_com_dl_loss_t(lost):
    mission, toy, _ = lost
    assert toy.link_lost_at == [2_000_000]
    assert [t for t in mission["statustexts"] if t[1] == DATA_LINK_LOST_TEXT] == [[2.0, DATA_LINK_LOST_TEXT]]


def test_a_command_due_in_the_window_goes_on_the_first_tick_after_it(lost):
    mission, toy, _ = lost
    yaws = [c for c in mission["commands"] if c["name"].startswith("MAV_CMD_DO_REPOSITION")]
    assert yaws[0]["tick"] == 750 and mission["late_commands"] == 0
    assert [clock for command, clock, _ in toy.commands if command == REPOSITION][0] == 2_996_000


def test_the_scenario_with_the_link_loss_fails_px4_failsafe_at_tick_500(lost):
    _, _, case = lost
    (result,) = case.results
    assert case.verdict == "failed"
    assert (result.passed, result.first_time, result.first_tick) == (False, pytest.approx(2.0), 500)
    assert DATA_LINK_LOST_TEXT in result.message()


def test_without_the_fault_no_heartbeat_goes_and_the_scenario_passes(kept):
    mission, toy, case = kept
    assert "link_loss" not in mission and toy.gcs_heartbeats == [] and toy.link_lost_at == []
    assert case.verdict == "passed" and case.results[0].passed


def test_the_fleet_passes_a_scenarios_link_loss_to_the_in_loop_mission_and_nothing_else_otherwise():
    assert mission_options({"link_loss": [1.5, 3.0]}, "udpin:127.0.0.1:14541") == {
        "url": "udpin:127.0.0.1:14541", "link_loss": [1.5, 3.0]}
    assert mission_options({}, "udpin:127.0.0.1:14541") == {"url": "udpin:127.0.0.1:14541"}
