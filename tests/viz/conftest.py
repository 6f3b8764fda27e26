"""One short recorded PID flight per test session, shared by the report and viewer tests.

Screenshots and reports the tests make are kept in that run's folder (under
pytest's temporary directory, which keeps the last three sessions) as artefacts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NEXUS = [sys.executable, "-m", "nexus.cli"]


def nexus(*args, timeout: float = 300.0) -> subprocess.CompletedProcess:
    return subprocess.run([*NEXUS, *map(str, args)], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def short_run(tmp_path_factory) -> Path:
    """``nexus run --mission short --estimator truth``: take-off to 2.4 m, a yaw sweep and a landing, about 9 s of
    sim time."""
    out = tmp_path_factory.mktemp("viz") / "short"
    # A folder from an earlier `nexus run --mission short --estimator truth`, to skip the flight.
    reuse = os.environ.get("NEXUS_VIZ_RUN")
    if reuse:
        shutil.copytree(reuse, out, ignore=shutil.ignore_patterns("plots", "report*", "*.png"))
        return out
    # The figures and sensor statistics of a truth-flown flight (the report's own layout, not the EKF's figures,
    # which tests/viz/test_estimate_figures.py draws): fly on the true state, with the Astro Max's IMU biases still
    # (the residual statistics are the white noise's; the shipped bias walks have their own tests).
    steady = Path(__file__).resolve().parents[1] / "data" / "astro_max_steady_sensors.usda"
    flown = nexus("run", "--mission", "short", "--device", "cpu", "--estimator", "truth", "--vehicle", steady,
                  "--out", out, "--quiet")
    assert flown.returncode == 0, flown.stderr
    print(f"\nviz artefacts (report, screenshots) in {out}")
    return out
