"""The command line: help everywhere, the plan, clear errors for bad input, exit statuses, SIGINT."""

import json
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
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
    assert line.startswith("stage plan: graph(clock -> clear -> esc -> esc -> esc -> esc -> drag -> propeller")
    # The PID flight is one graph (the guidance runs on the device), replayed 16 ticks at a time.
    assert "step -> state" in line and line.endswith("-> mission -> pid -> record) x16") and "host(" not in line


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


def test_replay_of_many_worlds_counts_ticks_not_rows(cli, tmp_path):
    # 3 worlds for 0.2 s at 250 Hz: 50 ticks, a row per world and tick, 150 rows.
    out = tmp_path / "worlds"
    result = cli.invoke(main, ["run", "--device", "cpu", "--duration", "0.2", "--worlds", "3", "--out", str(out),
                               "--quiet"])
    assert result.exit_code == 0, result.output
    replayed = cli.invoke(main, ["replay", str(out)])
    assert replayed.exit_code == 0, replayed.output
    assert "replay identical: 50 ticks of 3 worlds (150 rows), " in replayed.output


# -- errors: one line, the right exit status, never a traceback unless --debug ------------------

ROOT = Path(__file__).resolve().parents[1]


def nexus(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``nexus ARGS`` in its own process, as a user runs it (the console logging is real)."""
    return subprocess.run([sys.executable, "-m", "nexus.cli", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def test_a_build_error_is_printed_once_and_its_traceback_only_under_debug(tmp_path):
    plain = nexus("run", "--vehicle", "astro_mini", "--device", "cpu", "--quiet", "--out", str(tmp_path / "a"))
    assert plain.returncode == 2, plain.stderr
    assert plain.stderr.count("unknown vehicle 'astro_mini'") == 1 and "Traceback" not in plain.stderr
    assert f"its files are in {tmp_path / 'a'}: run.json, record.parquet, run.log" in plain.stderr
    debug = nexus("--debug", "run", "--vehicle", "astro_mini", "--device", "cpu", "--quiet", "--out", str(tmp_path / "b"))
    assert debug.returncode == 2 and "Traceback (most recent call last)" in debug.stderr


@pytest.mark.parametrize("case", ["holds a run", "no tick", "proc", "under a file"])
def test_bad_run_input_exits_2_with_one_line(cli, tmp_path, case):
    held = tmp_path / "held"
    held.mkdir()
    (held / "run.log").write_text("an earlier run\n")
    (tmp_path / "a-file").write_text("x")
    out, duration, words = {
        "holds a run": (held, "0.2", "already holds a run (run.log)"),
        "no tick": (tmp_path / "new", "0.001", "0 ticks of 4 ms"),
        "proc": (Path("/proc/nexus-out"), "0.2", "cannot create the output folder /proc/nexus-out"),
        "under a file": (tmp_path / "a-file" / "run", "0.2", "a-file is a file, not a folder"),
    }[case]
    result = cli.invoke(main, ["run", "--controller", "hold", "--device", "cpu", "--quiet", "--duration", duration,
                               "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert words in result.output and result.output.count("error:") == 1 and "Traceback" not in result.output
    assert (held / "run.log").read_text() == "an earlier run\n" and not (tmp_path / "new").exists()


def test_an_unexpected_failure_is_one_line_with_a_debug_hint(cli, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr("nexus.runtime.run.run_flight", broken)  # a bug, injected where the CLI calls it
    result = cli.invoke(main, ["run", "--controller", "hold", "--device", "cpu", "--out", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert "error: ZeroDivisionError: float division by zero" in result.output and "--debug" in result.output
    assert "Traceback" not in result.output


def test_a_run_that_fails_in_flight_exits_1_and_says_why(cli, tmp_path):
    # Nothing connects to the PX4 port: the first tick waits 0.4 s for PX4, then the run fails.
    out = tmp_path / "px4"
    result = cli.invoke(main, ["run", "--controller", "px4", "--px4-port", "0", "--px4-connect-timeout", "0.4",
                               "--device", "cpu", "--quiet", "--duration", "1", "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "within 0.4 s" in result.output and "Traceback" not in result.output
    info = json.loads((out / "run.json").read_text())
    assert info["exit_reason"] not in ("done", "duration", "error") and "did not connect" in info["error"]


def test_sigint_exits_130_and_says_where_the_files_are(tmp_path):
    out = tmp_path / "run"
    # A hold run of 1000 s (about 15 s of wall time at 65x): interrupted once its first
    # progress line (after 1 s of sim) shows it is flying.
    process = subprocess.Popen(
        [sys.executable, "-m", "nexus.cli", "run", "--controller", "hold", "--device", "cpu", "--duration", "1000",
         "--out", str(out)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background job may inherit SIG_IGN
    )
    lines = []
    for line in process.stderr:
        lines.append(line)
        if "RTF" in line:
            break
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=120)
    stderr = "".join(lines) + rest
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert f"exit_reason interrupted; the run's files are in {out}: run.json, record.parquet, run.log" in stderr
    info = json.loads((out / "run.json").read_text())
    assert info["exit_reason"] == "interrupted" and 0 < info["ticks"] < 250_000
    assert pq.read_table(out / "record.parquet").num_rows == info["record_rows"] == info["ticks"]
