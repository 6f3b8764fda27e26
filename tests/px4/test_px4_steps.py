"""A PX4 scenario's steps, uploaded as a PX4 mission and started at fixed ticks, against the scripted PX4.

Hand numbers (tick k sends time_usec 4000·k; what goes before tick k's HIL_SENSOR reaches PX4 at its
clock of tick k − 1): the upload is due at 0.5 s (tick 125; the toy reported home at 0.2 s), the arm
0.2 s later (tick 175), the start (MAV_CMD_MISSION_START) 0.2 s after that (tick 225). The goto's
point, 3 m north and 4 m east of PX4's home (47.3977420°, 8.5455940°), on a sphere of 6,378,137 m:
3 / 6378137 rad = 2.69495e-5° north (+269 degE7), 4 / (6378137 · cos 47.3977420°) rad = 5.30837e-5°
east (+531 degE7).
"""

import json
import math
import sys
from dataclasses import replace

import pytest

from nexus.px4.scripted_api import ScriptedApi
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.run import run_flight
from nexus.scenario.runner import _px4_settings
from nexus.scenario.spec import load
from nexus.sweep.px4_fleet import mission_options
from tests.px4.test_lockstep import HOVER, boots_then, px4_flight

SCENARIO = """
name = "px4_steps"
duration = 1.5

[controller]
name = "px4"

[px4]
binary = {binary!r}
mission = "nexus"

[[step]]
do = "takeoff"
height = 1.0

[[step]]
do = "goto"
to = [3.0, 4.0, 1.5]
tolerance = 0.5

[[step]]
do = "hold"
time = 2.0

[[step]]
do = "land"

[[check]]
measure = "px4_failsafe"
"""
#: The mission's times, shortened for the toy (a real PX4 wants the defaults: upload at 6 s).
TIMES = {"upload_at_s": 0.5, "arm_delay_s": 0.2, "start_delay_s": 0.2}
TAKEOFF, WAYPOINT, LOITER_TIME, LAND, ARM, MISSION_START, RELATIVE_ALT = 22, 16, 19, 21, 400, 300, 6


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    folder = tmp_path_factory.mktemp("steps")
    path = folder / "s.toml"
    path.write_text(SCENARIO.format(binary=sys.executable))
    scenario = load(path)
    mission = {**mission_options(_px4_settings(scenario), "udpin:127.0.0.1:0"), **TIMES}
    flight, px4 = px4_flight(mission=mission, answer_timeout=5.0, boot_patience=0.5)
    toy = ScriptedApi(px4.commander.link.port)
    peer = ScriptedPx4(px4.link.port, boots_then([HOVER] * 4, silent=3), api=toy)
    with peer.running():
        run_flight(replace(flight.options, device="cpu", duration=1.5), folder / "run", progress=False, flight=flight)
    return scenario, json.loads((folder / "run" / "run.json").read_text())["controller_stats"]["mission"], toy


def test_the_steps_go_to_px4_and_not_to_a_nexus_guidance_stage(steps):
    scenario, _, _ = steps
    assert [s["do"] for s in scenario.px4["steps"]] == ["takeoff", "goto", "hold", "land"]
    assert scenario.steps == [] and scenario.ring["steps"] == []


def test_px4_holds_the_uploaded_items_with_their_positions(steps):
    _, _, toy = steps
    items = toy.mission_items
    assert [(i[0], i[1], i[2]) for i in items] == [(0, TAKEOFF, RELATIVE_ALT), (1, WAYPOINT, RELATIVE_ALT),
                                                   (2, LOITER_TIME, RELATIVE_ALT), (3, LAND, RELATIVE_ALT)]
    positions = [(i[7], i[8], i[9]) for i in items]
    assert positions == [(473977420, 85455940, 1.0), (473977689, 85456471, 1.5), (473977689, 85456471, 1.5),
                         (473977689, 85456471, 0.0)]
    assert items[1][4] == 0.5 and items[2][3] == 2.0  # the goto's acceptance radius, the hold's time [s]
    assert all(math.isnan(i[6]) for i in items)  # no yaw asked: PX4 keeps its own


def test_the_upload_arm_and_start_go_on_their_fixed_ticks(steps):
    _, mission, toy = steps
    assert [(c["name"].split(" ")[0], c["tick"], c["result"]) for c in mission["commands"]] == [
        ("MISSION_COUNT", 125, 0), ("MAV_CMD_COMPONENT_ARM_DISARM", 175, 0), ("MAV_CMD_MISSION_START", 225, 0)]
    assert toy.mission_upload_clock == 496_000  # the whole upload at the clock of tick 124
    assert [(c, t) for c, t, _ in toy.commands] == [(ARM, 696_000), (MISSION_START, 896_000)]
    assert mission["late_commands"] == 0 and mission["clock_mismatches"] == 0


def _home():
    from pymavlink.dialects.v20 import common as mavlink

    from nexus.px4.scripted_api import HOME

    return mavlink.MAVLink_home_position_message(*HOME, 0, 0, 0, [1.0, 0.0, 0.0, 0.0], 0, 0, 0, 200_000)


def _started_plan():
    """A StepsPlan fed a home position, its upload, arm and start sent at 0.5, 0.7 and 0.9 s."""
    from nexus.px4.step_mission import StepsPlan

    plan = StepsPlan([{"do": "takeoff", "to": [0.0, 0.0, 1.0]}, {"do": "land"}], **TIMES)
    plan.note(_home())
    sent = [plan.due(t) for t in (500_000, 700_000, 900_000)]
    assert [c.label for c in sent] == ["upload", "arm", "start"] and plan.started
    return plan


def test_the_lockstep_answers_disarm_after_the_start_ends_the_steps_mission_on_that_tick():
    plan = _started_plan()
    plan.note_armed(True, 904_000)
    assert not plan.finished(904_000)
    plan.note_armed(False, 3_000_000)  # the answer of tick 750 says disarmed
    assert plan.finished(3_000_000) and plan.over_usec == 3_000_000
    assert plan.report.landed_disarmed and plan.report.mission_time_s == pytest.approx(2.3)  # from the arm at 0.7 s


def test_in_the_loop_a_heartbeat_saying_disarmed_does_not_end_the_mission():
    from pymavlink.dialects.v20 import common as mavlink

    plan = _started_plan()
    plan.note_armed(True, 904_000)
    armed, disarmed = (mavlink.MAVLink_heartbeat_message(2, 12, mode, 0, 3, 3) for mode in (129, 1))
    for message in (armed, disarmed):
        message._header = mavlink.MAVLink_header(0, srcSystem=1, srcComponent=1)
        plan.note(message)
    assert not plan.landed and not plan.finished(2_000_000)  # its arrival is not on PX4's clock: the answers decide


def test_a_disarm_before_the_start_does_not_end_the_mission():
    from nexus.px4.step_mission import StepsPlan

    plan = StepsPlan([{"do": "takeoff", "to": [0.0, 0.0, 1.0]}, {"do": "land"}], **TIMES)
    plan.note(_home())
    plan.due(500_000), plan.due(700_000)
    plan.note_armed(True, 704_000)
    plan.note_armed(False, 800_000)
    assert not plan.landed and plan.pending.label == "start"
