"""The one-line progress report ``nexus run`` prints on stderr while it flies.

One process's run feeds it its loop's sim time; a sharded run
(:mod:`nexus.runtime.shards`) feeds it the sim time of all its shards
together, so both print the same line.
"""

from __future__ import annotations

import sys
import time


class Progress:
    """A one-line progress report on stderr: sim time, share done and real-time factor."""

    def __init__(self, total_s: float, enabled: bool = True, every_s: float = 0.5):
        self.total_s, self.enabled, self.every_s = total_s, enabled, every_s
        self.started = time.perf_counter()
        self.last = 0.0
        self.tty = sys.stderr.isatty()

    def update(self, sim_s: float, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < self.every_s:
            return
        self.last = now
        wall = max(now - self.started, 1e-9)
        share = min(sim_s / self.total_s, 1.0) if self.total_s else 1.0
        bar = "#" * int(share * 30)
        line = f"[{bar:<30}] sim {sim_s:7.2f} s / {self.total_s:.2f} s   RTF {sim_s / wall:6.1f}x"
        sys.stderr.write(("\r" + line) if self.tty else (line + "\n"))
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            sys.stderr.write("\n")
