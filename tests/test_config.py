"""The run configuration: one object, its defaults written once, saved in run.json and read back whole."""

from __future__ import annotations

import json
import shutil

import click
import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.cli import main
from nexus.runtime.config import ConfigError, RunConfig
from nexus.plant.frames import yaw_ned_np
from nexus.runtime.replay import ReplayError, replay
from nexus.runtime.run import run_flight


# -- the object ------------------------------------------------------------------------------------

def test_the_default_tick_is_4_ms_and_500_hz_is_2_ms():
    # 1 / 250 Hz = 4 ms; 1 / 500 Hz = 2 ms.
    assert RunConfig().dt_ns == 4_000_000 and RunConfig().dt == pytest.approx(0.004)
    assert RunConfig(tick_hz=500.0).dt_ns == 2_000_000


def test_duration_defaults_by_controller_unless_given():
    # The documented defaults (docs/running.md): pid 60 s, px4 300 s, hold 10 s.
    assert RunConfig().duration_s == 60.0
    assert RunConfig(controller="px4").duration_s == 300.0
    assert RunConfig(controller="hold").duration_s == 10.0
    assert RunConfig(controller="hold", duration=2.5).duration_s == 2.5


def test_every_cli_option_of_a_config_field_takes_the_config_default():
    fields = RunConfig().as_dict()
    for name in ("run", "plan"):
        command = main.commands[name]
        shared = [p for p in command.params if isinstance(p, click.Option) and p.name in fields]
        # vehicle, scene, controller, mission, seed, tick_hz, substeps, device, eager (and duration for run).
        assert len(shared) >= 9, [p.name for p in shared]
        for param in shared:
            assert param.default == fields[param.name], (name, param.name)


def test_from_dict_refuses_unknown_and_missing_keys_naming_the_file():
    saved = RunConfig(seed=3).as_dict()
    with pytest.raises(ConfigError, match=r"runs/x/run\.json: .*unknown keys \['tick_rate'\]"):
        RunConfig.from_dict({**saved, "tick_rate": 500.0}, source="runs/x/run.json")
    del saved["substeps"]
    with pytest.raises(ConfigError, match=r"runs/x/run\.json: .*missing keys \['substeps'\]"):
        RunConfig.from_dict(saved, source="runs/x/run.json")


@pytest.mark.parametrize("field, value", [("seed", 1.5), ("tick_hz", "500"), ("eager", 1), ("duration", [1])])
def test_from_dict_refuses_a_value_of_the_wrong_type(field, value):
    with pytest.raises(ConfigError, match=rf"run\.json: options\.{field} is "):
        RunConfig.from_dict({**RunConfig().as_dict(), field: value})


# -- run.json -> config -> run.json, and a flight at 500 Hz ---------------------------------------

#: The scene's mission (scenes/empty.usda, NexusMissionAPI): climb to 5 m above the start.
ALTITUDE_M = 5.0


@pytest.fixture(scope="module")
def run_500hz(tmp_path_factory):
    """The default mission (the scene's) flown by the PID at 500 Hz until it lands."""
    out = tmp_path_factory.mktemp("hz500") / "run"
    summary = run_flight(RunConfig(tick_hz=500.0, seed=2, device="cpu"), out, progress=False)
    info = json.loads((out / "run.json").read_text())
    return out, summary, info, pq.read_table(out / "record.parquet")


def test_run_json_round_trips_through_the_config(run_500hz):
    out, _, info, _ = run_500hz
    saved = info["options"]
    config = RunConfig.from_dict(saved, source=str(out / "run.json"))
    assert config.tick_hz == 500.0 and config.seed == 2 and config.device == "cpu"
    assert config.duration == 60.0  # the PID default, filled in as flown
    assert json.loads(json.dumps(config.as_dict())) == saved


def test_the_default_mission_at_500_hz_ticks_every_2_ms(run_500hz):
    _, summary, info, table = run_500hz
    assert info["tick_ns"] == 2_000_000 and info["options"]["tick_hz"] == 500.0
    time = table.column("time").to_numpy()
    np.testing.assert_allclose(np.diff(time), 0.002, rtol=0, atol=1e-12)
    assert summary.ticks == table.num_rows


def test_the_default_mission_at_500_hz_lands_and_ends_the_run(run_500hz):
    _, summary, info, table = run_500hz
    assert summary.exit_reason == "done" and info["exit_reason"] == "done"
    column = lambda name: table.column(name).to_numpy()  # noqa: E731
    start = np.array([column(f"setpoint.position[{i}]")[0] for i in range(3)])  # the takeoff's first goal
    position = np.stack([column(f"estimate.position[{i}]") for i in range(3)], axis=1)
    # The same bounds as the 250 Hz mission tests (tests/guidance/test_mission_flight.py): back within
    # 0.1 m of the start height and 0.2 m of the start, disarmed, rotors commanded to zero.
    assert abs(position[-1, 2] - start[2]) < 0.1
    assert np.linalg.norm(position[-1, :2] - start[:2]) < 0.2
    assert column("armed")[-1] == 0
    assert all(column(f"controls[{i}]")[-1] == 0.0 for i in range(4))
    # It did fly: the whole mission takes about 25 s of sim time.
    assert 20.0 < summary.sim_time < 40.0


def test_the_default_mission_at_500_hz_holds_altitude_position_and_yaw(run_500hz):
    _, _, _, table = run_500hz
    column = lambda name: table.column(name).to_numpy()  # noqa: E731
    goal = np.stack([column(f"setpoint.position[{i}]") for i in range(3)], axis=1)
    position = np.stack([column(f"estimate.position[{i}]") for i in range(3)], axis=1)
    start = goal[0]
    # At altitude: the goal is 5 m above the start (NED z is down) through hold, yaw sweep and return.
    hover = np.abs(goal[:, 2] - (start[2] - ALTITUDE_M)) < 1e-6
    # Leave the first second there: the climb's goal reaches the top exactly, the vehicle a moment later.
    first = np.flatnonzero(hover)[0]
    hover[first : first + 500] = False
    assert hover.sum() > 500 * 8  # hold 3 s + yaw sweep (4 turns of 2 s, 3 dwells of 1 s) at 500 Hz
    # The bounds of the 250 Hz tests: altitude within 0.2 m, position within 0.2 m, yaw within 5 degrees.
    altitude = start[2] - position[hover, 2]
    assert np.abs(altitude - ALTITUDE_M).max() < 0.2
    assert np.linalg.norm(position[hover] - goal[hover], axis=1).max() < 0.2
    attitude = np.stack([column(f"estimate.attitude[{i}]") for i in range(4)], axis=1)[hover]
    yaw = np.array([yaw_ned_np(q) for q in attitude])
    error = np.degrees((yaw - column("setpoint.yaw")[hover] + np.pi) % (2 * np.pi) - np.pi)
    assert np.abs(error).max() < 5.0
    # The sweep turned 90 degrees each side of the start heading.
    sweep = np.degrees((column("setpoint.yaw")[hover] - column("setpoint.yaw")[0] + np.pi) % (2 * np.pi) - np.pi)
    assert sweep.max() == pytest.approx(90.0, abs=0.01) and sweep.min() == pytest.approx(-90.0, abs=0.01)


def test_replay_reads_the_config_back_and_refuses_an_edited_one(run_500hz, tmp_path):
    out, _, info, _ = run_500hz
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    edited = {**info, "options": {**info["options"], "tick_rate": 500.0}}
    (copy / "run.json").write_text(json.dumps(edited))
    with pytest.raises(ReplayError, match=rf"{copy / 'run.json'}: .*unknown keys \['tick_rate'\]"):
        replay(copy)
