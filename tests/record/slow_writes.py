"""Run ``nexus`` with every record part's fsync slowed down, to kill or signal a run mid-drain.

    python tests/record/slow_writes.py MARKER SECONDS run --out DIR ...

Before each drain's part is synced it creates MARKER (so a test knows a drain is under
way) and sleeps SECONDS; everything else is the real command line.
"""

import os
import sys
import time
from pathlib import Path


def main() -> None:
    marker, seconds, args = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        name = os.readlink(f"/proc/self/fd/{fd}")
        if ".part-" in name and ".part-000000." not in name:  # a drain's part, not the columns' part 0
            marker.touch()
            time.sleep(seconds)
        real_fsync(fd)

    os.fsync = slow_fsync
    from nexus.cli import main as nexus

    nexus(args, prog_name="nexus")


if __name__ == "__main__":
    main()
