"""Many worlds on a GPU: the short mission of 256 worlds in one graph lands every world (skips without CUDA)."""

from __future__ import annotations

import pytest

from tests.worlds.flights import fly

pytestmark = pytest.mark.cuda


def test_256_worlds_fly_the_short_mission_on_cuda(tmp_path):
    run = fly(tmp_path / "run", "--device", "cuda", "--mission", "short", "--seed", "2", "--worlds", "256",
              "--record-every", "10")
    assert run.info["worlds"] == 256 and run.info["device"].startswith("cuda")
    assert (run.summary.exit_reason == "done").all()
    assert run.summary.landing_error.max() < 0.5
    assert len(run.record) == run.info["record_rows"] > 0
