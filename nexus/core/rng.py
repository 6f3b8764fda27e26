"""One seeded tree of random streams, addressed by name.

A stream's seed depends only on the run's seed and the stream's name (for
example ``imu/accel``), through a cryptographic hash, so it is the same on every
machine and every run, and adding a stream never shifts another's numbers.
Nothing in Nexus uses a global random generator.
"""

from __future__ import annotations

import hashlib

import numpy as np


class RngTree:
    """A seed and a path; ``child(name)`` descends, ``seed32`` feeds Warp kernels."""

    def __init__(self, seed: int, path: str = ""):
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise TypeError(f"seed must be an integer, got {seed!r}")
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        self.seed = int(seed)
        self.path = path.strip("/")

    def child(self, name: str) -> RngTree:
        """The sub-stream ``name`` (may itself contain ``/``) below this one."""
        name = name.strip("/")
        if not name:
            raise ValueError("an RNG stream needs a non-empty name")
        return RngTree(self.seed, f"{self.path}/{name}" if self.path else name)

    def world(self, index: int) -> RngTree:
        """The branch world ``index`` of a many-world run draws from.

        World 0 is the tree itself, so world 0 of any run is the one-world run of
        the same seed; world ``i`` > 0 is the sub-tree ``world/<i>``. A world's
        streams depend on its index alone, never on how many worlds fly.
        """
        index = int(index)
        if index < 0:
            raise ValueError(f"a world index is 0 or more, got {index}")
        return self if index == 0 else self.child(f"world/{index}")

    def vehicle(self, index: int) -> RngTree:
        """The branch vehicle ``index`` of a world draws from (several vehicles in one world).

        Vehicle 0 is the world's tree itself, so a one-vehicle run keeps its bits; vehicle ``k`` > 0 is the
        sub-tree ``vehicle/<k>``, which depends on ``k`` alone, never on how many vehicles fly.
        """
        index = int(index)
        if index < 0:
            raise ValueError(f"a vehicle index is 0 or more, got {index}")
        return self if index == 0 else self.child(f"vehicle/{index}")

    def _digest(self) -> bytes:
        text = f"nexus-rng/{self.seed}/{self.path}".encode()
        return hashlib.blake2b(text, digest_size=16).digest()

    @property
    def seed32(self) -> int:
        """A 31-bit seed for ``wp.rand_init`` (positive ``int32``)."""
        return int.from_bytes(self._digest()[:4], "little") & 0x7FFFFFFF

    @property
    def seed64(self) -> int:
        return int.from_bytes(self._digest()[:8], "little")

    def generator(self) -> np.random.Generator:
        """A NumPy generator for host-side draws on this stream."""
        return np.random.Generator(np.random.PCG64(int.from_bytes(self._digest(), "little")))

    def __repr__(self) -> str:
        return f"RngTree(seed={self.seed}, path={self.path!r})"


def stream_seed(rng: RngTree, stream: str, prim: str) -> int:
    """The 31-bit seed of ``stream`` for the component at ``prim`` (a sensor's noise, the air's turbulence):
    two components never share one, and a stream's seed is the same whoever asks for it."""
    return rng.child(stream).child(prim).seed32
