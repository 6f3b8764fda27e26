"""How many worlds fit: refuse a ``--worlds N`` the device cannot hold, before anything is allocated.

The estimate is :data:`BYTES_PER_WORLD` a world. Measured on the default
vehicle (2026-12-02): the Warp arrays of model, solver, signals and state
grow by 16 kB a world (``nexus bench --suite worlds``: ``bytes_per_world``),
and the process's resident memory on the CPU by 221 kB a world (a 256-world
build against a 1-world one: Newton's builder, MuJoCo's host model and the
arrays). The constant takes the larger with a margin, for either device; a
vehicle with many more bodies takes more.
"""

from __future__ import annotations

import os

import warp as wp

from nexus.core.errors import BuildError

#: Device memory per world [bytes] (see the module doc; docs/worlds.md has the measurement).
BYTES_PER_WORLD = 256 * 1024
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
