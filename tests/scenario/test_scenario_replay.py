"""Every scenario feature replays bit for bit: ``nexus replay`` of a scenario's run folder exits 0.

A scenario's run folder holds the steps, gusts, gain factors and faults in run.json (``options.scenario``,
``world_values``), and ``nexus replay`` flies the recorded controls in the controller's place. The flights:

- ``scaled``: the shipped ``takeoff_hover_land.toml`` under ``nexus test --scale-gain velocity_p=0.1``, made
  into a sweep point and flown as a sweep worker flies it (:func:`nexus.sweep.task.fly_point`);
- ``features``: the Astro Max with ``[controller] gain_scale``, a mean wind and a gust, the barometer frozen
  when step 1 begins (``when``), rotor 0 "failing" (keeping all its thrust) when its speed passes 0.3 m/s
  (``when``), the GPS dropping out at 1.2 s (a second sensor fault), waiting until 1.0 s then taking off;
- ``link_loss``: PX4 (the scripted PX4 of tests/px4) flying the in-loop mission with the ground station's
  link down over [1.5, 8.0) s, as tests/px4/test_link_loss.py flies it.

Hand numbers: 250 Hz, so ``takeoff_hover_land``'s 8 s are 2000 ticks at most and ``features``' 1.6 s are
400 ticks; step 1 of ``features`` begins on tick 250 (the wait ends when the time reaches 1.0 s), so the
barometer's fault fires on tick 251. The link loss's run ends on tick 1506 (tests/px4/test_link_loss.py).
"""

import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.runtime.run_folder import RunFolder

ROOT = Path(__file__).resolve().parents[2]

FEATURES = """
name = "features"
duration = 1.6

[controller]
name = "pid"
gain_scale = {velocity_p = 0.5, rate_p = 0.9}

[environment]
wind = "2@270"

[[environment.gust]]
start = 0.5
duration = 0.5
amplitude = 3.0
direction = 270.0

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


def replay_cli(folder: Path):
    return CliRunner().invoke(main, ["replay", str(folder)])


def fly_points(tmp_path: Path, files: list[Path], gain_scale: dict) -> Path:
    """The scenario made into its sweep point as ``nexus test`` makes it, flown as a sweep worker flies it."""
    from nexus.scenario.runner import ScenarioOptions, prepare
    from nexus.sweep.task import fly_point

    _, points = prepare(files, ScenarioOptions(out=tmp_path / "out", gain_scale=gain_scale))
    (point,) = points
    folder = tmp_path / "out" / "runs" / point.id
    fly_point(point.as_dict(), str(folder))
    return folder


def test_a_scenario_under_scale_gain_replays_bit_for_bit(tmp_path):
    folder = fly_points(tmp_path, [ROOT / "scenarios" / "takeoff_hover_land.toml"], {"velocity_p": 0.1})
    info = json.loads((folder / "run.json").read_text())
    assert info["status"] == "finished", info["error"]
    assert info["options"]["scenario"]["gain_scale"] == {"velocity_p": 0.1}
    result = replay_cli(folder)
    assert result.exit_code == 0, result.output
    assert f"replay identical: {info['ticks']} ticks, " in result.output
    assert 0 < info["ticks"] <= 2000


def test_gain_scale_gusts_and_condition_and_sensor_faults_replay_bit_for_bit(tmp_path):
    path = tmp_path / "features.toml"
    path.write_text(FEATURES)
    folder = fly_points(tmp_path, [path], {})
    info = json.loads((folder / "run.json").read_text())
    assert info["status"] == "finished" and info["ticks"] == 400, info["error"]
    scenario = info["options"]["scenario"]
    assert scenario["gain_scale"] == {"velocity_p": 0.5, "rate_p": 0.9} and len(scenario["gusts"]) == 1
    assert scenario["sensor_faults"] == [{"sensor": "Gps", "mode": "dropout", "time": 1.2}]
    table = RunFolder(folder).record()
    baro_fired = set(table.column("fault_tick/0").to_numpy())
    rotor_fired = set(table.column("fault_tick/1").to_numpy())
    assert baro_fired == {-1, 251}  # both condition faults fired in the flight the replay must reproduce
    assert len(rotor_fired) == 2 and -1 in rotor_fired
    result = replay_cli(folder)
    assert result.exit_code == 0, result.output
    assert "replay identical: 400 ticks, " in result.output


def test_a_px4_link_loss_scenario_replays_bit_for_bit(tmp_path):
    from nexus.px4.scripted_api import ScriptedApi
    from nexus.px4.scripted_peer import ScriptedPx4
    from nexus.runtime.flight import build_flight
    from nexus.runtime.config import RunConfig
    from nexus.runtime.run import run_flight
    from nexus.scenario.runner import _px4_settings
    from nexus.scenario.spec import load
    from nexus.sweep.px4_fleet import mission_options
    from tests.px4.test_link_loss import LOSS, SCENARIO
    from tests.px4.test_lockstep import HOVER, boots_then
    from tests.px4.test_mission_lockstep import PLAN

    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.format(name="replayed", binary=sys.executable, fault=LOSS))
    scenario = load(path)
    mission = {**mission_options(_px4_settings(scenario), "udpin:127.0.0.1:0"), **PLAN}
    link = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0, "boot_patience": 0.5,
            "mission": mission}
    config = RunConfig(**{**scenario.run, "controller_options": {**scenario.run["controller_options"], **link}},
                       scenario=scenario.ring)
    flight = build_flight(config, "cpu")
    px4 = flight.vehicle.controller
    toy = ScriptedApi(px4.commander.link.port, telemetry_hz=250.0, dl_loss_s=1.0, dl_action="land", fail_act_s=0.5)
    out = tmp_path / "run"
    with ScriptedPx4(px4.link.port, boots_then([HOVER] * 4, silent=3), api=toy).running():
        run_flight(replace(flight.options, duration=8.5), out, progress=False, flight=flight)
    info = json.loads((out / "run.json").read_text())
    assert (info["status"], info["ticks"]) == ("finished", 1506), info["error"]
    assert info["options"]["controller_options"]["mission"]["link_loss"] == [1.5, 8.0]
    controls = RunFolder(out).record().column("controls[0]").to_numpy()
    assert np.any(controls > 0.5)  # PX4 flew it: the replay has real commands to play back
    result = replay_cli(out)
    assert result.exit_code == 0, result.output
    assert "replay identical: 1506 ticks, " in result.output


def test_gain_factors_for_a_controller_without_gains_are_refused_in_one_line():
    from nexus.core.errors import BuildError
    from nexus.runtime.flight import build_flight
    from nexus.runtime.config import RunConfig

    config = RunConfig(controller="hold", device="cpu", scenario={"name": "x", "gain_scale": {"velocity_p": 0.1}})
    with pytest.raises(BuildError, match=r"^the scenario's controller.gain_scale scales the PID's gains, but "
                                         r"/vehicle/controller is a HoldControls, which has none; fly controller "
                                         r"\"pid\" or drop gain_scale$"):
        build_flight(config, "cpu")
