"""PX4's options of ``nexus run`` live with the PX4 controller (its registration's run hooks), not in the command."""

from __future__ import annotations

import json

import click
import pytest

from nexus.control import registry
from nexus.control.pid import PID_GAINS
from nexus.px4 import run_options
from nexus.runtime.config import RunConfig


def test_the_registry_holds_what_the_command_line_and_the_sweeps_ask_of_px4():
    hooks = registry.run_hooks()
    assert list(hooks) == ["px4"] and hooks["px4"].names == run_options.NAMES
    assert registry.with_setup_table("px4") == ("px4",)
    assert registry.scalable_gains() == PID_GAINS and registry.get("px4").gains == ()


def test_a_mission_is_refused_for_another_controller_and_its_url_is_checked_before_the_run():
    values = {"px4_mission": True, "px4_mission_url": "udpin:127.0.0.1:14540", "px4_instance": None}
    with pytest.raises(click.UsageError, match="--px4-mission needs --controller px4"):
        run_options.check(None, RunConfig(controller="hold"), values)
    px4 = RunConfig(controller="px4")
    config, finish = run_options.start(px4, values)
    assert config.controller_options.mission == {"url": values["px4_mission_url"]}
    assert finish is run_options.report_mission
    assert run_options.start(px4, {**values, "px4_mission": False}) == (px4, None)
    with pytest.raises(click.BadParameter, match="URL 'nonsense' is not udpin:HOST:PORT") as caught:
        run_options.start(px4, {**values, "px4_mission_url": "nonsense"})
    assert caught.value.param_hint == "--px4-mission-url"


def test_the_mission_report_is_printed_and_written_from_run_json(tmp_path):
    mission = {"time_to_home_s": 1.5, "commands": [], "extra": "kept in the file"}
    lines = run_options.report_mission(tmp_path, {"controller_stats": {"mission": mission}})
    assert lines[0] == "  home (good EKF) at 1.50 s PX4 time"
    assert json.loads((tmp_path / "mission.json").read_text()) == mission
    assert run_options.report_mission(tmp_path / "none", {}) == []  # stopped before PX4 connected
