"""A run's worlds split into contiguous ranges, one a process.

``nexus run --shards`` (:mod:`nexus.runtime.shards`) and the sharded learning environment
(:mod:`nexus.gym.sharded_env`) both split ``[0, N)`` this way; written once, the two splits cannot drift apart.
"""

from __future__ import annotations


def world_ranges(worlds: int, parts: int) -> list[tuple[int, int]]:
    """``(first world, worlds)`` of each of ``parts`` contiguous ranges covering ``[0, worlds)``: as even as they
    divide, the first ones one world longer."""
    base, extra = divmod(worlds, parts)
    ranges, start = [], 0
    for index in range(parts):
        count = base + (1 if index < extra else 0)
        ranges.append((start, count))
        start += count
    return ranges
