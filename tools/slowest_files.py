"""Write tests/slowest_files.txt from a pytest log run with ``--durations=0``: each test file's seconds, slowest first.

``make test`` hands whole files to its two workers (``--dist loadfile``); tests/conftest.py puts the files this list
names first, slowest first, so that no long file is left to start last while the other worker sits idle (xdist's own
order is by the number of tests in a file, which put a 66 s file of six tests near the end). Regenerate after the
suite changes much:

    .venv/bin/python -m pytest -q -n 2 --dist loadfile --durations=0 > /tmp/durations.log
    .venv/bin/python tools/slowest_files.py /tmp/durations.log
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

LISTED = Path(__file__).resolve().parents[1] / "tests" / "slowest_files.txt"
#: Files under this many seconds are left in collection order: they fill the gaps at the end.
LEAST_S = 5.0
LINE = re.compile(r"\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+?)::")


def file_seconds(log: str) -> dict[str, float]:
    """Seconds [s] each test file took in a ``--durations=0`` log (its tests' set-up, call and teardown)."""
    seconds: dict[str, float] = defaultdict(float)
    for line in log.splitlines():
        match = LINE.match(line)
        if match:
            seconds[match.group(2)] += float(match.group(1))
    return dict(seconds)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    seconds = file_seconds(Path(argv[0]).read_text())
    if not seconds:
        print(f"{argv[0]}: no durations found; run pytest with --durations=0", file=sys.stderr)
        return 1
    slow = sorted(((s, name) for name, s in seconds.items() if s >= LEAST_S), reverse=True)
    LISTED.write_text("# seconds  file (tools/slowest_files.py; tests/conftest.py starts these first, in this order)\n"
                      + "".join(f"{s:8.1f}  {name}\n" for s, name in slow))
    print(f"{LISTED}: {len(slow)} files of {len(seconds)}, {sum(s for s, _ in slow):.0f} of "
          f"{sum(seconds.values()):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
