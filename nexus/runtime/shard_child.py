"""One shard of a sharded run (:mod:`nexus.runtime.shards`): ``python -m nexus.runtime.shard_child CONFIG OUT PID FD``.

CONFIG is a JSON file of the shard's :class:`~nexus.runtime.config.RunConfig` (its ``first_world`` and
``worlds`` are its range, its ``shards`` 1); the shard flies it into the folder OUT as ``nexus run`` would,
and is sent SIGTERM if PID (the process that started it) dies. It reports its start and sim time on the
pipe FD (:mod:`nexus.runtime.shard_reports`; -1: no reports). Exit status 0 when the run ended as runs
end (failed worlds included: the summary says which), 1 when it failed (its one-line error is the last line
on stderr), 3 when SIGINT or SIGTERM stopped it.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
from pathlib import Path

from nexus.core.errors import NexusError
from nexus.core.warp_setup import init_warp
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight
from nexus.runtime.shard_reports import ShardReporter

#: prctl's option that signals a process when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


def _stop_with_parent(parent: int) -> None:
    """On Linux: SIGTERM to this shard when the process that started it dies (a shard never flies on alone)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the parent stops its shards itself
        return
    if os.getppid() != parent:  # it died before the line above
        os.kill(os.getpid(), signal.SIGTERM)


def main(argv: list[str]) -> int:
    config, out = Path(argv[0]), Path(argv[1])
    _stop_with_parent(int(argv[2]))
    reporter = ShardReporter(int(argv[3]) if len(argv) > 3 else -1)
    try:
        options = RunConfig.from_dict(json.loads(config.read_text()), source=str(config))
        init_warp(False)
        run_flight(options, out, progress=False, watch=reporter.started)
    except KeyboardInterrupt:
        return 3
    except NexusError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 (reported to the parent as one line)
        print(f"error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
