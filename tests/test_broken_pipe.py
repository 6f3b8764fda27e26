"""Output piped into a reader that stops (``nexus params | head``) ends the command quietly, as a Unix tool.

Each command runs in its own process with its standard output a real pipe. In the first test the reader
closes its end before the command writes a byte (as ``| head -0`` or a reader that died): every write is a
broken pipe. ``params`` writes 38 kB, more than Python's 8 kB output buffer, so the pipe breaks while the
command writes; ``px4 params`` (1 kB) and ``runs`` (one line) stay in the buffer until the command ends, so
it breaks at the last flush. Either way: nothing on standard error, exit status 141 (128 + SIGPIPE's 13,
what a shell shows for a Unix tool the pipe ended). In the second, ``nexus params | head -n 1`` reads the first line: the
command either wrote everything before head left (0) or met the broken pipe (141), and says nothing.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: A user's environment: Python buffers a pipe's output (8 kB), unless PYTHONUNBUFFERED says not to.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
COMMANDS = [["params", "--vehicle", "astro_max_base"], ["px4", "params"], ["runs", "RUNS"]]


def _args(command, tmp_path):
    """The command's arguments; ``runs`` lists a folder of one run (its run.json written here)."""
    (tmp_path / "runs" / "a").mkdir(parents=True, exist_ok=True)
    (tmp_path / "runs" / "a" / "run.json").write_text('{"status": "finished", "ticks": 5, "sim_time_s": 0.02, '
                                                      '"exit_reason": "duration"}')
    return [str(tmp_path / "runs") if a == "RUNS" else a for a in command]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_reader_that_left_ends_the_command_quietly_with_141(tmp_path, command):
    read, write = os.pipe()
    child = subprocess.Popen([sys.executable, "-m", "nexus.cli", *_args(command, tmp_path)], stdout=write,
                             stderr=subprocess.PIPE, cwd=ROOT, env=ENV)
    os.close(write)
    os.close(read)  # gone before the command starts writing (its imports take far longer than this)
    _, err = child.communicate(timeout=300)
    assert err.decode() == ""
    assert child.returncode == 141


@pytest.mark.parametrize("command", COMMANDS[:1], ids=lambda c: " ".join(c[:2]))
def test_piped_into_head_the_command_says_nothing(tmp_path, command):
    line = " ".join(["'" + a + "'" for a in [sys.executable, "-m", "nexus.cli", *_args(command, tmp_path)]])
    shell = subprocess.run(["bash", "-c", f'{line} | head -n 1; echo "status ${{PIPESTATUS[0]}}" >&2'], cwd=ROOT,
                           capture_output=True, text=True, timeout=300, env=ENV)
    first = {"params": "name ", "px4": "PX4_PARAM_", "runs": "run "}[command[0]]
    assert shell.stdout.startswith(first), shell.stdout
    assert shell.stderr in ("status 0\n", "status 141\n"), shell.stderr


PRINTS = """
import sys
from nexus.cli import main

@main.command()
def talk():
    print("x" * 100)  # print() keeps it in the 8 kB buffer: the pipe breaks at the interpreter's last flush

sys.argv = ["nexus", "talk"]
main()
"""


def test_output_left_in_the_buffer_breaks_at_the_end_quietly_too(tmp_path):
    # click.echo flushes every line; a library's print() (Warp's under -v) leaves its output buffered
    read, write = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", PRINTS], stdout=write, stderr=subprocess.PIPE, cwd=ROOT, env=ENV)
    os.close(write)
    os.close(read)
    _, err = child.communicate(timeout=300)
    assert err.decode() == ""
    assert child.returncode == 141
