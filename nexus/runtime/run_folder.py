"""One reader of a run folder: ``run.json``, the record, the summary, the frames and the PX4 files.

``nexus replay``, ``plot``, ``view``, ``runs``, ``sweep`` and ``--world-of``
all read a run through :class:`RunFolder`, so a folder that is not a run, a
``run.json`` cut short or a damaged record is the same one-line error,
written once here, whichever command meets it. A caller that reports its
own kind of error (``nexus replay`` raises :class:`~nexus.runtime.replay.ReplayError`)
passes that class; the words stay these.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from nexus.core.errors import BuildError
from nexus.record.parts import is_record, part_paths, read_record

#: The files a run folder holds (``nexus run --out``).
RUN_JSON, RECORD, SUMMARY, PX4 = "run.json", "record.parquet", "summary.parquet", "px4"
#: What a message tells the user to give instead of a folder that is no run.
GIVE_A_RUN = "give the folder `nexus run --out` wrote"


class RunFolderError(BuildError):
    """RUN is not a run folder ``nexus run`` wrote, or a file of it cannot be read (exit status 2, no traceback)."""

    reason = "bad-run"


class RunFolder:
    """The folder of one run; files are read when first asked for, and each problem raises ``error``."""

    def __init__(self, path, error: type[BuildError] = RunFolderError):
        self.path = Path(path)
        self.error = error
        #: Where the run's files are.
        self.info_path, self.record_path = self.path / RUN_JSON, self.path / RECORD
        self.summary_path, self.px4_path = self.path / SUMMARY, self.path / PX4
        self._info: dict | None = None

    def _part_paths(self) -> list[Path]:
        """The record's part files (a record written before records were folders is one file)."""
        return [self.record_path] if self.record_path.is_file() else part_paths(self.record_path)

    def has_record(self) -> bool:
        return is_record(self.record_path)

    def has_summary(self) -> bool:
        return self.summary_path.is_file()

    # -- checks ----------------------------------------------------------------------------------

    def require(self, *, record: bool = True) -> RunFolder:
        """Refuse a path that is no run folder: it must hold run.json and (``record``) the record, or else
        (not ``record``) the record or the summary of a run that kept only that."""
        if not self.path.is_dir():
            why = "" if self.path.exists() else " (it does not exist)"
            raise self.error(f"{self.path} is not a folder{why}; {GIVE_A_RUN} (it holds {RUN_JSON} and {RECORD})")
        missing = [] if self.info_path.is_file() else [RUN_JSON]
        if record and not self.has_record():
            missing.append(RECORD)
        elif not record and not (self.has_record() or self.has_summary()):
            missing.append(f"{RECORD} (nor {SUMMARY})")
        if missing:
            raise self.error(f"{self.path} is not a run folder: it has no {' and no '.join(missing)}; {GIVE_A_RUN}")
        return self

    # -- run.json --------------------------------------------------------------------------------

    @property
    def info(self) -> dict:
        """run.json as the run last wrote it (read once)."""
        if self._info is None:
            try:
                info = json.loads(self.info_path.read_text())
            except (OSError, ValueError, UnicodeDecodeError) as error:
                raise self.error(f"{self.info_path} is not valid JSON ({error}); it was cut or edited: the run's "
                                 f"own {RUN_JSON} is needed ({GIVE_A_RUN})") from None
            if not isinstance(info, dict):
                raise self.error(f"{self.info_path} holds no JSON object; the run's own {RUN_JSON} is needed "
                                 f"({GIVE_A_RUN})")
            self._info = info
        return self._info

    def peek_info(self) -> dict | None:
        """run.json when it reads as a JSON object, else None (for listings that show unreadable runs too)."""
        try:
            return self.info
        except BuildError:
            return None

    def is_failed_build(self) -> bool:
        """Whether the folder holds only a build that failed: its run.json says ``failed`` after 0 ticks and was
        last written before the ring was built (no ``stage_plan``), and nothing a flight writes (summary, frames,
        PX4's files, mission.json) is beside it. Such a folder is no run: ``--out`` may take it again."""
        info = self.peek_info()
        if info is None or info.get("status") != "failed" or info.get("ticks") != 0 or "stage_plan" in info:
            return False
        return not any((self.path / name).exists() for name in (SUMMARY, PX4, "frames", "mission.json"))

    @property
    def worlds(self) -> int:
        """Worlds the run flew: run.json's ``worlds`` (absent in runs from before there were several)."""
        return world_count(self.info)

    @property
    def first_world(self) -> int:
        """The sweep's number of this run's world 0 (run.json's ``first_world``; 0 for a run on its own)."""
        return first_world(self.info)

    def vehicle_path(self) -> Path:
        """The vehicle file the run flew (run.json's ``vehicle.path``)."""
        vehicle = self.info.get("vehicle") or {}
        if "path" not in vehicle:
            raise self.error(f"{self.info_path} names no vehicle file (vehicle.path): the run failed before its "
                             "vehicle was loaded")
        return Path(vehicle["path"])

    # -- the record and the summary --------------------------------------------------------------

    def record(self):
        """The record as one pyarrow table, its parts in order."""
        try:
            return read_record(self.record_path)
        except Exception as error:  # noqa: BLE001 (pyarrow raises several types for a damaged part)
            raise self.unreadable(error) from None

    def record_parts(self, columns=None, world: int | None = None) -> list:
        """The record's parts as pyarrow tables, read one by one (so a run of many worlds needs only the
        ``columns`` asked for, or the rows of one ``world``); parts without columns (a failed build's) are
        left out."""

        paths = self._part_paths()
        tables = []
        try:
            for part in paths:
                names = pq.read_schema(part).names
                if not names:
                    continue
                if columns is not None:
                    absent = [name for name in columns if name not in names]
                    if absent:
                        raise self.lacks(absent)
                wanted = None if columns is None else list(columns)
                if wanted is not None and world is not None and "world" in names and "world" not in wanted:
                    wanted.append("world")
                table = pq.read_table(part, columns=wanted)
                if world is not None and "world" in names:
                    chosen = table.column("world")
                    table = table.filter(pc.equal(chosen, pa.scalar(world, chosen.type)))
                elif world not in (None, 0):
                    table = table.slice(0, 0)
                tables.append(table)
        except BuildError:
            raise
        except Exception as error:  # noqa: BLE001 (pyarrow raises several types for a damaged part)
            raise self.unreadable(error) from None
        return tables

    def record_names(self) -> list[str]:
        """The record's column names (its first part with columns; [] for a run that recorded nothing)."""

        paths = self._part_paths()
        try:
            for part in paths:
                names = pq.read_schema(part).names
                if names:
                    return list(names)
        except Exception as error:  # noqa: BLE001 (pyarrow raises several types for a damaged part)
            raise self.unreadable(error) from None
        return []

    def unreadable(self, error: Exception) -> BuildError:
        """The error for a record whose part does not read."""
        return self.error(f"{self.record_path} cannot be read ({error}); it was cut short or is no Parquet "
                          "file: fly the run again")

    def lacks(self, absent) -> BuildError:
        """The error for a record without columns a reader needs."""
        return self.error(f"{self.record_path} lacks the columns {', '.join(absent)}: the record must tap 'time' "
                          "and 'body/base' (the default taps do)")

    def no_rows(self, of: str = "") -> BuildError:
        """The error for a record with no rows (``of``: "of world 3", for one world's)."""
        if of:
            return self.error(f"{self.record_path} holds no rows {of}: nothing of it to show")
        error = self.peek_info() or {}
        why = error.get("error")
        return self.error(f"{self.record_path} holds no rows: the run ended before its first tick (exit_reason "
                          f"{error.get('exit_reason', '?')!r}{', ' + str(why) if why else ''}); there is no flight "
                          "to show")

    def columns(self, *, required=(), nonempty: bool = False) -> dict[str, np.ndarray]:
        """Every record column as a NumPy array; ``nonempty`` refuses a record of no rows, ``required`` names
        columns that must be there."""
        table = self.record()
        if nonempty and table.num_rows == 0:
            raise self.no_rows()
        absent = [name for name in required if name not in table.column_names]
        if absent:
            raise self.lacks(absent)
        return {name: table.column(name).to_numpy() for name in table.column_names}

    def summary(self):
        """summary.parquet (one row per world) as a pyarrow table."""

        try:
            return pq.read_table(self.summary_path)
        except Exception as error:  # noqa: BLE001 (pyarrow raises several types for a damaged file)
            raise self.error(f"{self.summary_path} cannot be read ({error}); it was cut short or is no Parquet "
                             "file: fly the run again") from None

    # -- PX4's files -----------------------------------------------------------------------------

    def px4_info(self) -> dict:
        """px4/px4.json of a run flown against PX4 ({} for a run without PX4 or one whose file does not read)."""
        return self.json_object(f"{PX4}/px4.json") or {}

    def json_object(self, name: str) -> dict | None:
        """The JSON object in the folder's file ``name`` (run.json, mission.json, px4/px4.json), or None where
        it is missing or does not parse as one."""
        try:
            value = json.loads((self.path / name).read_text())
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        return value if isinstance(value, dict) else None


def world_count(info: dict) -> int:
    """Worlds a run flew, from its run.json (1 where absent or unreadable)."""
    try:
        return max(1, int(info.get("worlds") or 1))
    except (TypeError, ValueError):
        return 1


def first_world(info: dict) -> int:
    """The sweep's number of a run's world 0, from its run.json (0 for a run on its own)."""
    try:
        return max(0, int(info.get("first_world") or (info.get("options") or {}).get("first_world") or 0))
    except (TypeError, ValueError):
        return 0


__all__ = ["RECORD", "RUN_JSON", "SUMMARY", "RunFolder", "RunFolderError", "first_world", "world_count"]
