"""--device auto|cpu|cuda resolution."""

import pytest
import warp as wp

from nexus.core import BuildError, resolve_device


def test_cpu_and_auto():
    assert resolve_device("cpu") == "cpu"
    expected = "cuda:0" if wp.get_cuda_device_count() > 0 else "cpu"
    assert resolve_device("auto") == expected


def test_cuda_without_gpu_is_a_clear_error():
    if wp.get_cuda_device_count() > 0:
        assert resolve_device("cuda") == "cuda:0"
        return
    with pytest.raises(BuildError, match="no CUDA device"):
        resolve_device("cuda")


def test_unknown_device():
    with pytest.raises(BuildError, match="auto, cpu, cuda"):
        resolve_device("tpu")
