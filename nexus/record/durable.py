"""Files a reader sees whole or not at all: written to a hidden temporary name, synced, then renamed.

A rename within one folder is atomic on POSIX file systems, so a process
killed at any moment leaves either the old file or the new one, never half
of one; the temporary name starts with ``.`` so that pyarrow, pandas and
polars skip it when they read a folder.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from nexus.core.errors import NexusError

#: errno values that mean the disk (or the quota) has no room left.
NO_ROOM = (errno.ENOSPC, errno.EDQUOT)


class WriteFailed(NexusError):
    """A run file could not be written: the disk is full, or the folder went away or failed."""

    reason = "write-failed"

    def __init__(self, message: str, reason: str = "write-failed"):
        super().__init__(message)
        self.reason = reason


def temporary_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp")


def write_atomic(path: Path, data: bytes, sync: bool = True) -> None:
    """Replace ``path`` by ``data`` atomically; on failure the old ``path`` (if any) is left as it was.

    ``sync`` flushes the bytes to the disk before the rename, so a crash of the
    machine (not just of the process) also leaves a whole file. Raises
    :class:`OSError` as the system gave it, after removing the temporary file.
    """
    path = Path(path)
    temporary = temporary_name(path)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def failure(error: OSError, folder: Path, what: str, needed: int) -> WriteFailed:
    """A one-line :class:`WriteFailed` for ``error`` met writing ``what`` (``needed`` [bytes]) into ``folder``."""
    if error.errno in NO_ROOM:
        free = _free_bytes(folder)
        room = f", {free:,} free" if free is not None else ""
        return WriteFailed(
            f"the disk holding {folder} is full: writing {what} needed {needed:,} bytes{room}; "
            "free some space or give --out on another disk (what was written before is kept)",
            reason="disk-full",
        )
    return WriteFailed(
        f"cannot write {what} into {folder} ({error.strerror or error}); the folder or its disk failed "
        "(what was written before is kept)",
        reason="write-failed",
    )


def _free_bytes(folder: Path) -> int | None:
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


class Reserve:
    """Disk space kept back for a run's last words: freed when a write fails, so run.json can still say why.

    A hidden file of ``size`` [bytes] in the run folder; :meth:`release`
    removes it (at the end of every run, and first thing after a failed write).
    """

    NAME = ".nexus-reserve"

    def __init__(self, folder: Path, size: int = 256 * 1024):
        self.path = Path(folder) / self.NAME
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, bytes(size))  # real blocks, not a sparse file
            finally:
                os.close(fd)
        except OSError:  # a disk already too full for this: the run's first write will say so
            self.release()

    def release(self) -> None:
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass
