"""A recorded run, read back for the report and the viewer: ``run.json`` and the record's columns.

Every check happens here, before a figure is drawn or a server started, so
that a folder that is not a run, an empty record or a record without the
truth columns is one clear error naming the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nexus.record.parts import is_record, read_record
from nexus.run_file import partial_note
from nexus.viz.errors import RunFolderError

#: Columns every figure needs: the tick's time and the base body's pose (ENU, Warp (x, y, z, w) quaternion).
REQUIRED_COLUMNS = ("time", *(f"body/base.pose[{i}]" for i in range(7)))


@dataclass
class RunData:
    folder: Path
    #: run.json as written by ``nexus run``.
    info: dict
    #: One NumPy array per record column, one element per tick.
    columns: dict[str, np.ndarray]
    #: One line when the run did not end by itself (killed, terminated, interrupted): what is shown.
    note: str | None = None

    @property
    def time(self) -> np.ndarray:
        """Sim time of each row [s]."""
        return self.columns["time"]

    @property
    def rows(self) -> int:
        return len(self.time)

    def has(self, *names: str) -> bool:
        return all(name in self.columns for name in names)

    def vector(self, prefix: str, width: int) -> np.ndarray:
        """Columns ``prefix[0] .. prefix[width-1]`` stacked as float64, shape (rows, width)."""
        return np.stack([self.columns[f"{prefix}[{i}]"].astype(np.float64) for i in range(width)], axis=1)

    def scalar(self, name: str) -> np.ndarray:
        return self.columns[name].astype(np.float64)

    def new_samples(self, sensor: str) -> np.ndarray:
        """Rows where ``sensor`` took a sample on that very tick (its ``time`` equals the row's).

        Between due times a sensor's signal keeps its last sample; comparing held
        samples with the truth of a later tick would show lag, not noise.
        """
        return self.columns[f"{sensor}.time"] == self.columns["time"]

    @property
    def ned_origin_enu(self) -> np.ndarray:
        """Where start-up settled the base: the NED origin, in the world (ENU) [m]."""
        return np.asarray(self.info.get("ned_origin_enu_m", (0.0, 0.0, 0.0)), dtype=np.float64)

    @property
    def controller(self) -> str:
        return str(self.info.get("options", {}).get("controller", "?"))

    def vehicle_path(self) -> Path:
        """The vehicle file the run flew (run.json's ``vehicle.path``)."""
        vehicle = self.info.get("vehicle") or {}
        if "path" not in vehicle:
            raise RunFolderError(f"{self.folder / 'run.json'} names no vehicle file (vehicle.path): the run failed "
                                 "before its vehicle was loaded; there is nothing to draw")
        return Path(vehicle["path"])


def load_run(folder: Path) -> RunData:
    """Read ``folder/run.json`` and ``folder/record.parquet``; raise :class:`RunFolderError` on anything unusable."""
    folder = Path(folder)
    if not folder.is_dir():
        raise RunFolderError(f"{folder} is not a folder; give the folder `nexus run --out` wrote (it holds run.json "
                             "and record.parquet)")
    info_path, record_path = folder / "run.json", folder / "record.parquet"
    missing = [p.name for p, there in ((info_path, info_path.is_file()), (record_path, is_record(record_path)))
               if not there]
    if missing:
        raise RunFolderError(f"{folder} is not a run folder: it has no {' and no '.join(missing)}; give the folder "
                             "`nexus run --out` wrote")
    try:
        info = json.loads(info_path.read_text())
    except (OSError, ValueError) as error:
        raise RunFolderError(f"{info_path} is not readable JSON ({error}); it should be the run.json `nexus run` "
                             "wrote") from None
    if not isinstance(info, dict):
        raise RunFolderError(f"{info_path} holds no JSON object; it should be the run.json `nexus run` wrote")
    try:
        table = read_record(record_path)
    except Exception as error:  # pyarrow raises several types for a damaged file
        raise RunFolderError(f"{record_path} is not a readable Parquet record ({error}); fly the run again") from None
    if table.num_rows == 0:
        raise RunFolderError(
            f"{record_path} holds no rows: the run ended before its first tick (exit_reason "
            f"{info.get('exit_reason', '?')!r}{', ' + str(info['error']) if info.get('error') else ''}); "
            "there is no flight to show"
        )
    absent = [name for name in REQUIRED_COLUMNS if name not in table.column_names]
    if absent:
        raise RunFolderError(f"{record_path} lacks the columns {', '.join(absent)}: the record must tap 'time' and "
                             "'body/base' (the default taps do)")
    columns = {name: table.column(name).to_numpy() for name in table.column_names}
    return RunData(folder, info, columns, note=partial_note(info, table.num_rows))
