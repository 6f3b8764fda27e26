"""The command line: help everywhere, the plan, and clear errors for bad input."""

import json

import pytest
from click.testing import CliRunner

from nexus.cli import main


@pytest.fixture
def cli():
    return CliRunner()


@pytest.mark.parametrize("command", [[], ["run"], ["plan"], ["replay"], ["bench"]])
def test_help_everywhere(cli, command):
    result = cli.invoke(main, [*command, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output


def test_plan_prints_the_stage_plan(cli):
    result = cli.invoke(main, ["plan", "--vehicle", "astro_max_base", "--scene", "empty", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    line = [l for l in result.output.splitlines() if l.startswith("stage plan:")][0]
    assert line.startswith("stage plan: graph(clock -> clear -> esc -> esc -> esc -> esc -> propeller")
    assert "step -> state" in line and line.endswith("record)")


def test_unknown_vehicle_lists_the_choices(cli):
    result = cli.invoke(main, ["plan", "--vehicle", "astro_mini", "--device", "cpu"])
    assert result.exit_code == 2 and "unknown vehicle 'astro_mini'" in result.output and "astro_max_base" in result.output


def test_cuda_without_a_gpu_is_a_usage_error(cli):
    import warp as wp

    if wp.get_cuda_device_count() > 0:
        pytest.skip("this machine has a GPU")
    result = cli.invoke(main, ["plan", "--device", "cuda"])
    assert result.exit_code == 2 and "no CUDA device" in result.output


def test_replay_of_a_folder_that_is_no_run(cli, tmp_path):
    result = cli.invoke(main, ["replay", str(tmp_path)])
    assert result.exit_code == 2 and "is not a run folder" in result.output


def test_bench_rejects_unknown_suite(cli):
    result = cli.invoke(main, ["bench", "--suite", "warp-speed"])
    assert result.exit_code == 2 and "unknown suite" in result.output


def test_run_then_replay_from_the_command_line(cli, tmp_path):
    out = tmp_path / "run"
    result = cli.invoke(main, ["run", "--device", "cpu", "--duration", "0.2", "--out", str(out), "--quiet", "--seed", "9"])
    assert result.exit_code == 0, result.output
    assert "done: 50 ticks" in result.output
    assert json.loads((out / "run.json").read_text())["options"]["seed"] == 9
    replayed = cli.invoke(main, ["replay", str(out)])
    assert replayed.exit_code == 0, replayed.output
    assert "replay identical: 50 ticks" in replayed.output
