"""Controllers are registered, not listed: one defined only in this file flies through ``nexus run``.

This module is also the plugin the tests name (``--plugin tests.control.test_registry``, and ``plugins`` in
the sweep test's ``[run]`` table: tests/sweep/test_plugin_controller.py): importing it registers
``constant_hover`` and ``one_world_hold``, with no edit under ``nexus/``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.control import registry
from nexus.control.hold import HoldControls
from nexus.control.registry import ControllerOptions, option, register
from nexus.core.errors import BuildError

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "tests.control.test_registry"


@dataclass(frozen=True)
class ConstantOptions(ControllerOptions):
    level: float = option(0.5, "the command every rotor gets [0, 1]")


class ConstantHover(HoldControls):
    """The hold controller, holding ``level`` on the four rotors from the first tick."""

    def __init__(self, name: str, level: float):
        super().__init__(name)
        self.set([level] * 4)


def _build_constant(prim, path, ctx, options: ConstantOptions) -> ConstantHover:
    return ConstantHover(path, options.level)


def _build_one_world(prim, path, ctx, options) -> HoldControls:
    return HoldControls(path)


register("constant_hover", _build_constant, help="four equal rotor commands (a test's)", options=ConstantOptions,
         duration_s=3.0)
register("one_world_hold", _build_one_world, help="the hold controller, one world only (a test's)",
         single_world="it is a test of the one-world refusal")


def test_nexus_own_controllers_come_first_in_their_order_then_this_file_s():
    names = registry.names()
    assert names[:7] == ("pid", "px4", "hold", "mpc", "policy", "fixed_wing", "vtol")
    assert names[7:] == ("constant_hover", "one_world_hold")


def test_the_run_configuration_types_its_options_from_the_registration():
    from nexus.runtime.config import RunConfig

    config = RunConfig(controller="constant_hover", controller_options={"level": 1})
    assert config.controller_options == ConstantOptions(level=1.0)
    assert isinstance(config.controller_options.level, float)  # a whole number read for a float field
    assert config.duration_s == 3.0  # the registration's default duration
    assert config.as_dict()["controller_options"] == {"level": 1.0}
    assert RunConfig(controller="constant_hover").as_dict()["controller_options"] == {}  # the default is not written
    with pytest.raises(BuildError, match=r"unknown option 'lvl' for ConstantOptions; its options: level"):
        RunConfig(controller="constant_hover", controller_options={"lvl": 0.3})
    with pytest.raises(BuildError, match=r"controller_options of --controller constant_hover.level is 'high'"):
        RunConfig(controller="constant_hover", controller_options={"level": "high"})


def test_a_one_world_controller_says_why_and_names_the_controllers_that_fly_many():
    from nexus.runtime.config import RunConfig

    with pytest.raises(BuildError) as caught:
        RunConfig(controller="one_world_hold", worlds=3).check()
    assert str(caught.value) == ("--controller one_world_hold --worlds 3: it is a test of the one-world refusal; "
                                 "fly --worlds 1, or --controller pid or policy")


def test_px4_writes_the_run_json_keys_it_always_wrote_and_reads_an_old_fleet_run():
    from nexus.runtime.config import RunConfig
    from nexus.px4.controller import Px4Options

    # What `nexus run --controller px4` wrote before the options were typed: the link's four settings.
    assert RunConfig(controller="px4").as_dict()["controller_options"] == {
        "host": "127.0.0.1", "port": 4560, "connect_timeout": 120.0, "answer_timeout": 5.0}
    # An old sweep fleet's run.json: no plugins key, the finish callable written as its text (default=str).
    old = RunConfig(controller="px4").as_dict()
    old["controller_options"] = {"host": "127.0.0.1", "port": 4562, "connect_timeout": 60.0, "answer_timeout": 5.0,
                                 "mission": {"url": "udpin:127.0.0.1:14542"}, "settle": True,
                                 "finish_when": "<bound method Px4Point.done of <Px4Point object at 0x7f>>"}
    read = RunConfig.from_dict(old)
    assert read.plugins == []
    assert read.controller_options == Px4Options(port=4562, connect_timeout=60.0, settle=True,
                                                 mission={"url": "udpin:127.0.0.1:14542"})


def test_an_option_of_another_controller_is_refused_and_an_unknown_plugin_named():
    from click.testing import CliRunner

    from nexus.cli import main

    result = CliRunner().invoke(main, ["plan", "--device", "cpu", "--policy", "model.onnx"])
    assert result.exit_code == 2 and "--policy needs --controller policy" in result.output
    result = CliRunner().invoke(main, ["plan", "--device", "cpu", "--plugin", "no_such_module_here"])
    assert result.exit_code == 2
    assert "--plugin no_such_module_here: cannot import it (No module named 'no_such_module_here')" in result.output


def test_another_builder_under_a_taken_name_is_refused():
    with pytest.raises(BuildError, match="controller 'hold' is registered twice, by nexus.control.hold and by "):
        register("hold", _build_one_world, help="a second hold")


def test_the_docs_table_of_controllers_is_the_registry_s():
    text = (ROOT / "docs" / "controllers.md").read_text()
    found = re.search(r"<!-- controllers: generated.*?-->\n(.*?)<!-- end controllers -->", text, re.S)
    assert found, "docs/controllers.md lost its generated table of controllers"
    assert found.group(1) == registry.table(), (
        "docs/controllers.md's table of controllers differs from the registry; paste the output of "
        "`python -c 'from nexus.control.registry import table; print(table(), end=\"\")'`")


def test_a_controller_defined_in_this_file_flies_through_nexus_run_and_replays(tmp_path):
    out = tmp_path / "run"
    # In its own process, as a user runs it: only --plugin makes the controller known there.
    done = subprocess.run([sys.executable, "-m", "nexus.cli", "run", "--plugin", PLUGIN, "--controller",
                           "constant_hover", "--device", "cpu", "--duration", "0.2", "--quiet", "--out", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "done: 50 ticks" in done.stdout  # 0.2 s at 250 Hz
    options = json.loads((out / "run.json").read_text())["options"]
    assert (options["controller"], options["plugins"], options["controller_options"]) == (
        "constant_hover", [PLUGIN], {})
    record = pq.read_table(out / "record.parquet").to_pandas()
    # The held row from the first tick on: 0.5 on the four rotors, the rest of the row 0.
    assert np.all(record[[f"controls[{i}]" for i in range(4)]].to_numpy() == np.float32(0.5))
    assert np.all(record["controls[4]"].to_numpy() == 0.0)
    replayed = subprocess.run([sys.executable, "-m", "nexus.cli", "replay", str(out)], capture_output=True,
                              text=True, timeout=600, cwd=ROOT)
    assert replayed.returncode == 0, replayed.stderr
    assert "replay identical: 50 ticks" in replayed.stdout
