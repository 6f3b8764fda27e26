"""``nexus bench`` stopped by SIGTERM (a CI time-out, ``kill``) ends as a stopped run does: exit 143, "terminated"
on stderr, and no temporary folder of the suite left behind (a scale suite's can hold large record parts)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_sigterm_ends_a_suite_143_and_removes_its_temporary_folder(tmp_path):
    # The suite's folders go to TMPDIR (tempfile.TemporaryDirectory); this test's own, so nothing else writes there.
    env = dict(os.environ, TMPDIR=str(tmp_path))
    child = subprocess.Popen([sys.executable, "-m", "nexus.cli", "bench", "--suite", "fixed_wing"], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # The suite makes its folder first thing, then builds the plane (seconds): stop it once the folder is there.
        deadline = time.monotonic() + 300
        while not list(tmp_path.glob("nexus-bench-*")) and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(tmp_path.glob("nexus-bench-*")), "the suite never made its folder"
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 143, (child.returncode, err[-2000:])
    assert err.strip().splitlines()[-1] == "terminated", err[-2000:]
    assert "fixed_wing" not in out  # stopped before its table
    assert not list(tmp_path.glob("nexus-bench-*"))
