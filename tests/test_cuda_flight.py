"""The default flight on a GPU: captured on CUDA, it flies the mission as the CPU does, within tolerance.

CUDA runs are not bit-exact (contact forces accumulate with atomics in a
varying order), so they are compared with the CPU's figures, not its bits.
"""

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight

pytestmark = pytest.mark.cuda


def fly(out, device):
    summary = run_flight(RunConfig(mission="short", seed=3, device=device, duration=10.0), out, progress=False)
    table = pq.read_table(out / "record.parquet")
    return summary, {name: table.column(name).to_numpy() for name in table.column_names}


def test_short_mission_on_cuda_matches_the_cpu(tmp_path):
    cpu_summary, cpu = fly(tmp_path / "cpu", "cpu")
    gpu_summary, gpu = fly(tmp_path / "gpu", "cuda:0")
    assert gpu_summary.exit_reason == cpu_summary.exit_reason == "done"
    # Same mission, same length to within a few ticks; the climb peaks at the same height.
    assert abs(gpu_summary.ticks - cpu_summary.ticks) <= 25
    assert gpu["estimate.position[2]"].min() == pytest.approx(cpu["estimate.position[2]"].min(), abs=0.05)
    n = min(len(cpu["time"]), len(gpu["time"]))
    np.testing.assert_allclose(gpu["estimate.position[2]"][:n], cpu["estimate.position[2]"][:n], atol=0.1)


def test_resting_imu_on_cuda_reads_minus_g(tmp_path):
    _, gpu = fly(tmp_path / "gpu", "cuda:0")
    # Before the motors spin up, the IMU at rest reads the specific force (0, 0, -g) in FRD.
    assert np.mean(gpu["imu.accel[2]"][:5]) == pytest.approx(-9.80665, abs=0.05)
