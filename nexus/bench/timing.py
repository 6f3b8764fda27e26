"""Timing helpers shared by the suites: best-of-repeats wall time per call."""

from __future__ import annotations

import time
from collections.abc import Callable

import warp as wp


def seconds_per_call(call: Callable[[], None], calls: int, repeats: int = 5, device: str = "cpu") -> float:
    """Best of ``repeats`` mean wall time [s] of ``calls`` back-to-back calls.

    The best repeat is the least disturbed by the rest of the machine. On CUDA
    the device is synchronized before the clock stops.
    """
    call()  # warm caches and lazy loads outside the timed region
    wp.synchronize_device(device)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        wp.synchronize_device(device)
        best = min(best, (time.perf_counter() - start) / calls)
    return best
