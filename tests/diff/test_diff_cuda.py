"""The differentiable rollout on a GPU: the taped forward and the backward pass captured as CUDA graphs give the
kernel-by-kernel tape's gradients (skips without CUDA)."""

from __future__ import annotations

import pytest

from nexus.diff import Rollout

pytestmark = pytest.mark.cuda

NAMES = ["pid.kp_z", "pid.kd_z", "mass", "rotor1.kt", "esc.tau_up", "init.vz"]


def test_cuda_graphs_of_the_tape_and_the_backward_pass_give_the_eager_gradients():
    eager = Rollout(100, loss="altitude", device="cuda:0", capture=False)
    captured = Rollout(100, loss="altitude", device="cuda:0")
    kp = eager.get("pid.kp_z")
    for factor in (1.0, 1.2, 0.9, 1.1):  # the third call captures, the fourth replays
        for rollout in (eager, captured):
            rollout.set("pid.kp_z", kp * factor)
        value, grads = eager.value_and_gradients(NAMES)
        value_c, grads_c = captured.value_and_gradients(NAMES)
        # A GPU adds atomics in a race-dependent order: the same to float32 rounding, not to the bit.
        assert value_c == pytest.approx(value, rel=1e-5)
        for name in NAMES:
            assert grads_c[name] == pytest.approx(grads[name], rel=1e-3, abs=1e-9), name
    assert captured.captured == {"tape", "backward"}
    assert all(grads_c[name] != 0.0 for name in NAMES)
