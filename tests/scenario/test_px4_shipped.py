"""The shipped PX4 scenarios: skipped with the reason without a binary, and the link loss flown against the
scripted PX4 (its mission, its parameters, its checks) as the sweep's fleet would fly it with real PX4.

Hand numbers for ``px4_link_loss`` against the scripted PX4 (tick k sends time_usec 4000·k; what goes before
tick k's HIL_SENSOR reaches PX4 at its clock of tick k − 1): the ground station beats on ticks 250, 500, ...,
2250 (1 to 9 s) and is silent from 10 s; PX4 takes the last at 8.996 s, and its receiver looks at it (each
heartbeat past 2.5 s is a look) then; its next look is due 1.25 s later, 10.246 s, so the commander wakes it on
the first tick PX4's clock has reached that, tick 2563 (10.248 s): the ground station is still there (1.252 s
old), and the link status says so at the next clock, 10.252 s, and again 1 s later, 11.252 s; the look after,
tick 2876 (11.500 s, 2.504 s old), no longer sees it. COM_DL_LOSS_T = 2 s after 11.252 s the link is lost,
at 13.256 s (tick 3314); the hold's text 12 ms later (13.268 s, tick 3317); COM_FAIL_ACT_T = 5 s later
"Failsafe activated" (18.268 s) and the landing from 2.5 m at 1 m/s: disarmed 2.5 s later, at 20.768 s, tick
5192, where the run ends. The wakes: the first look past 2.5 s (tick 627, 2.504 s), then every 1.25 s of
PX4's clock from 10.248 s while no heartbeat comes: ticks 2563, 2876, 3189, ..., 5067. (Real PX4, 02e73e3b,
with these wakes: docs/px4.md, "Link loss".)
"""

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from nexus.px4.scripted_api import HOME, ScriptedApi
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.px4.step_mission import mission_items
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight
from nexus.scenario.runner import Case, _px4_settings, judge
from nexus.scenario.spec import load
from nexus.sweep.px4_fleet import mission_options
from tests.px4.test_lockstep import HOVER, boots_then

SHIPPED = Path(__file__).resolve().parents[2] / "scenarios"
PX4_SCENARIOS = ("px4_mission", "px4_steps", "px4_link_loss", "px4_fleet")
NO_BINARY = "no PX4 binary: give [px4] binary or nexus test --px4-binary PATH"


@pytest.mark.parametrize("name", PX4_SCENARIOS)
def test_each_shipped_px4_scenario_is_skipped_with_the_reason_without_a_binary(name):
    scenario = load(SHIPPED / f"{name}.toml")
    assert (scenario.name, scenario.skip) == (name, NO_BINARY)
    given = load(SHIPPED / f"{name}.toml", px4_binary=sys.executable)
    assert given.skip is None and Path(given.px4["binary"]).samefile(sys.executable)
    assert given.px4["settle"] and given.px4["pinned"] and given.px4["mission"] == "nexus"


def test_px4_steps_uploads_its_points_and_reaches_them_in_turn():
    scenario = load(SHIPPED / "px4_steps.toml", px4_binary=sys.executable)
    reach = {c.name: c.goals for c in scenario.checks if c.measure == "reach"}
    assert reach == {"reach_step_1": ((0.0, 0.0, 2.5, 0.5), (6.0, 0.0, 2.5, 0.5)),
                     "reach_step_2": ((0.0, 0.0, 2.5, 0.5), (6.0, 0.0, 2.5, 0.5), (6.0, 4.0, 3.0, 0.5))}
    items = mission_items(scenario.px4["steps"], HOME[0], HOME[1])
    # 6 m north: 6 / 6378137 rad = 5.38990e-5 deg (+539 degE7); 4 m east at 47.3977420 deg:
    # 4 / (6378137 cos 47.3977420 deg) rad = 5.30837e-5 deg (+531 degE7).
    assert [(i[0], i[6], i[7], i[8]) for i in items] == [
        (22, HOME[0], HOME[1], 2.5), (16, HOME[0] + 539, HOME[1], 2.5), (16, HOME[0] + 539, HOME[1] + 531, 3.0),
        (19, HOME[0] + 539, HOME[1] + 531, 3.0), (21, HOME[0] + 539, HOME[1] + 531, 0.0)]


@pytest.fixture(scope="module")
def link_loss(tmp_path_factory):
    folder = tmp_path_factory.mktemp("link_loss")
    scenario = load(SHIPPED / "px4_link_loss.toml", px4_binary=sys.executable)
    params = scenario.px4["params"]
    options = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0, "boot_patience": 0.5,
               "mission": mission_options(_px4_settings(scenario), "udpin:127.0.0.1:0")}
    config = RunConfig(**{**scenario.run, "controller_options": options})
    flight = build_flight(config, "cpu")
    px4 = flight.vehicle.controller
    toy = ScriptedApi(px4.commander.link.port, dl_loss_s=params["COM_DL_LOSS_T"],
                      dl_action="land" if params["NAV_DLL_ACT"] == 3 else None)
    peer = ScriptedPx4(px4.link.port, boots_then([HOVER] * 4, silent=3), api=toy)
    out = folder / "run"
    with peer.running():
        run_flight(replace(flight.options, device="cpu"), out, progress=False, flight=flight)
    toy.write_log(out / "px4" / "log" / "toy.ulg")
    (out / "px4" / "px4.json").write_text(json.dumps({"ulog": "px4/log/toy.ulg"}))
    case = Case(scenario, {})
    judge(case, out)
    return json.loads((out / "run.json").read_text()), toy, case


def test_px4_link_loss_passes_against_the_scripted_px4(link_loss):
    info, toy, case = link_loss
    assert case.verdict == "passed", [r.message() for r in case.results]
    assert [r.check.name for r in case.results] == ["no_failsafe_before_the_loss", "failsafe_after_the_loss", "tilt",
                                                   "landing", "ended", "px4_mission"]
    assert case.results[1].worst == 2.0  # the hold's text and "Failsafe activated"


def test_px4_link_loss_goes_silent_at_10_s_and_ends_when_px4_disarmed(link_loss):
    info, toy, _ = link_loss
    loss = info["controller_stats"]["mission"]["link_loss"]
    assert loss["heartbeat_ticks"] == [250 * k for k in range(1, 10)]
    assert loss["receiver_wake_ticks"] == [627, 2563, 2876, 3189, 3502, 3815, 4128, 4441, 4754, 5067]
    assert toy.link_lost_at == [13_256_000]
    assert [(t, text) for t, _, text in toy.log] == [
        (13_256_000, "Connection to ground station lost"),
        (13_268_000, "Failsafe activated: entering Hold for 5 seconds"), (18_268_000, "Failsafe activated")]
    assert (info["exit_reason"], info["ticks"]) == ("done", 5192)
