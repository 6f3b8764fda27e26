"""``nexus export RUN``: a run's record (and camera frames) as an MCAP file for Foxglove and PlotJuggler, or as CSV.

The exporters are :mod:`nexus.export.mcap_export` and :mod:`nexus.export.csv_export`; ``nexus --help`` loads
this module only for ``nexus export`` itself (:mod:`nexus.cli`'s table), and the ``mcap`` library loads only
when an MCAP file is written.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from nexus.export.csv_export import export_csv
from nexus.export.export_file import ExportError
from nexus.export.mcap_export import export_mcap
from nexus.runtime.stopping import StopSignals

#: The formats ``--format`` takes, and the file suffix each is recognised by.
FORMATS = {"mcap": ".mcap", "csv": ".csv"}


class ExportProgress:
    """A one-line progress report on stderr: the sim time exported so far of the run's; at most twice a second."""

    def __init__(self, enabled: bool = True, every_s: float = 0.5):
        self.enabled, self.every_s = enabled, every_s
        self.tty = sys.stderr.isatty()
        self.last_wall = 0.0
        self.shown = False
        #: Sim time [s] exported so far.
        self.sim_s = 0.0

    def update(self, sim_s: float, end_s: float) -> None:
        self.sim_s = sim_s
        now = time.monotonic()
        if not self.enabled or (now - self.last_wall < self.every_s and sim_s < end_s):
            return
        self.last_wall, self.shown = now, True
        share = min(sim_s / end_s, 1.0) if end_s > 0 else 1.0
        line = f"[{'#' * int(share * 30):<30}] exported {sim_s:7.2f} s / {end_s:.2f} s of sim time"
        sys.stderr.write(("\r" + line) if self.tty else (line + "\n"))
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.tty and self.shown:
            sys.stderr.write("\n")
            self.shown = False


def format_of(out: Path | None, given: str | None) -> str:
    """The format to write: ``--format``, else the one ``--out``'s suffix names, else mcap."""
    if given is not None:
        return given
    if out is None:
        return "mcap"
    for name, suffix in FORMATS.items():
        if out.suffix.lower() == suffix:
            return name
    raise ExportError(f"--out {out}: cannot tell the format from the suffix '{out.suffix}'; give --format "
                      f"{' or '.join(FORMATS)} (or end the name in {' or '.join(FORMATS.values())})")


def default_out(run: Path, fmt: str, world: int | None, vehicle: int | None = None) -> Path:
    """``RUN/record.mcap`` (``RUN/record.world3.mcap`` for ``--world 3``, ``RUN/record.vehicle1.mcap`` for
    ``--vehicle 1``, ``RUN/record.world3.vehicle1.mcap`` for both)."""
    of_world = "" if world is None else f".world{world}"
    of_vehicle = "" if vehicle is None else f".vehicle{vehicle}"
    return run / f"record{of_world}{of_vehicle}{FORMATS[fmt]}"


def what_was_exported(result, fmt: str, world: int | None) -> str:
    """The closing line's account of the worlds and vehicles written: `` of world 2``, `` of 4 worlds``,
    `` (3 vehicles a world, a channel set each)``, `` (vehicle 1 of 3 a world)``, or nothing."""
    worlds = len(result.worlds)
    said = f" of world {result.worlds[0]}" if world is not None else (f" of {worlds} worlds" if worlds > 1 else "")
    if result.vehicle is not None and result.vehicles > 1:
        said += f" (vehicle {result.vehicle} of {result.vehicles} a world)"
    elif fmt == "mcap" and result.vehicles > 1:
        said += f" ({result.vehicles} vehicles a world, a channel set each)"
    return said


@click.command()
@click.argument("run_folder", metavar="RUN", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default=None,
              help="mcap: one channel per signal and world (and vehicle, with --vehicles), JSON with a schema (Foxglove, PlotJuggler); csv: one "
                   "table with units in the header. Default: from --out's suffix, else mcap.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The file to write. Default: RUN/record.mcap (or .csv; record.worldK.* with --world K, "
                   "record.vehicleJ.* with --vehicle J).")
@click.option("--world", type=click.IntRange(min=0), default=None, metavar="K",
              help="With a run of several worlds: export world K alone. Default: every world (MCAP: one channel "
                   "per world; CSV: a world column).")
@click.option("--vehicle", type=int, default=None, metavar="J",
              help="With a run of several vehicles a world (`nexus run --vehicles K`): export vehicle J alone, its "
                   "rows of every world (or of --world's), on the channels it has in the whole export. Default: "
                   "every vehicle. A fleet's camera frames are left out with it.")
@click.option("--frames/--no-frames", default=True, show_default=True,
              help="MCAP: also export the run's camera frames (foxglove.RawImage), where it has them.")
@click.option("--overwrite", is_flag=True, help="Replace --out if it exists (else an existing file is refused).")
@click.option("--quiet", is_flag=True, help="No progress line.")
def export(run_folder: Path, fmt: str | None, out: Path | None, world: int | None, vehicle: int | None,
           frames: bool, overwrite: bool, quiet: bool) -> None:
    """Write the record of the run in RUN (and its camera frames) as an MCAP file that Foxglove and PlotJuggler
    open, or as CSV for spreadsheets."""
    fmt = format_of(out, fmt)
    out = out if out is not None else default_out(run_folder, fmt, world, vehicle)
    progress = ExportProgress(enabled=not quiet)
    with StopSignals() as signals:
        try:
            if fmt == "mcap":
                result = export_mcap(run_folder, out, world=world, vehicle=vehicle, frames=frames,
                                     overwrite=overwrite, on_progress=progress.update, hold=signals.held_back)
            else:
                result = export_csv(run_folder, out, world=world, vehicle=vehicle, overwrite=overwrite,
                                    on_progress=progress.update)
        except KeyboardInterrupt:
            progress.close()
            if progress.sim_s > 0 and out.exists():
                click.echo(f"stopped: {out} keeps what was exported, up to {progress.sim_s:.2f} s of sim time "
                           "(a whole file, cut short)", err=True)
            raise
        finally:
            progress.close()
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    of_worlds = what_was_exported(result, fmt, world)
    size = out.stat().st_size
    if fmt == "mcap":
        click.echo(f"exported {out}: {len(result.counts)} channels{of_worlds}, {result.messages:,} messages, "
                   f"{result.last_time:.2f} s of sim time, {size:,} bytes")
    else:
        click.echo(f"exported {out}: {result.messages:,} rows{of_worlds}, {result.last_time:.2f} s of sim time, "
                   f"{size:,} bytes")
