"""Is PX4 idle? Its process tree, found from the TCP connection, with every thread asleep.

While PX4 boots, its start-up script (a shell and one short-lived ``px4-*``
client per command) goes on only as PX4's clock advances, and between two
steps of the clock it works in wall time for as long as it needs. A tick sent
before that work is done lands at a different point of PX4's boot in each run.
So during the boot the exchange goes on only once PX4 is idle: no thread of
the PX4 process or of its descendants is running or runnable, twice in a row.
Linux only (``/proc``); elsewhere, or when the peer is this process (a test's
scripted peer) or belongs to another user, there is no tree and the caller
waits a fixed patience instead.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

PROC = Path("/proc")
#: Gap [s] between the two scans that must both find every thread asleep.
RESCAN_S = 0.0003


def _socket_inode(local_port: int, remote_port: int) -> str | None:
    """The inode of the loopback TCP socket bound to ``local_port`` and connected to ``remote_port``."""
    for table in ("tcp", "tcp6"):
        try:
            lines = (PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == local_port and int(fields[2].rsplit(":", 1)[1], 16) == remote_port:
                return fields[9]
    return None


def _owner(inode: str) -> int | None:
    target = f"socket:[{inode}]"
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) == target:
                    return int(entry.name)
        except OSError:
            continue
    return None


class PeerProcess:
    """The process tree at the other end of a TCP connection, and whether all of it is asleep."""

    def __init__(self, pid: int):
        self.pid = pid
        self.scans = 0

    @classmethod
    def of_connection(cls, connection) -> PeerProcess | None:
        """The peer's process, or None where it cannot be told (not Linux, another user, this process)."""
        try:
            peer_port = connection.getpeername()[1]
            local_port = connection.getsockname()[1]
            inode = _socket_inode(peer_port, local_port)
            pid = _owner(inode) if inode is not None else None
        except (OSError, ValueError, IndexError):
            return None
        if pid is None or pid == os.getpid():
            return None
        return cls(pid)

    def _tree(self) -> list[int]:
        pids, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            try:
                for task in (PROC / str(pid) / "task").iterdir():
                    todo.extend(int(child) for child in (task / "children").read_text().split())
            except OSError:
                continue
        return pids

    def running_threads(self, tree: bool = True) -> int:
        """Threads of the tree (or of the process alone) running or runnable (R) or in a disk wait (D) now."""
        self.scans += 1
        running = 0
        for pid in self._tree() if tree else [self.pid]:
            try:
                tasks = list((PROC / str(pid) / "task").iterdir())
            except OSError:
                continue
            for task in tasks:
                try:
                    stat = (task / "stat").read_bytes()
                except OSError:
                    continue
                state = stat[stat.rindex(b")") + 2]
                if state in b"RD":  # running, or in an uninterruptible wait (disk): not idle
                    running += 1
        return running

    def alive(self) -> bool:
        return (PROC / str(self.pid)).exists()

    def idle(self, tree: bool = True, quiet_s: float = RESCAN_S) -> bool:
        """Every thread of the tree (or of the process alone) asleep in every scan over ``quiet_s`` [s]
        (at least two scans): a thread that wakes from a short wall-clock sleep within it counts as busy."""
        if self.running_threads(tree):
            return False
        until = time.monotonic() + quiet_s
        while True:
            time.sleep(RESCAN_S)
            if self.running_threads(tree):
                return False
            if time.monotonic() >= until:
                return True
