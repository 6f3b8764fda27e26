"""``run.json``: what a run is and how far it got, valid at every moment of the run.

It is written when the run starts (status ``running``: configuration,
versions; then the plan once the ring is built), rewritten after each record
drain with the ticks on disk so far, and once more at the end with the exit
reason. Every write replaces the file atomically
(:func:`nexus.record.durable.write_atomic`), so a reader sees one whole
version or the one before, never a part of one.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from nexus.record.durable import failure, write_atomic

#: ``status`` while the process flies; a run.json that still says it after the process is gone
#: belongs to a run that was killed (SIGKILL, a crash, the machine lost power).
RUNNING = "running"
#: ``status`` once the run ended, by its ``exit_reason``.
ENDED = {"duration": "finished", "done": "finished", "battery-empty": "finished", "crashed": "finished",
         "collision": "finished", "interrupted": "interrupted", "terminated": "terminated"}
#: Exit reasons of a run whose record stopped short of the ticks it flew (the disk refused a part).
WRITE_FAILURES = ("disk-full", "write-failed")


def final_status(exit_reason: str) -> str:
    """The status a run that ended with ``exit_reason`` leaves: finished, interrupted, terminated or failed."""
    return ENDED.get(exit_reason, "failed")


class RunFile:
    """The run.json of one run folder, with the fields so far in :attr:`info`."""

    def __init__(self, folder: Path, info: dict):
        self.path = Path(folder) / "run.json"
        self.info = info

    def write(self, **updates) -> None:
        """Update the fields and replace run.json.

        Raises :class:`~nexus.record.durable.WriteFailed` (``disk-full`` or
        ``write-failed``) when the disk refuses; the previous run.json stays.
        """
        self.info.update(updates)
        self.info["updated_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        data = (json.dumps(self.info, indent=2, sort_keys=True, default=str) + "\n").encode()
        try:
            write_atomic(self.path, data)
        except OSError as error:
            raise failure(error, self.path.parent, "run.json", len(data)) from None


def process_alive(info: dict) -> bool:
    """Whether the process that wrote ``info`` (its ``pid``, on this machine) still runs."""
    import os

    pid = info.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def partial_note(info: dict, rows: int) -> str | None:
    """One line for a reader of a run that did not end by itself (killed, terminated, interrupted), else None."""
    status = info.get("status")
    if status == RUNNING:
        how = "is still running" if process_alive(info) else "was killed (its run.json still says running)"
        return f"the run {how}: using the {rows} ticks its record holds so far"
    if status in ("terminated", "interrupted"):
        return f"the run was {status} after {info.get('ticks', rows)} ticks: using the {rows} ticks it recorded"
    if info.get("exit_reason") in WRITE_FAILURES and info.get("ticks", rows) != rows:
        return (f"the run flew {info.get('ticks')} ticks but could write only {rows} ({info['exit_reason']}): "
                f"using those {rows}")
    return None
