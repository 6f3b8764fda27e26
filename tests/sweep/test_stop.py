"""SIGTERM on a running ``nexus sweep`` (how CI, Slurm and Kubernetes stop a job) takes the Ctrl-C path.

The sweep is a real child process with its own Ray instance (Ray's core worker puts in a SIGTERM handler
of its own when the driver starts, which aborted the sweep with exit 134 before issue 30).
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from nexus.sweep.runner import _ended_row
from tests.sweep.conftest import write_sweep

ROOT = Path(__file__).resolve().parents[2]

#: Two points flown at once: half a second of sim that ends by itself, and 10 minutes of holding still
#: that is in flight when the signal comes.
SHORT_AND_LONG = """
[run]
controller = "hold"
device = "cpu"

[grid]
duration = [0.5, 600.0]
"""


def _session(sid: int) -> list[int]:
    """Live processes of the session ``sid`` (the sweep, its Ray instance and the workers Ray started)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            found.append(int(stat.parent.name))
    return found


def _info(folder: Path) -> dict:
    try:
        return json.loads((folder / "run.json").read_text())
    except (OSError, ValueError):
        return {}


def test_sigterm_cancels_the_runs_in_flight_writes_the_table_and_exits_143(tmp_path):
    path = write_sweep(tmp_path, SHORT_AND_LONG)
    out = tmp_path / "sweep"
    child = subprocess.Popen([sys.executable, "-m", "nexus.cli", "sweep", str(path), "--out", str(out), "--quiet",
                              "--parallel", "2"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
    try:
        # Wait (however slow the machine) until the short point is in sweep.parquet and the long one flies.
        deadline = time.monotonic() + 600.0
        while True:
            assert child.poll() is None, f"the sweep ended early ({child.returncode}): {child.stderr.read()[-2000:]}"
            assert time.monotonic() < deadline, "the sweep never had one point done and one flying"
            statuses = sorted(_info(folder).get("status", "") for folder in out.glob("runs/*"))
            if (out / "sweep.parquet").exists() and statuses == ["finished", "running"]:
                break
            time.sleep(0.1)
        child.send_signal(signal.SIGTERM)
        stdout, stderr = child.communicate(timeout=300)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()

    # Ctrl-C's path: the run in flight cancelled (ended interrupted, its files written), the table written; exit 143,
    # SIGTERM's status for every Nexus command (128 + 15).
    assert child.returncode == 143, stderr[-3000:]
    folders = {_info(folder)["options"]["duration"]: folder for folder in out.glob("runs/*")}
    long = _info(folders[600.0])
    assert (long["status"], long["exit_reason"]) == ("interrupted", "interrupted"), long
    assert 0 < long["record_rows"] == long["ticks"] < 150_000  # 600 s at 250 Hz is 150,000 ticks: not flown out
    assert _ended_row(None, folders[600.0]) is None  # --resume flies it again
    table = pq.read_table(out / "sweep.parquet").to_pylist()
    assert [(row["duration"], row["status"], row["ticks"]) for row in table] == [(0.5, "finished", 125)]  # 0.5 s x 250 Hz
    # Only Nexus's own lines: no abort, no stack from Ray's core worker, no notice from Ray on its token.
    assert stdout == ""
    assert stderr.splitlines() == [
        "stopping: cancelling 1 runs in flight...",
        f"sweep stopped; finished runs are in {out}; `nexus sweep {path} --out {out} --resume` finishes it",
        "terminated",
    ]
    # Ray stopped: nothing of the sweep's session is left running.
    deadline = time.monotonic() + 60.0
    while _session(child.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _session(child.pid) == []
