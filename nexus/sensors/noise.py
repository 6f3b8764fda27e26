"""Gaussian draws for sensor noise, from named streams and the device tick counter.

Each noise source has its own stream (``imu/accel/<prim>``, ``gps/drift/<prim>``,
...), whose seed comes from the run's :class:`~nexus.core.RngTree`
(:func:`nexus.core.rng.stream_seed`). A kernel
seeds Warp's generator with that seed and the tick counter that the clock
increments inside the graph, so every replay of a captured graph draws fresh
numbers while a run stays bit-exact from one run to the next.
"""

from __future__ import annotations

import warp as wp


@wp.func
def normal3(seed: wp.int32, tick: wp.int64, sigma: wp.vec3) -> wp.vec3:
    """Zero-mean Gaussian vector with per-axis standard deviation ``sigma``; exactly 0 where ``sigma`` is 0."""
    state = wp.rand_init(seed, wp.int32(tick))
    x = wp.randn(state)
    y = wp.randn(state)
    z = wp.randn(state)
    return wp.cw_mul(wp.vec3(x, y, z), sigma)


@wp.func
def normal1(seed: wp.int32, tick: wp.int64, sigma: wp.float32) -> wp.float32:
    """Zero-mean Gaussian number with standard deviation ``sigma``."""
    state = wp.rand_init(seed, wp.int32(tick))
    return wp.randn(state) * sigma
