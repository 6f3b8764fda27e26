"""The toy ring on CUDA: capture works, and captured agrees with eager within tolerance."""

import numpy as np
import pytest

from nexus.core import Loop
from tests.core.toy_parts import NoiseSensor, Recorder, host_stage

pytestmark = pytest.mark.cuda


def fly(mode, host):
    recorder = Recorder(40)
    components = [NoiseSensor(), recorder]
    if host:
        components.insert(1, host_stage("exchange", kind="control"))
    Loop(components, device="cuda:0", mode=mode, seed=3).run(40)
    return recorder.history.numpy(), recorder.times.numpy()


@pytest.mark.parametrize("host", [False, True])
def test_captured_matches_eager_on_cuda(host):
    eager, eager_times = fly("eager", host)
    captured, captured_times = fly("captured", host)
    np.testing.assert_allclose(captured, eager, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(captured_times, eager_times)
    assert not np.array_equal(captured[0], captured[1])
