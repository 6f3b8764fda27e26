"""How a shard tells its parent how far it has flown: lines on a pipe of its own.

A shard (:mod:`nexus.runtime.shard_child`) writes ``started`` once its flight
is built and about to fly, then ``at SIM_S`` [s] at most every
:data:`REPORT_EVERY_S` of wall time. The parent (:mod:`nexus.runtime.shards`)
reads every shard's pipe without waiting, keeps each shard's latest sim time,
and prints one progress line for the run (the same line one process prints),
its sim time the world-weighted mean of the shards'. A shard whose parent has
gone stops writing (the pipe is broken) and flies on until SIGTERM reaches it.
"""

from __future__ import annotations

import os
import time

#: Wall time [s] between two reports of one shard.
REPORT_EVERY_S = 0.2


class ShardReporter:
    """The shard's end: ``started()`` after the build, ``update(sim_s)`` after every replay (throttled)."""

    def __init__(self, fd: int, every_s: float = REPORT_EVERY_S):
        self.fd, self.every_s = fd, every_s
        self.last = 0.0

    def _send(self, line: str) -> None:
        if self.fd < 0:
            return
        try:
            os.write(self.fd, (line + "\n").encode())
        except OSError:  # the parent is gone: nobody reads any more
            self.fd = -1

    def started(self, _flight=None) -> ShardReporter:
        """Report the start (``run_flight``'s ``watch`` calls this with the started flight)."""
        self._send("started")
        self.last = time.monotonic()
        return self

    def update(self, sim_s: float) -> None:
        now = time.monotonic()
        if now - self.last >= self.every_s:
            self.last = now
            self._send(f"at {sim_s!r}")


class ShardReports:
    """The parent's end of one shard's pipe: what it said so far (``started``, ``sim_s`` [s])."""

    def __init__(self, fd: int):
        self.fd = fd
        os.set_blocking(fd, False)
        self.started: float | None = None  # time.monotonic() when the shard said it started
        self.sim_s = 0.0
        self._partial = b""

    def read(self) -> bool:
        """Read what the shard wrote since the last call; True when it said ``started`` in it."""
        if self.fd < 0:
            return False
        chunks = []
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:  # the shard closed its end (it ended)
                self.close()
                break
            chunks.append(chunk)
        lines = (self._partial + b"".join(chunks)).split(b"\n")
        self._partial = lines.pop()
        began = False
        for line in lines:
            words = line.decode(errors="replace").split()
            if words == ["started"] and self.started is None:
                self.started, began = time.monotonic(), True
            elif len(words) == 2 and words[0] == "at":
                try:
                    self.sim_s = float(words[1])
                except ValueError:
                    pass
        return began

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def run_sim_time(reports: list[ShardReports], worlds: list[int]) -> float:
    """The run's sim time [s]: the shards' sim times weighted by their worlds (the share of world-ticks flown)."""
    total = sum(worlds)
    return sum(r.sim_s * w for r, w in zip(reports, worlds)) / total if total else 0.0
