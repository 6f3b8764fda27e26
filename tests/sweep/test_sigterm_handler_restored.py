"""``nexus sweep`` and ``nexus test`` put back the SIGTERM handler the process had, whether they return or raise.

Both fly through :func:`nexus.sweep.runner.fly_points`, which starts Ray (``ray.init`` puts in a SIGTERM
handler of its own) and then its own handler (SIGTERM takes the Ctrl-C path). Before issue 43 the handler
left behind was Ray's: a SIGTERM after the flights (a CI job ending while ``nexus test`` writes its
reports) went to a handler of a Ray instance already shut down.

Each command runs in a child process that starts its own Ray, as a user's would (the session's shared Ray
of the other sweep tests would make ``ray.init`` a no-op and hide the bug). The child puts in a handler of
its own first, runs the command through the CLI, reads the handler back, and then sends itself SIGTERM to
see that its own handler is the one called.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: One CUDA point: the sweep starts Ray, finds no GPU in it and raises SweepError (exit 2) without flying.
CUDA_SWEEP = '[run]\nmission = "short"\ndevice = "cuda"\n[grid]\nseed = [0]\n'
#: The shortest flight test: 0.2 s holding on the ground, one check that passes.
SHORT_SCENARIO = """
name = "short_hold"
description = "0.2 s on the ground"
duration = 0.2

[[step]]
do = "hold"
time = 0.1

[[check]]
measure = "tilt"
max = 10.0
"""

CHILD = """
import json, os, signal, sys
from click.testing import CliRunner
from nexus.cli import main

called = []
def ours(number, frame):
    called.append(number)

signal.signal(signal.SIGTERM, ours)
before = signal.getsignal(signal.SIGTERM) is ours
result = CliRunner().invoke(main, sys.argv[1:])
after = signal.getsignal(signal.SIGTERM)
print(json.dumps({"exit": result.exit_code, "before": before, "after_is_ours": after is ours,
                  "after": getattr(after, "__qualname__", repr(after)), "output": result.output[-2000:]}), flush=True)
os.kill(os.getpid(), signal.SIGTERM)  # Python runs the handler before the next bytecode
print(json.dumps({"called": called}), flush=True)
"""


def run_child(*args: str) -> tuple[dict, dict | None, subprocess.CompletedProcess]:
    """What the child saw after the command (exit code, handlers), and which SIGTERMs its handler took (None when
    the SIGTERM ended the child before it could say)."""
    done = subprocess.run([sys.executable, "-c", CHILD, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, done.stderr[-3000:]
    return json.loads(lines[0]), (json.loads(lines[1]) if len(lines) > 1 else None), done


def test_nexus_sweep_that_raises_puts_back_the_handler_it_found(tmp_path):
    sweep = tmp_path / "cuda.toml"
    sweep.write_text(CUDA_SWEEP)
    seen, signalled, done = run_child("sweep", str(sweep), "--out", str(tmp_path / "out"), "--quiet")
    assert seen["exit"] == 2 and "need a GPU, and the Ray cluster has none" in seen["output"], seen["output"]
    assert seen["before"]
    assert seen["after_is_ours"], f"the handler left after the sweep raised is {seen['after']}"
    # SIGTERM (signal 15) afterwards: the child's own handler took it, once, and the child went on to exit 0.
    assert signalled == {"called": [15]} and done.returncode == 0, done.stderr[-3000:]


def test_nexus_test_that_returns_puts_back_the_handler_it_found(tmp_path):
    scenario = tmp_path / "short_hold.toml"
    scenario.write_text(SHORT_SCENARIO)
    seen, signalled, done = run_child("test", str(scenario), "--quiet", "--parallel", "1")
    assert seen["exit"] == 0 and "1 passed, 0 failed, 0 errors, 0 skipped" in seen["output"], seen["output"]
    assert seen["before"]
    assert seen["after_is_ours"], f"the handler left after nexus test returned is {seen['after']}"
    assert signalled == {"called": [15]} and done.returncode == 0, done.stderr[-3000:]
