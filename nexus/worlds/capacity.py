"""How many worlds fit: refuse a ``--worlds N`` the device cannot hold, before anything is allocated.

The estimate is :data:`BYTES_PER_WORLD`, the device memory one more world of
the default vehicle takes (model, solver, signals, state, the record's table
excluded), measured by the ``worlds`` benchmark suite (``nexus bench --suite
worlds``: ``bytes_per_world``), with a margin; a vehicle with more bodies
takes more, so the check errs on the side of refusing late rather than early.
"""

from __future__ import annotations

import os

import warp as wp

from nexus.core.errors import BuildError

#: Device memory per world [bytes] (see the module doc; docs/worlds.md has the measurement).
BYTES_PER_WORLD = 96 * 1024
#: Share of the free memory a run may plan to take.
USABLE_SHARE = 0.8


def free_bytes(device: str) -> int:
    """Memory free for a run on ``device`` [bytes]: the GPU's free memory, or the host's available RAM."""
    found = wp.get_device(device)
    if found.is_cuda:
        return int(found.free_memory)
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError):  # pragma: no cover - a platform without sysconf
        return 1 << 40


def most_worlds(device: str) -> int:
    """The most worlds that fit on ``device`` now."""
    return int(free_bytes(device) * USABLE_SHARE // BYTES_PER_WORLD)


def check_fits(worlds: int, device: str) -> None:
    """Raise :class:`BuildError` when ``worlds`` worlds would not fit on ``device``."""
    fit = most_worlds(device)
    if worlds > fit:
        need = worlds * BYTES_PER_WORLD
        raise BuildError(
            f"--worlds {worlds}: about {need / 2**30:.1f} GiB at {BYTES_PER_WORLD / 1024:.0f} kB per world, but "
            f"{device} has {free_bytes(device) / 2**30:.1f} GiB free: at most {fit} worlds fit; fly fewer"
        )
