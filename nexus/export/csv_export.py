"""``nexus export RUN --format csv``: a run's record as one CSV file for spreadsheets.

One row per record row (tick and world), one column per record column,
headed by its name and unit (``time [s]``, ``imu.accel[0] [m/s^2]``,
``gps.fix_type [-]``; :mod:`nexus.record.units`). A many-world run keeps its
``world`` column, so a spreadsheet filters a world; ``--world K`` writes
world K's rows alone. A fleet's record keeps its ``vehicle`` column too, and
``--vehicle J`` writes vehicle J's rows alone (of every world, or of world
K). Numbers are written as the shortest text that reads back to the same
float32 or float64 (Arrow's CSV writer); a value that is not finite reads
``nan`` or ``inf``. The record is written a part file at a time, so an
export of a long run holds one part in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow.csv as pacsv

from nexus.export.export_file import ExportFile
from nexus.export.mcap_export import (Exported, chosen_vehicle, chosen_worlds, record_tables, run_folder,
                                      run_vehicles, vehicle_rows)
from nexus.record.units import header


def export_csv(run, out: Path, *, world: int | None = None, vehicle: int | None = None, overwrite: bool = False,
               on_progress: Callable[[float, float], None] | None = None) -> Exported:
    """Write run folder ``run``'s record (``world``'s rows alone, or every world's; ``vehicle``'s rows alone, or
    every vehicle's) to ``out`` as CSV.

    ``Exported.counts`` holds one entry, the file's name, with its data rows. Raises as
    :func:`nexus.export.mcap_export.export_mcap` does; KeyboardInterrupt after keeping the rows written.
    """
    folder = run_folder(run)
    worlds = chosen_worlds(folder.worlds, world)
    vehicle = chosen_vehicle(folder, vehicle)
    target = ExportFile(out, overwrite)
    names = folder.record_names()
    tables = vehicle_rows(folder, record_tables(folder, worlds, folder.worlds), vehicle)
    headers = [header(name) for name in names]
    end_s = max((float(t.column("time").to_numpy()[-1]) for t in tables if t.num_rows and "time" in t.column_names),
                default=0.0)
    result = Exported(Path(out), {Path(out).name: 0}, worlds, 0.0, vehicles=run_vehicles(folder), vehicle=vehicle)
    with target as stream:
        schema = tables[0].rename_columns(headers).schema
        with pacsv.CSVWriter(stream, schema) as writer:
            try:
                for table in tables:
                    if not table.num_rows:
                        continue
                    writer.write_table(table.select(names).rename_columns(headers))
                    result.counts[Path(out).name] += table.num_rows
                    if "time" in table.column_names:
                        result.last_time = float(table.column("time").to_numpy()[-1])
                    if on_progress is not None:
                        on_progress(result.last_time, end_s)
            except KeyboardInterrupt:
                result.complete = False
                if on_progress is not None:
                    on_progress(result.last_time, end_s)  # where it stopped, for the caller's message
                raise
    return result
