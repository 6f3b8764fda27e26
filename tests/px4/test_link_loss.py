"""A scenario's MAVLink link loss, flown from inside the lockstep loop against the scripted PX4.

The in-loop mission plays a ground station only in a run with a link loss: a
GCS HEARTBEAT on the first tick at or after each whole second, none inside
the loss's window [start, end). The scripted PX4 detects the loss as real PX4
does (nexus/px4/scripted_api.py, from a real PX4 flight), goes into its
failsafe and lands; the run ends on the tick whose lockstep answer says it
disarmed, though the link is still down. What it said reaches the API link
only while a ground station is there, so the checks read it from its log.

Hand numbers (tick k sends time_usec 4000·k; a heartbeat or command sent
before tick k's HIL_SENSOR reaches PX4 at its clock of tick k − 1):

* window [1.5, 8.0) s: one heartbeat, at 1.0 s (tick 250), which PX4 takes at 0.996 s (no look at it:
  PX4's receiver looks at its heartbeats only once its clock is past 2.5 s);
* PX4's receiver's looks, each pinned by the commander's wake (two TIMESYNCs, the clock held) to the first
  tick whose PX4 clock has reached it: the first past 2.5 s, tick 627 (2.504 s: the heartbeat is 1.508 s
  old, the ground station present), then 1.25 s after each: tick 940 (3.756 s: 2.76 s old, gone) and
  tick 1253 (5.008 s);
* the link status goes out at the clock after a look and 1 s after the one before: 2.508 s (present),
  3.508 s (present: the look still says so), 3.760 s (gone);
* COM_DL_LOSS_T = 1 s after the status of 3.508 s: the link is lost at the first clock past 4.508 s,
  4.512 s (tick 1128); "Failsafe activated: entering Hold for 0.5 seconds" 12 ms later, 4.524 s
  (tick 1131); "Failsafe activated" COM_FAIL_ACT_T = 0.5 s after that, 5.024 s, where the toy lands;
* from 1 m (the takeoff's altitude) at 1 m/s, 0.004 m per sensor message: on the ground 250
  messages later, 6.024 s (tick 1506), where its answer says disarmed and the run ends;
* the first yaw, due at 0.7 + 1.3 = 2.0 s inside the window, never goes.

Without the wakes the looks fall where PX4's receiver's 10 ms wall-clock poll timeout finds its clock, so the loss
moves with the machine's speed: the same flight against a toy whose poll times out after 3 ms and after 300 ms
gives the same ticks only with them.
"""

import json
import sys
from dataclasses import replace

import pytest

from nexus.px4.scripted_api import DATA_LINK_LOST_TEXT, FAILSAFE_TEXT, ScriptedApi
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.run import run_flight
from nexus.scenario.runner import Case, _px4_settings, judge
from nexus.scenario.spec import load
from nexus.sweep.px4_fleet import mission_options
from tests.px4.test_lockstep import HOVER, boots_then, px4_flight
from tests.px4.test_mission_lockstep import PLAN

SCENARIO = """
name = "px4_{name}"
duration = 8.5

[controller]
name = "px4"

[px4]
binary = {binary!r}
mission = "nexus"
{fault}
[[check]]
name = "no_failsafe"
measure = "px4_failsafe"

[[check]]
name = "failsafe_in_the_loss"
measure = "px4_failsafe"
min = 1
window = [1.5, 8.5]

[[check]]
measure = "ended"

[[check]]
measure = "px4_mission"
"""
LOSS = '\n[[fault]]\nkind = "link_loss"\nat = 1.5\nend = 8.0\n'
HOLD = "Failsafe activated: entering Hold for 0.5 seconds"


def fly_scenario(folder, fault: str, poll_s: float = 0.01):
    """Load the scenario, build its in-loop mission options as the sweep's fleet does, fly, judge it.

    The toy's log goes where the fleet puts PX4's: a ULog that ``px4/px4.json`` names."""
    path = folder / "s.toml"
    path.write_text(SCENARIO.format(name=folder.name, binary=sys.executable, fault=fault))
    scenario = load(path)
    mission = {**mission_options(_px4_settings(scenario), "udpin:127.0.0.1:0"), **PLAN}
    flight, px4 = px4_flight(mission=mission, answer_timeout=5.0, boot_patience=0.5)
    toy = ScriptedApi(px4.commander.link.port, telemetry_hz=250.0, dl_loss_s=1.0, dl_action="land", fail_act_s=0.5,
                      receiver_poll_s=poll_s)
    peer = ScriptedPx4(px4.link.port, boots_then([HOVER] * 4, silent=3), api=toy)
    out = folder / "run"
    with peer.running():
        run_flight(replace(flight.options, device="cpu", duration=8.5), out, progress=False, flight=flight)
    toy.write_log(out / "px4" / "log" / "toy.ulg")
    (out / "px4" / "px4.json").write_text(json.dumps({"ulog": "px4/log/toy.ulg"}))
    case = Case(scenario, {})
    judge(case, out)
    return json.loads((out / "run.json").read_text()), toy, case


@pytest.fixture(scope="module")
def lost(tmp_path_factory):
    return fly_scenario(tmp_path_factory.mktemp("lost"), LOSS)


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    return fly_scenario(tmp_path_factory.mktemp("kept"), "")


def test_the_ground_station_beats_at_1_hz_and_falls_silent_over_the_window(lost):
    info, toy, _ = lost
    loss = info["controller_stats"]["mission"]["link_loss"]
    assert (loss["start_s"], loss["end_s"], loss["heartbeat_ticks"]) == (1.5, 8.0, [250])
    assert loss["silent_ticks"] == 1506 - 375 + 1  # ticks 375 to 1506, the last, all silent
    assert toy.gcs_heartbeats == [996_000]  # PX4's clock at the tick before


def test_px4s_receiver_looks_at_the_heartbeats_on_the_ticks_the_commander_wakes_it(lost):
    info, toy, _ = lost
    assert info["controller_stats"]["mission"]["link_loss"]["receiver_wake_ticks"] == [627, 940, 1253]
    assert toy.checks == [(2_504_000, True), (3_756_000, False), (5_008_000, False)]


def test_px4_loses_the_link_then_holds_then_lands_in_its_words_and_times(lost):
    _, toy, _ = lost
    assert toy.link_lost_at == [4_512_000]
    assert toy.log == [(4_512_000, "info", DATA_LINK_LOST_TEXT), (4_524_000, "critical", HOLD),
                       (5_024_000, "critical", FAILSAFE_TEXT)]


def test_no_statustext_reaches_the_api_link_while_the_ground_station_is_gone(lost):
    info, _, _ = lost
    assert info["controller_stats"]["mission"]["statustexts"] == []


def test_the_run_ends_on_the_tick_px4_disarmed_though_the_link_is_still_down(lost):
    info, toy, case = lost
    mission = info["controller_stats"]["mission"]
    assert (info["exit_reason"], info["ticks"], info["sim_time_s"]) == ("done", 1506, pytest.approx(6.024))
    assert mission["landed_disarmed"] and not toy.armed
    assert [c["name"].split(" ")[0] for c in mission["commands"]] == ["MAV_CMD_COMPONENT_ARM_DISARM",
                                                                     "MAV_CMD_NAV_TAKEOFF"]  # the yaw never went
    ended, mission_check = case.results[2:]
    assert ended.passed and mission_check.passed


def test_the_checks_read_the_failsafe_from_px4s_log_at_its_tick(lost):
    _, _, case = lost
    no_failsafe, in_the_loss = case.results[:2]
    assert (no_failsafe.passed, no_failsafe.first_time, no_failsafe.first_tick) == (False, pytest.approx(4.524), 1131)
    assert no_failsafe.worst == 2.0 and f"PX4 said {HOLD!r}" in no_failsafe.message()
    assert in_the_loss.passed and in_the_loss.worst == 2.0
    assert case.verdict == "failed"


@pytest.mark.parametrize("poll_s", [0.003, 0.3])
def test_the_loss_falls_on_the_same_tick_whatever_the_receivers_wall_clock_poll(tmp_path, lost, poll_s):
    folder = tmp_path / f"poll{round(poll_s * 1000)}"
    folder.mkdir()
    info, toy, _ = fly_scenario(folder, LOSS, poll_s=poll_s)
    assert toy.link_lost_at == lost[1].link_lost_at == [4_512_000]
    assert toy.checks == [(2_504_000, True), (3_756_000, False), (5_008_000, False)]
    assert (info["exit_reason"], info["ticks"]) == ("done", 1506)


def test_without_the_fault_no_heartbeat_goes_and_no_failsafe_comes(kept):
    info, toy, case = kept
    assert "link_loss" not in info["controller_stats"]["mission"] and toy.gcs_heartbeats == [] and toy.log == []
    no_failsafe, in_the_loss, ended, mission = case.results
    assert no_failsafe.passed and ended.passed and mission.passed
    assert not in_the_loss.passed and in_the_loss.worst == 0.0 and "PX4 said no failsafe" in in_the_loss.message()
    # It fails where the run ended, before its window's end: the mission's end, 1.5 s after the landing of
    # 2.9 s (0.7 s takeoff + 1.3 s to the first yaw + 3 yaws 0.3 s apart), 4.4 s, tick 1100.
    assert (info["exit_reason"], info["ticks"]) == ("done", 1100)
    assert (in_the_loss.first_time, in_the_loss.first_tick) == (pytest.approx(4.4), 1100)


def test_the_fleet_passes_a_scenarios_link_loss_to_the_in_loop_mission_and_nothing_else_otherwise():
    assert mission_options({"link_loss": [1.5, 3.0]}, "udpin:127.0.0.1:14541") == {
        "url": "udpin:127.0.0.1:14541", "link_loss": [1.5, 3.0]}
    assert mission_options({}, "udpin:127.0.0.1:14541") == {"url": "udpin:127.0.0.1:14541"}
