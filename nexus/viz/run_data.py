"""A recorded run, read back for the report and the viewer: ``run.json`` and the record's columns.

Every check happens here, before a figure is drawn or a server started, so
that a folder that is not a run, an empty record or a record without the
truth columns is one clear error naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nexus.runtime.run_file import partial_note
from nexus.runtime.run_folder import RunFolder

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
        return RunFolder(self.folder).vehicle_path()


def load_run(folder: Path) -> RunData:
    """Read ``folder/run.json`` and ``folder/record.parquet``; raise :class:`RunFolderError` on anything unusable."""
    run = RunFolder(folder).require()
    info = run.info  # run.json first: a cut run.json is named before the record is read
    columns = run.columns(required=REQUIRED_COLUMNS, nonempty=True)
    return RunData(run.path, info, columns, note=partial_note(info, len(columns["time"])))
