"""The file an export writes: refused when it exists (unless asked to replace it), written under a hidden name,
renamed into place when done.

A reader never sees half a file: until the export ends, the bytes go to
``.NAME.tmp`` beside ``NAME`` (the name :mod:`nexus.record.durable` uses). An
export stopped by Ctrl-C or SIGTERM closes its file properly first (an MCAP
file gets its summary) and still renames it, so what was written is kept and
reads as a whole, shorter file; any other failure removes the temporary file
and leaves an earlier ``NAME`` as it was.
"""

from __future__ import annotations

import os
from pathlib import Path

from nexus.core.errors import BuildError
from nexus.record.durable import temporary_name


class ExportError(BuildError):
    """An export asked for something it cannot do (exit status 2, no traceback): an output that exists, a world
    the run does not have, a format it does not write."""

    reason = "bad-export"


class ExportFile:
    """``with ExportFile(out, overwrite) as stream:`` write ``stream``; on leaving, the file is renamed to ``out``
    (kept when stopped by KeyboardInterrupt, removed on any other error)."""

    def __init__(self, out: Path, overwrite: bool = False):
        self.out = Path(out)
        if self.out.is_dir():
            raise ExportError(f"--out {self.out} is a folder; give a file name (e.g. {self.out / 'record.mcap'})")
        if self.out.exists() and not overwrite:
            raise ExportError(f"{self.out} exists; give --overwrite to replace it, or another --out")
        self.temporary = temporary_name(self.out)
        self.stream = None

    def __enter__(self):
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self.stream = open(self.temporary, "wb")  # noqa: SIM115 (closed in __exit__)
        except OSError as error:
            raise ExportError(f"cannot write {self.out} ({error.strerror or error}); choose an --out you can write "
                              "to") from None
        return self.stream

    def __exit__(self, kind, error, traceback) -> None:
        self.stream.close()
        if kind is None or issubclass(kind, KeyboardInterrupt):
            os.replace(self.temporary, self.out)
        else:
            self.temporary.unlink(missing_ok=True)
