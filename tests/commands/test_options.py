"""The flight options of ``run`` and ``plan`` are made from RunConfig's fields: flag, default, help, choices and
bounds, each written once (in nexus/runtime/flight.py) and read by the command line and a sweep file's checks alike."""

from __future__ import annotations

import click
import pytest

from nexus.cli import main


@pytest.fixture(scope="module")
def run_options():
    ctx = click.Context(main)
    return {p.name: p for p in main.commands["run"].get_params(ctx)}


def test_tick_hz_is_a_bounded_rate_with_its_unit_in_the_help(run_options):
    tick = run_options["tick_hz"]
    assert tick.opts == ["--tick-hz"] and tick.default == 250.0 and tick.show_default
    assert (tick.type.min, tick.type.max, tick.type.min_open) == (1.0, 10000.0, False)
    assert tick.help == "Control tick rate [Hz]."


def test_a_field_with_its_own_flag_choices_or_file_gets_them(run_options):
    record = run_options["record_mode"]
    assert record.opts == ["--record"] and list(record.type.choices) == ["full", "summary"]
    assert list(run_options["solver"].type.choices) == ["mujoco", "featherstone", "freeflyer"]
    assert list(run_options["device"].type.choices) == ["auto", "cpu", "cuda"]
    vary = run_options["vary"]
    assert isinstance(vary.type, click.Path) and vary.default is None and not vary.show_default
    plugins = run_options["plugins"]
    assert plugins.opts == ["--plugin"] and plugins.multiple and plugins.is_eager and plugins.metavar == "MODULE"
    assert run_options["eager"].is_flag and run_options["eager"].default is False
    assert run_options["wind"].metavar == "SPEED@FROM" and run_options["wind"].default is None
    assert list(run_options["turbulence"].type.choices) == ["light", "moderate", "severe"]


def test_duration_is_open_at_zero_and_names_each_controllers_default(run_options):
    duration = run_options["duration"]
    assert duration.default is None and (duration.type.min, duration.type.min_open) == (0.0, True)
    assert duration.help.startswith("Longest sim time to fly [s]. Default, by controller: pid 60, px4 300, hold 10")


def test_run_lists_the_flight_options_in_their_order_then_its_own(run_options):
    names = list(run_options)
    assert names[:11] == ["vehicle", "scene", "device", "controller", "seed", "tick_hz", "substeps", "solver",
                          "estimator", "eager", "mission"]
    assert names.index("plugins") < names.index("duration") < names.index("out")


def test_plan_has_the_same_flight_options_and_no_duration():
    ctx = click.Context(main)
    names = [p.name for p in main.commands["plan"].get_params(ctx)]
    assert "tick_hz" in names and "plugins" in names and "duration" not in names
